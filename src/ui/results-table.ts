import { LitElement, html, css } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { LatencyRow } from '../measure/latency-summary.ts';
import { isP99FromFewSamples } from '../measure/stats.ts';
import { num, pct } from './format.ts';
import { shared } from './styles.ts';

/**
 * The length-stratified results: one row per prompt length with TTFT and TPOT p50/p99, prefill
 * and decode rates, the bandwidth decode reached and its share of the ceiling — with the formula
 * of every column stated under the table.
 */
@customElement('ts-results-table')
export class ResultsTable extends LitElement {
  static override styles = [
    shared,
    css`
      .few {
        color: var(--muted);
      }
    `,
  ];
  @property({ attribute: false }) rows: LatencyRow[] = [];

  private p99(value: number, n: number) {
    return isP99FromFewSamples(n) ? html`<span class="few" title="fewer than 20 samples: close to the maximum">${num(value)}*</span>` : num(value);
  }

  override render() {
    const rows = [...this.rows].sort((a, b) => a.prompt_tokens - b.prompt_tokens);
    const anyFew = rows.some((r) => isP99FromFewSamples(r.n));
    const paired = rows.some((r) => r.decode_of_read_beside !== undefined);
    return html`<p class="scroll-hint" aria-hidden="true">Scroll the table sideways for more columns →</p>
      <div class="scroll" tabindex="0" role="region" aria-label="Latency by prompt length (scrolls sideways)">
        <table>
          <caption class="sr-only">
            Latency by prompt length
          </caption>
          <thead>
            <tr>
              <th scope="col" class="num">Prompt</th>
              <th scope="col" class="num">Out</th>
              <th scope="col" class="num">n</th>
              <th scope="col" class="num">TTFT p50 ms</th>
              <th scope="col" class="num">TTFT p99 ms</th>
              <th scope="col" class="num">TPOT p50 ms</th>
              <th scope="col" class="num">TPOT p99 ms</th>
              <th scope="col" class="num">Prefill tok/s</th>
              <th scope="col" class="num">Decode tok/s</th>
              <th scope="col" class="num">Decode GB/s</th>
              <th scope="col" class="num">Of ceiling</th>
              ${paired ? html`<th scope="col" class="num">Of read beside</th>` : ''}
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              (r) =>
                html`<tr>
                  <th scope="row" class="num">${r.prompt_tokens}</th>
                  <td class="num">${r.output_tokens}</td>
                  <td class="num">${r.n}</td>
                  <td class="num">${num(r.ttft.p50)}</td>
                  <td class="num">${this.p99(r.ttft.p99, r.n)}</td>
                  <td class="num">${num(r.tpot?.p50)}</td>
                  <td class="num">${r.tpot ? this.p99(r.tpot.p99, r.n) : '—'}</td>
                  <td class="num">${num(r.prefill_tokens_per_s)}</td>
                  <td class="num">${num(r.decode_tokens_per_s)}</td>
                  <td class="num">${num(r.decode_bandwidth_gbps)}</td>
                  <td class="num">${pct(r.decode_efficiency)}</td>
                  ${paired ? html`<td class="num">${pct(r.decode_of_read_beside)}</td>` : ''}
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <dl class="defs" aria-label="How each column is computed">
        <dt>TTFT</dt>
        <dd>time to first token = first token on the host − request start (includes prefill). One value per request.</dd>
        <dt>TPOT</dt>
        <dd>time per output token = (E2EL − TTFT) / (N<sub>out</sub> − 1), E2EL = last token − request start (vLLM, MLPerf). One value per request.</dd>
        <dt>p50, p99</dt>
        <dd>
          percentiles with numpy’s linear interpolation over the n requests of the
          row${anyFew ? '; * marks a p99 of fewer than 20 samples, which is close to the maximum' : ''}.
        </dd>
        <dt>Prefill tok/s</dt>
        <dd>prompt tokens / median TTFT.</dd>
        <dt>Decode tok/s</dt>
        <dd>1000 / median TPOT (ms) — one sequence, no batching.</dd>
        <dt>Decode GB/s</dt>
        <dd>bytes one decode step must read (weights + scales + KV cache + activations, from the kernels’ cost models) / median TPOT. GB = 10⁹ bytes.</dd>
        <dt>Of ceiling</dt>
        <dd>decode tok/s ÷ ceiling, ceiling = measured streaming-read bandwidth / bytes per token.</dd>
        ${
          paired
            ? html`<dt>Of read beside</dt>
                <dd>
                  the median over requests of (bytes per token / the request’s TPOT) ÷ the streaming read timed just before and after that request. Load from
                  other programs that slows both alike cancels here, so this share moves less between runs on a busy machine; “of ceiling” divides by the
                  device’s best.
                </dd>`
            : ''
        }
      </dl>`;
  }
}

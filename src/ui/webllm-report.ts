import { LitElement, html, css } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { SideBySide } from '../jobs/side-by-side.ts';
import type { WebLLMSection } from '../jobs/webllm-run.ts';
import { DISAGREEMENT_THRESHOLD, type ComparedMetric } from '../webllm/mapping.ts';
import { num, pct, ratio } from './format.ts';
import { shared } from './styles.ts';

const METRICS: readonly [ComparedMetric, string][] = [
  ['ttft_ms', 'TTFT (ms)'],
  ['tpot_ms', 'TPOT (ms)'],
  ['prefill_tokens_per_s', 'prefill tok/s'],
  ['decode_tokens_per_s', 'decode tok/s'],
];

/**
 * WebLLM beside our engine: WebLLM's latency rows under our protocol, the requests on which our
 * clock and WebLLM's own statistics disagree by more than 15% (both numbers shown), and — when our
 * engine ran the same family — the WebLLM ÷ tokenscope ratios and what differs between the runs.
 */
@customElement('ts-webllm-report')
export class WebLLMReport extends LitElement {
  static override styles = [
    shared,
    css`
      h3 {
        font-size: 1rem;
        margin: 18px 0 6px;
      }
      ul {
        padding-left: 1.2em;
        font-size: 0.9rem;
      }
    `,
  ];
  @property({ attribute: false, hasChanged: () => true }) webllm: Partial<WebLLMSection> | null = null;
  @property({ attribute: false }) sideBySide: SideBySide | null = null;

  private rows(w: Partial<WebLLMSection>) {
    const rows = [...(w.rows ?? [])].sort((a, b) => a.prompt_tokens - b.prompt_tokens);
    if (rows.length === 0) return html`<p class="muted">Waiting for WebLLM’s first prompt length…</p>`;
    return html`<div class="scroll" tabindex="0" role="region" aria-label="WebLLM latency by prompt length">
      <table id="webllm-rows">
        <caption class="sr-only">
          WebLLM latency by prompt length, timed with tokenscope’s clock
        </caption>
        <thead>
          <tr>
            <th scope="col" class="num">Prompt</th>
            <th scope="col" class="num">Out</th>
            <th scope="col" class="num">n</th>
            <th scope="col" class="num">TTFT p50 / p99 (ms)</th>
            <th scope="col" class="num">TPOT p50 / p99 (ms)</th>
            <th scope="col" class="num">prefill tok/s</th>
            <th scope="col" class="num">decode tok/s</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (r) =>
              html`<tr>
                <td class="num">${r.prompt_tokens}</td>
                <td class="num">${r.output_tokens}</td>
                <td class="num">${r.n}</td>
                <td class="num">${num(r.ttft.p50)} / ${num(r.ttft.p99)}</td>
                <td class="num">${r.tpot ? html`${num(r.tpot.p50)} / ${num(r.tpot.p99)}` : '—'}</td>
                <td class="num">${num(r.prefill_tokens_per_s)}</td>
                <td class="num">${num(r.decode_tokens_per_s)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }

  private flagged(w: Partial<WebLLMSection>) {
    const flagged = (w.comparisons ?? []).filter((c) => c.flagged.length > 0);
    const total = w.comparisons?.length ?? 0;
    const head = html`<h3>Our clock vs WebLLM’s own statistics</h3>
      <p class="muted">
        ${flagged.length} of ${total} timed requests differ by more than ${pct(DISAGREEMENT_THRESHOLD)} on some metric. WebLLM times inside its engine; we time
        around its calls, so ours includes the JavaScript between them.
      </p>`;
    if (flagged.length === 0) return head;
    return html`${head}
      <div class="scroll" tabindex="0" role="region" aria-label="Requests where the clocks disagree">
        <table id="webllm-flagged">
          <caption class="sr-only">
            Requests where tokenscope’s clock and WebLLM’s disagree by more than ${pct(DISAGREEMENT_THRESHOLD)}
          </caption>
          <thead>
            <tr>
              <th scope="col" class="num">Prompt</th>
              <th scope="col" class="num">Rep</th>
              <th scope="col">Metric</th>
              <th scope="col" class="num">Ours</th>
              <th scope="col" class="num">WebLLM’s</th>
              <th scope="col" class="num">Difference</th>
            </tr>
          </thead>
          <tbody>
            ${flagged.flatMap((c) =>
              c.flagged.map(
                (m) =>
                  html`<tr>
                    <td class="num">${c.prompt_tokens}</td>
                    <td class="num">${c.rep}</td>
                    <td>${METRICS.find(([k]) => k === m)?.[1] ?? m}</td>
                    <td class="num">${num(c.ours[m])}</td>
                    <td class="num">${num(c.webllm[m])}</td>
                    <td class="num">${pct(c.disagreement[m] ?? null)}</td>
                  </tr>`,
              ),
            )}
          </tbody>
        </table>
      </div>`;
  }

  private sideBySideView(s: SideBySide) {
    return html`<h3>Side by side: ${s.webllm_model} (WebLLM) ÷ ${s.tokenscope_model} (tokenscope)</h3>
      <p class="muted">Medians at each prompt length. Above ×1 on a time (TTFT, TPOT) WebLLM is slower; above ×1 on a rate (tok/s) it is faster.</p>
      <div class="scroll" tabindex="0" role="region" aria-label="WebLLM and tokenscope side by side">
        <table id="side-by-side">
          <caption class="sr-only">
            WebLLM and tokenscope medians and their ratio by prompt length
          </caption>
          <thead>
            <tr>
              <th scope="col" class="num">Prompt</th>
              ${METRICS.map(([, label]) => html`<th scope="col" class="num">${label}: ours / WebLLM (ratio)</th>`)}
            </tr>
          </thead>
          <tbody>
            ${s.rows.map(
              (r) =>
                html`<tr>
                  <td class="num">${r.prompt_tokens}</td>
                  ${METRICS.map(([m]) => html`<td class="num">${num(r.tokenscope[m])} / ${num(r.webllm[m])} (${ratio(r.ratio[m])})</td>`)}
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <h3>What differs between the two runs</h3>
      <ul id="differences">
        ${s.differences.map((d) => html`<li>${d}</li>`)}
      </ul>`;
  }

  override render() {
    const w = this.webllm;
    if (!w) return html``;
    const source = w.cost_source
      ? `FLOP- and byte-derived numbers use the cost model of ${w.cost_source.model_id} (${w.cost_source.quantization}) — an estimate, since WebLLM’s kernels differ.`
      : 'WebLLM reports no FLOPs or bytes, so its rows have no roofline numbers (run our engine on the same family for estimates).';
    return html`<p>
        ${w.model ? html`<strong>${w.model.id}</strong> (${w.model.quantization}), ` : ''}timed with our protocol and the same seeded prompt ids as our engine.
        <span class="muted">${source}</span>
      </p>
      ${this.rows(w)} ${this.flagged(w)} ${this.sideBySide ? this.sideBySideView(this.sideBySide) : ''}`;
  }
}

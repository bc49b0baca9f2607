import { LitElement, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { LlamaBenchRow } from '../measure/metrics.ts';
import { count, fixed } from './format.ts';
import { shared } from './styles.ts';

/** llama-bench's table (pp: prompt tokens/s, tg: generated tokens/s; mean ± sample std). */
@customElement('ts-llama-bench-table')
export class LlamaBenchTable extends LitElement {
  static override styles = [shared];
  @property({ attribute: false }) rows: LlamaBenchRow[] = [];

  override render() {
    const reps = this.rows[0]?.samples.length ?? 0;
    return html`<div class="scroll" tabindex="0" role="region" aria-label="llama-bench results">
        <table>
          <thead>
            <tr>
              <th scope="col">model</th>
              <th scope="col" class="num">size</th>
              <th scope="col" class="num">params</th>
              <th scope="col">backend</th>
              <th scope="col" class="num">ngl</th>
              <th scope="col">test</th>
              <th scope="col" class="num">t/s</th>
            </tr>
          </thead>
          <tbody>
            ${this.rows.map(
              (r) =>
                html`<tr>
                  <td>${r.model}</td>
                  <td class="num">${(r.sizeBytes / 2 ** 30).toFixed(2)} GiB</td>
                  <td class="num">${count(r.params)}</td>
                  <td>${r.backend}</td>
                  <td class="num">${r.ngl}</td>
                  <th scope="row">${r.test}</th>
                  <td class="num">${fixed(r.meanTokensPerS, 2)} ± ${fixed(r.stdTokensPerS, 2)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <p class="muted explain">
        pp<em>n</em>: <em>n</em> prompt tokens in one batched prefill, tokens/s to the first token; tg<em>n</em>: <em>n</em> single-token decode steps. Mean ±
        sample standard deviation of ${reps} repetitions after one warm-up, as llama.cpp’s <code>llama-bench</code> reports (size in GiB = 1024³ bytes).
      </p>`;
  }
}

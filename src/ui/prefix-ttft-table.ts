import { LitElement, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { PrefixTtftRow } from '../measure/latency.ts';
import { fixed, num } from './format.ts';
import { shared } from './styles.ts';

/**
 * The latency sweep's `--cached-prefix` rows: each prompt length's TTFT with its first C tokens
 * already in the KV cache (as a prefix-cache hit leaves them), beside its uncached TTFT.
 */
@customElement('ts-prefix-ttft-table')
export class PrefixTtftTable extends LitElement {
  static override styles = [shared];
  @property({ attribute: false }) rows: PrefixTtftRow[] = [];

  override render() {
    return html`<div class="scroll" tabindex="0" role="region" aria-label="TTFT with a cached prefix (scrolls sideways)">
        <table id="prefix-ttft">
          <caption class="sr-only">
            TTFT with a cached prefix
          </caption>
          <thead>
            <tr>
              <th scope="col" class="num">Prompt</th>
              <th scope="col" class="num">Cached</th>
              <th scope="col" class="num">n</th>
              <th scope="col" class="num">TTFT p50 ms</th>
              <th scope="col" class="num">Uncached p50 ms</th>
              <th scope="col" class="num">Saved ms</th>
              <th scope="col" class="num">Saved</th>
            </tr>
          </thead>
          <tbody>
            ${this.rows.map(
              (r) =>
                html`<tr>
                  <th scope="row" class="num">${r.prompt_tokens}</th>
                  <td class="num">${r.cached_tokens}</td>
                  <td class="num">${r.n}</td>
                  <td class="num">${num(r.ttft.p50)}</td>
                  <td class="num">${num(r.uncached_ttft_p50_ms)}</td>
                  <td class="num">${num(r.saved_ms)}</td>
                  <td class="num">${fixed(r.saved_share * 100, 0)}%</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <p class="muted">
        TTFT of the remaining prompt, prefilled from position C after the first C tokens were put in the KV cache untimed — what a prefix-cache hit of C tokens
        saves, before the copy the serving engine's cache makes on a hit. Saved = uncached p50 − cached p50.
      </p>`;
  }
}

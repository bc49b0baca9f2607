import { LitElement, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { LatencySection } from '../measure/latency.ts';
import type { ColdStart, ModelInfo } from '../model/load.ts';
import { bytes, count, num } from './format.ts';
import { shared } from './styles.ts';

/**
 * The model a run measured and its cold start (parse, weights, pipelines, the first request),
 * kept apart from the warm numbers the charts and tables show.
 */
@customElement('ts-run-facts')
export class RunFacts extends LitElement {
  static override styles = [shared];
  @property({ attribute: false }) model: ModelInfo | null = null;
  @property({ attribute: false }) cold: ColdStart | null = null;
  @property({ attribute: false }) latencyCold: LatencySection['cold_start'] | null = null;
  @property({ attribute: false }) dispatches: LatencySection['dispatches_per_step'] | null = null;

  override render() {
    const m = this.model;
    const c = this.latencyCold ?? this.cold;
    const lc = this.latencyCold;
    return html`${
      m
        ? html`<p>
            <strong>${m.name}</strong> — ${m.architecture}, ${count(m.parameters)} parameters, ${m.quantization}, ${bytes(m.weight_bytes)} of weights.
            <span class="${m.synthetic ? 'tag warn' : 'tag'}">${m.label}</span>
          </p>`
        : ''
    }
    ${
      c
        ? html`<div class="scroll">
            <table>
              <caption class="muted" style="text-align:left;caption-side:top;padding-bottom:4px">
                Cold start — once per page load, not part of the warm numbers
              </caption>
              <tbody>
                <tr>
                  <th scope="row">Parse the file header</th>
                  <td class="num">${num(c.parse_ms)} ms</td>
                </tr>
                <tr>
                  <th scope="row">${m?.synthetic ? 'Generate the weights on the GPU' : 'Read, convert and upload the weights'}</th>
                  <td class="num">${num(c.upload_ms)} ms</td>
                </tr>
                <tr>
                  <th scope="row">Compile the pipelines</th>
                  <td class="num">${num(c.compile_ms)} ms</td>
                </tr>
                ${
                  lc
                    ? html`<tr>
                          <th scope="row">First request’s TTFT (${lc.first_prompt_tokens} tokens, cold)</th>
                          <td class="num">${num(lc.first_ttft_ms)} ms</td>
                        </tr>
                        <tr>
                          <th scope="row">Warm median TTFT at the same length</th>
                          <td class="num">${num(lc.warm_ttft_ms)} ms</td>
                        </tr>`
                    : ''
                }
                ${
                  this.dispatches
                    ? html`<tr>
                        <th scope="row">GPU dispatches per step (prefill chunk / decode)</th>
                        <td class="num">${this.dispatches.prefill} / ${this.dispatches.decode}</td>
                      </tr>`
                    : ''
                }
              </tbody>
            </table>
          </div>`
        : ''
    }`;
  }
}

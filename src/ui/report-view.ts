import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { BenchResult } from '../measure/schema.ts';
import * as explain from './explain.ts';
import { shared } from './styles.ts';
import './cdf-chart.ts';
import './depth-chart.ts';
import './device-panel.ts';
import './kernel-chart.ts';
import './llama-bench-table.ts';
import './results-table.ts';
import './prefix-ttft-table.ts';
import './roofline-chart.ts';
import './roofs-table.ts';
import './run-facts.ts';
import { decodeByBatch } from './serve-report.ts';
import './ttft-chart.ts';
import './verdict-card.ts';
import './webllm-report.ts';
import { guarded } from './guard.ts';

/**
 * One report, from a run in this tab (filling in live), a link or a file: the latency table with
 * its formulas, the charts each with a short explanation beside it, the roofs, llama-bench, the
 * cold start apart from the warm numbers, and the environment the run was made in.
 * Every string comes from the result and is rendered as text.
 */
@customElement('ts-report')
export class ReportView extends LitElement {
  static override styles = shared;

  @property({ attribute: false }) result: BenchResult | null = null;

  private card(id: string, title: string, body: TemplateResult): TemplateResult {
    return html`<section class="card" aria-labelledby=${id}>
      <h2 id=${id}>${title}</h2>
      ${body}
    </section>`;
  }

  private pair(chart: TemplateResult, words: TemplateResult): TemplateResult {
    return html`<div class="pair">
      <div>${chart}</div>
      <div class="explain muted">${words}</div>
    </div>`;
  }

  override render() {
    return guarded('report', () => this.renderReport());
  }

  private renderReport() {
    const r = this.result;
    if (!r) return html``;
    const latency = r.latency;
    const model = r.model;
    const llamaBench = r.llama_bench;
    const rows = latency?.rows ?? [];
    const serve = r.serve;
    return html`${this.card('verdict-title', 'Verdict', html`<ts-verdict-card .result=${r}></ts-verdict-card>`)}
      ${
        r.notes?.length
          ? html`<div class="banner warn" role="note">
              <ul>
                ${r.notes.map((n) => html`<li>${n}</li>`)}
              </ul>
            </div>`
          : ''
      }
      ${
        model || r.cold_start
          ? this.card(
              'model-title',
              'Model and cold start',
              html`<ts-run-facts
                .model=${model ?? null}
                .cold=${r.cold_start ?? null}
                .latencyCold=${latency?.cold_start ?? null}
                .dispatches=${latency?.dispatches_per_step ?? null}
              ></ts-run-facts>`,
            )
          : ''
      }
      ${
        latency
          ? html`${this.card('table-title', 'Latency by prompt length', html`<ts-results-table .rows=${rows}></ts-results-table>`)}
            ${
              latency.prefix_ttft?.length
                ? this.card('prefix-ttft-title', 'TTFT with a cached prefix', html`<ts-prefix-ttft-table .rows=${latency.prefix_ttft}></ts-prefix-ttft-table>`)
                : ''
            }
            ${this.card('ttft-title', 'Time to first token vs prompt length', this.pair(html`<ts-ttft-chart .latency=${latency}></ts-ttft-chart>`, explain.prefillDecode))}
            ${this.card('depth-title', 'Time per output token vs context depth', this.pair(html`<ts-depth-chart .latency=${latency}></ts-depth-chart>`, explain.decodeMemoryBound))}
            ${this.card('cdf-title', 'Latency distributions', this.pair(html`<ts-cdf-chart .latency=${latency}></ts-cdf-chart>`, explain.percentilesGoodput))}
            ${
              latency.kernels?.length || latency.settings?.profile
                ? this.card(
                    'kernel-title',
                    'Where the GPU time goes',
                    this.pair(html`<ts-kernel-chart .kernels=${latency.kernels ?? null}></ts-kernel-chart>`, explain.kernelBreakdownHelp),
                  )
                : html`<p class="muted hint" id="kernel-hint">
                    Where the GPU time goes, kernel by kernel: tick “per-kernel profile” before the run to see it.
                  </p>`
            }`
          : ''
      }
      ${
        r.ceilings
          ? this.card(
              'roofs-title',
              'The device’s roofs and the roofline',
              html`<ts-roofline-chart .ceilings=${r.ceilings} .latency=${latency ?? null} .batches=${serve ? batchesOf(serve) : null}></ts-roofline-chart>
                <div class="explain muted">${explain.readingRoofline}</div>
                <ts-roofs-table .ceilings=${r.ceilings}></ts-roofs-table>`,
            )
          : ''
      }
      ${llamaBench?.length ? this.card('llama-title', 'llama-bench', html`<ts-llama-bench-table .rows=${llamaBench}></ts-llama-bench-table>`) : ''}
      ${
        r.webllm
          ? this.card(
              'webllm-title',
              'WebLLM beside our engine',
              html`<ts-webllm-report .webllm=${r.webllm} .sideBySide=${r.side_by_side ?? null}></ts-webllm-report>`,
            )
          : ''
      }
      ${serve ? this.card('serve-title', 'Serving benchmark', html`<ts-serve-report .serve=${serve}></ts-serve-report>`) : ''}
      <ts-device-panel .environment=${r.environment} heading="The environment this run was made in"></ts-device-panel>`;
  }
}

/** The serving run's batches for the roofline; none (the serving report says why) when they cannot be read. */
function batchesOf(serve: Parameters<typeof decodeByBatch>[0]): ReturnType<typeof decodeByBatch> | null {
  try {
    return decodeByBatch(serve);
  } catch {
    return null;
  }
}

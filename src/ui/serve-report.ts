import { LitElement, html, css, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { BenchResult } from '../measure/schema.ts';
import type { DecodeRoofline, ServeSection } from '../serve/run.ts';
import * as explain from './serve-explain.ts';
import { capacityText } from './capacity-chart.ts';
import { num, pct } from './format.ts';
import { shared } from './styles.ts';
import './batch-chart.ts';
import './batch-histogram-chart.ts';
import './serve-cdf-chart.ts';
import './serve-summary.ts';
import './timeline-chart.ts';
import { guarded } from './guard.ts';

/** Decode steps per batch size: the batch sweep's (one run per B) where there is one, else the main run's. */
export function decodeByBatch(serve: Pick<NonNullable<BenchResult['serve']>, 'run' | 'batch_sweep'>): DecodeRoofline[] {
  const byBatch = new Map<number, DecodeRoofline>();
  for (const d of serve.run?.decode_roofline ?? []) byBatch.set(d.batch, d);
  for (const p of serve.batch_sweep ?? []) if (p.decode) byBatch.set(p.batch, p.decode);
  return [...byBatch.values()].sort((a, b) => a.batch - b.batch);
}

function lengthText(d: ServeSection['settings']['prompt']): string {
  return d.kind === 'fixed' ? `${d.tokens}` : d.kind === 'uniform' ? `${d.min}–${d.max}` : `~${d.median} (lognormal)`;
}

/**
 * A serving run's report: the settings in one sentence, vLLM's summary with the formulas, and the
 * charts — latency distributions, the per-request timeline, throughput vs latency across batch
 * sizes, attainment vs arrival rate — each with a short explanation beside it. The decode points
 * per batch size go on the roofline (report-view.ts, `decodeByBatch`).
 */
@customElement('ts-serve-report')
export class ServeReport extends LitElement {
  static override styles = [
    shared,
    css`
      .pair {
        margin-top: 8px;
      }
      h3 {
        font-size: 1rem;
        margin: 22px 0 4px;
      }
      .settings {
        margin: 0 0 10px;
      }
    `,
  ];
  /** Redrawn whenever the page passes it: a live run fills the same section object in place. */
  @property({ attribute: false, hasChanged: () => true }) serve: Partial<ServeSection> | null = null;

  private pair(title: string, chart: TemplateResult, words: TemplateResult): TemplateResult {
    return html`<h3>${title}</h3>
      <div class="pair">
        <div>${chart}</div>
        <div class="explain muted">${words}</div>
      </div>`;
  }

  private settingsText(s: ServeSection['settings']): string {
    const rate =
      s.rate === Infinity || s.rate === null
        ? 'all sent at once'
        : `arriving at ${num(s.rate)} req/s (Poisson${s.burstiness !== 1 ? `, burstiness ${s.burstiness}` : ''})`;
    const chunk = s.chunk === null ? 'no chunked prefill' : `prefill in chunks of ${s.chunk} tokens`;
    return `${s.requests} requests ${rate}; prompts ${lengthText(s.prompt)} tokens, outputs ${lengthText(s.output)} tokens; at most ${s.max_batch} sequences per batch, ${s.max_tokens_per_step} tokens per step, ${chunk}; seed ${s.seed}.`;
  }

  override render() {
    return guarded('serving report', () => this.renderSection());
  }

  private renderSection() {
    const s = this.serve;
    if (!s) return html``;
    const run = s.run;
    const decode = decodeByBatch(s);
    return html`${s.settings ? html`<p class="settings muted">${this.settingsText(s.settings)}</p>` : ''}
      <div class="pair">
        <div>
          <ts-serve-summary
            .result=${run?.result ?? null}
            .slo=${s.settings?.slo ?? {}}
            .attainment=${run?.slo_attainment ?? null}
            .errorRate=${run?.error_rate ?? null}
            .cost=${s.cost ?? null}
            .availability=${run?.availability ?? null}
            .queue=${run?.queue ?? null}
            .busyShare=${run?.busy_share ?? null}
          ></ts-serve-summary>
        </div>
        <div class="explain muted">${explain.summary}</div>
      </div>
      ${this.pair('TTFT, TPOT and end-to-end latency distributions', html`<ts-serve-cdf-chart .result=${run?.result ?? null}></ts-serve-cdf-chart>`, explain.distributions)}
      ${this.pair('Per-request timeline: queued, prefill, decode', html`<ts-timeline-chart .timeline=${run?.timeline ?? null}></ts-timeline-chart>`, explain.timeline)}
      ${
        run?.batch_histogram
          ? this.pair(
              `Batch sizes the scheduler ran (mean ${num(run.mean_batch)} sequences per step)`,
              html`<ts-batch-histogram-chart .bins=${[...run.batch_histogram]}></ts-batch-histogram-chart>`,
              explain.batchSizes,
            )
          : ''
      }
      ${this.pair('Throughput vs latency across batch sizes', html`<ts-batch-chart .points=${s.batch_sweep ? [...s.batch_sweep] : null}></ts-batch-chart>`, explain.batching)}
      ${this.pair(
        'Goodput and SLO attainment vs arrival rate',
        html`<ts-capacity-chart .sweep=${s.rate_sweep ?? null}></ts-capacity-chart>
          ${s.rate_sweep ? html`<p id="capacity"><strong>Capacity:</strong> ${capacityText(s.rate_sweep)}, at ≥ ${pct(s.rate_sweep.target)} of requests meeting the SLOs.</p>` : ''}`,
        explain.capacity,
      )}
      ${
        decode.length
          ? html`<h3>Decode steps by batch size (also on the roofline above)</h3>
              <ul class="verdicts">
                ${decode.map((d) => html`<li><strong>B = ${d.batch}</strong> (${num(d.step_ms)} ms per step, ${num(d.intensity)} FLOP/byte): ${d.verdict.sentence}</li>`)}
              </ul>`
          : ''
      }`;
  }
}

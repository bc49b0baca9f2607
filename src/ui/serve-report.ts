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
import './prefix-cache-view.ts';
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
    const admission = [
      s.max_queue !== undefined ? `at most ${s.max_queue} queued beyond the free slots (more are rejected)` : '',
      s.timeout_ms !== undefined ? `requests cancelled ${num(s.timeout_ms)} ms after arrival` : '',
      s.degrade_over !== undefined
        ? `outputs capped at ${s.degrade_to !== undefined ? `${s.degrade_to} tokens` : 'half'} when more than ${s.degrade_over} wait behind a request`
        : '',
      s.sla_percent !== undefined ? `an availability SLA of ${s.sla_percent}%` : '',
      s.shared_prefix !== undefined ? `every request starting with the same ${s.shared_prefix}-token system prompt` : '',
      s.conversations !== undefined
        ? `${s.conversations} conversations of ${s.turns ?? 1} turns (each turn: the previous prompt, its answer and a new message)`
        : '',
      s.prefix_cache === false ? 'prefix caching off' : '',
      s.classes?.length ? `classes ${s.classes.map((c) => `${c.name} (${num(c.share)})`).join(', ')}` : '',
    ].filter(Boolean);
    return `${s.requests} requests ${rate}; prompts ${lengthText(s.prompt)} tokens, outputs ${lengthText(s.output)} tokens; at most ${s.max_batch} sequences per batch, ${s.max_tokens_per_step} tokens per step, ${chunk}; ${admission.length ? `${admission.join('; ')}; ` : ''}seed ${s.seed}.`;
  }

  private classTable(classes: NonNullable<ServeSection['run']['classes']>): TemplateResult {
    const slo = (c: (typeof classes)[number]) =>
      (['ttft', 'tpot', 'e2el'] as const)
        .filter((k) => c.slo[k] !== undefined)
        .map((k) => `${k.toUpperCase()} ≤ ${c.slo[k]} ms`)
        .join(', ') || 'none';
    return html`<h3>Request classes</h3>
      <div class="scroll" tabindex="0" role="region" aria-label="Request classes">
        <table id="serve-classes">
          <thead>
            <tr>
              <th scope="col">Class</th>
              <th scope="col">SLOs</th>
              <th scope="col" class="num">Requests</th>
              <th scope="col" class="num">Failed</th>
              <th scope="col" class="num">Output tok/s</th>
              <th scope="col" class="num">Goodput (req/s)</th>
              <th scope="col" class="num">SLO attainment</th>
              <th scope="col" class="num">Step time</th>
              <th scope="col" class="num">$ per 1k output tokens</th>
            </tr>
          </thead>
          <tbody>
            ${classes.map(
              (c) =>
                html`<tr>
                  <th scope="row">${c.name}</th>
                  <td>${slo(c)}</td>
                  <td class="num">${c.requests}</td>
                  <td class="num">${c.failed}</td>
                  <td class="num">${num(c.output_throughput)}</td>
                  <td class="num">${num(c.request_goodput)}</td>
                  <td class="num">${pct(c.slo_attainment)}</td>
                  <td class="num">${pct(c.step_time_share)}</td>
                  <td class="num">${num(c.dollars_per_1k_output_tokens)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <p class="muted">
        Each step’s time is split over its sequences by the tokens each fed (a decode 1, a prefill chunk its length); a class’s cost is the run’s price times
        its share of step time, per 1k of its output tokens.
      </p>`;
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
      ${run?.classes?.length ? this.classTable(run.classes) : ''}
      ${
        run?.prefix_cache
          ? this.pair(
              'Prefix cache: hit rate and TTFT of hits vs misses',
              html`<ts-prefix-cache-view .cache=${run.prefix_cache}></ts-prefix-cache-view>`,
              explain.prefixCache,
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

import { LitElement, html, css } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { CostReport } from '../measure/cost.ts';
import { isP99FromFewSamples } from '../measure/stats.ts';
import type { Availability, QueueStats, ServeResult, Slo } from '../serve/metrics.ts';
import { num, pct } from './format.ts';
import { shared } from './styles.ts';

type Metric = 'ttft' | 'tpot' | 'itl' | 'e2el';

const LATENCIES: readonly [Metric, string, string][] = [
  ['ttft', 'TTFT', 'time to first token: first token − request sent (queueing included), one value per request'],
  ['tpot', 'TPOT', '(E2EL − TTFT) / (output tokens − 1), one value per request with more than one token'],
  ['itl', 'ITL', 'every gap between two consecutive tokens, pooled over all requests (token-weighted)'],
  ['e2el', 'E2EL', 'end-to-end latency: last token − request sent'],
];

function sloText(slo: Slo): string {
  const parts = (['ttft', 'tpot', 'e2el'] as const).filter((k) => slo[k] !== undefined).map((k) => `${k.toUpperCase()} ≤ ${slo[k]} ms`);
  return parts.length ? parts.join(', ') : 'none';
}

/**
 * vLLM `bench serve`'s summary of one serving run as a table, each number with its formula: the
 * counts, throughputs, goodput, SLO attainment and error rate, the latency percentiles, and the
 * cost per token when a price was given.
 */
@customElement('ts-serve-summary')
export class ServeSummary extends LitElement {
  static override styles = [
    shared,
    css`
      td.formula {
        font-size: 0.85rem;
        color: var(--muted);
      }
      h3 {
        font-size: 1rem;
        margin: 16px 0 6px;
      }
    `,
  ];
  @property({ attribute: false }) result: Partial<ServeResult> | null = null;
  @property({ attribute: false }) slo: Slo = {};
  @property({ attribute: false }) attainment: number | null = null;
  @property({ attribute: false }) errorRate: number | null = null;
  @property({ attribute: false }) cost: CostReport | null = null;
  @property({ attribute: false }) availability: Availability | null = null;
  @property({ attribute: false }) queue: QueueStats | null = null;
  /** Σ step wall time ÷ run wall time. */
  @property({ attribute: false }) busyShare: number | null = null;

  override render() {
    const r = this.result;
    if (!r) return html`<p class="muted">Waiting for the serving run…</p>`;
    const n = (r.completed ?? 0) + (r.failed ?? 0);
    const noSlo = 'no SLO was given, so no request is judged good or bad';
    const rows: [string, string, string][] = [
      ['Successful requests', String(r.completed ?? '—'), `of ${n} sent; failed ones are listed in the timeline`],
      ['Failed requests', String(r.failed ?? '—'), 'requests that ended with an error'],
      ['Benchmark duration (s)', num(r.duration), 'first request sent → last request finished'],
      ['Total input tokens', String(r.total_input_tokens ?? '—'), 'Σ prompt tokens'],
      ['Total generated tokens', String(r.total_output_tokens ?? '—'), 'Σ output tokens'],
      ['Request throughput (req/s)', num(r.request_throughput), 'completed / duration'],
      [
        'Request goodput (req/s)',
        r.request_goodput === null || r.request_goodput === undefined ? '—' : num(r.request_goodput),
        r.request_goodput == null ? noSlo : 'requests meeting every SLO / duration',
      ],
      ['Output token throughput (tok/s)', num(r.output_throughput), 'Σ output tokens / duration'],
      ['Total token throughput (tok/s)', num(r.total_token_throughput), '(Σ prompt + Σ output tokens) / duration'],
      [
        'SLO attainment',
        pct(this.attainment),
        this.attainment === null ? noSlo : `good / all ${n} requests (errors count against it); SLOs: ${sloText(this.slo)}`,
      ],
      ['Error rate', pct(this.errorRate), 'failed / all requests'],
    ];
    const a = this.availability;
    if (a) {
      const causes = Object.entries(a.errors_by_cause)
        .map(([k, v]) => `${k.replace('_', ' ')} ${v}`)
        .join(', ');
      rows.push(['Availability', pct(a.availability), `successful / all requests; failures by cause: ${causes}`]);
      if (a.sla !== null && a.error_budget !== null && a.error_budget_left !== null) {
        rows.push([
          'Error budget left (requests)',
          num(a.error_budget_left),
          `(1 − SLA ${num(100 * a.sla)}%) × ${a.requests} requests = ${num(a.error_budget)} allowed, minus ${a.failed} failed${a.error_budget_left_share === null ? '' : ` (${pct(a.error_budget_left_share)} of the budget)`}; SLA ${a.meets_sla ? 'met' : 'missed'}`,
        ]);
      }
      rows.push(['Degradation rate', pct(a.degradation_rate), `${a.degraded} requests admitted with their output capped (the queue was deep) / all requests`]);
    }
    if (this.busyShare !== null) rows.push(['Busy share', pct(this.busyShare), "Σ step wall time (encode, submit, GPU, readback) / the run's wall time"]);
    if (this.cost) {
      rows.push(
        ['Cost per 1k output tokens ($)', num(this.cost.dollarsPer1kOutputTokens), '($/hour) / (output tok/s × 3600) × 1000'],
        ['Cost per 1k total tokens ($)', num(this.cost.dollarsPer1kTotalTokens), '($/hour) / (total tok/s × 3600) × 1000'],
      );
      if (this.cost.joulesPerOutputToken !== undefined) rows.push(['Energy per output token (J)', num(this.cost.joulesPerOutputToken), 'watts / output tok/s']);
    }
    const few = isP99FromFewSamples(r.completed ?? 0);
    return html`<div class="scroll" tabindex="0" role="region" aria-label="Serving summary">
        <table id="serve-summary">
          <caption class="sr-only">
            Serving benchmark result (vLLM bench serve keys)
          </caption>
          <thead>
            <tr>
              <th scope="col">Quantity</th>
              <th scope="col" class="num">Value</th>
              <th scope="col">How it is computed</th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              ([label, value, formula]) =>
                html`<tr>
                  <th scope="row">${label}</th>
                  <td class="num">${value}</td>
                  <td class="formula">${formula}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <h3>Latency (ms)</h3>
      <div class="scroll" tabindex="0" role="region" aria-label="Serving latency percentiles">
        <table id="serve-latency">
          <caption class="sr-only">
            Serving latency percentiles, ms
          </caption>
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col" class="num">Mean</th>
              <th scope="col" class="num">Median</th>
              <th scope="col" class="num">P90</th>
              <th scope="col" class="num">P99${few ? '*' : ''}</th>
            </tr>
          </thead>
          <tbody>
            ${LATENCIES.map(
              ([m, name]) =>
                html`<tr>
                  <th scope="row">${name}</th>
                  ${(['mean', 'median', 'p90', 'p99'] as const).map((s) => html`<td class="num">${num(r[`${s}_${m}_ms`])}</td>`)}
                </tr>`,
            )}
            ${
              this.queue
                ? html`<tr>
                    <th scope="row">Queue</th>
                    ${(['mean', 'median', 'p90', 'p99'] as const).map((s) => html`<td class="num">${num(this.queue![`${s}_queue_ms`])}</td>`)}
                  </tr>`
                : ''
            }
          </tbody>
        </table>
      </div>
      <dl class="muted defs" id="serve-latency-defs">
        ${LATENCIES.map(
          ([, name, definition]) =>
            html`<dt>${name}</dt>
              <dd>${definition}</dd>`,
        )}
        ${
          this.queue
            ? html`<dt>Queue</dt>
                <dd>admission (a batch slot) − arrival, over the ${this.queue.count} requests admitted; part of TTFT</dd>`
            : ''
        }
      </dl>
      ${few ? html`<p class="muted">* P99 from fewer than 20 requests is close to the maximum.</p>` : ''}`;
  }
}

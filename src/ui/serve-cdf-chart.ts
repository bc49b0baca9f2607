import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import { summarize } from '../measure/stats.ts';
import type { ServeResult } from '../serve/metrics.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';
import { ecdf } from './series.ts';

/** Per-request TTFT, TPOT and E2EL (ms) of the completed requests, from vLLM's per-request arrays (s). */
export function serveDistributions(r: Partial<ServeResult>): { ttft: number[]; tpot: number[]; e2el: number[] } {
  const ok = (i: number) => (r.errors?.[i] ?? '') === '';
  const ttft = (r.ttfts ?? []).flatMap((t, i) => (ok(i) ? [t * 1000] : []));
  const e2el = (r.latencies ?? []).flatMap((t, i) => (ok(i) ? [t * 1000] : []));
  const tpot = (r.latencies ?? []).flatMap((t, i) => {
    const n = r.output_lens?.[i] ?? 0;
    return ok(i) && n > 1 && r.ttfts?.[i] !== undefined ? [((t - r.ttfts[i]) * 1000) / (n - 1)] : [];
  });
  return { ttft, tpot, e2el };
}

/**
 * Cumulative distributions of the serving run's TTFT, TPOT and end-to-end latency, one value per
 * completed request: read across at 0.5 for the median and at 0.9 / 0.99 for the tail.
 */
@customElement('ts-serve-cdf-chart')
export class ServeCdfChart extends ChartBase {
  @property({ attribute: false }) result: Partial<ServeResult> | null = null;
  protected readonly chartName = 'serving latency CDFs';

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    this.emptyText = 'Waiting for the serving run…';
    if (!this.result) return null;
    const d = serveDistributions(this.result);
    if (d.ttft.length === 0) {
      if ((this.result.completed ?? 0) > 0)
        this.emptyText = 'This report carries no per-request samples (they were left out of the link to keep it short); the JSON export has them.';
      return null;
    }
    const step = (xs: number[]) => ({ stepped: 'after' as const, pointRadius: 0, data: ecdf(xs) });
    return {
      type: 'scatter',
      data: {
        datasets: [
          { ...lineDataset(`TTFT (n ${d.ttft.length})`, [], PALETTE[0]), ...step(d.ttft) },
          { ...lineDataset(`TPOT (n ${d.tpot.length})`, [], PALETTE[1]), ...step(d.tpot) },
          { ...lineDataset(`E2E latency (n ${d.e2el.length})`, [], PALETTE[4], [5, 3]), ...step(d.e2el) },
        ],
      },
      options: {
        scales: {
          x: axis(theme, 'latency (ms, log scale)', 'logarithmic'),
          y: { ...axis(theme, 'share of requests ≤ x', 'linear', true), max: 1 },
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } } },
      },
    };
  }

  protected describe(): string {
    const d = this.result ? serveDistributions(this.result) : null;
    if (!d || d.ttft.length === 0) return 'Serving latency CDFs: no per-request samples.';
    const part = (name: string, xs: number[]) =>
      xs.length ? `${name} p50 ${num(summarize(xs).p50)} ms, p99 ${num(summarize(xs).p99)} ms (n ${xs.length})` : `${name}: none`;
    return `Serving latency CDFs: ${part('TTFT', d.ttft)}; ${part('TPOT', d.tpot)}; ${part('E2E latency', d.e2el)}.`;
  }
}

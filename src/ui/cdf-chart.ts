import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import { summarize } from '../measure/stats.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';
import { distributionsByLength, ecdf, latencyDistributions, type LatencyView } from './series.ts';

/**
 * Cumulative distributions of TTFT and TPOT (one value per request, one line per prompt length)
 * and ITL (one per token gap, pooled):
 * read across at 0.5 for the median and at 0.99 for P99; a long tail is a line that creeps to 1.
 */
@customElement('ts-cdf-chart')
export class CdfChart extends ChartBase {
  @property({ attribute: false }) latency: LatencyView | null = null;
  protected readonly chartName = 'latency CDFs';

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    this.emptyText = 'Waiting for the first request…';
    if (!this.latency) return null;
    const d = latencyDistributions(this.latency);
    if (d.ttft.length === 0) {
      if ((this.latency.rows?.length ?? 0) > 0)
        this.emptyText = 'This report carries no per-request samples (they were left out of the link to keep it short); the JSON export has them.';
      return null;
    }
    const step = (xs: { x: number; y: number }[]) => ({ stepped: 'after' as const, pointRadius: 0, data: xs });
    return {
      type: 'scatter',
      data: {
        datasets: [
          // One line per prompt length: TTFT and TPOT depend on it, so pooling lengths draws steps, not a distribution.
          ...distributionsByLength(this.latency).flatMap((g, i) => [
            { ...lineDataset(`TTFT, prompt ${g.promptTokens} (n ${g.ttft.length})`, [], PALETTE[i % 4 === 3 ? 5 : i % 4]), ...step(ecdf(g.ttft)) },
            ...(g.tpot.length
              ? [{ ...lineDataset(`TPOT, prompt ${g.promptTokens} (n ${g.tpot.length})`, [], PALETTE[i % 4 === 3 ? 5 : i % 4], [2, 2]), ...step(ecdf(g.tpot)) }]
              : []),
          ]),
          { ...lineDataset(`ITL, all lengths (n ${d.itl.length} token gaps)`, [], PALETTE[4], [5, 3]), ...step(ecdf(d.itl)) },
        ],
      },
      options: {
        scales: {
          x: axis(theme, 'latency (ms, log scale)', 'logarithmic'),
          y: { ...axis(theme, 'share of samples ≤ x', 'linear', true), max: 1 },
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } } },
      },
    };
  }

  protected describe(): string {
    const d = this.latency ? latencyDistributions(this.latency) : null;
    if (!d || d.ttft.length === 0) return 'Latency CDFs: no per-request samples.';
    const part = (name: string, xs: number[]) => {
      if (xs.length === 0) return `${name}: none`;
      const s = summarize(xs);
      return `${name} p50 ${num(s.p50)} ms, p99 ${num(s.p99)} ms (n ${xs.length})`;
    };
    return `Latency CDFs: ${part('TTFT', d.ttft)}; ${part('TPOT', d.tpot)}; ${part('ITL', d.itl)}.`;
  }
}

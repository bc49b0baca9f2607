import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration, Plugin } from 'chart.js';
import type { BatchPoint } from '../serve/run.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';

type Point = { x: number; y: number; batch: number };

const SERIES: readonly [keyof BatchPoint & `${string}_ms`, string, number, number[]][] = [
  ['median_tpot_ms', 'p50 TPOT', 0, []],
  ['p99_tpot_ms', 'p99 TPOT', 0, [5, 3]],
  ['median_ttft_ms', 'p50 TTFT', 1, []],
  ['p99_ttft_ms', 'p99 TTFT', 1, [5, 3]],
];

/** Writes "B=n" beside the median series' points, so each batch size can be found without hovering. */
const batchLabels = (color: string): Plugin<'scatter'> => ({
  id: 'batchLabels',
  afterDatasetsDraw(chart) {
    const ctx = chart.ctx;
    ctx.save();
    ctx.fillStyle = color;
    ctx.font = '11px system-ui, sans-serif';
    chart.data.datasets.forEach((d, i) => {
      if (!chart.isDatasetVisible(i) || !d.label?.startsWith('p50')) return;
      chart.getDatasetMeta(i).data.forEach((el, j) => ctx.fillText(`B=${(d.data[j] as unknown as Point).batch}`, el.x + 6, el.y - 6));
    });
    ctx.restore();
  },
});

/**
 * The throughput / latency trade-off of batching: one point per batch size B of the sweep, output
 * tokens/s against TPOT and TTFT (median and p99). Up and to the right: more tokens per second
 * for the server, a slower stream for each user.
 */
@customElement('ts-batch-chart')
export class BatchChart extends ChartBase {
  @property({ attribute: false }) points: BatchPoint[] | null = null;
  protected readonly chartName = 'throughput vs latency by batch size';
  protected override emptyText = 'Give batch sizes to sweep (e.g. 1, 2, 4) to draw this chart.';

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const pts = [...(this.points ?? [])].sort((a, b) => a.batch - b.batch);
    if (pts.length === 0) return null;
    const datasets = SERIES.map(([key, label, color, dash]) =>
      lineDataset(
        label,
        pts.map((p) => ({ x: p[key], y: p.output_throughput, batch: p.batch })),
        PALETTE[color],
        dash,
      ),
    );
    return {
      type: 'scatter',
      data: { datasets },
      options: {
        scales: {
          x: axis(theme, 'latency per user (ms, log scale)', 'logarithmic'),
          y: { ...axis(theme, 'output tok/s, all users (not from 0)'), grace: '10%' },
        },
        plugins: {
          legend: { labels: { color: theme.fg, boxWidth: 14 } },
          tooltip: {
            callbacks: {
              label: (item) => `${item.dataset.label}, B = ${(item.raw as Point).batch}: ${num((item.raw as Point).x)} ms, ${num((item.raw as Point).y)} tok/s`,
            },
          },
        },
      },
      plugins: [batchLabels(theme.fg)],
    } as ChartConfiguration<'scatter'> as unknown as ChartConfiguration;
  }

  protected describe(): string {
    const pts = [...(this.points ?? [])].sort((a, b) => a.batch - b.batch);
    if (pts.length === 0) return 'Throughput vs latency by batch size: no batch sweep in this report.';
    return `Throughput vs latency by batch size: ${pts.map((p) => `B=${p.batch}: ${num(p.output_throughput)} output tok/s, p50 TPOT ${num(p.median_tpot_ms)} ms, p99 TPOT ${num(p.p99_tpot_ms)} ms, p50 TTFT ${num(p.median_ttft_ms)} ms`).join('; ')}.`;
  }
}

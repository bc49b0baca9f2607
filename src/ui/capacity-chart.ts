import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import type { ServeSection } from '../serve/run.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset, pointDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num, pct } from './format.ts';

type RateSweep = NonNullable<ServeSection['rate_sweep']>;

/** The capacity in a few words, for the legend. */
function capacityShort(s: RateSweep): string {
  return s.status === 'above-range' ? `capacity ≥ ${num(s.rate)} req/s` : `capacity ${num(s.rate)} req/s`;
}

/** The capacity found, with its bracket, in words. */
export function capacityText(s: RateSweep): string {
  if (s.status === 'below-range' || s.rate === null) return `below ${num(s.lo)} req/s (even the lowest rate tried missed the target)`;
  if (s.status === 'above-range') return `at least ${num(s.rate)} req/s (the highest rate tried still met the target)`;
  return `${num(s.rate)} req/s (between ${num(s.lo)} and ${num(s.hi)})`;
}

/**
 * Capacity (DistServe's per-GPU goodput): SLO attainment at each arrival rate the search tried,
 * the 90% target as a dashed line, and the capacity — the highest rate meeting it — marked.
 * Goodput at each probe is shown as attainment × offered rate (good requests per second offered).
 */
@customElement('ts-capacity-chart')
export class CapacityChart extends ChartBase {
  @property({ attribute: false }) sweep: RateSweep | null = null;
  protected readonly chartName = 'goodput and attainment vs arrival rate';
  protected override emptyText = 'Tick “find the capacity” (with an SLO) to sweep the arrival rate.';

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const s = this.sweep;
    if (!s?.probes?.length) return null;
    const probes = [...s.probes].sort((a, b) => a.rate - b.rate);
    const xs = probes.map((p) => p.rate);
    const [lo, hi] = [Math.min(...xs) * 0.8, Math.max(...xs) * 1.2];
    const datasets: object[] = [
      {
        ...lineDataset(
          'SLO attainment (left axis)',
          probes.map((p) => ({ x: p.rate, y: 100 * p.attainment })),
          PALETTE[0],
        ),
        yAxisID: 'y',
      },
      {
        ...lineDataset(
          '≈ goodput: attainment × rate (right axis)',
          probes.map((p) => ({ x: p.rate, y: p.attainment * p.rate })),
          PALETTE[4],
          [5, 3],
        ),
        yAxisID: 'y2',
      },
      {
        ...lineDataset(
          `target ${pct(s.target)}`,
          [
            { x: lo, y: 100 * s.target },
            { x: hi, y: 100 * s.target },
          ],
          PALETTE[2],
          [2, 3],
        ),
        pointRadius: 0,
        borderWidth: 1.5,
        yAxisID: 'y',
      },
    ];
    if (s.rate !== null) {
      datasets.push({ ...pointDataset(capacityShort(s), [{ x: s.rate, y: 100 * s.target }], PALETTE[1], 8), pointStyle: 'triangle', yAxisID: 'y' });
    }
    return {
      type: 'scatter',
      data: { datasets: datasets as never },
      options: {
        scales: {
          x: { ...axis(theme, 'arrival rate (requests/s)'), min: lo, max: hi },
          // Up to 110 so a line at 100% is not hidden by the chart's edge.
          y: {
            ...axis(theme, 'requests meeting every SLO (%)', 'linear', true),
            type: 'linear' as const,
            max: 110,
            ticks: { color: theme.fg, stepSize: 20, callback: (v: string | number) => (Number(v) <= 100 ? v : '') },
          },
          y2: { ...axis(theme, 'good requests/s', 'linear', true), position: 'right', grid: { drawOnChartArea: false } },
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } } },
      },
    };
  }

  protected describe(): string {
    const s = this.sweep;
    if (!s?.probes?.length) return 'Goodput and attainment vs arrival rate: no rate sweep in this report.';
    const probes = [...s.probes].sort((a, b) => a.rate - b.rate).map((p) => `${num(p.rate)} req/s: ${pct(p.attainment)}`);
    return `SLO attainment vs arrival rate: ${probes.join('; ')}. Target ${pct(s.target)}; capacity ${capacityText(s)}.`;
  }
}

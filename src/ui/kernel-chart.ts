import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration, TooltipItem } from 'chart.js';
import type { KernelRow } from '../measure/latency-summary.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num, pct } from './format.ts';
import { kernelTable } from './series.ts';

const PHASES = ['prefill', 'decode'] as const;

/**
 * The profile run's GPU time by kernel class: one horizontal bar per phase, split by class as a
 * share of that phase's kernel time (the tooltip gives ms per step and dispatches per step).
 */
@customElement('ts-kernel-chart')
export class KernelChart extends ChartBase {
  @property({ attribute: false }) kernels: KernelRow[] | null = null;
  protected readonly chartName = 'GPU time by kernel class';

  protected override emptyText = 'Tick “per-kernel profile” before a latency sweep to see where the GPU time goes.';

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    if (!this.kernels?.length) return null;
    const { kinds, byPhase } = kernelTable(this.kernels);
    const phases = PHASES.filter((p) => byPhase[p].size > 0);
    const tooltip = (item: TooltipItem<'bar'>) => {
      const row = byPhase[phases[item.dataIndex]].get(kinds[item.datasetIndex]);
      return row ? `${row.kind}: ${pct(row.share)} · ${num(row.ms_per_step)} ms/step · ${num(row.dispatches_per_step)} dispatches/step` : '';
    };
    return {
      type: 'bar',
      data: {
        labels: phases.map((p) => `${p} (${num([...byPhase[p].values()].reduce((n, r) => n + r.ms_per_step, 0))} ms/step)`),
        datasets: kinds.map((kind, i) => ({
          label: kind,
          data: phases.map((p) => 100 * (byPhase[p].get(kind)?.share ?? 0)),
          backgroundColor: PALETTE[i % PALETTE.length],
          borderWidth: 0,
        })),
      },
      options: {
        indexAxis: 'y',
        scales: {
          x: { ...axis(theme, 'share of the phase’s GPU kernel time (%)', 'linear', true), stacked: true, max: 100 },
          y: { type: 'category', stacked: true, ticks: { color: theme.fg }, grid: { color: theme.grid } },
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } }, tooltip: { callbacks: { label: tooltip } } },
      },
    } as ChartConfiguration;
  }

  protected describe(): string {
    if (!this.kernels?.length) return 'GPU time by kernel class: no profile in this run.';
    const { byPhase } = kernelTable(this.kernels);
    const top = (p: (typeof PHASES)[number]) =>
      [...byPhase[p].values()]
        .sort((a, b) => b.share - a.share)
        .slice(0, 3)
        .map((r) => `${r.kind} ${pct(r.share)}`)
        .join(', ');
    return `GPU time by kernel class. ${PHASES.filter((p) => byPhase[p].size)
      .map((p) => `${p}: ${top(p)}`)
      .join('. ')}.`;
  }
}

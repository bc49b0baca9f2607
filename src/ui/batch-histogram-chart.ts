import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration, TooltipItem } from 'chart.js';
import type { BatchBin } from '../serve/metrics.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num, pct } from './format.ts';

/** The batch sizes the scheduler actually ran: one bar per size, the number of steps that ran that many sequences. */
@customElement('ts-batch-histogram-chart')
export class BatchHistogramChart extends ChartBase {
  @property({ attribute: false }) bins: BatchBin[] | null = null;
  protected readonly chartName = 'steps per batch size';
  protected override emptyText = 'Waiting for the serving run…';

  private sorted(): BatchBin[] {
    return [...(this.bins ?? [])].sort((a, b) => a.batch - b.batch);
  }

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const bins = this.sorted();
    if (bins.length === 0) return null;
    const steps = bins.reduce((n, b) => n + b.steps, 0);
    const tooltip = (item: TooltipItem<'bar'>) => {
      const b = bins[item.dataIndex];
      return `${b.steps} steps (${pct(b.steps / steps)}), ${num(b.ms / b.steps)} ms each`;
    };
    return {
      type: 'bar',
      data: {
        labels: bins.map((b) => `B = ${b.batch}`),
        datasets: [{ label: 'steps', data: bins.map((b) => b.steps), backgroundColor: PALETTE[0], borderWidth: 0 }],
      },
      options: {
        scales: {
          x: {
            type: 'category',
            title: { display: true, text: 'sequences in the step', color: theme.fg },
            ticks: { color: theme.fg },
            grid: { color: theme.grid },
          },
          y: axis(theme, 'steps', 'linear', true),
        },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: tooltip } } },
      },
    } as ChartConfiguration;
  }

  protected describe(): string {
    const bins = this.sorted();
    if (bins.length === 0) return 'Steps per batch size: no steps yet.';
    const steps = bins.reduce((n, b) => n + b.steps, 0);
    return `Steps per batch size: ${bins.map((b) => `B=${b.batch}: ${b.steps} steps (${pct(b.steps / steps)})`).join('; ')}.`;
  }
}

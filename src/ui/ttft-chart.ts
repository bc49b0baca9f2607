import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import { ChartBase, type Theme } from './chart-base.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';
import { requestTtfts, type LatencyView } from './series.ts';
import { axis, lineDataset, pointDataset } from './chart-parts.ts';

/**
 * TTFT against prompt length: the median per length as a line, the p50–p99 band shaded above
 * it, and every request's TTFT as a dot (they appear as the sweep runs).
 */
@customElement('ts-ttft-chart')
export class TtftChart extends ChartBase {
  @property({ attribute: false }) latency: LatencyView | null = null;
  protected readonly chartName = 'TTFT by prompt length';

  private rows() {
    return [...(this.latency?.rows ?? [])].sort((a, b) => a.prompt_tokens - b.prompt_tokens);
  }

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const rows = this.rows();
    const dots = this.latency ? requestTtfts(this.latency) : [];
    if (rows.length === 0 && dots.length === 0) return null;
    const xs = [...rows.map((r) => r.prompt_tokens), ...dots.map((d) => d.x)];
    const log = Math.max(...xs) / Math.min(...xs) >= 4;
    const lengths = [...new Set(xs)].sort((a, b) => a - b);
    const xAxis = axis(theme, 'prompt length (tokens)', log ? 'logarithmic' : 'linear');
    return {
      type: 'scatter',
      data: {
        datasets: [
          lineDataset(
            'TTFT p50 (median)',
            rows.map((r) => ({ x: r.prompt_tokens, y: r.ttft.p50 })),
            PALETTE[0],
          ),
          {
            ...lineDataset(
              'TTFT p99 (band: p50–p99)',
              rows.map((r) => ({ x: r.prompt_tokens, y: r.ttft.p99 })),
              PALETTE[0],
              [4, 4],
            ),
            fill: '-1',
            backgroundColor: 'rgba(78, 121, 167, 0.18)',
          },
          pointDataset('each request', dots, PALETTE[1]),
        ],
      },
      options: {
        scales: {
          // Ticks at the measured prompt lengths only: the x values are those lengths.
          // Labelled by their value: Chart.js's logarithmic labels show only 1, 2, 3, 5… × 10^k, which left 16 and 64 blank.
          x: {
            ...xAxis,
            ticks: { ...xAxis.ticks, callback: (value: number | string) => String(value) },
            afterBuildTicks: (scale: { ticks: { value: number }[] }) => (scale.ticks = lengths.map((value) => ({ value }))),
          },
          y: axis(theme, 'time to first token (ms)', 'linear', true),
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } } },
      },
    };
  }

  protected describe(): string {
    const rows = this.rows();
    if (rows.length === 0) return 'TTFT by prompt length: no finished prompt length yet.';
    return `TTFT by prompt length: ${rows.map((r) => `${r.prompt_tokens} tokens p50 ${num(r.ttft.p50)} ms, p99 ${num(r.ttft.p99)} ms (n ${r.n})`).join('; ')}.`;
  }
}

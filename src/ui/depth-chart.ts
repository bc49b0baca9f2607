import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset, pointDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';
import { stepGaps, type LatencyView } from './series.ts';

/**
 * TPOT against context depth: every decode step's gap as a dot (live), the median per depth bin
 * as a line, and the bandwidth floor 1000 / ceiling tokens/s (bytes per token / read bandwidth)
 * as a dashed line — the distance between the two is time the bytes do not explain.
 */
@customElement('ts-depth-chart')
export class DepthChart extends ChartBase {
  @property({ attribute: false }) latency: LatencyView | null = null;
  protected readonly chartName = 'TPOT by context depth';

  /** The floor per depth: the depth curve's when the sweep finished, else each row's at its mean depth. */
  private floor(): { x: number; y: number }[] {
    const curve = this.latency?.depth_curve ?? [];
    if (curve.length) return curve.map((d) => ({ x: d.depth, y: 1000 / d.ceiling_tokens_per_s }));
    return (this.latency?.rows ?? [])
      .map((r) => ({ x: Math.round(r.prompt_tokens + r.output_tokens / 2), y: 1000 / r.decode_ceiling_tokens_per_s }))
      .sort((a, b) => a.x - b.x);
  }

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const gaps = this.latency ? stepGaps(this.latency) : [];
    const curve = this.latency?.depth_curve ?? [];
    const floor = this.floor();
    if (gaps.length === 0 && curve.length === 0) return null;
    return {
      type: 'scatter',
      data: {
        datasets: [
          lineDataset(
            'median TPOT at that depth',
            curve.map((d) => ({ x: d.depth, y: d.tpot_ms })),
            PALETTE[0],
          ),
          { ...lineDataset('bandwidth floor = bytes per token ÷ read roof', floor, PALETTE[2], [6, 4]), pointRadius: 0 },
          pointDataset('each decode step', gaps, 'rgba(242, 142, 43, 0.55)', 2),
        ],
      },
      options: {
        scales: {
          x: axis(theme, 'context depth (positions attended)'),
          y: axis(theme, 'time per output token (ms)', 'linear', true),
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } } },
      },
    };
  }

  protected describe(): string {
    const curve = this.latency?.depth_curve ?? [];
    if (curve.length === 0) return 'TPOT by context depth: the depth curve is drawn when the sweep finishes.';
    const first = curve[0];
    const last = curve[curve.length - 1];
    return `TPOT by context depth: ${num(first.tpot_ms)} ms at depth ${first.depth} to ${num(last.tpot_ms)} ms at depth ${last.depth}; bandwidth floor ${num(1000 / first.ceiling_tokens_per_s)} to ${num(1000 / last.ceiling_tokens_per_s)} ms.`;
  }
}

import { html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import { predictDecode, predictOverContext, type DecodeScenario } from '../measure/what-if.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset, pointDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';
import type { LatencyView } from './series.ts';

const CURVE_POINTS = 40;

/**
 * The what-if prediction — decode tokens/s (all sequences of the batch) against context depth —
 * drawn against what this report measured: the decode rate at each depth and the ceiling the
 * measured bandwidth implies for the measured model.
 */
@customElement('ts-what-if-chart')
export class WhatIfChart extends ChartBase {
  @property({ attribute: false }) scenario: DecodeScenario | null = null;
  /** Largest context drawn. */
  @property({ type: Number }) maxContext = 1024;
  @property({ attribute: false }) latency: LatencyView | null = null;
  protected readonly chartName = 'what-if decode ceiling';

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const s = this.scenario;
    if (!s) return null;
    const contexts = Array.from({ length: CURVE_POINTS + 1 }, (_, i) => Math.round((i * this.maxContext) / CURVE_POINTS));
    const predicted = predictOverContext(s, contexts).map((p) => ({ x: p.context, y: p.tokensPerS }));
    const curve = this.latency?.depth_curve ?? [];
    const datasets: object[] = [
      { ...lineDataset(`predicted, batch ${s.batch}`, predicted, PALETTE[0]), pointRadius: 0 },
      { ...pointDataset('you are here', [{ x: s.context, y: predictDecode(s).tokensPerS }], PALETTE[2], 6), pointStyle: 'triangle' },
    ];
    if (curve.length) {
      datasets.push({
        ...lineDataset(
          'measured run: its ceiling',
          curve.map((d) => ({ x: d.depth, y: d.ceiling_tokens_per_s })),
          PALETTE[4],
          [6, 4],
        ),
        pointRadius: 0,
      });
      datasets.push(
        pointDataset(
          'measured run: decode',
          curve.map((d) => ({ x: d.depth, y: 1000 / d.tpot_ms })),
          PALETTE[1],
          4,
        ),
      );
    }
    return {
      type: 'scatter',
      data: { datasets: datasets as never },
      options: {
        scales: {
          x: { ...axis(theme, 'context depth (positions)'), min: 0, max: this.maxContext },
          y: axis(theme, 'decode tokens/s', 'linear', true),
        },
        plugins: { legend: { labels: { color: theme.fg, boxWidth: 14 } } },
      },
    };
  }

  override render() {
    return html`${super.render()}
      <p class="muted" id="what-if-caption">
        <strong>Predicted</strong>: the decode ceiling (tokens/s of all sequences) from the settings above.
        ${
          this.latency?.depth_curve?.length
            ? html`<strong>Measured run</strong>: decode tokens/s (1000 / TPOT) at each depth, and its own bandwidth ceiling — the measured bandwidth over the
                bytes per token that the same count (costOfStep) gives for the measured model on the measured device, with no compute cap — so it matches the
                prediction only when the settings above are the measured ones.`
            : ''
        }
      </p>`;
  }

  protected describe(): string {
    const s = this.scenario;
    if (!s) return 'What-if chart: no scenario.';
    const at0 = predictDecode({ ...s, context: 0 }).tokensPerS;
    const atMax = predictDecode({ ...s, context: this.maxContext }).tokensPerS;
    return `What-if chart: predicted decode ceiling ${num(at0)} tokens/s at context 0 falling to ${num(atMax)} at ${this.maxContext}, batch ${s.batch}.`;
  }
}

import { LitElement, html, css, type PropertyValues } from 'lit';
import { query } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import { chartRefusal } from './chart-guard.ts';
import type { Chart } from './chart-lib.ts';
import { themeColors } from './charts.ts';
import { downloadCanvasPng } from './download.ts';
import { shared } from './styles.ts';

let chartLib: Promise<typeof import('./chart-lib.ts')> | undefined;

/** Chart.js in its own chunk, loaded when the first chart draws (a failed load is retried on the next draw). */
function loadChartLib(): Promise<typeof import('./chart-lib.ts')> {
  chartLib ??= import('./chart-lib.ts').catch((e: unknown) => {
    chartLib = undefined;
    throw e;
  });
  return chartLib;
}

export interface Theme {
  fg: string;
  grid: string;
}

/**
 * What every chart element shares: a canvas with a text alternative (`describe()`), a Chart.js
 * chart created once and updated in place as live results arrive, colours that follow the
 * light/dark scheme, and a "Save PNG" button. Subclasses say what to draw in `chartConfig()`
 * (null: nothing yet) from their properties. Data that Chart.js cannot draw (see chart-guard.ts)
 * or a chart that throws while drawing leaves a message in the chart's place, never a frozen tab
 * or a hole in the report.
 */
export abstract class ChartBase extends LitElement {
  static override styles = [
    shared,
    css`
      .wrap {
        position: relative;
        height: 300px;
      }
      @media (max-width: 520px) {
        .wrap {
          height: 260px;
        }
      }
      .tools {
        display: flex;
        justify-content: flex-end;
        margin-top: 4px;
      }
      .empty {
        margin: 0;
        padding: 6px 0;
      }
      /* Nothing to draw yet: a one-line hint instead of an empty plot-sized box. */
      .wrap.idle {
        height: auto;
      }
      .wrap.idle canvas {
        display: none;
      }
      .problem {
        color: var(--error-fg);
        background: var(--error-bg);
      }
    `,
  ];

  /** Words for the chart, used in its PNG button's label and file name. */
  protected abstract readonly chartName: string;
  /** The chart to draw, or null when there is nothing to draw yet. */
  protected abstract chartConfig(theme: Theme): ChartConfiguration | null;
  /** A text alternative with the numbers a sighted reader takes from the chart. */
  protected abstract describe(): string;
  /** Shown in place of the chart while there is nothing to draw. */
  protected emptyText = 'Waiting for measurements…';

  @query('canvas') private canvas!: HTMLCanvasElement;
  private chart?: Chart;
  private config: ChartConfiguration | null = null;
  /** Why the chart is not drawn (refused data or a drawing error), shown in its place. */
  private problem?: string;
  /** Chart.js threw on this data; kept until a property changes, so a failed draw is not retried in a loop. */
  private drawFailure?: string;
  private readonly scheme = matchMedia('(prefers-color-scheme: dark)');
  private readonly onScheme = () => {
    this.chart?.destroy();
    this.chart = undefined;
    this.requestUpdate();
  };

  override connectedCallback(): void {
    super.connectedCallback();
    this.scheme.addEventListener('change', this.onScheme);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.scheme.removeEventListener('change', this.onScheme);
    this.chart?.destroy();
    this.chart = undefined;
  }

  protected override willUpdate(changed: PropertyValues): void {
    super.willUpdate(changed);
    if (changed.size > 0) this.drawFailure = undefined;
    try {
      this.config = this.chartConfig(themeColors(this));
      const refusal = this.config ? chartRefusal(this.config) : undefined;
      this.problem = refusal ? `Not drawn: ${refusal}.` : this.drawFailure;
    } catch (e) {
      this.config = null;
      this.problem = `Not drawn: ${(e as Error).message}`;
    }
  }

  override render() {
    return html`<div class="wrap ${this.config || this.problem ? '' : 'idle'}">
        <canvas role="img" aria-label=${this.problem ?? this.describe()}></canvas>
        ${
          this.problem
            ? html`<p class="empty problem" role="status">The ${this.chartName} chart could not be drawn. ${this.problem}</p>`
            : this.config
              ? ''
              : html`<p class="empty muted">${this.emptyText}</p>`
        }
      </div>
      <div class="tools">
        <button
          class="small secondary"
          @click=${this.savePng}
          ?disabled=${!this.config || this.problem !== undefined}
          aria-label=${`Save the ${this.chartName} chart as PNG`}
        >
          Save PNG
        </button>
      </div>`;
  }

  protected override updated(): void {
    const config = this.config;
    if (!config || this.problem) {
      this.chart?.destroy();
      this.chart = undefined;
      return;
    }
    void this.draw(config).catch((e: unknown) => {
      this.chart?.destroy();
      this.chart = undefined;
      this.drawFailure = `Not drawn: ${(e as Error).message}`;
      this.requestUpdate();
    });
  }

  private async draw(config: ChartConfiguration): Promise<void> {
    const { Chart } = await loadChartLib();
    // A newer update may have replaced the config (or emptied the chart) while Chart.js loaded.
    if (config !== this.config || this.problem) return;
    const base = { animation: false, responsive: true, maintainAspectRatio: false } as const;
    config.options = { ...base, ...config.options };
    if (this.chart && (this.chart.config as { type?: string }).type === config.type) {
      this.chart.data = config.data;
      this.chart.options = config.options;
      this.chart.update('none');
    } else {
      this.chart?.destroy();
      this.chart = new Chart(this.canvas, config);
    }
  }

  /** `describe()`, or what went wrong: a text alternative must not take the chart down with it. */
  private description(): string {
    try {
      return this.describe();
    } catch (e) {
      return `The ${this.chartName} chart cannot be described: ${(e as Error).message}`;
    }
  }

  private async savePng(): Promise<void> {
    const background = getComputedStyle(this).getPropertyValue('--card').trim() || '#fff';
    await downloadCanvasPng(this.canvas, background, `tokenscope-${this.chartName.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.png`);
  }
}

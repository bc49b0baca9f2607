import { LitElement, html, css, type PropertyValues } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';
import { attainableFlopsPerS, ridgePoint } from '../bench/roofline.ts';
import type { Ceilings } from '../bench/schema.ts';
import { Chart, PALETTE, themeColors } from './charts.ts';
import { shared } from './styles.ts';

/** A measured point on the roofline (a phase or a kernel). */
export interface RooflinePoint {
  label: string;
  /** FLOP per byte moved. */
  intensity: number;
  gflops: number;
}

/**
 * Log-log roofline (x: arithmetic intensity in FLOP/byte, y: GFLOP/s) drawn from the measured
 * roofs: the streaming-read bandwidth slope meets the matmul compute roof at the ridge point.
 * The f32 (and f16) FMA peaks are drawn dashed above it.
 */
@customElement('ts-roofline-chart')
export class RooflineChart extends LitElement {
  static override styles = [
    shared,
    css`
      .wrap {
        position: relative;
        height: 340px;
      }
    `,
  ];

  @property({ attribute: false }) ceilings: Ceilings | null = null;
  @property({ attribute: false }) points: RooflinePoint[] = [];
  @query('canvas') private canvas!: HTMLCanvasElement;
  private chart?: Chart;

  override render() {
    return html`<div class="wrap">
      <canvas role="img" aria-label=${this.describe()}></canvas>
    </div>`;
  }

  /** A text alternative for screen readers. */
  private describe(): string {
    const c = this.ceilings;
    if (!c) return 'Roofline chart: no measurement yet.';
    const ridge = ridgePoint(c.matmul_f32_gflops * 1e9, c.read_bandwidth_gbps * 1e9);
    return `Roofline chart: bandwidth ${c.read_bandwidth_gbps.toFixed(1)} GB/s, matmul roof ${c.matmul_f32_gflops.toFixed(1)} GFLOP/s, ridge point at ${ridge.toFixed(2)} FLOP/byte.`;
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('ceilings') || changed.has('points')) this.draw();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.chart?.destroy();
    this.chart = undefined;
  }

  private draw(): void {
    const c = this.ceilings;
    this.chart?.destroy();
    this.chart = undefined;
    if (!c || !this.canvas) return;
    const bw = c.read_bandwidth_gbps * 1e9;
    const compute = c.matmul_f32_gflops * 1e9;
    const ridge = ridgePoint(compute, bw);
    const xs = [1 / 64, ridge / 8, ridge, ridge * 8, Math.max(1024, ridge * 64)].sort((a, b) => a - b);
    const roof = xs.map((x) => ({ x, y: attainableFlopsPerS(x, compute, bw) / 1e9 }));
    const flat = (gflops: number) => [
      { x: xs[0], y: gflops },
      { x: xs[xs.length - 1], y: gflops },
    ];
    const { fg, grid } = themeColors(this);
    const datasets: object[] = [
      { label: `roof: ${c.read_bandwidth_gbps.toFixed(1)} GB/s read × intensity, capped by matmul`, data: roof, borderColor: PALETTE[0], showLine: true, pointRadius: 0, borderWidth: 2 },
      { label: `f32 FMA peak ${c.f32_gflops.toFixed(1)} GFLOP/s`, data: flat(c.f32_gflops), borderColor: PALETTE[1], borderDash: [6, 4], showLine: true, pointRadius: 0, borderWidth: 1.5 },
      { label: `ridge point ${ridge.toFixed(2)} FLOP/B`, data: [{ x: ridge, y: compute / 1e9 }], borderColor: PALETTE[2], backgroundColor: PALETTE[2], pointRadius: 6, pointStyle: 'triangle' },
    ];
    if (c.f16_gflops !== null) {
      datasets.push({ label: `f16 FMA peak ${c.f16_gflops.toFixed(1)} GFLOP/s`, data: flat(c.f16_gflops), borderColor: PALETTE[4], borderDash: [2, 3], showLine: true, pointRadius: 0, borderWidth: 1.5 });
    }
    this.points.forEach((p, i) => {
      datasets.push({ label: p.label, data: [{ x: p.intensity, y: p.gflops }], backgroundColor: PALETTE[(i + 3) % PALETTE.length], pointRadius: 5 });
    });
    this.chart = new Chart(this.canvas, {
      type: 'scatter',
      data: { datasets: datasets as never },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: { type: 'logarithmic', title: { display: true, text: 'arithmetic intensity (FLOP / byte)', color: fg }, ticks: { color: fg }, grid: { color: grid } },
          y: { type: 'logarithmic', title: { display: true, text: 'GFLOP/s', color: fg }, ticks: { color: fg }, grid: { color: grid } },
        },
        plugins: { legend: { labels: { color: fg, boxWidth: 14 } } },
      },
    });
  }
}

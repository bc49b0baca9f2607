import { css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { Chart as ChartJs, ChartConfiguration, Plugin } from 'chart.js';
import { attainableFlopsPerS } from '../measure/roofline.ts';
import { computeRoof, prefillGemmRoof, type Ceilings } from '../measure/schema.ts';
import type { DecodeRoofline } from '../serve/run.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset, pointDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';
import { roofsOf, sideOfRidge } from './headline.ts';
import { kernelXY, phasePoints, type LatencyView } from './series.ts';

/** The dashed roof's name: which of the two prefill GEMM roofs is the larger (the one drawn). */
function prefillGemmName(c: Ceilings): string {
  return prefillGemmRoof(c).key === 'matmul_q8_gflops' ? 'Prefill GEMM (8-bit activations)' : 'Prefill GEMM (f32 weights)';
}

/** A point drawn with its own label beside it ("prefill 64", "decode @ 80", "B = 4"). */
type Labelled = { x: number; y: number; tag?: string };

const isDecade = (v: number) => v > 0 && Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9;

/** Grid lines at decades only: the minor log ticks would hatch the plot. */
const decadeGrid = (theme: Theme) => ({ color: (c: { tick?: { value: number } }) => (c.tick && isDecade(c.tick.value) ? theme.grid : 'transparent') });

/** Decade ticks only (0.1, 1, 10, 100 …), written without trailing zeros. */
function decadeTicks(theme: Theme, big: boolean) {
  return {
    color: theme.fg,
    font: { size: big ? 18 : 12 },
    autoSkip: false,
    maxRotation: 0,
    callback: (value: number | string) => {
      const v = Number(value);
      const log = Math.log10(v);
      if (!isDecade(v)) return '';
      return v >= 1e4 || v < 1e-3 ? `1e${Math.round(log)}` : String(Number(v.toPrecision(1)));
    },
  };
}

/**
 * Draws under the datasets: the memory-bound (left of the ridge) and compute-bound regions
 * shaded, the ridge point's vertical line and label; over them: each point's own label.
 */
interface Decor {
  ridge: number;
  theme: Theme;
  big: boolean;
}

/** `decor` is read at each draw, so the chart (updated in place) follows the latest ridge, theme and size. */
function rooflineDecor(decor: Decor): Plugin<'scatter'> {
  const font = () => `${decor.big ? 20 : 12}px system-ui, sans-serif`;
  return {
    id: 'roofline-decor',
    beforeDatasetsDraw(chart: ChartJs) {
      const { ridge, theme } = decor;
      const { ctx, chartArea: a, scales } = chart;
      const xr = Math.min(Math.max(scales.x.getPixelForValue(ridge), a.left), a.right);
      ctx.save();
      ctx.fillStyle = 'rgba(78, 121, 167, 0.10)';
      ctx.fillRect(a.left, a.top, xr - a.left, a.bottom - a.top);
      ctx.fillStyle = 'rgba(242, 142, 43, 0.10)';
      ctx.fillRect(xr, a.top, a.right - xr, a.bottom - a.top);
      ctx.strokeStyle = theme.grid;
      ctx.setLineDash([4, 4]);
      ctx.beginPath();
      ctx.moveTo(xr, a.top);
      ctx.lineTo(xr, a.bottom);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = theme.fg;
      ctx.font = font();
      ctx.textBaseline = 'top';
      ctx.textAlign = 'left';
      ctx.fillText('memory-bound', a.left + 6, a.top + 6);
      ctx.textAlign = 'right';
      ctx.fillText('compute-bound', a.right - 6, a.top + 6);
      ctx.textAlign = xr - a.left > a.right - xr ? 'right' : 'left';
      ctx.textBaseline = 'bottom';
      ctx.fillText(`ridge ${num(ridge)} FLOP/byte`, xr + (ctx.textAlign === 'right' ? -6 : 6), a.bottom - 6);
      ctx.restore();
    },
    afterDatasetsDraw(chart: ChartJs) {
      const { ctx } = chart;
      ctx.save();
      ctx.font = font();
      ctx.fillStyle = decor.theme.fg;
      ctx.textBaseline = 'middle';
      ctx.textAlign = 'left';
      // Labels that would overlap an earlier one move down a line (decode dots of nearby depths sit close together).
      const placed: { x: number; y: number; w: number; h: number }[] = [];
      const h = decor.big ? 24 : 15;
      chart.data.datasets.forEach((ds, i) => {
        if (!chart.isDatasetVisible(i)) return;
        const meta = chart.getDatasetMeta(i);
        (ds.data as Labelled[]).forEach((p, j) => {
          const el = meta.data[j];
          if (!p?.tag || !el) return;
          const w = ctx.measureText(p.tag).width;
          const box = { x: el.x + 8, y: el.y, w, h };
          while (placed.some((q) => box.x < q.x + q.w && q.x < box.x + box.w && Math.abs(box.y - q.y) < h)) box.y += h;
          placed.push(box);
          ctx.fillText(p.tag, box.x, box.y);
        });
      });
      ctx.restore();
    },
  };
}

function otherPeakLine(c: Ceilings) {
  const other = computeRoof(c).other;
  return other ? html`<li><strong>${other.name}</strong> (dotted): ${num(other.gflops)} GFLOP/s, below the compute roof.</li>` : '';
}

/**
 * Log-log roofline (x: arithmetic intensity in FLOP/byte, y: GFLOP/s) from the measured roofs
 * (`roofsOf`, the ones the verdicts and the what-if panel use): the streaming-read bandwidth
 * slope meets the compute roof (the faster FMA peak) at the ridge point, labelled; left of it is
 * shaded memory-bound, right of it compute-bound. The prefill-GEMM roof (what the engine's own
 * linear kernel reaches) is dashed, the other FMA peak dotted. Measured phases are labelled dots ("prefill 64", "decode @ 64"); a serving
 * run's decode steps at each batch size B move right as B grows. The long descriptions sit in a
 * caption under the chart; "Present" shows it full screen with large type.
 */
@customElement('ts-roofline-chart')
export class RooflineChart extends ChartBase {
  static override styles = [
    ...ChartBase.styles,
    css`
      .wrap {
        height: 460px;
      }
      @media (max-width: 520px) {
        .wrap {
          height: min(420px, 70vh);
        }
      }
      :host([present]) {
        position: fixed;
        inset: 0;
        z-index: 1000;
        background: var(--card);
        padding: 16px 24px;
        overflow: auto;
      }
      :host([present]) .wrap {
        height: calc(100vh - 140px);
      }
      :host([present]) .caption {
        font-size: 1.2rem;
      }
      .caption {
        font-size: 0.9rem;
        margin: 6px 0 0;
      }
      .caption li {
        margin: 2px 0;
      }
    `,
  ];
  @property({ attribute: false }) ceilings: Ceilings | null = null;
  @property({ attribute: false }) latency: LatencyView | null = null;
  /** A serving run's decode steps by batch size. */
  @property({ attribute: false }) batches: DecodeRoofline[] | null = null;
  /** Full screen with large fonts, for a classroom. */
  @property({ type: Boolean, reflect: true }) present = false;
  @state() private presentNote = '';
  private readonly decor: Decor = { ridge: 1, theme: { fg: '#222', grid: '#ccc' }, big: false };
  private readonly decorPlugin = rooflineDecor(this.decor);
  protected readonly chartName = 'roofline';
  protected override emptyText = 'The roofline is drawn once the roofs are measured.';

  private readonly onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && this.present) void this.togglePresent();
  };

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('keydown', this.onKey);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('keydown', this.onKey);
  }

  private async togglePresent(): Promise<void> {
    this.present = !this.present;
    this.presentNote = this.present ? 'Press Esc or “Leave present mode” to return.' : '';
    try {
      if (this.present && !document.fullscreenElement) await this.requestFullscreen?.();
      else if (!this.present && document.fullscreenElement) await document.exitFullscreen();
    } catch {
      // Full screen refused (an iframe, a headless browser): the element still fills the window.
    }
  }

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const c = this.ceilings;
    if (!c) return null;
    const big = this.present;
    const roofs = roofsOf(c);
    const bw = roofs.bandwidthGBps * 1e9;
    const compute = roofs.computeGflops * 1e9;
    const ridge = roofs.ridge;
    Object.assign(this.decor, { ridge, theme, big });
    const points = this.latency ? phasePoints(this.latency) : { prefill: [], decode: [] };
    const batches = (this.batches ?? []).map((b) => ({ x: b.intensity, y: b.verdict.achievedFlopsPerS / 1e9, batch: b.batch, tag: `B = ${b.batch}` }));
    const kernels = this.latency ? kernelXY(this.latency).filter((k) => k.x > 0 && k.y > 0) : [];
    const measured = [...points.prefill, ...points.decode, ...batches, ...kernels];
    const lo = 10 ** Math.floor(Math.log10(Math.min(ridge / 100, 1 / 10, ...measured.map((p) => p.x / 2))));
    const hi = 10 ** Math.ceil(Math.log10(Math.max(ridge * 100, 100, ...measured.map((p) => p.x * 2))));
    const other = computeRoof(c).other;
    const ys = [roofs.computeGflops, roofs.matmulGflops, ...(other ? [other.gflops] : []), ...measured.map((p) => p.y), (bw * lo) / 1e9];
    const yLo = 10 ** Math.floor(Math.log10(Math.min(...ys) / 2));
    // Headroom above the highest roof so the flat roof never sits on the top border.
    const yHi = 10 ** Math.ceil(Math.log10(Math.max(...ys) * 3));
    const xs = [lo, ridge / 8, ridge, ridge * 8, hi].sort((a, b) => a - b);
    const roof = xs.map((x) => ({ x, y: attainableFlopsPerS(x, compute, bw) / 1e9 }));
    const flat = (gflops: number) => [
      { x: lo, y: gflops },
      { x: hi, y: gflops },
    ];
    const size = big ? 9 : 6;
    const gemmName = prefillGemmName(c);
    const datasets: object[] = [
      { ...lineDataset(`roof (bandwidth × intensity, capped by the ${roofs.computeName})`, roof, PALETTE[0]), pointRadius: 0, borderWidth: big ? 4 : 2.5 },
      { ...lineDataset(gemmName, flat(roofs.matmulGflops), PALETTE[1], [6, 4]), pointRadius: 0, borderWidth: 1.5 },
    ];
    if (other) datasets.push({ ...lineDataset(other.name, flat(other.gflops), PALETTE[4], [2, 3]), pointRadius: 0, borderWidth: 1.5 });
    if (points.prefill.length)
      datasets.push({
        ...pointDataset(
          'prefill',
          points.prefill.map((p) => ({ ...p, tag: `prefill ${p.tokens}` })),
          PALETTE[3],
          size,
        ),
        pointStyle: 'rectRot',
      });
    if (points.decode.length)
      datasets.push({
        ...pointDataset(
          'decode',
          points.decode.map((p) => ({ ...p, tag: `decode @ ${p.tokens}` })),
          PALETTE[6],
          size,
        ),
        pointStyle: 'circle',
      });
    if (kernels.length) datasets.push({ ...pointDataset('kernel classes (profile)', kernels, PALETTE[5], big ? 6 : 4), pointStyle: 'crossRot' });
    if (batches.length) datasets.push({ ...pointDataset('serving decode by batch', batches, PALETTE[7], size), pointStyle: 'rect' });
    const titled = (title: string) => ({
      ...axis(theme, title, 'logarithmic'),
      title: { display: true, text: title, color: theme.fg, font: { size: big ? 20 : 12 } },
    });
    return {
      type: 'scatter',
      data: { datasets: datasets as never },
      plugins: [this.decorPlugin],
      options: {
        scales: {
          x: { ...titled('arithmetic intensity (FLOP / byte)'), min: lo, max: hi, ticks: decadeTicks(theme, big), grid: decadeGrid(theme) },
          y: { ...titled('GFLOP/s'), min: yLo, max: yHi, ticks: decadeTicks(theme, big), grid: decadeGrid(theme) },
        },
        plugins: {
          legend: { labels: { color: theme.fg, boxWidth: big ? 24 : 14, font: { size: big ? 18 : 12 } } },
          tooltip: {
            callbacks: {
              label: (item) => {
                const p = item.raw as { x: number; y: number; tokens?: number; batch?: number; label?: string };
                const at =
                  p.label !== undefined
                    ? ` — ${p.label}`
                    : p.tokens !== undefined
                      ? ` (prompt ${p.tokens} tokens)`
                      : p.batch !== undefined
                        ? ` (B = ${p.batch})`
                        : '';
                return `${item.dataset.label}${at}: ${num(p.x)} FLOP/byte, ${num(p.y)} GFLOP/s`;
              },
            },
          },
        },
      },
    } as ChartConfiguration;
  }

  /** Where the decode dots sit: left (memory) or right (compute) of the ridge; null without any. */
  decodeSide(): 'memory' | 'compute' | null {
    const c = this.ceilings;
    const decode = this.latency ? phasePoints(this.latency).decode : [];
    if (!c || !decode.length) return null;
    return sideOfRidge(decode[0].x, roofsOf(c).ridge);
  }

  override render() {
    const c = this.ceilings;
    const roofs = c ? roofsOf(c) : null;
    const side = this.decodeSide();
    return html`${super.render()}
    ${
      roofs
        ? html`<ul class="caption muted" id="roofline-caption" data-decode-side=${side ?? ''}>
              <li>
                <strong>Roof</strong>: ${num(roofs.bandwidthGBps)} GB/s streaming read × intensity, capped by the ${roofs.computeName}
                ${num(roofs.computeGflops)} GFLOP/s; they meet at the ridge point, ${num(roofs.ridge)} FLOP/byte.
              </li>
              <li>
                <strong>${prefillGemmName(c!)}</strong> (dashed): ${num(roofs.matmulGflops)} GFLOP/s, what our prefill kernel reaches
                here${roofs.matmulGflops < roofs.computeGflops ? ' — below the FMA peak, so it binds first for prefill' : ''}.
              </li>
              ${otherPeakLine(c!)}
              ${side ? html`<li><strong>Decode</strong> sits on the <strong>${side}</strong> side of the ridge; a dot far below the roof is losing time to overhead.</li>` : ''}
            </ul>
            <button class="small secondary" id="present" @click=${() => this.togglePresent()}>
              ${this.present ? 'Leave present mode' : 'Present (full screen, large type)'}
            </button>
            <span class="muted" role="status">${this.presentNote}</span>`
        : ''
    }`;
  }

  protected describe(): string {
    const c = this.ceilings;
    if (!c) return 'Roofline chart: no measurement yet.';
    const roofs = roofsOf(c);
    const points = this.latency ? phasePoints(this.latency) : { prefill: [], decode: [] };
    const dots = [
      ...points.prefill.map((p) => `prefill at ${p.tokens} tokens: ${num(p.x)} FLOP/byte, ${num(p.y)} GFLOP/s`),
      ...points.decode.map((p) => `decode at ${p.tokens} tokens: ${num(p.x)} FLOP/byte, ${num(p.y)} GFLOP/s`),
      ...(this.latency ? kernelXY(this.latency) : []).map((k) => `${k.label}: ${num(k.x)} FLOP/byte, ${num(k.y)} GFLOP/s`),
      ...(this.batches ?? []).map((b) => `serving decode at B = ${b.batch}: ${num(b.intensity)} FLOP/byte, ${num(b.verdict.achievedFlopsPerS / 1e9)} GFLOP/s`),
    ];
    return `Roofline chart: bandwidth ${num(roofs.bandwidthGBps)} GB/s, ${roofs.computeName} ${num(roofs.computeGflops)} GFLOP/s (${prefillGemmName(c)} ${num(roofs.matmulGflops)}), ridge point at ${num(roofs.ridge)} FLOP/byte.${dots.length ? ` Measured: ${dots.join('; ')}.` : ''}`;
  }
}

import { customElement, property } from 'lit/decorators.js';
import type { ChartConfiguration } from 'chart.js';
import { attainableFlopsPerS, ridgePoint } from '../measure/roofline.ts';
import type { Ceilings } from '../measure/schema.ts';
import type { DecodeRoofline } from '../serve/run.ts';
import { ChartBase, type Theme } from './chart-base.ts';
import { axis, lineDataset, pointDataset } from './chart-parts.ts';
import { PALETTE } from './charts.ts';
import { num } from './format.ts';
import { kernelXY, phasePoints, type LatencyView } from './series.ts';

/**
 * Log-log roofline (x: arithmetic intensity in FLOP/byte, y: GFLOP/s) from the measured roofs:
 * the streaming-read bandwidth slope meets the f32 FMA peak (the compute roof the verdicts use) at
 * the ridge point; the tiled-matmul roof (what our prefill kernel reaches) and the f16 peak are
 * dashed. Measured phases are dots: prefill and decode at each
 * prompt length, from the sweep's roofline verdicts (cost-model FLOPs and bytes over time); and a
 * serving run's decode steps at each batch size B, which move right as B grows (B× the FLOPs per
 * weight byte).
 */
@customElement('ts-roofline-chart')
export class RooflineChart extends ChartBase {
  @property({ attribute: false }) ceilings: Ceilings | null = null;
  @property({ attribute: false }) latency: LatencyView | null = null;
  /** A serving run's decode steps by batch size. */
  @property({ attribute: false }) batches: DecodeRoofline[] | null = null;
  protected readonly chartName = 'roofline';
  protected override emptyText = 'The roofline is drawn once the roofs are measured.';

  protected chartConfig(theme: Theme): ChartConfiguration | null {
    const c = this.ceilings;
    if (!c) return null;
    const bw = c.read_bandwidth_gbps * 1e9;
    const compute = c.f32_gflops * 1e9;
    const ridge = ridgePoint(compute, bw);
    const points = this.latency ? phasePoints(this.latency) : { prefill: [], decode: [] };
    const batches = (this.batches ?? []).map((b) => ({ x: b.intensity, y: b.verdict.achievedFlopsPerS / 1e9, batch: b.batch }));
    const kernels = this.latency ? kernelXY(this.latency).filter((k) => k.x > 0 && k.y > 0) : [];
    const measuredX = [...points.prefill, ...points.decode, ...batches, ...kernels].map((p) => p.x);
    const lo = Math.min(1 / 16, ...measuredX.map((x) => x / 2));
    const hi = Math.max(1024, ridge * 64, ...measuredX.map((x) => x * 2));
    const xs = [lo, ridge / 8, ridge, ridge * 8, hi].sort((a, b) => a - b);
    const roof = xs.map((x) => ({ x, y: attainableFlopsPerS(x, compute, bw) / 1e9 }));
    const flat = (gflops: number) => [
      { x: lo, y: gflops },
      { x: hi, y: gflops },
    ];
    const datasets: object[] = [
      { ...lineDataset(`roof: ${num(c.read_bandwidth_gbps)} GB/s × intensity, capped by the f32 FMA peak ${num(c.f32_gflops)} GFLOP/s`, roof, PALETTE[0]), pointRadius: 0 },
      { ...lineDataset(`tiled f32 matmul ${num(c.matmul_f32_gflops)} GFLOP/s (what prefill's kernel reaches)`, flat(c.matmul_f32_gflops), PALETTE[1], [6, 4]), pointRadius: 0, borderWidth: 1.5 },
      { ...pointDataset(`ridge point ${num(ridge)} FLOP/byte`, [{ x: ridge, y: compute / 1e9 }], PALETTE[2], 6), pointStyle: 'triangle' },
    ];
    if (c.f16_gflops !== null) {
      datasets.push({ ...lineDataset(`f16 FMA peak ${num(c.f16_gflops)} GFLOP/s`, flat(c.f16_gflops), PALETTE[4], [2, 3]), pointRadius: 0, borderWidth: 1.5 });
    }
    if (points.prefill.length) datasets.push({ ...pointDataset('prefill (one dot per prompt length)', points.prefill, PALETTE[3], 6), pointStyle: 'rectRot' });
    if (points.decode.length) datasets.push({ ...pointDataset('decode (one dot per prompt length)', points.decode, PALETTE[6], 6), pointStyle: 'circle' });
    if (kernels.length) datasets.push({ ...pointDataset('kernel classes (profile mode; includes one pass per kernel)', kernels, PALETTE[5], 4), pointStyle: 'crossRot' });
    if (batches.length) datasets.push({ ...pointDataset('serving decode (one dot per batch size B)', batches, PALETTE[7], 6), pointStyle: 'rect' });
    return {
      type: 'scatter',
      data: { datasets: datasets as never },
      options: {
        scales: {
          x: axis(theme, 'arithmetic intensity (FLOP / byte)', 'logarithmic'),
          y: axis(theme, 'GFLOP/s', 'logarithmic'),
        },
        plugins: {
          legend: { labels: { color: theme.fg, boxWidth: 14 } },
          tooltip: {
            callbacks: {
              label: (item) => {
                const p = item.raw as { x: number; y: number; tokens?: number; batch?: number; label?: string };
                const at = p.label !== undefined ? ` — ${p.label}` : p.tokens !== undefined ? ` (prompt ${p.tokens} tokens)` : p.batch !== undefined ? ` (B = ${p.batch})` : '';
                return `${item.dataset.label}${at}: ${num(p.x)} FLOP/byte, ${num(p.y)} GFLOP/s`;
              },
            },
          },
        },
      },
    };
  }

  protected describe(): string {
    const c = this.ceilings;
    if (!c) return 'Roofline chart: no measurement yet.';
    const ridge = ridgePoint(c.f32_gflops * 1e9, c.read_bandwidth_gbps * 1e9);
    const points = this.latency ? phasePoints(this.latency) : { prefill: [], decode: [] };
    const dots = [
      ...points.prefill.map((p) => `prefill at ${p.tokens} tokens: ${num(p.x)} FLOP/byte, ${num(p.y)} GFLOP/s`),
      ...points.decode.map((p) => `decode at ${p.tokens} tokens: ${num(p.x)} FLOP/byte, ${num(p.y)} GFLOP/s`),
      ...(this.latency ? kernelXY(this.latency) : []).map((k) => `${k.label}: ${num(k.x)} FLOP/byte, ${num(k.y)} GFLOP/s`),
      ...(this.batches ?? []).map((b) => `serving decode at B = ${b.batch}: ${num(b.intensity)} FLOP/byte, ${num(b.verdict.achievedFlopsPerS / 1e9)} GFLOP/s`),
    ];
    return `Roofline chart: bandwidth ${num(c.read_bandwidth_gbps)} GB/s, f32 FMA peak ${num(c.f32_gflops)} GFLOP/s (tiled matmul ${num(c.matmul_f32_gflops)}), ridge point at ${num(ridge)} FLOP/byte.${dots.length ? ` Measured: ${dots.join('; ')}.` : ''}`;
  }
}

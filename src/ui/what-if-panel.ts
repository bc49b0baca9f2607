import { LitElement, html, css, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { PRESETS } from '../model/catalog.ts';
import type { BenchResult } from '../measure/schema.ts';
import { kvBytesPerElement } from '../kernels/select.ts';
import {
  BYTES_PER_WEIGHT,
  computeBoundBatch,
  decodeShapeOf,
  DEVICE_PRESETS,
  predictDecode,
  type DecodeScenario,
  type WeightFormatName,
} from '../measure/what-if.ts';
import { roofsOf } from './headline.ts';
import type { ModelInfo } from '../model/load.ts';
import * as explain from './explain.ts';
import { bytes, count, num } from './format.ts';
import { shared } from './styles.ts';
import './what-if-chart.ts';
import { guarded } from './guard.ts';

const FORMAT_LABELS: Record<WeightFormatName, string> = { f32: 'f32 — 4 bytes', f16: 'f16 — 2 bytes', q8_0: 'q8_0 — 34/32 bytes', q4_0: 'q4_0 — 18/32 bytes' };
const DEFAULT_SHAPE = 'llama-3.2-1b';
const MEASURED = 'measured';
/** The device choice: this report's measured roofs, a spec-sheet preset, or numbers typed in. */
const CUSTOM = 'custom';

/**
 * What if: device (measured, a spec-sheet preset, or typed in), bandwidth, compute roof, model
 * size, weight format, batch and context → the predicted decode ceiling (bandwidth ÷ bytes per
 * step, times the batch, capped by the compute roof), drawn against this report's measured
 * points. The measured roofs are the roofline's (`roofsOf`): read bandwidth and the f32 FMA
 * peak; the tiled-matmul kernel's lower figure is shown beside, with the batch where it binds.
 */
@customElement('ts-what-if')
export class WhatIfPanel extends LitElement {
  static override styles = [
    shared,
    css`
      .controls {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(200px, 1fr));
        gap: 12px 16px;
      }
      output {
        font-variant-numeric: tabular-nums;
      }
      .answer {
        font-size: 1.05rem;
        margin: 12px 0;
      }
    `,
  ];
  @property({ attribute: false }) result: BenchResult | null = null;
  @state() private shapeId = DEFAULT_SHAPE;
  @state() private format: WeightFormatName = 'q4_0';
  @state() private s: DecodeScenario = this.scenarioFor(null, DEFAULT_SHAPE);
  @state() private maxContext = 4096;
  @state() private deviceId = DEVICE_PRESETS[0].id;

  private model(): ModelInfo | null {
    return this.result?.model ?? null;
  }

  private scenarioFor(result: BenchResult | null, shapeId: string): DecodeScenario {
    const model = result?.model ?? null;
    const config =
      shapeId === MEASURED && model ? model.config : (PRESETS.find((p) => p.id === shapeId) ?? PRESETS.find((p) => p.id === DEFAULT_SHAPE)!).config;
    // The measured run's KV element type; a what-if without one assumes f16 (GPUs with shader-f16).
    const { parameters, shape } = decodeShapeOf(config, kvBytesPerElement(model?.kv_cache ?? 'f16'));
    const roofs = result?.ceilings ? roofsOf(result.ceilings) : null;
    const preset = DEVICE_PRESETS[0];
    return {
      bandwidthGBps: roofs?.bandwidthGBps ?? preset.bandwidthGBps,
      computeGflops: roofs?.computeGflops ?? preset.computeGflops,
      parameters,
      bytesPerWeight: BYTES_PER_WEIGHT[this.format],
      batch: 1,
      context: 512,
      shape,
    };
  }

  private pickDevice(id: string): void {
    this.deviceId = id;
    const c = this.result?.ceilings;
    if (id === MEASURED && c) this.set({ bandwidthGBps: roofsOf(c).bandwidthGBps, computeGflops: roofsOf(c).computeGflops });
    const preset = DEVICE_PRESETS.find((d) => d.id === id);
    if (preset) this.set({ bandwidthGBps: preset.bandwidthGBps, computeGflops: preset.computeGflops });
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (!changed.has('result')) return;
    const model = this.model();
    this.shapeId = model ? MEASURED : DEFAULT_SHAPE;
    this.deviceId = this.result?.ceilings ? MEASURED : DEVICE_PRESETS[0].id;
    const depths = (this.result?.latency?.depth_curve ?? []).map((d) => d.depth);
    this.maxContext = depths.length ? Math.max(64, Math.ceil((Math.max(...depths) * 2) / 64) * 64) : 4096;
    this.s = { ...this.scenarioFor(this.result, this.shapeId), context: Math.min(512, this.maxContext / 2) };
  }

  private set(next: Partial<DecodeScenario>): void {
    this.s = { ...this.s, ...next };
  }

  /** A number box with a slider under it (`slider: 'log'` moves in powers of ten). */
  private numberInput(
    id: string,
    label: string,
    value: number,
    min: number,
    max: number,
    step: number,
    apply: (n: number) => void,
    slider: 'linear' | 'log' | 'none' = 'linear',
  ) {
    const accept = (n: number) => {
      if (Number.isFinite(n) && n >= min && n <= max) apply(n);
    };
    const box = (e: Event) => accept(Number((e.target as HTMLInputElement).value));
    const log = (e: Event) => accept(Number((10 ** Number((e.target as HTMLInputElement).value)).toPrecision(3)));
    return html`<label
      >${label}
      <input id=${id} type="number" min=${min} max=${max} step=${step} .value=${String(value)} @change=${box} />
      ${slider === 'linear' ? html`<input type="range" aria-label=${label} min=${min} max=${max} step=${step} .value=${String(value)} @input=${box} />` : ''}
      ${
        slider === 'log'
          ? html`<input
              type="range"
              aria-label=${`${label}, logarithmic`}
              min=${Math.log10(min)}
              max=${Math.log10(max)}
              step="0.01"
              .value=${String(Math.log10(value))}
              @input=${log}
            />`
          : ''
      }
    </label>`;
  }

  override render() {
    return guarded('what-if panel', () => this.renderPanel());
  }

  private renderPanel() {
    const s = this.s;
    const p = predictDecode(s);
    const switchAt = computeBoundBatch(s);
    const latency = this.result?.latency ?? null;
    const model = this.model();
    const measured = this.result?.ceilings ? roofsOf(this.result.ceilings) : null;
    const onMeasured = this.deviceId === MEASURED && measured !== null;
    const kernelSwitch =
      onMeasured && measured.matmulGflops < measured.computeGflops ? computeBoundBatch({ ...s, computeGflops: measured.matmulGflops }) : null;
    const custom = (apply: () => void) => {
      apply();
      this.deviceId = CUSTOM;
    };
    return html`<div class="explain muted">${explain.whatIf}</div>
      <div class="controls">
        <label
          >Device
          <select id="wi-device" @change=${(e: Event) => this.pickDevice((e.target as HTMLSelectElement).value)}>
            ${measured ? html`<option value=${MEASURED} ?selected=${this.deviceId === MEASURED}>this device, measured (${num(measured.bandwidthGBps)} GB/s, ${num(measured.computeGflops)} GFLOP/s)</option>` : ''}
            <optgroup label="Spec-sheet figures (published peaks, not measured)">
              ${DEVICE_PRESETS.map((d) => html`<option value=${d.id} ?selected=${this.deviceId === d.id}>${d.name} — spec sheet</option>`)}
            </optgroup>
            <option value=${CUSTOM} ?selected=${this.deviceId === CUSTOM}>your own numbers</option>
          </select>
        </label>
        ${this.numberInput('wi-bw', 'Memory bandwidth (GB/s)', Number(s.bandwidthGBps.toPrecision(3)), 0.01, 8000, 0.01, (n) => custom(() => this.set({ bandwidthGBps: n })), 'log')}
        ${this.numberInput('wi-compute', 'Compute roof (GFLOP/s)', Number((s.computeGflops ?? 1).toPrecision(3)), 0.01, 1e6, 0.01, (n) => custom(() => this.set({ computeGflops: n })), 'log')}
        <label
          >Model shape
          <select
            id="wi-shape"
            @change=${(e: Event) => {
              this.shapeId = (e.target as HTMLSelectElement).value;
              const next = this.scenarioFor(this.result, this.shapeId);
              this.set({ parameters: next.parameters, shape: next.shape });
            }}
          >
            ${model ? html`<option value=${MEASURED} ?selected=${this.shapeId === MEASURED}>the measured model (${model.name})</option>` : ''}
            ${PRESETS.map((x) => html`<option value=${x.id} ?selected=${this.shapeId === x.id}>${x.title}</option>`)}
          </select>
        </label>
        ${this.numberInput('wi-params', 'Weights read per token (millions)', Number((s.parameters / 1e6).toFixed(3)), 0.001, 1e6, 0.001, (n) => this.set({ parameters: n * 1e6 }), 'none')}
        <label
          >Bytes per weight
          <select
            id="wi-format"
            @change=${(e: Event) => {
              this.format = (e.target as HTMLSelectElement).value as WeightFormatName;
              this.set({ bytesPerWeight: BYTES_PER_WEIGHT[this.format] });
            }}
          >
            ${(Object.keys(BYTES_PER_WEIGHT) as WeightFormatName[]).map((f) => html`<option value=${f} ?selected=${this.format === f}>${FORMAT_LABELS[f]}</option>`)}
          </select>
        </label>
        ${this.numberInput('wi-batch', 'Batch (sequences per step)', s.batch, 1, 256, 1, (n) => this.set({ batch: Math.round(n) }))}
        ${this.numberInput('wi-context', 'Context depth (positions)', s.context, 0, this.maxContext, 1, (n) => this.set({ context: Math.round(n) }))}
      </div>
      <p class="muted">
        ${
          onMeasured
            ? html`Roofs measured on this device — the same ones the roofline and the verdicts use: streaming read ${num(measured.bandwidthGBps)} GB/s and the
              f32 FMA peak ${num(measured.computeGflops)} GFLOP/s.`
            : DEVICE_PRESETS.some((d) => d.id === this.deviceId)
              ? html`<strong>Spec-sheet figures</strong>, not a measurement: peak bandwidth and peak f32 (non-tensor) FLOP/s as published; real kernels reach
                  less.`
              : 'Your own bandwidth and compute roof.'
        }
      </p>
      <p class="answer" role="status" aria-live="polite">
        Predicted decode ceiling: <output id="wi-answer" data-bound=${p.bound}><strong>${num(p.tokensPerS)} tokens/s</strong></output> in total,
        ${num(p.perSequenceTokensPerS)} per sequence — ${p.bound === 'memory' ? 'memory-bound' : 'compute-bound'}.
        <span class="muted"
          >A step reads ${bytes(p.bytesPerStep)} (${bytes(p.weightBytes)} of weights, ${bytes(p.kvBytes)} of KV cache) and does ${count(p.flopsPerStep)} FLOPs,
          ${num(p.intensity)} FLOP/byte.
          ${s.computeGflops === null ? 'No compute roof measured: bandwidth only.' : switchAt === 1 ? `The compute roof (${num(s.computeGflops)} GFLOP/s) binds already at batch 1.` : switchAt ? `At this context the compute roof (${num(s.computeGflops)} GFLOP/s) takes over from batch ${switchAt}.` : `Memory-bound at every batch up to 4096 against a ${num(s.computeGflops)} GFLOP/s compute roof.`}</span
        >
      </p>
      ${
        onMeasured && measured.matmulGflops < measured.computeGflops
          ? html`<p class="muted" id="wi-kernel">
              Two compute roofs here: the f32 FMA peak (${num(measured.computeGflops)} GFLOP/s, above) and what our tiled matmul kernel reaches
              (${num(measured.matmulGflops)} GFLOP/s). The kernel's is lower, so it binds first: against it compute takes over
              ${kernelSwitch === null ? 'at no batch up to 4096' : kernelSwitch === 1 ? 'already at batch 1' : `from batch ${kernelSwitch}`}.
            </p>`
          : ''
      }
      <ts-what-if-chart .scenario=${s} .maxContext=${this.maxContext} .latency=${latency}></ts-what-if-chart>`;
  }
}

import { LitElement, html, css, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { PRESETS } from '../model/catalog.ts';
import type { BenchResult } from '../measure/schema.ts';
import {
  closestQuantization,
  computeBoundBatch,
  DEVICE_PRESETS,
  planWeightBytes,
  predictDecode,
  weightsUnder,
  type DecodeScenario,
} from '../measure/what-if.ts';
import { QUANTIZATIONS, type Quantization } from '../model/recipes.ts';
import { roofsOf } from './headline.ts';
import type { ModelInfo } from '../model/load.ts';
import * as explain from './explain.ts';
import { bytes, count, num } from './format.ts';
import { shared } from './styles.ts';
import './what-if-chart.ts';
import { guarded } from './guard.ts';

const DEFAULT_SHAPE = 'llama-3.2-1b';
const MEASURED = 'measured';
/** The device choice: this report's measured roofs, a spec-sheet preset, or numbers typed in. */
const CUSTOM = 'custom';

/**
 * What if: device (measured, a spec-sheet preset, or typed in), bandwidth, compute roof, model
 * size, weight format, batch and context → the predicted decode ceiling (bandwidth ÷ bytes per
 * step, times the batch, capped by the compute roof), drawn against this report's measured
 * points. The measured roofs are the roofline's (`roofsOf`): read bandwidth and the faster FMA
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
  @state() private quant: Quantization = 'q4_0';
  @state() private s: DecodeScenario = this.scenarioFor(null, DEFAULT_SHAPE);
  @state() private maxContext = 4096;
  @state() private deviceId = DEVICE_PRESETS[0].id;

  private model(): ModelInfo | null {
    return this.result?.model ?? null;
  }

  private configFor(result: BenchResult | null, shapeId: string) {
    const model = result?.model ?? null;
    return shapeId === MEASURED && model ? model.config : (PRESETS.find((p) => p.id === shapeId) ?? PRESETS.find((p) => p.id === DEFAULT_SHAPE)!).config;
  }

  private scenarioFor(result: BenchResult | null, shapeId: string): DecodeScenario {
    const config = this.configFor(result, shapeId);
    const roofs = result?.ceilings ? roofsOf(result.ceilings) : null;
    const preset = DEVICE_PRESETS[0];
    return {
      bandwidthGBps: roofs?.bandwidthGBps ?? preset.bandwidthGBps,
      computeGflops: roofs?.computeGflops ?? preset.computeGflops,
      config,
      weights: weightsUnder(config, this.quant),
      // The measured run's KV element type; a what-if without one assumes f16 (GPUs with shader-f16).
      kv: result?.model?.kv_cache ?? 'f16',
      batch: 1,
      context: 512,
    };
  }

  /** A new model shape or quantization: the scenario's config and weights follow. */
  private reshape(): void {
    const config = this.configFor(this.result, this.shapeId);
    this.set({ config, weights: weightsUnder(config, this.quant) });
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
    this.quant = model ? closestQuantization(model.config, model.quantization, model.weight_bytes) : 'q4_0';
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
              this.reshape();
            }}
          >
            ${model ? html`<option value=${MEASURED} ?selected=${this.shapeId === MEASURED}>the measured model (${model.name})</option>` : ''}
            ${PRESETS.map((x) => html`<option value=${x.id} ?selected=${this.shapeId === x.id}>${x.title}</option>`)}
          </select>
        </label>
        <label
          >Quantization (llama-quantize's formats)
          <select
            id="wi-quant"
            @change=${(e: Event) => {
              this.quant = (e.target as HTMLSelectElement).value as Quantization;
              this.reshape();
            }}
          >
            ${QUANTIZATIONS.map((q) => html`<option value=${q} ?selected=${this.quant === q}>${q} — ${bytes(planWeightBytes(weightsUnder(s.config, q)))}</option>`)}
          </select>
        </label>
        ${this.numberInput('wi-batch', 'Batch (sequences per step)', s.batch, 1, 256, 1, (n) => this.set({ batch: Math.round(n) }))}
        ${this.numberInput('wi-context', 'Context depth (positions)', s.context, 0, this.maxContext, 1, (n) => this.set({ context: Math.round(n) }))}
      </div>
      <p class="muted">
        ${
          onMeasured
            ? html`Roofs measured on this device — the same ones the roofline and the verdicts use: streaming read ${num(measured.bandwidthGBps)} GB/s and the
              ${measured.computeName} ${num(measured.computeGflops)} GFLOP/s.`
            : DEVICE_PRESETS.some((d) => d.id === this.deviceId)
              ? html`<strong>Spec-sheet figures</strong>, not a measurement: peak bandwidth and peak f32 (non-tensor) FLOP/s as published; real kernels reach
                  less.`
              : 'Your own bandwidth and compute roof.'
        }
      </p>
      ${
        model && this.shapeId === MEASURED && model.quantization !== this.quant
          ? html`<p class="muted" id="wi-closest">
              The measured model's result records ${bytes(model.weight_bytes)} of weights (${model.quantization}) but not each matrix's format, so the panel
              starts on the closest llama-quantize mix, ${this.quant} (${bytes(planWeightBytes(s.weights))}).
            </p>`
          : ''
      }
      <p class="answer" role="status" aria-live="polite">
        Predicted decode ceiling: <output id="wi-answer" data-bound=${p.bound}><strong>${num(p.tokensPerS)} tokens/s</strong></output> in total,
        ${num(p.perSequenceTokensPerS)} per sequence — ${p.bound === 'memory' ? 'memory-bound' : 'compute-bound'}.
        <span class="muted"
          >A step reads ${bytes(p.bytesPerStep)} (${bytes(p.weightBytes)} in the matrix ops, ${bytes(p.kvBytes)} in attention, mostly its KV cache) and does
          ${count(p.flopsPerStep)} FLOPs, ${num(p.intensity)} FLOP/byte.
          ${s.computeGflops === null ? 'No compute roof measured: bandwidth only.' : switchAt === 1 ? `The compute roof (${num(s.computeGflops)} GFLOP/s) binds already at batch 1.` : switchAt ? `At this context the compute roof (${num(s.computeGflops)} GFLOP/s) takes over from batch ${switchAt}.` : `Memory-bound at every batch up to 4096 against a ${num(s.computeGflops)} GFLOP/s compute roof.`}</span
        >
      </p>
      ${
        onMeasured && measured.matmulGflops < measured.computeGflops
          ? html`<p class="muted" id="wi-kernel">
              Two compute roofs here: the ${measured.computeName} (${num(measured.computeGflops)} GFLOP/s, above) and what our prefill GEMM reaches
              (${num(measured.matmulGflops)} GFLOP/s). The kernel's is lower, so it binds first: against it compute takes over
              ${kernelSwitch === null ? 'at no batch up to 4096' : kernelSwitch === 1 ? 'already at batch 1' : `from batch ${kernelSwitch}`}.
            </p>`
          : ''
      }
      <ts-what-if-chart .scenario=${s} .maxContext=${this.maxContext} .latency=${latency}></ts-what-if-chart>`;
  }
}

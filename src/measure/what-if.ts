/**
 * What-if predictions for decode: the roofline applied to one decode step of a batch, as pure
 * functions of a few numbers so the page can redraw them as a slider moves.
 * Definitions: docs/METRICS.md § Roofline.
 *
 * One step of a batch of B sequences, each attending `context` positions, counted by step.ts's
 * costOfStep — the same count the engine, the roofline and the preflight use:
 *   bytes  = every matrix once (shared by the batch) + per sequence its K/V, activations and one embedding row
 *   FLOPs  = B · (2 per weight + attention at that context + norms, RoPE, sampling)
 *   time  ≥ max(bytes / bandwidth, FLOPs / compute roof)
 *   tokens/s (all sequences) = B / time; per sequence = 1 / time.
 */
import type { KvElement } from '../kernels/select.ts';
import type { ModelConfig } from '../model/config.ts';
import { weightBytes } from '../kernels/weights.ts';
import { matricesUnder } from '../model/choice.ts';
import { QUANTIZATIONS, type Quantization } from '../model/recipes.ts';
import { costOfStep, decodeRows, weightPlan, type WeightPlan } from '../model/step.ts';
import { requirePositive } from './stats.ts';

export interface DecodeScenario {
  bandwidthGBps: number;
  /** Compute roof; without one the prediction is bandwidth-only. */
  computeGflops: number | null;
  config: ModelConfig;
  /** Every matrix's format and shape (weightsUnder for a llama-quantize mix). */
  weights: WeightPlan;
  /** The KV cache's element type (kvElement in kernels/select.ts: f16 where the device has shader-f16). */
  kv: KvElement;
  batch: number;
  /** Positions each sequence attends (its own included). */
  context: number;
}

export interface DecodePrediction {
  /** Bytes of the matrix ops (weights once, activations per row). */
  weightBytes: number;
  /** Bytes the attention of the whole batch reads and writes: its K/V cache above all. */
  kvBytes: number;
  bytesPerStep: number;
  flopsPerStep: number;
  /** FLOPs per byte of one step: grows with the batch, since the weights are read once for all. */
  intensity: number;
  /** Bandwidth-only step time and compute-only step time, ms. */
  memoryMs: number;
  computeMs: number | null;
  /** Tokens per second of the whole batch, capped by whichever roof is lower. */
  tokensPerS: number;
  /** Tokens per second one sequence sees (1 / step time). */
  perSequenceTokensPerS: number;
  bound: 'memory' | 'compute';
}

/** The weights of `config` as llama-quantize's `quant` would give them (the presets' formats). */
export function weightsUnder(config: ModelConfig, quant: Quantization): WeightPlan {
  return weightPlan(config, matricesUnder(config, quant));
}

/** Bytes every matrix of a plan holds (the LM head once when tied). */
export function planWeightBytes(w: WeightPlan): number {
  const all = [w.tokenEmbd, ...w.layers.flatMap((l) => [...l.qkv, l.wo, ...l.gateUp, l.wDown])];
  if (w.output !== w.tokenEmbd) all.push(w.output);
  return all.reduce((n, m) => n + weightBytes(m.format, m.rows, m.cols), 0);
}

/**
 * The quantization whose planned weights come closest to `weightBytes` (a measured model's): the
 * run's own where its name is one, else the nearest mix — a measured file's per-matrix formats are not in its result.
 */
export function closestQuantization(config: ModelConfig, quantization: string, weightBytes: number): Quantization {
  const named = QUANTIZATIONS.find((q) => q === quantization);
  if (named) return named;
  let best: Quantization = 'q4_0';
  let gap = Infinity;
  for (const q of QUANTIZATIONS) {
    const d = Math.abs(planWeightBytes(weightsUnder(config, q)) - weightBytes);
    if (d < gap) [best, gap] = [q, d];
  }
  return best;
}

export function predictDecode(s: DecodeScenario): DecodePrediction {
  requirePositive({ bandwidthGBps: s.bandwidthGBps, batch: s.batch });
  if (s.computeGflops !== null) requirePositive({ computeGflops: s.computeGflops });
  const cost = costOfStep(s.config, s.weights, { rows: decodeRows(s.batch, Math.max(0, s.context - 1)), headRows: s.batch, kv: s.kv });
  const kvBytes = cost.byKind.attention?.bytes ?? 0;
  const bytesPerStep = cost.total.bytes;
  const flopsPerStep = cost.total.flops;
  const memoryMs = (1000 * bytesPerStep) / (s.bandwidthGBps * 1e9);
  const computeMs = s.computeGflops === null ? null : (1000 * flopsPerStep) / (s.computeGflops * 1e9);
  const stepMs = Math.max(memoryMs, computeMs ?? 0);
  return {
    weightBytes: bytesPerStep - kvBytes,
    kvBytes,
    bytesPerStep,
    flopsPerStep,
    intensity: flopsPerStep / bytesPerStep,
    memoryMs,
    computeMs,
    tokensPerS: (1000 * s.batch) / stepMs,
    perSequenceTokensPerS: 1000 / stepMs,
    bound: computeMs !== null && computeMs > memoryMs ? 'compute' : 'memory',
  };
}

/** The prediction at each context depth (for a curve against measured points). */
export function predictOverContext(s: DecodeScenario, contexts: readonly number[]): { context: number; tokensPerS: number }[] {
  return contexts.map((context) => ({ context, tokensPerS: predictDecode({ ...s, context }).tokensPerS }));
}

/**
 * The batch at which a step stops being memory-bound (compute time catches up with memory time),
 * or null when it never does within `maxBatch` (or there is no compute roof).
 */
export function computeBoundBatch(s: DecodeScenario, maxBatch = 4096): number | null {
  for (let batch = 1; batch <= maxBatch; batch *= 2) {
    if (predictDecode({ ...s, batch }).bound === 'compute') {
      let lo = batch / 2;
      let hi = batch;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (predictDecode({ ...s, batch: mid }).bound === 'compute') hi = mid;
        else lo = mid;
      }
      return Math.max(1, hi);
    }
  }
  return null;
}

/** A device's published figures, for the what-if panel beside "this device, measured". */
export interface DevicePreset {
  id: string;
  name: string;
  /** Peak memory bandwidth from the spec sheet, GB/s. */
  bandwidthGBps: number;
  /** Peak f32 (non-tensor) throughput from the spec sheet, GFLOP/s: what f32 FMA kernels can reach. */
  computeGflops: number;
}

/**
 * Spec-sheet figures (vendor datasheets): peak DRAM/HBM bandwidth and peak f32 vector FLOP/s
 * (no tensor cores, which our f32 kernels do not use). Real kernels reach less — measured
 * streaming reads typically 70–90% of the bandwidth figure.
 */
export const DEVICE_PRESETS: readonly DevicePreset[] = [
  { id: 'rtx-4090', name: 'NVIDIA GeForce RTX 4090', bandwidthGBps: 1008, computeGflops: 82_600 },
  { id: 'h100-sxm', name: 'NVIDIA H100 SXM', bandwidthGBps: 3350, computeGflops: 67_000 },
  { id: 'a100-80-sxm', name: 'NVIDIA A100 80 GB SXM', bandwidthGBps: 2039, computeGflops: 19_500 },
  { id: 'rx-7900-xtx', name: 'AMD Radeon RX 7900 XTX', bandwidthGBps: 960, computeGflops: 61_400 },
  { id: 'm1-max', name: 'Apple M1 Max (32-core GPU)', bandwidthGBps: 400, computeGflops: 10_400 },
  { id: 'm2', name: 'Apple M2 (10-core GPU)', bandwidthGBps: 100, computeGflops: 3_600 },
];

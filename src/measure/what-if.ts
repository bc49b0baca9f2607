/**
 * What-if predictions for decode: the roofline applied to one decode step of a batch, as pure
 * functions of a few numbers so the page can redraw them as a slider moves.
 * Definitions: docs/METRICS.md § Roofline.
 *
 * One step of a batch of B sequences, each attending `context` positions:
 *   bytes  = weights (read once, shared by the batch) + B · KV bytes at that context
 *   FLOPs  = B · (2 · parameters + attention FLOPs at that context)
 *   time  ≥ max(bytes / bandwidth, FLOPs / compute roof)
 *   tokens/s (all sequences) = B / time; per sequence = 1 / time.
 */
import { parameterCount } from '../model/catalog.ts';
import type { ModelConfig } from '../model/config.ts';
import { requirePositive } from './stats.ts';

/** Bytes per weight of the formats our kernels read (Q8_0: 34 bytes per 32, Q4_0: 18 per 32). */
export const BYTES_PER_WEIGHT = { f32: 4, f16: 2, q8_0: 34 / 32, q4_0: 18 / 32 } as const;
export type WeightFormatName = keyof typeof BYTES_PER_WEIGHT;

/** The transformer shape that sets the KV cache and the attention FLOPs. */
export interface AttentionShape {
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  /** Bytes per KV-cache element (our engine: 2 where the device has shader-f16, else 4; kvBytesPerElement in kernels/select.ts). */
  kvBytesPerElement: number;
}

export interface DecodeScenario {
  bandwidthGBps: number;
  /** Compute roof; without one the prediction is bandwidth-only. */
  computeGflops: number | null;
  /** Weights read per decode step (every matrix; an untied embedding table is only looked up). */
  parameters: number;
  bytesPerWeight: number;
  batch: number;
  /** Positions each sequence attends. */
  context: number;
  shape: AttentionShape;
}

export interface DecodePrediction {
  weightBytes: number;
  /** KV bytes the whole batch reads in one step. */
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

/** KV bytes one sequence reads per attended position: 2 (K and V) · layers · kv_heads · head_dim · bytes/element. */
export function kvBytesPerPosition(s: AttentionShape): number {
  return 2 * s.layers * s.kvHeads * s.headDim * s.kvBytesPerElement;
}

/** Attention FLOPs per token per attended position: QKᵀ and PV, 2 FLOPs each per head dimension. */
export function attentionFlopsPerPosition(s: AttentionShape): number {
  return 4 * s.layers * s.heads * s.headDim;
}

/**
 * The weights one decode step reads and the attention shape of a model: every parameter except an
 * untied token-embedding table, of which a step looks up one row, with KV elements of kvBytesPerElement (f32: 4, f16: 2).
 */
export function decodeShapeOf(c: ModelConfig, kvBytesPerElement = 4): { parameters: number; shape: AttentionShape } {
  const lookedUp = c.tiedEmbeddings ? 0 : c.vocabSize * c.dim;
  return {
    parameters: parameterCount(c) - lookedUp,
    shape: { layers: c.nLayers, heads: c.nHeads, kvHeads: c.nKvHeads, headDim: c.headDim, kvBytesPerElement },
  };
}

export function predictDecode(s: DecodeScenario): DecodePrediction {
  requirePositive({ bandwidthGBps: s.bandwidthGBps, parameters: s.parameters, bytesPerWeight: s.bytesPerWeight, batch: s.batch });
  if (s.computeGflops !== null) requirePositive({ computeGflops: s.computeGflops });
  const context = Math.max(0, s.context);
  const weightBytes = s.parameters * s.bytesPerWeight;
  const kvBytes = s.batch * kvBytesPerPosition(s.shape) * context;
  const bytesPerStep = weightBytes + kvBytes;
  const flopsPerStep = s.batch * (2 * s.parameters + attentionFlopsPerPosition(s.shape) * context);
  const memoryMs = (1000 * bytesPerStep) / (s.bandwidthGBps * 1e9);
  const computeMs = s.computeGflops === null ? null : (1000 * flopsPerStep) / (s.computeGflops * 1e9);
  const stepMs = Math.max(memoryMs, computeMs ?? 0);
  return {
    weightBytes,
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

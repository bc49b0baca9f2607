/**
 * CPU oracles for the layer kernels where src/model/reference.ts has none in the kernels' shape
 * (the row table, the slot-major KV cache, RoPE's f32 angle). Test-only.
 */
import type { RowDesc } from '../../src/kernels/rows.ts';
import type { RopeConfig } from '../../src/kernels/rope-store.ts';
import { ropeFrequencies } from '../../src/model/variants.ts';
import { attention as attentionOneRow } from '../../src/model/reference.ts';

/**
 * RoPE as llama.cpp computes it: freq in f32, angle = f32(pos · freq) (one rounding), then
 * cos/sin of that f32 angle in f64. x (R, nHeads·headDim) is rotated in place.
 */
export function ropeRef(x: Float32Array, rows: readonly RowDesc[], nHeads: number, cfg: RopeConfig & { ropeTheta: number }): void {
  const freqs = ropeFrequencies(cfg.ropeDim, cfg.ropeTheta);
  const half = cfg.ropeDim / 2;
  rows.forEach(({ pos }, r) => {
    for (let h = 0; h < nHeads; h++) {
      const head = (r * nHeads + h) * cfg.headDim;
      for (let i = 0; i < half; i++) {
        const angle = Math.fround(pos * freqs[i]);
        const [a, b] = cfg.ropeStyle === 'neox' ? [head + i, head + i + half] : [head + 2 * i, head + 2 * i + 1];
        const [x0, x1] = [x[a], x[b]];
        x[a] = x0 * Math.cos(angle) - x1 * Math.sin(angle);
        x[b] = x0 * Math.sin(angle) + x1 * Math.cos(angle);
      }
    }
  });
}

export interface AttentionCase {
  nHeads: number;
  nKvHeads: number;
  headDim: number;
  maxSeq: number;
  /** Sliding window (0 or absent: none). */
  window?: number;
}

/**
 * Causal GQA attention of each row over keys 0…pos of its slot in caches (slots, maxSeq, kvDim):
 * the model reference's one-position attention with its (layer, seqLen) as (slot, maxSeq).
 */
export function attentionRef(q: Float32Array, kCache: Float32Array, vCache: Float32Array, rows: readonly RowDesc[], c: AttentionCase): Float32Array {
  const width = c.nHeads * c.headDim;
  const out = new Float32Array(rows.length * width);
  const scratch = new Float32Array(c.maxSeq);
  rows.forEach(({ slot, pos }, r) => {
    if (c.window && pos + 1 > c.window) {
      windowed(out.subarray(r * width, (r + 1) * width), q.subarray(r * width, (r + 1) * width), kCache, vCache, slot, pos, c);
      return;
    }
    attentionOneRow(out.subarray(r * width, (r + 1) * width), q.subarray(r * width, (r + 1) * width), kCache, vCache, scratch, slot, pos, c.maxSeq, c);
  });
  return out;
}

/** One row's attention over keys pos−window+1…pos of its slot (f64 softmax). */
function windowed(out: Float32Array, q: Float32Array, kCache: Float32Array, vCache: Float32Array, slot: number, pos: number, c: AttentionCase): void {
  const kvDim = c.nKvHeads * c.headDim;
  const group = c.nHeads / c.nKvHeads;
  const first = pos + 1 - (c.window ?? 0);
  for (let h = 0; h < c.nHeads; h++) {
    const kvh = Math.floor(h / group) * c.headDim;
    const scores: number[] = [];
    for (let t = first; t <= pos; t++) {
      let dot = 0;
      for (let i = 0; i < c.headDim; i++) dot += q[h * c.headDim + i] * kCache[(slot * c.maxSeq + t) * kvDim + kvh + i];
      scores.push(dot / Math.sqrt(c.headDim));
    }
    const max = Math.max(...scores);
    const e = scores.map((x) => Math.exp(x - max));
    const sum = e.reduce((a, b) => a + b, 0);
    for (let i = 0; i < c.headDim; i++) {
      let acc = 0;
      e.forEach((w, j) => (acc += w * vCache[(slot * c.maxSeq + first + j) * kvDim + kvh + i]));
      out[h * c.headDim + i] = acc / sum;
    }
  }
}

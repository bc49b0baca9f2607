/**
 * CPU oracles for the layer kernels where src/model/reference.ts has none in the kernels' shape
 * (the row table, the slot-major KV cache, RoPE's f32 angle). Test-only.
 */
import type { RowDesc } from '../../src/kernels/rows.ts';
import { ropeFrequencies, type RopeConfig } from '../../src/kernels/rope.ts';
import { attention as attentionOneRow } from '../../src/model/reference.ts';

/**
 * RoPE as llama.cpp computes it: freq in f32, angle = f32(pos · freq) (one rounding), then
 * cos/sin of that f32 angle in f64. x (R, nHeads·headDim) is rotated in place.
 */
export function ropeRef(x: Float32Array, rows: readonly RowDesc[], nHeads: number, cfg: RopeConfig): void {
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
    attentionOneRow(out.subarray(r * width, (r + 1) * width), q.subarray(r * width, (r + 1) * width), kCache, vCache, scratch, slot, pos, c.maxSeq, c);
  });
  return out;
}

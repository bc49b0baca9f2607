/**
 * The CPU twin of shaders/sample.wgsl — the same RNG, the same 4-bit digit search for the thresholds, the same
 * index-order draw — for token-for-token checks of the GPU. Test-only. Masses are summed in f64
 * (the GPU sums f32 in its own order), so the twin also reports how close its closest call was:
 * where that margin is tiny the GPU may fairly land on the other side.
 */
import type { SamplingParams } from '../../src/kernels/sampling.ts';

/** PCG hash (Jarzynski & Olano 2020), as in the shader. */
export function pcg(v: number): number {
  const state = (Math.imul(v >>> 0, 747796405) + 2891336453) >>> 0;
  const word = Math.imul((state >>> ((state >>> 28) + 4)) ^ state, 277803737) >>> 0;
  return ((word >>> 22) ^ word) >>> 0;
}

/** The draw u ∈ [0, 1) of (seed, step, row). */
export function uniformDraw(seed: number, step: number, row: number): number {
  return (pcg((pcg((pcg(row) + step) >>> 0) + seed) >>> 0) >>> 8) / 16777216;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** A u32 that orders like the f32 value. */
export function orderKey(l: number): number {
  f32[0] = l;
  const bits = u32[0];
  return (bits & 0x80000000 ? ~bits : bits | 0x80000000) >>> 0;
}

export interface TwinDraw {
  token: number;
  /** Indices kept by temperature/top-k/top-p. */
  kept: number[];
  /** Relative distance of the closest float-sensitive decision to its boundary (Infinity: none). */
  margin: number;
}

export function sampleTwin(logits: Float32Array, row: number, p: SamplingParams): TwinDraw {
  const vocab = logits.length;
  const lmax = logits.reduce((m, l) => Math.max(m, l), -Infinity);
  const keys = Array.from(logits, orderKey);
  const weights = Array.from(logits, (l) => (p.temperature === 0 ? 1 : Math.fround(Math.exp(Math.fround(Math.fround(l - lmax) / Math.fround(p.temperature))))));
  const mass = (t: number) => keys.reduce((m, k, i) => (k >= t ? m + weights[i] : m), 0);
  let margin = Infinity;

  // The largest key t whose tally (of keys ≥ max(t, floor)) is positive and ≥ need, 4 bits per
  // pass over the 16 candidates t | d << shift, as the shader's `search`.
  const search = (floor: number, tally: (i: number) => number, need: number, closeCall: boolean) => {
    let t = 0;
    for (let shift = 28; shift >= 0; shift -= 4) {
      let best = 0;
      for (let d = 1; d < 16; d++) {
        const candidate = (t | (d << shift)) >>> 0;
        const sum = keys.reduce((m, k, i) => (k >= floor && k >= candidate ? m + tally(i) : m), 0);
        if (closeCall && sum > 0) margin = Math.min(margin, Math.abs(sum - need) / need);
        if (sum > 0 && sum >= need) best = d;
      }
      t = (t | (best << shift)) >>> 0;
    }
    return t;
  };

  let threshold = orderKey(lmax);
  if (p.temperature > 0) {
    threshold = 0;
    if (p.topK > 0 && p.topK < vocab) threshold = search(0, () => 1, p.topK, false);
    if (p.topP < 1) {
      const wanted = Math.fround(p.topP) * mass(threshold);
      threshold = Math.max(
        search(threshold, (i) => weights[i], wanted, true),
        threshold,
      );
    }
  }

  const kept = keys.flatMap((k, i) => (k >= threshold ? [i] : []));
  const total = kept.reduce((m, i) => m + weights[i], 0);
  const target = p.temperature === 0 ? 0 : uniformDraw(p.seed, p.step, row) * total;
  let running = 0;
  let token = -1;
  for (const i of kept) {
    if (weights[i] <= 0) continue;
    token = i;
    const before = running;
    running += weights[i];
    if (running > target) {
      if (p.temperature > 0) margin = Math.min(margin, (target - before) / total, (running - target) / total);
      break;
    }
  }
  return { token, kept, margin };
}

/**
 * The one seeded PRNG every layer uses (synthetic test models, workloads, random prompts), so the
 * same seed means the same numbers everywhere.
 */

/** A uniform draw in [0, 1). */
export type Random = () => number;

/**
 * mulberry32 (Tommy Ettinger, public domain): a 32-bit state advanced by 0x6D2B79F5 and hashed to
 * the output; period 2³², ample for workloads of thousands of requests. Returns u32 / 2³² ∈ [0, 1).
 */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32;
  };
}

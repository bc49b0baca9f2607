import { describe, expect, it } from 'vitest';
import { GGMLType, GGML_BLOCK, ggmlTypeName, type GGMLType as GGMLTypeId } from '../../../src/model/gguf/types.ts';
import { bf16ToF32, dequantize } from '../../../src/model/quant.ts';
import { encodeTensor, f32ToBf16Bits } from '../../../src/model/quantize.ts';
import { nearestInt } from '../../../src/model/quantize-k.ts';
import { mulberry32 } from '../../../src/random.ts';

/** Σ(x̂ − x)² / Σx² (ggml test-backend-ops' NMSE). */
function nmse(got: Float32Array, want: Float32Array): number {
  let err = 0;
  let norm = 0;
  for (let i = 0; i < want.length; i++) {
    err += (got[i] - want[i]) ** 2;
    norm += want[i] ** 2;
  }
  return err / norm;
}

const uniform = (n: number, seed: number, scale = 1) => {
  const random = mulberry32(seed);
  return Float32Array.from({ length: n }, () => (2 * random() - 1) * scale);
};

/**
 * Round-trip NMSE bounds on uniform(−1, 1) values. A uniform quantizer with step Δ has error
 * variance Δ²/12 against the values' 1/3, so NMSE ≈ Δ²/4; Δ per type: Q8_0 amax/127 ≈ 1/127
 * (1.6e-5), Q4_0 1/8 (3.9e-3), Q4_1 2/15 (4.4e-3), Q5_0 1/16 (9.8e-4), Q5_1 2/31 (1.0e-3), Q4_K
 * ≈ 2/15 per sub-block less what the scale search gains (≤ 4.4e-3), Q5_K ≈ 2/31 (≤ 1.0e-3), Q6_K
 * 1/32 per 16 values (2.4e-4); BF16 keeps 8 significant bits (relative 2⁻⁹: ≈ 1e-6), F16 11
 * (≈ 2e-8). Bounds are 1.5× those (the 6-bit K-quant scales and f16 block scales add a little);
 * a wrong bit layout gives NMSE ≳ 0.1.
 */
const BOUND: Partial<Record<GGMLTypeId, number>> = {
  [GGMLType.F16]: 1e-7,
  [GGMLType.BF16]: 3e-6,
  [GGMLType.Q8_0]: 2.5e-5,
  [GGMLType.Q4_0]: 6e-3,
  [GGMLType.Q4_1]: 6.6e-3,
  [GGMLType.Q5_0]: 1.5e-3,
  [GGMLType.Q5_1]: 1.6e-3,
  [GGMLType.Q4_K]: 6.6e-3,
  [GGMLType.Q5_K]: 1.6e-3,
  [GGMLType.Q6_K]: 3.6e-4,
};
const TYPES = Object.keys(BOUND).map(Number) as GGMLTypeId[];
const name = (t: GGMLTypeId) => ggmlTypeName(t)!;

describe('every tensor type: quantize → dequantize', () => {
  it.each(TYPES.map((t) => [name(t), t] as const))('%s round-trips uniform values within its NMSE bound, at any scale', (_n, type) => {
    const x = uniform(4096, 7);
    const bytes = encodeTensor(x, type);
    expect(bytes.length).toBe((4096 / GGML_BLOCK[type].elements) * GGML_BLOCK[type].bytes);
    const err = nmse(dequantize(type, bytes, x.length), x);
    expect(err).toBeLessThan(BOUND[type]!);
    expect(err).toBeGreaterThan(0);
    // Scale invariance within the f16 range: the error relative to the values stays about the same.
    // At ×1e-3 Q6_K's super-block scale (amax/4096 ≈ 2.4e-7) is a subnormal half with fewer
    // significant bits, which costs it up to 2× (measured 1.7×); every other type stays within 1.2×.
    for (const scale of [1e-3, 1e3]) {
      const xs = x.map((v) => v * scale);
      const slack = type === GGMLType.Q6_K && scale < 1 ? 2 : 1.2;
      expect(nmse(dequantize(type, encodeTensor(xs, type), xs.length), xs), `×${scale}`).toBeLessThan(BOUND[type]! * slack);
    }
  });

  it.each(TYPES.map((t) => [name(t), t] as const))('%s: all-zero blocks decode to zeros; one spike keeps its sign and size', (_n, type) => {
    const zeros = new Float32Array(512);
    expect(Array.from(dequantize(type, encodeTensor(zeros, type), 512)).every((v) => v === 0)).toBe(true);
    const spike = new Float32Array(512);
    spike[300] = -3.25;
    const back = dequantize(type, encodeTensor(spike, type), 512);
    expect(Math.abs(back[300] + 3.25)).toBeLessThan(3.25 * 0.02);
    expect(back.every((v, i) => i === 300 || Math.abs(v) < 0.05)).toBe(true);
  });

  it('mixed blocks: sparse, outliers, constant and strictly positive rows', () => {
    const random = mulberry32(3);
    const x = Float32Array.from({ length: 2048 }, (_, i) => {
      const kind = Math.floor(i / 256);
      if (kind === 0) return random() < 0.9 ? 0 : random();
      if (kind === 1) return i % 256 === 7 ? 40 : random() - 0.5;
      if (kind === 2) return 0.75;
      return 1 + random();
    });
    for (const type of TYPES) {
      const back = dequantize(type, encodeTensor(x, type), x.length);
      // Each type's own uniform bound, times 4 for the outlier block (its scale follows the outlier).
      expect(nmse(back, x), name(type)).toBeLessThan(BOUND[type]! * 4);
    }
  });

  it('is deterministic', () => {
    const x = uniform(1024, 11);
    for (const type of TYPES) expect(encodeTensor(x, type)).toEqual(encodeTensor(x, type));
  });
});

describe('ggml rounding helpers', () => {
  it('nearest_int rounds half to even like the 1.5·2²³ trick', () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 7.5000005].map(nearestInt)).toEqual([0, 2, 2, 0, -2, 2, 8]);
  });

  it('bf16 rounds to nearest even and keeps NaN quiet', () => {
    expect(f32ToBf16Bits(1)).toBe(0x3f80);
    expect(f32ToBf16Bits(1 + 2 ** -8)).toBe(0x3f80); // halfway: even
    expect(f32ToBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(f32ToBf16Bits(-2)).toBe(0xc000);
    expect(Number.isNaN(bf16ToF32(f32ToBf16Bits(NaN)))).toBe(true);
    expect(bf16ToF32(0x3f81)).toBe(1 + 2 ** -7);
  });
});

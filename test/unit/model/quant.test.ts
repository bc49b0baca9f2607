import { describe, expect, it } from 'vitest';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { mulberry32 } from '../../../src/random.ts';
import { GGMLType } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';
import { f16BitsToF32, f32ToF16Bits, roundF16 } from '../../../src/f16.ts';
import { dequantize } from '../../../src/model/quant.ts';
import { encodeF16, quantizeQ4_0, quantizeQ8_0 } from '../../../src/model/quantize.ts';
import ggmlBlocks from './fixtures/ggml-quant-blocks.json' with { type: 'json' };

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const fromHex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
/** A 32-value block: `set` places values, the rest are 0. */
const block = (set: Record<number, number>) => Float32Array.from({ length: 32 }, (_, i) => set[i] ?? 0);

describe('f16', () => {
  it('decodes known bit patterns', () => {
    expect([0x3c00, 0xc000, 0x7bff, 0x0001, 0x0400, 0x8000, 0x7c00, 0xfc00].map(f16BitsToF32)).toEqual([
      1,
      -2,
      65504,
      2 ** -24,
      2 ** -14,
      -0,
      Infinity,
      -Infinity,
    ]);
    expect(f16BitsToF32(0x7e00)).toBeNaN();
  });

  it('re-encodes every non-NaN half to itself', () => {
    for (let h = 0; h < 0x10000; h++) {
      if ((h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0) continue;
      if (f32ToF16Bits(f16BitsToF32(h)) !== h) throw new Error(`0x${h.toString(16)} does not round-trip`);
    }
  });

  it('rounds to nearest, ties to even, in normal and subnormal ranges', () => {
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00); // halfway to 0x3c01: even is 0x3c00
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // halfway between 0x3c01 and 0x3c02
    expect(f32ToF16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01); // just past halfway
    expect(f32ToF16Bits(2 ** -25)).toBe(0x0000); // half the smallest subnormal: ties to 0
    expect(f32ToF16Bits(1.5 * 2 ** -25)).toBe(0x0001);
    expect(f32ToF16Bits(3 * 2 ** -25)).toBe(0x0002); // 1.5 subnormal steps: to even 2
    expect(f32ToF16Bits(2 ** -14 - 2 ** -25)).toBe(0x0400); // rounds up into the normals
    expect(f32ToF16Bits(65519)).toBe(0x7bff);
    expect(f32ToF16Bits(65520)).toBe(0x7c00); // halfway to 2^16 rounds to inf
    expect(f32ToF16Bits(-0)).toBe(0x8000);
    expect(f32ToF16Bits(NaN) & 0x7e00).toBe(0x7e00);
    expect(hex(encodeF16(Float32Array.of(1, -2)))).toBe('003c00c0');
  });

  it('roundF16 keeps what an f16 store keeps: the nearest half, ties to even, as an f32 value', () => {
    expect(roundF16(1 + 2 ** -11)).toBe(1);
    expect(roundF16(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(roundF16(0.1)).toBe(0.0999755859375);
    expect(roundF16(1.5 * 2 ** -25)).toBe(2 ** -24);
    expect(roundF16(70000)).toBe(Infinity);
  });
});

describe('Q8_0 and Q4_0 hand-worked blocks (ggml reference rounding)', () => {
  it('Q8_0 rounds halves away from zero', () => {
    // amax 127 → d = 1, id = 1: q = roundf(x). 0.5 → 1, -0.5 → -1, 2.5 → 3 (not banker's 2).
    const q = quantizeQ8_0(block({ 0: 127, 1: 0.5, 2: -0.5, 3: 1.5, 4: 2.5, 5: -2.5, 6: 0.49 }));
    expect(hex(q)).toBe('003c' + '7f01ff0203fd00' + '00'.repeat(25));
  });

  it('Q8_0 of zeros is all zero bytes', () => {
    expect(hex(quantizeQ8_0(new Float32Array(32)))).toBe('00'.repeat(34));
  });

  it('Q8_0 with one outlier: the scale follows it and small values vanish', () => {
    // d = f32(1000/127) = 7.874016 → f16: 2^2 · (1 + 992/1024) = 0x47e0; 1000·id rounds to 127; 0.1·id = 0.0127 → 0.
    const x = Float32Array.from({ length: 32 }, (_, i) => (i === 7 ? 1000 : 0.1));
    expect(hex(quantizeQ8_0(x))).toBe('e047' + '00'.repeat(7) + '7f' + '00'.repeat(24));
  });

  it('Q4_0 with a negative max: d = max/-8 = 1, q = min(15, trunc(x + 8.5)), low nibble j, high nibble j+16', () => {
    // x[0] = -8 → 0; x[1] = 8 ties |max| but the first wins, 16.5 → 16 → clamped 15; 0.5 → 9 (halves round up);
    // -0.5 → 8; 7.5 → 16 → 15; -7.6 → 0; x[16] = 1 → 9; x[17] = -1 → 7; zeros → 8.
    const q = quantizeQ4_0(block({ 0: -8, 1: 8, 2: 0.5, 3: -0.5, 4: 7.5, 5: -7.6, 16: 1, 17: -1 }));
    expect(hex(q)).toBe('003c' + '907f89888f80' + '88'.repeat(10));
  });

  it('Q4_0 with a positive max: d = -0.5, and -max clamps to 15 (dequantized -3.5)', () => {
    const q = quantizeQ4_0(block({ 0: 4, 1: -4, 2: 1, 3: -1.25 }));
    // id = -2: 4 → 0.5 → 0; -4 → 16.5 → 15; 1 → 6.5 → 6; -1.25 → 11; the zeros at j+16 give high nibbles 8.
    expect(hex(q)).toBe('00b8' + '808f868b' + '88'.repeat(12));
    expect(dequantize(GGMLType.Q4_0, q, 32).subarray(0, 4)).toEqual(Float32Array.of(4, -3.5, 1, -1.5));
  });

  it('Q4_0 of zeros stores d = -0 (0x8000), as C computes 0.0f / -8', () => {
    expect(hex(quantizeQ4_0(new Float32Array(32)))).toBe('0080' + '88'.repeat(16));
  });

  it('Q4_0 keeps the sign of the first value of largest magnitude', () => {
    expect(hex(quantizeQ4_0(block({ 0: -3, 1: 3 }))).slice(0, 4)).toBe('0036'); // d = 0.375
    expect(hex(quantizeQ4_0(block({ 0: 3, 1: -3 }))).slice(0, 4)).toBe('00b6'); // d = -0.375
  });

  it('match the bytes ggml itself wrote for 50 varied blocks', () => {
    for (const b of ggmlBlocks.blocks) {
      const x = new Float32Array(fromHex(b.x).buffer);
      expect(hex(quantizeQ8_0(x)), b.x).toBe(b.q8_0);
      expect(hex(quantizeQ4_0(x)), b.x).toBe(b.q4_0);
    }
  });
});

/** Rows of mixed character: gaussian at many scales, outliers, exact halves, sparse blocks. */
function testValues(n: number, seed: number): Float32Array {
  const random = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Float32Array.from({ length: n }, (_, i) => {
    const kind = Math.floor(i / 32) % 4;
    const scale = 10 ** ((Math.floor(i / 128) % 7) - 3);
    if (kind === 0) return gauss() * scale;
    if (kind === 1) return (i % 32 === 5 ? 50 : 1) * gauss() * scale;
    if (kind === 2) return (Math.floor(random() * 33) - 16) * 0.5;
    return random() < 0.8 ? 0 : gauss() * scale;
  });
}

describe('quantize → write → read → dequantize', () => {
  const x = testValues(32 * 1024, 7);
  const scales = (q: Uint8Array, blockBytes: number) =>
    Array.from({ length: q.length / blockBytes }, (_, b) => f16BitsToF32(q[b * blockBytes] | (q[b * blockBytes + 1] << 8)));

  async function roundTrip(type: GGMLType, data: Uint8Array): Promise<Float32Array> {
    const file = encodeGGUF(new Map(), [{ name: 'w.weight', type, dims: [1024, 32], data }]);
    const gguf = await readGGUF(bytesSource(file));
    return dequantize(type, await gguf.tensorBytes('w.weight'), x.length);
  }

  it('Q8_0: |x - x̂| ≤ d/2 + 127·|d - f16(d)| + f32 rounding, per element', async () => {
    // q = roundf(x/d) is within 1/2 of x/d (plus ~1e-5 from rounding 1/d and x·id to f32); the stored
    // scale is f16(d), so each of the ≤127 steps may be off by |d - f16(d)|; the product x̂ = q·f16(d) is rounded to f32.
    const q = quantizeQ8_0(x);
    const y = await roundTrip(GGMLType.Q8_0, q);
    const d16 = scales(q, 34);
    let worst = 0;
    for (let i = 0; i < x.length; i++) {
      const b = Math.floor(i / 32);
      const amax = Math.max(...x.subarray(b * 32, b * 32 + 32).map(Math.abs));
      const d = Math.fround(amax / 127);
      const bound = d * (0.5 + 1e-4) + 127 * Math.abs(d - d16[b]);
      worst = Math.max(worst, Math.abs(x[i] - y[i]) / (bound || 1));
      expect(Math.abs(x[i] - y[i])).toBeLessThanOrEqual(bound);
    }
    expect(worst).toBeGreaterThan(0.9); // the bound is tight: some element sits near it
  });

  it('Q4_0: |x - x̂| ≤ |d|/2 except where x/d ∈ (7.5, 8] clamps to 7 (≤ |d|), plus the f16 scale error', async () => {
    // x/d ∈ [-8, 8] since d = max/-8; q - 8 = floor(x/d + 0.5) below the clamp, so the error is half a step.
    // Only +8 (x = -max) and (7.5, 8) exceed 15 and clamp to 7: up to one step. 8 steps × the f16 scale error on top.
    const q = quantizeQ4_0(x);
    const y = await roundTrip(GGMLType.Q4_0, q);
    const d16 = scales(q, 18);
    let clamped = 0;
    for (let i = 0; i < x.length; i++) {
      const b = Math.floor(i / 32);
      const values = x.subarray(b * 32, b * 32 + 32);
      const max = values.reduce((m, v) => (Math.abs(v) > Math.abs(m) ? v : m), 0);
      const d = Math.fround(max / -8);
      const r = d ? x[i] / d : 0;
      const steps = r > 7.5 ? 1 : 0.5;
      clamped += r > 7.5 ? 1 : 0;
      expect(Math.abs(x[i] - y[i])).toBeLessThanOrEqual(Math.abs(d) * (steps + 1e-4) + 8 * Math.abs(d - d16[b]));
    }
    expect(clamped).toBeGreaterThan(0); // the clamp regime is exercised
  });

  it('is deterministic: the same input gives the same bytes', () => {
    expect(hex(quantizeQ8_0(x))).toBe(hex(quantizeQ8_0(Float32Array.from(x))));
    expect(hex(quantizeQ4_0(x))).toBe(hex(quantizeQ4_0(Float32Array.from(x))));
  });

  it('F16 stores the nearest half of each value', async () => {
    const y = await roundTrip(GGMLType.F16, encodeF16(x));
    for (let i = 0; i < x.length; i += 97) expect(y[i]).toBe(roundF16(x[i]));
    expect(() => dequantize(GGMLType.F16, new Uint8Array(3), 2)).toThrow(/3 bytes cannot hold 2 F16 values/);
  });
});

describe('block quantization', () => {
  it('refuses to block-quantize a length that is not a multiple of 32', () => {
    expect(() => quantizeQ8_0(new Float32Array(33))).toThrow(/not a multiple of 32/);
  });
});

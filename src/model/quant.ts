/**
 * Half-precision conversion and dequantization of the tensor types tokenscope reads.
 * Block layouts follow ggml (ggml-common.h): scales are f16, 32 elements per block.
 *   Q8_0: { f16 d; int8 qs[32] }            x[j] = qs[j] * d
 *   Q4_0: { f16 d; uint8 qs[16] }           x[j] = ((qs[j] & 15) - 8) * d, x[j+16] = ((qs[j] >> 4) - 8) * d
 */
import { TokenscopeError } from '../errors.ts';
import { GGMLType, GGML_BLOCK, ggmlTypeName } from './gguf/types.ts';

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** f32 → f16 bits with round-to-nearest-even, as ggml's GGML_FP32_TO_FP16 (F16C / its bit-exact fallback). */
export function f32ToF16Bits(x: number): number {
  f32[0] = x;
  const bits = f32Bits[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf, or a quiet NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow → inf
  if (e <= 0) {
    // Subnormal half: value = m · 2^-24, m = (1.mant) · 2^(e-1) · 2^10, i.e. the 24-bit significand >> (14 - e).
    if (e < -10) return sign; // below half the smallest subnormal → ±0
    return sign | roundShift(mant | 0x800000, 14 - e);
  }
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  return sign | ((e << 10) + roundShift(mant, 13));
}

/** x >> shift, rounded to nearest, ties to even. */
function roundShift(x: number, shift: number): number {
  const kept = x >>> shift;
  const rest = x - kept * 2 ** shift;
  const half = 2 ** (shift - 1);
  return rest > half || (rest === half && (kept & 1) === 1) ? kept + 1 : kept;
}

export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

let f16Table: Float32Array | undefined;

/** All 65536 halves decoded once: dequantization is then one lookup per scale or element. */
function halfTable(): Float32Array {
  f16Table ??= Float32Array.from({ length: 65536 }, (_, h) => f16BitsToF32(h));
  return f16Table;
}

/** Decodes `elements` values of `type` from `bytes` (which must hold exactly that many). */
export function dequantize(type: GGMLType, bytes: Uint8Array, elements: number): Float32Array<ArrayBuffer> {
  const block = GGML_BLOCK[type];
  const expected = (elements / block.elements) * block.bytes;
  if (!Number.isInteger(expected) || bytes.length !== expected) {
    throw new TokenscopeError('bad-input', `${bytes.length} bytes cannot hold ${elements} ${ggmlTypeName(type)} values`,
      'Pass the bytes of exactly one tensor (GGUF.tensorBytes).');
  }
  const out = new Float32Array(elements);
  const half = halfTable();
  const h16 = (at: number) => half[bytes[at] | (bytes[at + 1] << 8)];
  switch (type) {
    case GGMLType.F32:
      out.set(new Float32Array(bytes.slice().buffer)); // slice: the source view may be unaligned
      break;
    case GGMLType.F16:
      for (let i = 0; i < elements; i++) out[i] = h16(2 * i);
      break;
    case GGMLType.Q8_0:
      for (let b = 0, at = 0; b < elements; b += 32, at += 34) {
        const d = h16(at);
        for (let j = 0; j < 32; j++) out[b + j] = ((bytes[at + 2 + j] << 24) >> 24) * d; // int8 sign extension
      }
      break;
    case GGMLType.Q4_0:
      for (let b = 0, at = 0; b < elements; b += 32, at += 18) {
        const d = h16(at);
        for (let j = 0; j < 16; j++) {
          const q = bytes[at + 2 + j];
          out[b + j] = ((q & 0x0f) - 8) * d;
          out[b + j + 16] = ((q >> 4) - 8) * d;
        }
      }
      break;
  }
  return out;
}

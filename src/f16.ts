/**
 * IEEE half-precision conversion, bit-exact with ggml. A leaf: the quantizer and the model's
 * dequantizer use it, and so does the f16 FMA roof (measure/ceilings.ts) to check its output.
 */
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

/** x rounded to the nearest f16 (ties to even), as an f32 value: what storing it as f16 keeps. */
export function roundF16(x: number): number {
  return f16BitsToF32(f32ToF16Bits(x));
}

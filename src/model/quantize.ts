/**
 * Encoding f32 values into tensor types, with ggml's reference quantizers reproduced
 * (ggml-quants.c `quantize_row_{q8_0,q4_0,q4_1,q5_0,q5_1}_ref`; the K-quants in quantize-k.ts).
 * Every intermediate is rounded to f32 with Math.fround where C computes in float, so the bytes
 * match a build without FMA contraction. Blocks: 32 consecutive values of a row; scales and
 * minimums are stored as f16 (RNE).
 */
import { TokenscopeError } from '../errors.ts';
import { f32ToF16Bits } from '../f16.ts';
import { quantizeQ45K, quantizeQ6K } from './quantize-k.ts';
import { GGMLType, GGML_BLOCK, ggmlTypeName, type GGMLType as GGMLTypeId } from './gguf/types.ts';

const QK = 32;

/** Q8_0: d = amax/127, q = roundf(x/d) (half away from zero); 34 bytes a block. */
export function quantizeQ8_0(x: Float32Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(blockCount(x) * 34);
  for (let b = 0, at = 0; b < x.length; b += QK, at += 34) {
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[b + j]));
    const d = Math.fround(amax / 127);
    const id = d ? Math.fround(1 / d) : 0;
    writeF16(out, at, d);
    for (let j = 0; j < QK; j++) out[at + 2 + j] = roundHalfAway(Math.fround(x[b + j] * id)) & 0xff;
  }
  return out;
}

/**
 * Q4_0 (bits 4) and Q5_0 (bits 5): d = max / −2^(bits−1) where max is the value of largest
 * magnitude (first one on ties, sign kept), q = min(2^bits − 1, trunc(x/d + 2^(bits−1) + 0.5)).
 * Element j < 16 goes to the low nibble of byte j, j + 16 to its high nibble; Q5_0 keeps the
 * fifth bits in a u32 (bit j for element j) after d.
 */
function quantizeSymmetric(x: Float32Array, bits: 4 | 5): Uint8Array<ArrayBuffer> {
  const half = 1 << (bits - 1);
  const top = (1 << bits) - 1;
  const blockBytes = bits === 4 ? 18 : 22;
  const out = new Uint8Array(blockCount(x) * blockBytes);
  const level = (v: number, id: number) => Math.min(top, Math.trunc(Math.fround(Math.fround(v * id) + half + 0.5)));
  for (let b = 0, at = 0; b < x.length; b += QK, at += blockBytes) {
    let amax = 0;
    let max = 0;
    for (let j = 0; j < QK; j++) {
      const v = x[b + j];
      if (amax < Math.abs(v)) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = Math.fround(max / -half); // an all-zero block gives d = -0, stored as f16 0x8000 as in C
    const id = d ? Math.fround(1 / d) : 0;
    writeF16(out, at, d);
    packNibbles(out, at + 2, bits === 5, (j) => level(x[b + j], id));
  }
  return out;
}

export const quantizeQ4_0 = (x: Float32Array) => quantizeSymmetric(x, 4);
export const quantizeQ5_0 = (x: Float32Array) => quantizeSymmetric(x, 5);

/**
 * Q4_1 (bits 4) and Q5_1 (bits 5): d = (max − min)/(2^bits − 1), m = min,
 * q = trunc((x − min)/d + 0.5) (Q4_1 capped at 15); layout as Q4_0/Q5_0 with m after d.
 */
function quantizeAffine(x: Float32Array, bits: 4 | 5): Uint8Array<ArrayBuffer> {
  const blockBytes = bits === 4 ? 20 : 24;
  const out = new Uint8Array(blockCount(x) * blockBytes);
  for (let b = 0, at = 0; b < x.length; b += QK, at += blockBytes) {
    let min = Infinity;
    let max = -Infinity;
    for (let j = 0; j < QK; j++) {
      min = Math.min(min, x[b + j]);
      max = Math.max(max, x[b + j]);
    }
    const d = Math.fround(Math.fround(max - min) / ((1 << bits) - 1));
    const id = d ? Math.fround(1 / d) : 0;
    writeF16(out, at, d);
    writeF16(out, at + 2, min);
    const level = (v: number) => Math.trunc(Math.fround(Math.fround(Math.fround(v - min) * id) + 0.5));
    packNibbles(out, at + 4, bits === 5, (j) => (bits === 4 ? Math.min(15, level(x[b + j])) : level(x[b + j]) & 31));
  }
  return out;
}

export const quantizeQ4_1 = (x: Float32Array) => quantizeAffine(x, 4);
export const quantizeQ5_1 = (x: Float32Array) => quantizeAffine(x, 5);

/** 32 levels into 16 bytes of nibbles at `at` (j and j + 16 share byte j), after a u32 of fifth bits when `fifth`. */
function packNibbles(out: Uint8Array, at: number, fifth: boolean, level: (j: number) => number): void {
  let qh = 0;
  const qs = at + (fifth ? 4 : 0);
  for (let j = 0; j < QK / 2; j++) {
    const lo = level(j);
    const hi = level(j + QK / 2);
    out[qs + j] = (lo & 15) | ((hi & 15) << 4);
    qh |= ((lo >> 4) << j) | ((hi >> 4) << (j + QK / 2));
  }
  if (fifth) new DataView(out.buffer, out.byteOffset).setUint32(at, qh >>> 0, true);
}

/** f32 → bfloat16 bits, round to nearest even (ggml_compute_fp32_to_bf16; NaN stays a quiet NaN). */
export function f32ToBf16Bits(x: number): number {
  f32[0] = x;
  const u = u32[0];
  if ((u & 0x7fffffff) > 0x7f800000) return ((u >>> 16) | 64) & 0xffff;
  return ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16) & 0xffff;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function encodeBf16(x: Float32Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(x.length * 2);
  for (let i = 0; i < x.length; i++) {
    const h = f32ToBf16Bits(x[i]);
    out[2 * i] = h & 0xff;
    out[2 * i + 1] = h >>> 8;
  }
  return out;
}

/** f32 values → little-endian f16 (RNE). */
export function encodeF16(x: Float32Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(x.length * 2);
  for (let i = 0; i < x.length; i++) writeF16(out, 2 * i, x[i]);
  return out;
}

/** f32 values → the bytes of a tensor of `type`. */
export function encodeTensor(x: Float32Array, type: GGMLTypeId): Uint8Array<ArrayBuffer> {
  const block = GGML_BLOCK[type].elements;
  if (x.length % block !== 0) {
    throw new TokenscopeError(
      'bad-input',
      `cannot quantize ${x.length} values to ${ggmlTypeName(type)}: not a multiple of its ${block}-value block`,
      'Quantize whole rows whose length is a multiple of the block; keep other tensors in F32/F16.',
    );
  }
  switch (type) {
    case GGMLType.F32:
      return new Uint8Array(Float32Array.from(x).buffer);
    case GGMLType.F16:
      return encodeF16(x);
    case GGMLType.BF16:
      return encodeBf16(x);
    case GGMLType.Q8_0:
      return quantizeQ8_0(x);
    case GGMLType.Q4_0:
      return quantizeQ4_0(x);
    case GGMLType.Q4_1:
      return quantizeQ4_1(x);
    case GGMLType.Q5_0:
      return quantizeQ5_0(x);
    case GGMLType.Q5_1:
      return quantizeQ5_1(x);
    case GGMLType.Q4_K:
      return quantizeQ45K(x, false);
    case GGMLType.Q5_K:
      return quantizeQ45K(x, true);
    case GGMLType.Q6_K:
      return quantizeQ6K(x);
  }
}

function blockCount(x: Float32Array): number {
  if (x.length % QK !== 0) {
    throw new TokenscopeError(
      'bad-input',
      `cannot block-quantize ${x.length} values: not a multiple of ${QK}`,
      'Quantize whole rows whose length is a multiple of 32; keep other tensors in F32/F16.',
    );
  }
  return x.length / QK;
}

/** C roundf: half away from zero. Exact for f32 inputs, since |x| + 0.5 is exact in a double. */
function roundHalfAway(v: number): number {
  return Math.sign(v) * Math.floor(Math.abs(v) + 0.5);
}

function writeF16(out: Uint8Array, at: number, value: number): void {
  const h = f32ToF16Bits(value);
  out[at] = h & 0xff;
  out[at + 1] = h >>> 8;
}

/**
 * Encoding f32 values into tensor types, with ggml's reference quantizers reproduced bit for bit
 * (ggml-quants.c `quantize_row_q8_0_ref`, `quantize_row_q4_0_ref`). Every intermediate is rounded
 * to f32 with Math.fround where C computes in float, so the bytes match a build without FMA
 * contraction. Blocks: 32 consecutive values of a row; the scale is stored as f16 (RNE).
 */
import { TokenscopeError } from '../errors.ts';
import { f32ToF16Bits } from '../f16.ts';
import { GGMLType, shapeProblem, type GGMLType as GGMLTypeId } from './gguf/types.ts';

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
 * Q4_0: d = max / -8 where max is the value of largest magnitude (first one on ties, sign kept),
 * q = min(15, trunc(x/d + 8.5)); low nibble of byte j = element j, high nibble = element j + 16.
 */
export function quantizeQ4_0(x: Float32Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(blockCount(x) * 18);
  const nibble = (v: number, id: number) => Math.min(15, Math.trunc(Math.fround(Math.fround(v * id) + 8.5)));
  for (let b = 0, at = 0; b < x.length; b += QK, at += 18) {
    let amax = 0;
    let max = 0;
    for (let j = 0; j < QK; j++) {
      const v = x[b + j];
      if (amax < Math.abs(v)) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = Math.fround(max / -8); // an all-zero block gives d = -0, stored as f16 0x8000 as in C
    const id = d ? Math.fround(1 / d) : 0;
    writeF16(out, at, d);
    for (let j = 0; j < QK / 2; j++) out[at + 2 + j] = nibble(x[b + j], id) | (nibble(x[b + j + QK / 2], id) << 4);
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
  switch (type) {
    case GGMLType.F32: return new Uint8Array(Float32Array.from(x).buffer);
    case GGMLType.F16: return encodeF16(x);
    case GGMLType.Q8_0: return quantizeQ8_0(x);
    case GGMLType.Q4_0: return quantizeQ4_0(x);
  }
}

/**
 * The type an F32/F16 tensor gets when a model is quantized to `target`, following llama.cpp's
 * rules for a "pure" quantization: 2-D+ weights become `target`; 1-D tensors (norms, biases) and
 * tensors whose rows do not split into 32-element blocks keep their type.
 */
export function quantizedType(tensor: { name: string; type: GGMLTypeId; dims: readonly number[] }, target: GGMLTypeId): GGMLTypeId {
  const isMatrix = tensor.dims.length >= 2 && tensor.name.endsWith('.weight');
  return isMatrix && shapeProblem(target, tensor.dims) === undefined ? target : tensor.type;
}

function blockCount(x: Float32Array): number {
  if (x.length % QK !== 0) {
    throw new TokenscopeError('bad-input', `cannot block-quantize ${x.length} values: not a multiple of ${QK}`,
      'Quantize whole rows whose length is a multiple of 32; keep other tensors in F32/F16.');
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

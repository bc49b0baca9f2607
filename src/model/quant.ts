/**
 * Dequantization of the tensor types tokenscope reads (half-precision conversion: src/f16.ts).
 * Block layouts follow ggml (ggml-common.h; see GGML_BLOCK in gguf/types.ts). Every value is
 * computed as ggml's dequantize_row_* computes it in f32 (Math.fround after each operation whose
 * result C rounds), so the GPU's dequantization can be compared bit for bit.
 *   Q8_0: x[j] = qs[j]·d                     Q4_0: x[j] = (nib[j] − 8)·d     Q4_1: x[j] = nib[j]·d + m
 *   Q5_0: x[j] = (nib[j] | hb[j]<<4 − 16)·d  Q5_1: x[j] = (nib[j] | hb[j]<<4)·d + m
 *   (nib[j]: low nibble of qs[j] for j < 16, high nibble of qs[j−16] otherwise; hb[j]: bit j of qh)
 *   Q4_K/Q5_K: sub-block s (32 values) x = (d·sc[s])·q − dmin·m[s], 6-bit sc, m
 *   Q6_K: sub-block s (16 values) x = (d·sc[s])·(q − 32), int8 sc
 */
import { TokenscopeError } from '../errors.ts';
import { f16BitsToF32 } from '../f16.ts';
import { GGMLType, GGML_BLOCK, ggmlTypeName } from './gguf/types.ts';

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
    throw new TokenscopeError(
      'bad-input',
      `${bytes.length} bytes cannot hold ${elements} ${ggmlTypeName(type)} values`,
      'Pass the bytes of exactly one tensor (GGUF.tensorBytes).',
    );
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
    case GGMLType.BF16:
      for (let i = 0; i < elements; i++) out[i] = bf16ToF32(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      break;
    case GGMLType.Q4_0:
    case GGMLType.Q4_1:
    case GGMLType.Q5_0:
    case GGMLType.Q5_1:
      dequantizeLegacy(type, bytes, out, h16);
      break;
    case GGMLType.Q4_K:
    case GGMLType.Q5_K:
      dequantizeQ45K(type === GGMLType.Q5_K, bytes, out, h16);
      break;
    case GGMLType.Q6_K:
      dequantizeQ6K(bytes, out, h16);
      break;
  }
  return out;
}

const bf16View = new Uint32Array(1);
const bf16Float = new Float32Array(bf16View.buffer);

/** bfloat16 bits → f32: the top half of an f32. */
export function bf16ToF32(bits: number): number {
  bf16View[0] = bits << 16;
  return bf16Float[0];
}

/** Q4_0, Q4_1, Q5_0, Q5_1: 32-value blocks of nibbles (+ a 5th bit), with a scale and either a fixed offset or a minimum. */
function dequantizeLegacy(type: GGMLType, bytes: Uint8Array, out: Float32Array, h16: (at: number) => number): void {
  const hasMin = type === GGMLType.Q4_1 || type === GGMLType.Q5_1;
  const fifth = type === GGMLType.Q5_0 || type === GGMLType.Q5_1;
  const blockBytes = GGML_BLOCK[type].bytes;
  const offset = hasMin ? 0 : fifth ? 16 : 8;
  for (let b = 0, at = 0; b < out.length; b += 32, at += blockBytes) {
    const d = h16(at);
    const m = hasMin ? h16(at + 2) : 0;
    const qhAt = at + (hasMin ? 4 : 2);
    const qh = fifth ? (bytes[qhAt] | (bytes[qhAt + 1] << 8) | (bytes[qhAt + 2] << 16) | (bytes[qhAt + 3] << 24)) >>> 0 : 0;
    const qs = qhAt + (fifth ? 4 : 0);
    for (let j = 0; j < 32; j++) {
      const byte = bytes[qs + (j & 15)];
      const q = (j < 16 ? byte & 15 : byte >> 4) | (((qh >>> j) & 1) << 4);
      out[b + j] = hasMin ? Math.fround(Math.fround(q * d) + m) : (q - offset) * d;
    }
  }
}

/** The 6-bit scale and min of sub-block j (0..7) from a K-quant's 12 packed bytes at `at` (ggml's get_scale_min_k4). */
export function scaleMinK4(bytes: Uint8Array, at: number, j: number): [number, number] {
  if (j < 4) return [bytes[at + j] & 63, bytes[at + j + 4] & 63];
  return [(bytes[at + j + 4] & 15) | ((bytes[at + j - 4] >> 6) << 4), (bytes[at + j + 4] >> 4) | ((bytes[at + j] >> 6) << 4)];
}

/** Q4_K / Q5_K super-blocks: {d, dmin, scales[12], (qh[32]), qs[128]}; 64-value groups g use qs[32g..] low then high nibbles. */
function dequantizeQ45K(five: boolean, bytes: Uint8Array, out: Float32Array, h16: (at: number) => number): void {
  const blockBytes = five ? 176 : 144;
  for (let b = 0, at = 0; b < out.length; b += 256, at += blockBytes) {
    const d = h16(at);
    const dmin = h16(at + 2);
    const qh = at + 16;
    const qs = at + (five ? 48 : 16);
    for (let s = 0; s < 8; s++) {
      const [sc, m] = scaleMinK4(bytes, at + 4, s);
      const scale = Math.fround(d * sc);
      const min = Math.fround(dmin * m);
      const g = s >> 1;
      for (let l = 0; l < 32; l++) {
        const byte = bytes[qs + 32 * g + l];
        const high = five ? ((bytes[qh + l] >> s) & 1) << 4 : 0;
        const q = ((s & 1) === 0 ? byte & 15 : byte >> 4) | high;
        out[b + 32 * s + l] = Math.fround(scale * q - min);
      }
    }
  }
}

/** Q6_K super-blocks: {ql[128], qh[64], scales[16] int8, d}; two halves of 128 values, each from ql[64h..], qh[32h..]. */
function dequantizeQ6K(bytes: Uint8Array, out: Float32Array, h16: (at: number) => number): void {
  for (let b = 0, at = 0; b < out.length; b += 256, at += 210) {
    const d = h16(at + 208);
    for (let i = 0; i < 256; i++) {
      const half = i >> 7;
      const r = i & 127; // position in the half: quarter (r >> 5), lane l = r & 31
      const quarter = r >> 5;
      const l = r & 31;
      const ql = bytes[at + 64 * half + l + (quarter & 1 ? 32 : 0)];
      const low = quarter < 2 ? ql & 15 : ql >> 4;
      const high = (bytes[at + 128 + 32 * half + l] >> (2 * quarter)) & 3;
      const sc = (bytes[at + 192 + (i >> 4)] << 24) >> 24;
      out[b + i] = Math.fround(Math.fround(d * sc) * ((low | (high << 4)) - 32));
    }
  }
}

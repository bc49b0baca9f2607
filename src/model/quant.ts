/**
 * Dequantization of the tensor types tokenscope reads (half-precision conversion: src/f16.ts).
 * Block layouts follow ggml (ggml-common.h): scales are f16, 32 elements per block.
 *   Q8_0: { f16 d; int8 qs[32] }            x[j] = qs[j] * d
 *   Q4_0: { f16 d; uint8 qs[16] }           x[j] = ((qs[j] & 15) - 8) * d, x[j+16] = ((qs[j] >> 4) - 8) * d
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

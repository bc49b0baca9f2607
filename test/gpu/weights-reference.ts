/**
 * CPU oracles for the weight kernels: seeded random GGUF tensors (quantized with the ggml
 * reference quantizers of src/model/quantize.ts), their dequantized values (src/model/quant.ts),
 * a float64 linear layer, and ggml test-backend-ops' normalised error.
 */
import { GGMLType } from '../../src/model/gguf/types.ts';
import { dequantize } from '../../src/model/quant.ts';
import { encodeTensor } from '../../src/model/quantize.ts';
import { readBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { encodeDispatches, releaseDispatches, type Dispatch } from '../../src/kernels/kernel.ts';
import { FORMATS, hasScaleRegion, packedLayout, weightBytes, type WeightFormat } from '../../src/kernels/weights.ts';
import { unpackBlocks } from '../../src/kernels/weight-formats.ts';
import { TYPE_OF_FORMAT } from '../../src/model/weight-types.ts';

export const GGML_OF: Record<WeightFormat, GGMLType> = TYPE_OF_FORMAT;

/** mulberry32: a seeded uniform [0, 1) stream. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function uniforms(n: number, seed: number, scale = 1): Float32Array {
  const next = rng(seed);
  return Float32Array.from({ length: n }, () => (2 * next() - 1) * scale);
}

/** A (rows, cols) tensor of `format` as GGUF stores it, and the values it decodes to. */
export function randomTensor(format: WeightFormat, rows: number, cols: number, seed: number): { gguf: Uint8Array; values: Float32Array } {
  const gguf = encodeTensor(uniforms(rows * cols, seed), GGML_OF[format]);
  return { gguf, values: dequantize(GGML_OF[format], gguf, rows * cols) };
}

/** The inverse of packWeight: a packed shard back to GGUF bytes. */
export function unpackToGguf(format: WeightFormat, rows: number, cols: number, packed: Uint8Array): Uint8Array {
  const gguf = new Uint8Array(weightBytes(format, rows, cols));
  const layout = packedLayout(format, rows, cols);
  const blocks = (rows * cols) / FORMATS[format].block;
  const side = hasScaleRegion(format) ? packed.subarray(layout.scaleBase * 4, layout.scaleBase * 4 + 2 * blocks) : null;
  unpackBlocks(format, packed.subarray(0, layout.valueWords * 4), side, blocks, gguf);
  return gguf;
}

/** y = x · wᵀ (+ bias) (+ y0) in float64: x (R, cols), w (rows, cols). */
export function referenceLinear(w: Float32Array, rows: number, cols: number, x: Float32Array, R: number, bias?: Float32Array, y0?: Float32Array): Float64Array {
  const y = new Float64Array(R * rows);
  for (let t = 0; t < R; t++) {
    for (let n = 0; n < rows; n++) {
      let s = 0;
      for (let k = 0; k < cols; k++) s += x[t * cols + k] * w[n * cols + k];
      y[t * rows + n] = s + (bias ? bias[n] : 0) + (y0 ? y0[t * rows + n] : 0);
    }
  }
  return y;
}

/** Σ(y − ref)² / Σ ref² (ggml test-backend-ops' NMSE). */
export function nmse(got: ArrayLike<number>, ref: ArrayLike<number>): number {
  let err = 0;
  let norm = 0;
  for (let i = 0; i < ref.length; i++) {
    err += (got[i] - ref[i]) ** 2;
    norm += ref[i] ** 2;
  }
  return err / norm;
}

/** Submit `dispatches` once, free their uniforms, and read `out` back as f32. */
export async function runAndRead(ctx: GpuContext, dispatches: Dispatch[], out: GPUBuffer, floats: number): Promise<Float32Array> {
  const encoder = ctx.device.createCommandEncoder({ label: 'test' });
  encodeDispatches(encoder, dispatches);
  ctx.device.queue.submit([encoder.finish()]);
  releaseDispatches(dispatches);
  return new Float32Array(await readBuffer(ctx.device, out, 0, floats * 4));
}

/**
 * Test-only helpers for kernel tests: seeded data, upload/readback, running dispatches inside
 * validation error scopes, and the normalised error used to score a kernel against the CPU.
 */
import { readBuffer, storageBufferWith, withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { encodeDispatches, releaseDispatches, type Dispatch } from '../../src/kernels/kernel.ts';
import { sampleNormal } from '../../src/serve/workload.ts';

/** A seeded uniform generator in [0, 1) (mulberry32). */
export { mulberry32 as seeded } from '../../src/serve/workload.ts';

/** n standard-normal values times `scale`, rounded to f32. */
export function randn(rand: () => number, n: number, scale = 1): Float32Array<ArrayBuffer> {
  return Float32Array.from({ length: n }, () => scale * sampleNormal(rand));
}

/** Normalised mean squared error Σ(a − e)² / Σe² (ggml's test-backend-ops NMSE). */
export function nmse(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  if (actual.length !== expected.length) throw new Error(`length ${actual.length} ≠ ${expected.length}`);
  let err = 0;
  let ref = 0;
  for (let i = 0; i < expected.length; i++) {
    err += (actual[i] - expected[i]) ** 2;
    ref += expected[i] ** 2;
  }
  return ref === 0 ? err : err / ref;
}

export function maxAbsError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < expected.length; i++) max = Math.max(max, Math.abs(actual[i] - expected[i]));
  return max;
}

export function upload(ctx: GpuContext, label: string, data: ArrayBufferView): GPUBuffer {
  return storageBufferWith(ctx.device, label, data);
}

export async function readF32(ctx: GpuContext, buffer: GPUBuffer, n: number): Promise<Float32Array> {
  return new Float32Array(await readBuffer(ctx.device, buffer, 0, 4 * n));
}

export async function readU32(ctx: GpuContext, buffer: GPUBuffer, n: number): Promise<Uint32Array> {
  return new Uint32Array(await readBuffer(ctx.device, buffer, 0, 4 * n));
}

/** Record and submit dispatches in one pass (no readback). */
export function submit(ctx: GpuContext, dispatches: readonly Dispatch[]): void {
  const encoder = ctx.device.createCommandEncoder({ label: 'test.submit' });
  encodeDispatches(encoder, dispatches);
  ctx.device.queue.submit([encoder.finish()]);
}

/**
 * Run `fn` in validation / OOM / internal error scopes (an error fails the test); buffers it
 * registers with `keep` and the dispatches it returns from `track` are freed afterwards.
 */
export async function gpuCase<T>(ctx: GpuContext, what: string, fn: (scope: GpuScope) => Promise<T>): Promise<T> {
  const scope = new GpuScope(ctx);
  try {
    return await withErrorScopes(ctx.device, what, () => fn(scope));
  } finally {
    scope.release();
  }
}

export class GpuScope {
  private readonly buffers: GPUBuffer[] = [];
  private readonly dispatches: Dispatch[] = [];
  constructor(readonly ctx: GpuContext) {}

  /** A storage buffer holding `data`, freed with the scope. */
  upload(label: string, data: ArrayBufferView): GPUBuffer {
    return this.keep(upload(this.ctx, label, data));
  }

  keep(buffer: GPUBuffer): GPUBuffer {
    this.buffers.push(buffer);
    return buffer;
  }

  track<D extends Dispatch | Dispatch[]>(d: D): D {
    this.dispatches.push(...(Array.isArray(d) ? d : [d]));
    return d;
  }

  release(): void {
    releaseDispatches(this.dispatches);
    for (const b of this.buffers) b.destroy();
  }
}

/**
 * NMSE a whole model's logits may show against the CPU reference where its linears run with 8-bit
 * activations (linear_q8dot*.wgsl): each such linear rounds its input to NMSE ≤ 4.7e-5
 * (linear-check.ts), which through a few layers' residual stream adds up to ~16 · 4.7e-5 ≈ 7.5e-4
 * at most for the test models here; a wrong scale, min or nibble gives ≳ 1e-1.
 */
export const Q8_LOGITS_TOLERANCE = 1e-3;

/**
 * NMSE a whole model's logits may show against the CPU reference. Both sides dequantize the same
 * weights to f32; with an f32 KV cache and no f16 weights only summation order and WGSL's
 * exp/inverseSqrt differ (~1e-12), so 1e-8 catches any real mistake. With the f16 cache
 * (Node/lavapipe has shader-f16), each K/V element is off by ≤ u = 2⁻¹⁰ relative, which moves each
 * layer's attention output by NMSE ≤ 2u²/3 ≈ 6.4e-7 (attention.test.ts): 8e-7 per layer. With f16
 * weights (`f16Weights`), every linear on them rounds its input to f16 (linear_io.wgsl's X_F16, as
 * llama.cpp does): NMSE ≈ (2⁻¹¹)²/3 ≈ 8e-8 per linear, seven a layer: another 8e-7 per layer
 * (Chromium, f32 cache, the F16 tiny models of architectures.test.ts: 1.7e-7 and 3.2e-7 at 2
 * layers, 9.5e-7 at 6). A wrong key, head or row gives ≥ 1e-3.
 */
export function logitsTolerance(kvCache: 'f16' | 'f32', layers: number, f16Weights = false): number {
  const perLayer = (kvCache === 'f16' ? 8e-7 : 0) + (f16Weights ? 8e-7 : 0);
  return perLayer > 0 ? perLayer * layers : 1e-8;
}

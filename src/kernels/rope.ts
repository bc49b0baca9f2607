import { storageBufferWith, uniformBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { gridInvocations } from './grid.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { ROW_BYTES } from './rows.ts';
import { elementwiseShape } from './select.ts';
import { SHADERS } from './shaders.ts';

/** The model-config fields RoPE reads (a ModelConfig satisfies it). */
export interface RopeConfig {
  headDim: number;
  /** ≤ headDim, even: only the first ropeDim dims of each head rotate. */
  ropeDim: number;
  ropeTheta: number;
  /** 'adjacent': pairs (x[2i], x[2i+1]) (llama.cpp NORM, llama2.c); 'neox': pairs (x[i], x[i+ropeDim/2]) (Qwen2). */
  ropeStyle: 'adjacent' | 'neox';
}

/** freq_i = theta^(−2i/ropeDim) for i < ropeDim/2, rounded once to f32 (the GPU and the CPU read the same table). */
export function ropeFrequencies(ropeDim: number, theta: number): Float32Array<ArrayBuffer> {
  return Float32Array.from({ length: ropeDim / 2 }, (_, i) => Math.pow(theta, (-2 * i) / ropeDim));
}

/** Per pair: 4 multiplies and 2 adds (the angle's sin/cos not counted); the rotated values read and written, plus the row table. */
export function ropeCost(R: number, nHeads: number, ropeDim: number): Cost {
  const pairs = (R * nHeads * ropeDim) / 2;
  return { flops: 6 * pairs, bytes: 2 * 4 * 2 * pairs + R * ROW_BYTES + 4 * (ropeDim / 2) };
}

/**
 * Rotate x (R, nHeads·headDim) in place — q with nHeads, k with nKvHeads — at each row's position
 * from the row table `rows` (R). The frequency table is built here and owned by the dispatch.
 */
export function rope(ctx: GpuContext, owner: string, x: GPUBuffer, rows: GPUBuffer, R: number, nHeads: number, cfg: RopeConfig): Promise<Dispatch> {
  if (cfg.ropeDim % 2 !== 0 || cfg.ropeDim > cfg.headDim || cfg.ropeDim <= 0) {
    throw new RangeError(`${owner}: ropeDim ${cfg.ropeDim} must be even and in (0, headDim ${cfg.headDim}]`);
  }
  const half = cfg.ropeDim / 2;
  const pairs = R * nHeads * half;
  const shape = elementwiseShape(ctx.caps, pairs);
  const freqs = storageBufferWith(ctx.device, `${owner}.freqs`, ropeFrequencies(cfg.ropeDim, cfg.ropeTheta));
  const params = uniformBufferWith(
    ctx.device,
    `${owner}.params`,
    new Uint32Array([pairs, gridInvocations(shape.workgroups, shape.wgSize), nHeads, cfg.headDim, half, 0, 0, 0]),
  );
  return makeDispatch(ctx, { name: 'rope', code: SHADERS.rope, constants: { WG_SIZE: shape.wgSize, NEOX: cfg.ropeStyle === 'neox' ? 1 : 0 } }, {
    owner,
    kind: 'rope',
    bindings: [x, rows, freqs, params],
    workgroups: shape.workgroups,
    cost: ropeCost(R, nHeads, cfg.ropeDim),
    owned: [params, freqs],
  });
}

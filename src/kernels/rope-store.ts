/**
 * RoPE and the KV-cache store fused (shaders/rope_store.wgsl, joined with the cache element's
 * kv_store_*.wgsl: the variants rope_store+kv_store_* of variant-table.ts): from a step's Q|K|V output,
 * rotated q into the attention's input and rotated k and v into the cache at each row's
 * (slot, pos), with an optional per-head RMSNorm of q and k before rotating (Qwen3, Gemma 3).
 */
import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { ROW_BYTES } from './rows.ts';
import { kvBytesPerElement, ropeStoreShape, type KvElement } from './select.ts';
import { paramsBuffer, shader } from './shaders.ts';

/** The model-config fields RoPE reads (a ModelConfig satisfies it). */
export interface RopeConfig {
  headDim: number;
  /** ≤ headDim, even: only the first ropeDim dims of each head rotate. */
  ropeDim: number;
  /** 'adjacent': pairs (x[2i], x[2i+1]) (llama.cpp NORM, llama2.c); 'neox': pairs (x[i], x[i+ropeDim/2]) (Qwen2). */
  ropeStyle: 'adjacent' | 'neox';
}

export interface RopeStoreDims extends RopeConfig {
  nHeads: number;
  nKvHeads: number;
  slots: number;
  maxSeq: number;
  /** The cache's element type (kvElement in select.ts). */
  kv: KvElement;
}

export interface RopeStoreBuffers {
  qkv: GPUBuffer; // (R, (nHeads + 2·nKvHeads)·headDim): a Q|K|V linear's output
  rows: GPUBuffer; // (R): (slot, pos)
  invFreq: GPUBuffer; // (ropeDim/2) f32, from ropeInvFreq
  q: GPUBuffer; // (R, nHeads·headDim): rotated queries out
  kCache: GPUBuffer; // (slots, maxSeq, nKvHeads·headDim) of shape.kv
  vCache: GPUBuffer; // (slots, maxSeq, nKvHeads·headDim) of shape.kv
  /** Per-head RMSNorm of q and k before RoPE: (headDim) f32 weights each, and eps. */
  headNorm?: { q: GPUBuffer; k: GPUBuffer; eps: number };
}

/**
 * Per rotated pair 6 FLOPs (+ 4 per value normalised); bytes: Q|K|V read once (f32), q written
 * (f32) and the K/V rows written (in the cache's element type), the row table and the
 * frequencies (and norm weights) read.
 */
export function ropeStoreCost(R: number, s: Pick<RopeStoreDims, 'nHeads' | 'nKvHeads' | 'headDim' | 'ropeDim' | 'kv'>, headNorm = false): Cost {
  const values = R * (s.nHeads + 2 * s.nKvHeads) * s.headDim;
  const kvValues = R * 2 * s.nKvHeads * s.headDim;
  const rotated = R * (s.nHeads + s.nKvHeads);
  return {
    flops: rotated * (3 * s.ropeDim + (headNorm ? 4 * s.headDim : 0)),
    bytes: 4 * values + 4 * (values - kvValues) + kvBytesPerElement(s.kv) * kvValues + R * ROW_BYTES + 2 * s.ropeDim + (headNorm ? 8 * s.headDim : 0),
  };
}

export function ropeStore(ctx: GpuContext, owner: string, b: RopeStoreBuffers, R: number, s: RopeStoreDims): Promise<Dispatch> {
  if (s.ropeDim % 2 !== 0 || s.ropeDim > s.headDim || s.ropeDim <= 0 || s.headDim % 2 !== 0) {
    throw new RangeError(`${owner}: ropeDim ${s.ropeDim} must be even and in (0, headDim ${s.headDim}], headDim even`);
  }
  const shape = ropeStoreShape(ctx.caps, s.headDim, R);
  const variant = shader(`rope_store+kv_store_${s.kv}`);
  const params = paramsBuffer(ctx.device, `${owner}.params`, variant.name, {
    R,
    nHeads: s.nHeads,
    nKvHeads: s.nKvHeads,
    headDim: s.headDim,
    half: s.ropeDim / 2,
    maxSeq: s.maxSeq,
    slots: s.slots,
    eps: b.headNorm?.eps ?? 0,
  });
  const constants = { WG_SIZE: shape.wgSize, NEOX: s.ropeStyle === 'neox' ? 1 : 0, HEAD_NORM: b.headNorm ? 1 : 0 };
  return makeDispatch(
    ctx,
    { ...variant, constants },
    {
      owner,
      kind: 'rope',
      bindings: [b.qkv, b.rows, b.invFreq, b.headNorm?.q ?? b.invFreq, b.headNorm?.k ?? b.invFreq, b.q, b.kCache, b.vCache, params],
      workgroups: [s.nHeads + 2 * s.nKvHeads, shape.rowGroups, 1],
      owned: [params],
    },
  );
}

import { uniformBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { gridInvocations } from './grid.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { ROW_BYTES } from './rows.ts';
import { elementwiseShape } from './select.ts';
import { SHADERS } from './shaders.ts';

export interface KvCacheShape {
  slots: number;
  maxSeq: number;
  /** nKvHeads · headDim. */
  kvDim: number;
}

export interface KvStoreBuffers {
  k: GPUBuffer;       // (R, kvDim)
  v: GPUBuffer;       // (R, kvDim)
  rows: GPUBuffer;    // (R): (slot, pos)
  kCache: GPUBuffer;  // (slots, maxSeq, kvDim)
  vCache: GPUBuffer;  // (slots, maxSeq, kvDim)
}

/** No FLOPs; k and v read once, written once into the cache, plus the row table. */
export function kvStoreCost(R: number, kvDim: number): Cost {
  return { flops: 0, bytes: 4 * 4 * R * kvDim + R * ROW_BYTES };
}

/** Write each row's k and v (R, kvDim) into kCache/vCache at its (slot, pos) from the row table. */
export function kvStore(ctx: GpuContext, owner: string, buffers: KvStoreBuffers, R: number, cache: KvCacheShape): Promise<Dispatch> {
  const count = R * cache.kvDim;
  const shape = elementwiseShape(ctx.caps, count);
  const params = uniformBufferWith(
    ctx.device,
    `${owner}.params`,
    new Uint32Array([count, gridInvocations(shape.workgroups, shape.wgSize), cache.kvDim, cache.maxSeq, cache.slots, 0, 0, 0]),
  );
  return makeDispatch(ctx, { name: 'kv_store', code: SHADERS.kv_store, constants: { WG_SIZE: shape.wgSize } }, {
    owner,
    kind: 'elementwise',
    bindings: [buffers.k, buffers.v, buffers.rows, buffers.kCache, buffers.vCache, params],
    workgroups: shape.workgroups,
    cost: kvStoreCost(R, cache.kvDim),
    owned: [params],
  });
}

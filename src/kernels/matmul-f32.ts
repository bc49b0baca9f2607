import { uniformBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { SHADERS } from './shaders.ts';

export interface MatmulShape {
  /** Rows of X and Y (tokens). */
  M: number;
  /** Rows of W = columns of Y (output features). */
  N: number;
  /** Shared dimension (input features). */
  K: number;
}

export interface MatmulTiles {
  tileM: number;
  tileN: number;
  tileK: number;
}

export const DEFAULT_TILES: MatmulTiles = { tileM: 64, tileN: 64, tileK: 16 };

/** 2·M·N·K FLOPs; X, W read once and Y written once (the floor: tiles re-read from cache are not counted). */
export function matmulF32Cost({ M, N, K }: MatmulShape): Cost {
  return { flops: 2 * M * N * K, bytes: 4 * (M * K + N * K + M * N) };
}

/** Y = X · Wᵀ in f32 (shaders/matmul_f32.wgsl). */
export async function matmulF32(
  ctx: GpuContext,
  owner: string,
  buffers: { X: GPUBuffer; W: GPUBuffer; Y: GPUBuffer },
  shape: MatmulShape,
  tiles: MatmulTiles = DEFAULT_TILES,
): Promise<Dispatch> {
  const params = uniformBufferWith(ctx.device, `${owner}.params`, new Uint32Array([shape.M, shape.N, shape.K, 0]));
  return makeDispatch(
    ctx,
    { name: 'matmul_f32', code: SHADERS.matmul_f32, constants: { TILE_M: tiles.tileM, TILE_N: tiles.tileN, TILE_K: tiles.tileK } },
    {
      owner,
      kind: 'matmul',
      bindings: [buffers.X, buffers.W, buffers.Y, params],
      workgroups: [Math.ceil(shape.N / tiles.tileN), Math.ceil(shape.M / tiles.tileM), 1],
      cost: matmulF32Cost(shape),
      owned: [params],
    },
  );
}

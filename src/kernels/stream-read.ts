import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { chunkWords, grid1d } from './grid.ts';
import { paramsBuffer, shader } from './shaders.ts';

export const STREAM_READ_WG = 256;

/** Words each invocation of a 'tiles' shape reads (shaders/stream_read_tiles.wgsl writes them out). */
export const TILE_RUN = 4;

/** Bytes of one 'tiles' workgroup's tile; that layout reads whole tiles only. */
export function tileBytes(load: StreamReadShape['load']): number {
  return STREAM_READ_WG * TILE_RUN * wordBytes(load);
}

/**
 * One streaming-read shape. 'chunks' (shaders/stream_read.wgsl): `workgroups` contiguous chunks, each
 * invocation reading `run` consecutive words per step. 'tiles' (stream_read_tiles.wgsl): one
 * workgroup per STREAM_READ_WG × TILE_RUN words (`workgroups` of them, `run` = TILE_RUN), each
 * invocation reading TILE_RUN words STREAM_READ_WG apart; the buffer must be whole tiles. `load` is the word (16-byte vec4<u32> or 4-byte u32); `reduce` is how a
 * workgroup's sums leave it: 'workgroup' (a tree in workgroup memory, one partial per workgroup) or
 * 'invocation' (one partial per invocation, no barrier).
 */
export interface StreamReadShape {
  layout: 'chunks' | 'tiles';
  load: 'vec4' | 'u32';
  workgroups: number;
  run: number;
  reduce: 'workgroup' | 'invocation';
}

/** Bytes per word of a load width. */
export function wordBytes(load: StreamReadShape['load']): number {
  return load === 'vec4' ? 16 : 4;
}

/** The grid `shape` dispatches (its workgroup count as an x × y grid within the device's limit). */
function readGrid(ctx: GpuContext, shape: StreamReadShape): [number, number, number] {
  return grid1d(shape.workgroups, ctx.caps.limits.maxComputeWorkgroupsPerDimension);
}

/** The u32 partial sums `shape` writes: one per workgroup of its grid, or one per invocation. */
export function streamReadPartials(ctx: GpuContext, shape: StreamReadShape): number {
  const [x, y] = readGrid(ctx, shape);
  return x * y * (shape.reduce === 'invocation' ? STREAM_READ_WG : 1);
}

/** Reads every byte once; writes one u32 per partial. */
export function streamReadCost(bytes: number, partials: number): Cost {
  return { flops: 0, bytes: bytes + partials * 4 };
}

/** A shape as the roofs table names it, e.g. "16384 tiles × 256 invocations, 4 vec4 words each, a partial per invocation". */
export function describeStreamRead(shape: StreamReadShape): string {
  const reduce = shape.reduce === 'invocation' ? ', a partial per invocation' : '';
  const words = `${shape.run} ${shape.load} word${shape.run > 1 ? 's' : ''} each`;
  if (shape.layout === 'tiles') return `${shape.workgroups} one-tile workgroups × ${STREAM_READ_WG} invocations, ${words}${reduce}`;
  return `${shape.workgroups} workgroups × ${STREAM_READ_WG} invocations, ${words} per step${reduce}`;
}

/**
 * Sum `bytes` of `data` in `shape`'s words into `partials` (size it with streamReadPartials(ctx,
 * shape) · 4 bytes).
 */
export async function streamRead(ctx: GpuContext, data: GPUBuffer, bytes: number, partials: GPUBuffer, shape: StreamReadShape): Promise<Dispatch> {
  const grid = readGrid(ctx, shape);
  const words = bytes / wordBytes(shape.load);
  const reduce = shape.reduce === 'workgroup' ? 'tree' : 'lanes';
  const bindings = [
    { buffer: data, offset: 0, size: bytes },
    { buffer: partials, offset: 0, size: streamReadPartials(ctx, shape) * 4 },
  ];
  const spec = { owner: 'probe.read', kind: 'probe', workgroups: grid } as const;
  if (shape.layout === 'tiles') {
    // The tiles kernel has no bounds check (its speed on CPU adapters): exactly the tiles of the buffer.
    if (shape.run !== TILE_RUN || shape.workgroups * tileBytes(shape.load) !== bytes) {
      throw new Error(`streamRead: ${describeStreamRead(shape)} does not tile ${bytes} bytes`);
    }
    return makeDispatch(ctx, { ...shader(`stream_read_tiles+${shape.load}+${reduce}`), constants: { WG_SIZE: STREAM_READ_WG } }, { ...spec, bindings });
  }
  const variant = `stream_read+${shape.load}+${reduce}` as const;
  const params = paramsBuffer(ctx.device, 'streamRead.params', variant, {
    count: words,
    chunk: chunkWords(words, grid[0] * grid[1], STREAM_READ_WG * shape.run),
  });
  return makeDispatch(
    ctx,
    { ...shader(variant), constants: { WG_SIZE: STREAM_READ_WG, RUN: shape.run } },
    { ...spec, bindings: [...bindings, params], owned: [params] },
  );
}

/** Wrapping u32 sum of the partials the kernel wrote. */
export function sumPartials(partials: Uint32Array): number {
  let sum = 0;
  for (const p of partials) sum = (sum + p) >>> 0;
  return sum;
}

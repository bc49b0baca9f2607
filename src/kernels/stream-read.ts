import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { chunkWords, grid1d } from './grid.ts';
import { paramsBuffer, shader } from './shaders.ts';

export const STREAM_READ_WG = 256;

/** Reads every byte once; writes one u32 per workgroup. */
export function streamReadCost(bytes: number, workgroups: number): Cost {
  return { flops: 0, bytes: bytes + workgroups * 4 };
}

/**
 * Sum `bytes` of `data` as vec4<u32> (shaders/stream_read.wgsl) into `partials`
 * (one u32 per workgroup; size it with `workgroups * 4`); each invocation reads `run`
 * consecutive 16-byte words per step.
 */
export async function streamRead(ctx: GpuContext, data: GPUBuffer, bytes: number, partials: GPUBuffer, workgroups: number, run = 1): Promise<Dispatch> {
  const grid = grid1d(workgroups, ctx.caps.limits.maxComputeWorkgroupsPerDimension);
  const total = grid[0] * grid[1];
  const params = paramsBuffer(ctx.device, 'streamRead.params', 'stream_read', {
    count: bytes / 16,
    chunk: chunkWords(bytes / 16, total, STREAM_READ_WG * run),
  });
  return makeDispatch(
    ctx,
    { ...shader('stream_read'), constants: { WG_SIZE: STREAM_READ_WG, RUN: run } },
    {
      owner: 'probe.read',
      kind: 'probe',
      bindings: [{ buffer: data, offset: 0, size: bytes }, { buffer: partials, offset: 0, size: total * 4 }, params],
      workgroups: grid,
      owned: [params],
    },
  );
}

/** Wrapping u32 sum of the partials the kernel wrote. */
export function sumPartials(partials: Uint32Array): number {
  let sum = 0;
  for (const p of partials) sum = (sum + p) >>> 0;
  return sum;
}

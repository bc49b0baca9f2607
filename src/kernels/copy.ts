import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { chunkWords, grid1d } from './grid.ts';
import { paramsBuffer, shader } from './shaders.ts';

const WG_SIZE = 256;

/** Reads and writes every byte once. */
export function copyCost(bytes: number): Cost {
  return { flops: 0, bytes: 2 * bytes };
}

/** dst = src over `bytes` bytes, as vec4<u32> (shaders/copy.wgsl). */
export async function copyKernel(ctx: GpuContext, src: GPUBuffer, dst: GPUBuffer, bytes: number, workgroups: number): Promise<Dispatch> {
  const grid = grid1d(workgroups, ctx.caps.limits.maxComputeWorkgroupsPerDimension);
  const total = grid[0] * grid[1];
  const params = paramsBuffer(ctx.device, 'copy.params', 'copy', { count: bytes / 16, chunk: chunkWords(bytes / 16, total, WG_SIZE) });
  return makeDispatch(
    ctx,
    { ...shader('copy'), constants: { WG_SIZE } },
    {
      owner: 'probe.copy',
      kind: 'probe',
      bindings: [{ buffer: src, offset: 0, size: bytes }, { buffer: dst, offset: 0, size: bytes }, params],
      workgroups: grid,
      owned: [params],
    },
  );
}

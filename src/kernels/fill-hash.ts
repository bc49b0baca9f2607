import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Dispatch } from './kernel.ts';
import { grid1d, gridInvocations } from './grid.ts';
import { paramsBuffer, shader } from './shaders.ts';

const WG_SIZE = 256;

/** data[i] = hash(i ^ seed) over `words` u32 words (shaders/fill_hash.wgsl). */
export async function fillHash(ctx: GpuContext, data: GPUBuffer, words: number, seed: number, workgroups: number): Promise<Dispatch> {
  const grid = grid1d(workgroups, ctx.caps.limits.maxComputeWorkgroupsPerDimension);
  const params = paramsBuffer(ctx.device, 'fillHash.params', 'fill_hash', { count: words, seed, stride: gridInvocations(grid, WG_SIZE) });
  return makeDispatch(
    ctx,
    { ...shader('fill_hash'), constants: { WG_SIZE } },
    {
      owner: 'probe.fill',
      kind: 'probe',
      bindings: [data, params],
      workgroups: grid,
      owned: [params],
    },
  );
}

/** The CPU twin of the shader's hash (same bits). */
export function hashU32(x: number): number {
  let h = Math.imul(x, 0x9e3779b1) >>> 0;
  h = (h ^ (h >>> 15)) >>> 0;
  h = Math.imul(h, 0x85ebca77) >>> 0;
  return (h ^ (h >>> 13)) >>> 0;
}

/** Wrapping u32 sum of hash(i ^ seed) for i in [0, words). */
export function hashSum(words: number, seed: number): number {
  let sum = 0;
  for (let i = 0; i < words; i++) sum = (sum + hashU32((i ^ seed) >>> 0)) >>> 0;
  return sum;
}

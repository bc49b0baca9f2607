import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { grid1d, gridInvocations } from './grid.ts';
import { paramsBuffer, shader } from './shaders.ts';

const WG_SIZE = 256;
/** Independent vec4 chains per invocation in shaders/fma_{f32,f16}.wgsl. */
const CHAINS = 8;

export type FmaPrecision = 'f32' | 'f16';

/** 2 FLOPs per lane per FMA; writes one vec4 per invocation. */
export function fmaCost(invocations: number, iterations: number, precision: FmaPrecision): Cost {
  return { flops: invocations * iterations * CHAINS * 4 * 2, bytes: invocations * 4 * (precision === 'f32' ? 4 : 2) };
}

/** The grid of `workgroups` FMA workgroups on this device, and its invocations (what fmaCost counts). */
export function fmaGrid(ctx: GpuContext, workgroups: number): { grid: [number, number, number]; invocations: number } {
  const grid = grid1d(workgroups, ctx.caps.limits.maxComputeWorkgroupsPerDimension);
  return { grid, invocations: gridInvocations(grid, WG_SIZE) };
}

/** The FMA-chain compute roof kernel; `out` holds one vec4 per invocation. */
export async function fmaKernel(
  ctx: GpuContext,
  precision: FmaPrecision,
  out: GPUBuffer,
  workgroups: number,
  iterations: number,
  m: number,
): Promise<Dispatch> {
  const { grid } = fmaGrid(ctx, workgroups);
  const name = `fma_${precision}` as const;
  const params = paramsBuffer(ctx.device, `${name}.params`, name, { iterations, m });
  return makeDispatch(
    ctx,
    { ...shader(name), constants: { WG_SIZE } },
    {
      owner: 'probe.fma',
      kind: 'probe',
      bindings: [out, params],
      workgroups: grid,
      owned: [params],
    },
  );
}

/**
 * What invocation `index` must output: the mean of the 8 chains. With m = 1 every chain adds c
 * per step (exact in f32 for the sizes used), so the result counts the iterations; with |m| < 1
 * the chains converge to c / (1 − m).
 */
export function fmaExpected(index: number, iterations: number, m: number): [number, number, number, number] {
  const c = [(index % 16) * 0.0625, 0.25, 0.5, 0.75];
  const starts = (ci: number) => [ci, ci * 0.5, ci * 0.25, ci * 0.125, -ci, ci + 1, ci - 1, ci * 2];
  return c.map((ci) => {
    const finals = starts(ci).map((x0) => (m === 1 ? x0 + iterations * ci : ci / (1 - m) + (x0 - ci / (1 - m)) * m ** iterations));
    return finals.reduce((a, b) => a + b, 0) / CHAINS;
  }) as [number, number, number, number];
}

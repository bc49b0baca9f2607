import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { rowReductionShape } from './select.ts';
import { paramsBuffer, shader } from './shaders.ts';

/** Per element: square, add, then two multiplies (4 FLOPs); x read, out written, weight read once. */
export function rmsnormCost(R: number, dim: number): Cost {
  return { flops: 4 * R * dim, bytes: 4 * (2 * R * dim + dim) };
}

/**
 * out = x / sqrt(mean(x²) + eps) · weight for each of the R rows of x (R, dim) → out (R, dim);
 * weight (dim). One workgroup per row; subgroup reduction where the device has subgroups.
 */
export function rmsnorm(
  ctx: GpuContext,
  owner: string,
  x: GPUBuffer,
  weight: GPUBuffer,
  out: GPUBuffer,
  R: number,
  dim: number,
  eps: number,
): Promise<Dispatch> {
  const shape = rowReductionShape(ctx.caps);
  const name = shape.subgroups ? 'rmsnorm_subgroups' : 'rmsnorm';
  const params = paramsBuffer(ctx.device, `${owner}.params`, name, { dim, eps });
  return makeDispatch(
    ctx,
    { ...shader(name), constants: { WG_SIZE: shape.wgSize } },
    {
      owner,
      kind: 'norm',
      bindings: [x, weight, out, params],
      workgroups: [R, 1, 1],
      owned: [params],
    },
  );
}

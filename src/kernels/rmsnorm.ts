import { uniformBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { rowReductionShape } from './select.ts';
import { SHADERS } from './shaders.ts';

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
  const data = new DataView(new ArrayBuffer(16));
  data.setUint32(0, dim, true);
  data.setFloat32(4, eps, true);
  const params = uniformBufferWith(ctx.device, `${owner}.params`, data.buffer);
  const name = shape.subgroups ? 'rmsnorm_subgroups' : 'rmsnorm';
  return makeDispatch(
    ctx,
    { name, code: SHADERS[name], constants: { WG_SIZE: shape.wgSize } },
    {
      owner,
      kind: 'norm',
      bindings: [x, weight, out, params],
      workgroups: [R, 1, 1],
      cost: rmsnormCost(R, dim),
      owned: [params],
    },
  );
}

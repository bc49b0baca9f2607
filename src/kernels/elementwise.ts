/**
 * The SwiGLU gate as its own pass (shaders/swiglu.wgsl), a grid-stride loop shaped by
 * `elementwiseShape`: used only where gate and up could not be joined into one gated matvec
 * (a file that gives them different formats). Residual adds live in the linear epilogue.
 */
import { uniformBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { gridInvocations } from './grid.ts';
import { makeDispatch, type Binding, type Cost, type Dispatch } from './kernel.ts';
import { elementwiseShape } from './select.ts';
import { SHADERS } from './shaders.ts';

/** silu·up: ~5 FLOPs per element (negate, exp, add, divide, multiply); gate and up read, out written. */
export function swigluCost(n: number): Cost {
  return { flops: 5 * n, bytes: 3 * 4 * n };
}

/** out = silu(gate) · up over (R, hiddenDim); `out` may be `gate` (computed in place), not `up`. */
export function swiglu(ctx: GpuContext, owner: string, gate: GPUBuffer, up: GPUBuffer, out: GPUBuffer, R: number, hiddenDim: number): Promise<Dispatch> {
  const n = R * hiddenDim;
  return out === gate
    ? gridStride(ctx, owner, 'swiglu', 'in_place', [gate, up], [], n, swigluCost(n))
    : gridStride(ctx, owner, 'swiglu', 'main', [gate, up], [out], n, swigluCost(n));
}

/** A grid-stride dispatch whose bindings are `before`, its params uniform, then `after`. */
function gridStride(
  ctx: GpuContext,
  owner: string,
  name: 'swiglu',
  entryPoint: string,
  before: Binding[],
  after: Binding[],
  n: number,
  cost: Cost,
): Promise<Dispatch> {
  const shape = elementwiseShape(ctx.caps, n);
  const params = uniformBufferWith(ctx.device, `${owner}.params`, new Uint32Array([n, gridInvocations(shape.workgroups, shape.wgSize), 0, 0]));
  return makeDispatch(ctx, { name, code: SHADERS[name], entryPoint, constants: { WG_SIZE: shape.wgSize } }, {
    owner,
    kind: 'elementwise',
    bindings: [...before, params, ...after],
    workgroups: shape.workgroups,
    cost,
    owned: [params],
  });
}

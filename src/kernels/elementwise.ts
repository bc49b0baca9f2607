/**
 * Elementwise kernels of the layer: the SwiGLU gate (shaders/swiglu.wgsl) and the residual add
 * (shaders/add.wgsl). Both are grid-stride loops shaped by `elementwiseShape`.
 */
import type { GpuContext } from '../gpu/device.ts';
import { gridInvocations } from './grid.ts';
import { makeDispatch, type Binding, type Cost, type Dispatch } from './kernel.ts';
import { elementwiseShape } from './select.ts';
import { paramsBuffer, shader } from './shaders.ts';

/** silu·up: ~5 FLOPs per element (negate, exp, add, divide, multiply); gate and up read, out written. */
export function swigluCost(n: number): Cost {
  return { flops: 5 * n, bytes: 3 * 4 * n };
}

/** a += b: one FLOP per element; a and b read, a written. */
export function residualAddCost(n: number): Cost {
  return { flops: n, bytes: 3 * 4 * n };
}

/** out = silu(gate) · up over (R, hiddenDim); `out` may be `gate` (computed in place), not `up`. */
export function swiglu(ctx: GpuContext, owner: string, gate: GPUBuffer, up: GPUBuffer, out: GPUBuffer, R: number, hiddenDim: number): Promise<Dispatch> {
  const n = R * hiddenDim;
  return out === gate ? gridStride(ctx, owner, 'swiglu', 'in_place', [gate, up], [], n) : gridStride(ctx, owner, 'swiglu', 'main', [gate, up], [out], n);
}

/** a += b over (R, features) (the residual connection). */
export function add(ctx: GpuContext, owner: string, a: GPUBuffer, b: GPUBuffer, R: number, features: number): Promise<Dispatch> {
  return gridStride(ctx, owner, 'add', 'main', [a, b], [], R * features);
}

/** A grid-stride dispatch whose bindings are `before`, its params uniform, then `after`. */
function gridStride(
  ctx: GpuContext,
  owner: string,
  name: 'swiglu' | 'add',
  entryPoint: string,
  before: Binding[],
  after: Binding[],
  n: number,
): Promise<Dispatch> {
  const shape = elementwiseShape(ctx.caps, n);
  const params = paramsBuffer(ctx.device, `${owner}.params`, name, { n, stride: gridInvocations(shape.workgroups, shape.wgSize) });
  return makeDispatch(
    ctx,
    { ...shader(name), entryPoint, constants: { WG_SIZE: shape.wgSize } },
    {
      owner,
      kind: 'elementwise',
      bindings: [...before, params, ...after],
      workgroups: shape.workgroups,
      owned: [params],
    },
  );
}

/**
 * The kernel contract: every GPU kernel is a small object that names its WGSL, its constants,
 * its bindings and workgroup counts; its file exports what it costs (`<kernel>Cost(dims)`: FLOPs
 * and bytes moved to/from device memory) next to the dispatch math. A dispatch carries no cost of
 * its own: a model step is counted by model/step.ts's costOfStep from those same functions, a
 * probe or a tuning candidate by its caller — so there is one count, not one per dispatch.
 *
 * Kernels record into a passed-in encoder and never submit.
 */
import type { GpuContext } from '../gpu/device.ts';
import { getPipeline, pipelineKey, type ShaderSpec } from '../gpu/pipelines.ts';
import { shaderCode, type KernelSpec, type ShaderName } from './shaders.ts';
import type { GpuTimer } from '../gpu/timer.ts';

/** Kernel classes for the per-kernel breakdown. */
export type KernelClass = 'matmul' | 'matvec' | 'attention' | 'norm' | 'rope' | 'elementwise' | 'embedding' | 'sampling' | 'probe';

export interface Cost {
  /** Floating-point operations (an FMA counts 2). */
  flops: number;
  /** Bytes read from plus bytes written to device memory, counted once per byte the kernel must touch. */
  bytes: number;
}

export const ZERO_COST: Cost = { flops: 0, bytes: 0 };

export function addCost(a: Cost, b: Cost): Cost {
  return { flops: a.flops + b.flops, bytes: a.bytes + b.bytes };
}

/** One dispatch, built once (pipeline + bind group) and encoded any number of times. */
export interface Dispatch {
  /** Owner-qualified label, e.g. "layer3.wq:matvec_q4_0". */
  label: string;
  kind: KernelClass;
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  workgroups: readonly [number, number, number];
  /** Buffers this dispatch created for itself (its uniforms); freed by `releaseDispatches`. */
  owned: GPUBuffer[];
}

/** A binding: a whole buffer or a range of one. Binding index = position in the list. */
export type Binding = GPUBuffer | { buffer: GPUBuffer; offset?: number; size?: number };

/** A bind group for group 0 whose binding i is `bindings[i]`. */
export function bindGroup(device: GPUDevice, pipeline: GPUComputePipeline, label: string, bindings: Binding[]): GPUBindGroup {
  return device.createBindGroup({
    label,
    layout: pipeline.getBindGroupLayout(0),
    entries: bindings.map((b, binding) => ({ binding, resource: 'buffer' in b ? b : { buffer: b } })),
  });
}

/** Compile (or fetch from the device's cache) and bind a dispatch. */
export async function makeDispatch(
  ctx: GpuContext,
  spec: KernelSpec,
  args: {
    owner: string;
    kind: KernelClass;
    bindings: Binding[];
    workgroups: readonly [number, number, number];
    owned?: GPUBuffer[];
  },
): Promise<Dispatch> {
  const full: ShaderSpec = { ...spec, code: spec.code ?? (await shaderCode(spec.name as ShaderName)) };
  const pipeline = await getPipeline(ctx.device, full);
  const label = `${args.owner}:${pipelineKey(full)}`;
  const [x, y, z] = args.workgroups;
  const max = ctx.caps.limits.maxComputeWorkgroupsPerDimension;
  if (x > max || y > max || z > max) {
    throw new RangeError(`${label}: workgroup count [${x}, ${y}, ${z}] exceeds maxComputeWorkgroupsPerDimension ${max}`);
  }
  return {
    label,
    kind: args.kind,
    pipeline,
    bindGroup: bindGroup(ctx.device, pipeline, label, args.bindings),
    workgroups: args.workgroups,
    owned: args.owned ?? [],
  };
}

/** Free the buffers the dispatches own (not the buffers they were bound to). */
export function releaseDispatches(dispatches: readonly Dispatch[]): void {
  for (const d of dispatches) for (const b of d.owned) b.destroy();
}

export interface RecordOptions {
  /** Time the recorded work: one pass timed as `phase`, or (perKernel) one timed pass per dispatch. */
  timer?: GpuTimer | null;
  /** The phase the pass belongs to (e.g. "prefill" or "decode"), which tags its timed pass. */
  phase?: string;
  /** Which step of the phase (a prefill chunk, a decode token), tagged with it. */
  step?: number;
  /** Profile mode: each dispatch in its own timed pass, tagged with its kernel class and label. Perturbs timing. */
  perKernel?: boolean;
}

/** Record dispatches in order into `encoder` (one compute pass unless perKernel). */
export function encodeDispatches(encoder: GPUCommandEncoder, dispatches: readonly Dispatch[], opts: RecordOptions = {}): void {
  if (opts.perKernel && opts.timer) {
    for (const d of dispatches) {
      const pass = encoder.beginComputePass({
        label: d.label,
        timestampWrites: opts.timer.timestampWrites({ phase: opts.phase ?? '', step: opts.step, kind: d.kind, label: d.label }),
      });
      encodeOne(pass, d);
      pass.end();
    }
    return;
  }
  const pass = encoder.beginComputePass({
    label: opts.phase ?? 'tokenscope',
    timestampWrites: opts.timer && opts.phase ? opts.timer.timestampWrites({ phase: opts.phase, step: opts.step }) : undefined,
  });
  for (const d of dispatches) encodeOne(pass, d);
  pass.end();
}

function encodeOne(pass: GPUComputePassEncoder, d: Dispatch): void {
  pass.setPipeline(d.pipeline);
  pass.setBindGroup(0, d.bindGroup);
  pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
}

/**
 * Linear layers Y = act(norm(X) · Wᵀ (+ bias)) (+ Y) for every weight format: a multi-row matvec for decode
 * (R ≤ 8 rows, memory-bound: each weight byte read once for all R rows) and a tiled matmul for
 * prefill (compute-bound). One dispatch per weight shard, each writing its own columns of Y.
 * Which kernel and shape run is linear-plan.ts's linearPlan; this file records it and counts its cost.
 */
import type { GpuContext } from '../gpu/device.ts';
import { makeDispatch, type Binding, type Cost, type Dispatch } from './kernel.ts';
import { linearPairPlan, linearPlan, type GateActivation, type LinearIo } from './linear-plan.ts';
import { MATVEC_MAX_TOKENS, type LinearShape } from './linear-shapes.ts';
import { paramsBuffer } from './shaders.ts';
import { hasScaleRegion, packedLayout, weightBytes, type WeightFormat, type WeightTensor } from './weights.ts';

export type { GateActivation, LinearIo } from './linear-plan.ts';

export interface LinearOptions {
  /** (rows) f32, added to every row of Y. */
  bias?: GPUBuffer;
  /** Y += result (residual fusion). */
  accumulate?: boolean;
  /** RMSNorm X's rows on the way in: x / sqrt(mean(x²) + eps) · weight, weight (cols) f32. */
  norm?: { weight: GPUBuffer; eps: number };
  /**
   * W's rows are (gate, up) pairs (2j, 2j+1); Y (R, rows/2) gets act(gate_j) · up_j: the SwiGLU
   * (or GeGLU) of a gate|up tensor in the epilogue.
   */
  gate?: GateActivation;
  /** W is one part of a wider output: Y has `stride` columns and W writes `offset`…offset+rows−1. */
  columns?: { offset: number; stride: number };
  /** Kernel and shape (a tuned one, or one a test forces; linearPlan applies the fallbacks); default: linear-shapes.ts's static choice for R. */
  shape?: LinearShape;
}

/**
 * FLOPs 2·R·rows·cols (+ the norm's 3 per input and the gate's ~6 per pair); bytes the floor:
 * weights once (quants + scales), X once, Y once (half the rows when gated), plus the bias, the
 * norm weight and Y's previous value when read.
 */
export function linearCost(format: WeightFormat, rows: number, cols: number, R: number, opts: LinearIo = {}): Cost {
  const outputs = opts.gate ? rows / 2 : rows;
  const bytes =
    weightBytes(format, rows, cols) + 4 * R * cols + 4 * R * outputs * (opts.accumulate ? 2 : 1) + (opts.bias ? 4 * rows : 0) + (opts.norm ? 4 * cols : 0);
  return { flops: 2 * R * rows * cols + (opts.norm ? 3 * R * cols : 0) + (opts.gate ? 6 * R * outputs : 0), bytes };
}

/** The kernel class of a linear over R rows: decode-sized steps are matvecs, larger ones matmuls (for the per-kernel breakdown). */
export function linearKind(R: number): 'matvec' | 'matmul' {
  return R <= MATVEC_MAX_TOKENS ? 'matvec' : 'matmul';
}

/**
 * Record Y = act(norm(X) · Wᵀ (+ bias)) (+ Y) for R rows: x (R, w.cols) f32, y (R, w.rows) f32
 * (R, w.rows/2 when gated; R, columns.stride for a part). X and Y (and the bias and norm weight)
 * must be distinct buffers. Returns one dispatch per shard of `w`.
 */
export async function linear(
  ctx: GpuContext,
  owner: string,
  w: WeightTensor,
  x: GPUBuffer,
  y: GPUBuffer,
  R: number,
  opts: LinearOptions = {},
): Promise<Dispatch[]> {
  if (!(Number.isInteger(R) && R >= 1)) throw new RangeError(`${owner}: R must be a positive integer, got ${R}`);
  const stride = opts.columns?.stride ?? w.rows;
  const offset = opts.columns?.offset ?? 0;
  if (offset + w.rows > stride || (opts.gate && (w.rows % 2 !== 0 || offset % 2 !== 0 || w.shards.some((s) => s.rowStart % 2 !== 0)))) {
    throw new RangeError(`${owner}: ${w.rows} rows at column ${offset} do not fit ${stride} columns${opts.gate ? ' as whole (gate, up) pairs' : ''}`);
  }
  const yColumns = opts.gate ? stride / 2 : stride;
  if (x.size < R * w.cols * 4 || y.size < R * yColumns * 4 || (opts.bias && opts.bias.size < stride * 4) || (opts.norm && opts.norm.weight.size < w.cols * 4)) {
    throw new RangeError(`${owner}: buffers too small for ${R} × (${w.rows} × ${w.cols})`);
  }
  const io: LinearIo = { bias: opts.bias !== undefined, accumulate: opts.accumulate, norm: opts.norm !== undefined, gate: opts.gate };
  const plan = linearPlan(ctx.caps, { format: w.format, rows: w.rows, cols: w.cols, R, io }, opts.shape);
  const spec = plan.spec;
  return Promise.all(
    w.shards.map((shard, i) => {
      const name = w.shards.length > 1 ? `${owner}.shard${i}` : owner;
      const layout = packedLayout(w.format, shard.rows, w.cols);
      const params = paramsBuffer(ctx.device, `${name}.params`, spec.name, {
        rows: shard.rows,
        cols: w.cols,
        tokens: R,
        y_stride: stride,
        y_col0: offset + shard.rowStart,
        scale_base: layout.scaleBase,
        eps: opts.norm?.eps ?? 0,
        split: 0,
        scale_base_1: 0,
      });
      const bindings: Binding[] = [x, y, params, opts.bias ?? x, opts.norm?.weight ?? x, shard.buffer];
      if (hasScaleRegion(w.format)) bindings.push(shard.buffer);
      const workgroups = plan.workgroups(shard.rows);
      return makeDispatch(ctx, spec, {
        owner: name,
        kind: linearKind(R),
        bindings,
        workgroups,
        owned: [params],
      });
    }),
  );
}

/**
 * Record two matrices stacked by rows as one linear: `a` and `b` read the same X and write adjacent
 * columns of Y (a from columns.offset, b right after it). One dispatch where linearPairPlan has a
 * pair variant for their formats at this R (Q4_K_M's Q|K in q4_k beside V in q6_k), else linear()
 * for each (with `partShapes`, their tuned shapes) — the same arithmetic either way. `opts.shape`
 * is the pair's shape (in b's format over both matrices' rows), default the static one.
 */
export async function linearPair(
  ctx: GpuContext,
  owner: string,
  a: WeightTensor,
  b: WeightTensor,
  x: GPUBuffer,
  y: GPUBuffer,
  R: number,
  opts: LinearOptions = {},
  partShapes: [LinearShape | undefined, LinearShape | undefined] = [undefined, undefined],
): Promise<Dispatch[]> {
  const offset = opts.columns?.offset ?? 0;
  const stride = opts.columns?.stride ?? a.rows + b.rows;
  const io: LinearIo = { bias: opts.bias !== undefined, accumulate: opts.accumulate, norm: opts.norm !== undefined, gate: opts.gate };
  const plan = a.shards.length === 1 && b.shards.length === 1 && a.cols === b.cols ? linearPairPlan(ctx.caps, a, b, R, io, opts.shape) : null;
  if (!plan) {
    return [
      ...(await linear(ctx, `${owner}.part0`, a, x, y, R, { ...opts, columns: { offset, stride }, shape: partShapes[0] })),
      ...(await linear(ctx, `${owner}.part1`, b, x, y, R, { ...opts, columns: { offset: offset + a.rows, stride }, shape: partShapes[1] })),
    ];
  }
  if (offset + a.rows + b.rows > stride || x.size < R * a.cols * 4 || y.size < R * stride * 4 || (opts.bias && opts.bias.size < stride * 4)) {
    throw new RangeError(`${owner}: buffers too small for ${R} × (${a.rows} + ${b.rows} × ${a.cols})`);
  }
  const [sa, sb] = [a.shards[0], b.shards[0]];
  const params = paramsBuffer(ctx.device, `${owner}.params`, plan.spec.name, {
    rows: a.rows + b.rows,
    cols: a.cols,
    tokens: R,
    y_stride: stride,
    y_col0: offset,
    scale_base: packedLayout(a.format, a.rows, a.cols).scaleBase,
    eps: opts.norm?.eps ?? 0,
    split: a.rows,
    scale_base_1: packedLayout(b.format, b.rows, b.cols).scaleBase,
  });
  const weights = (w: WeightTensor, buffer: GPUBuffer): Binding[] => (hasScaleRegion(w.format) ? [buffer, buffer] : [buffer]);
  const bindings: Binding[] = [x, y, params, opts.bias ?? x, opts.norm?.weight ?? x, ...weights(a, sa.buffer), ...weights(b, sb.buffer)];
  return [await makeDispatch(ctx, plan.spec, { owner, kind: linearKind(R), bindings, workgroups: plan.workgroups(a.rows + b.rows), owned: [params] })];
}

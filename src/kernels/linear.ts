/**
 * Linear layers Y = act(norm(X) · Wᵀ (+ bias)) (+ Y) for every weight format: a multi-row matvec for decode
 * (R ≤ 8 rows, memory-bound: each weight byte read once for all R rows) and a tiled matmul for
 * prefill (compute-bound). One dispatch per weight shard, each writing its own columns of Y.
 *
 * Each (body, format) pair is one variant of variant-table.ts, written whole to shaders/variants/ by
 * `npm run shaders`: the body (matvec[_subgroups|_wide] + matvec_core | linear_rows[_q4_0…] |
 * matmul_tiled[_f16] + matmul_tiled_core), then linear_io (bindings, input prologue, output epilogue,
 * Params) and the format's WEIGHT_LIBRARIES parts (w_raw, w_quants, w_scale, w_bias, w_dequant).
 * linearSpec picks the variant's name; its text comes from shaders.generated.ts.
 */
import { TokenscopeError } from '../errors.ts';
import type { GpuContext } from '../gpu/device.ts';
import type { ShaderSpec } from '../gpu/pipelines.ts';
import { grid1d } from './grid.ts';
import { makeDispatch, type Binding, type Cost, type Dispatch } from './kernel.ts';
import { GROUPED_MAX_TOKENS, MATVEC_MAX_TOKENS, SWAR_FORMATS, linearShape, q8dotFits, q8dotTokens, type LinearShape } from './select.ts';
import { paramsBuffer, shader, type ShaderName } from './shaders.ts';
import type { LinearBody } from './variant-table.ts';
import { hasScaleRegion, packedLayout, weightBytes, type WeightFormat, type WeightTensor } from './weights.ts';

/** The gate|up epilogue's activation (CONTRACTS §2): SiLU for Llama and Qwen, GELU-tanh for Gemma. */
export type GateActivation = 'silu' | 'gelu_tanh';

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
  /** Kernel and shape; default: the one tuned at load (useLinearShape), else select.ts's static choice for R. */
  shape?: LinearShape;
}

/** Matmul K-slab (TILE_K in matmul_tiled_core.wgsl): a multiple of every format's chunk (4, 16 or 32 weights). */
const TILE_K = 32;

/** The epilogue and prologue switches a linear pipeline is built with. */
export interface LinearIo {
  bias?: boolean;
  accumulate?: boolean;
  norm?: boolean;
  gate?: GateActivation;
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

/** Every linear variant's name: `<body>+<format>` for each of variant-table.ts's LINEAR_BODIES. */
export type LinearVariant = Extract<ShaderName, `${LinearBody}+${string}`>;

/**
 * The pipeline for a shape and format (constants that do not depend on the shard). `cols` sizes the
 * staged X of the 8-bit-activation kernels (linear_q8dot*.wgsl; their default without it).
 */
export function linearSpec(format: WeightFormat, shape: LinearShape, R: number, opts: LinearIo = {}, cols?: number): ShaderSpec & { name: LinearVariant } {
  const io = {
    ADD_BIAS: opts.bias ? 1 : 0,
    ACCUMULATE: opts.accumulate ? 1 : 0,
    NORM_INPUT: opts.norm ? 1 : 0,
    GATED: opts.gate ? 1 : 0,
    ACTIVATION: opts.gate === 'gelu_tanh' ? 1 : 0,
  };
  const q8Tokens = q8dotTokens(shape, format, R);
  if (q8Tokens > 0 && (shape.kernel === 'rows' || shape.kernel === 'matvec')) {
    // The wide shape is matvec_wide.wgsl's entry point over linear_q8dot.wgsl's staging and partial sums.
    // A swar shape runs linear_q8dot_swar.wgsl for q4_0 and q4_k (its register tile up to 16 rows ×
    // tokens), the plain 8-bit tile for q8_0.
    const swar = shape.kernel === 'rows' && shape.swar === true && SWAR_FORMATS.includes(format);
    const body = shape.kernel === 'rows' ? 'linear_q8dot_rows' : 'linear_q8dot_wide';
    const staged: Record<string, number> = cols === undefined ? {} : { X_BLOCKS: (q8Tokens * cols) / 32 };
    const rowsPerWorkgroup: Record<string, number> = shape.kernel === 'matvec' ? { ROWS_PER_WG: shape.rowsPerWorkgroup } : {};
    const name = swar ? (`linear_q8dot_swar+${format as 'q4_0' | 'q4_k'}` as const) : (`${body}+${format as 'q4_0' | 'q8_0' | 'q4_k' | 'q6_k'}` as const);
    return {
      ...shader(name),
      // The plain tiles hold at most 8 rows per invocation (a swar shape's 16 are the SWAR kernel's).
      constants: {
        LANES: shape.lanes,
        ROW_BLOCK: swar ? shape.rowBlock : Math.min(shape.rowBlock, 8),
        TOKENS: q8Tokens,
        ...rowsPerWorkgroup,
        ...staged,
        ...io,
      },
    };
  }
  if (shape.kernel === 'rows') {
    const tokens = Math.min(shape.tokens, R);
    if (shape.nibbles && format === 'q4_0') {
      const sg = shape.shareX;
      return {
        ...shader(sg ? 'linear_rows_q4_0_subgroups+q4_0' : 'linear_rows_q4_0_loads+q4_0'),
        constants: { LANES: shape.lanes, ROW_BLOCK: shape.rowBlock, TOKENS: tokens, ...(sg ? { SUBGROUP: sg } : {}), ...io },
      };
    }
    return { ...shader(`linear_rows+${format}`), constants: { LANES: shape.lanes, ROW_BLOCK: shape.rowBlock, TOKENS: tokens, ...io } };
  }
  if (shape.kernel === 'matvec') {
    const body = shape.wide ? 'matvec_wide' : shape.subgroups ? 'matvec_subgroups' : 'matvec';
    return {
      ...shader(`${body}+${format}`),
      constants: { LANES: shape.lanes, ROW_BLOCK: shape.rowBlock, ROWS_PER_WG: shape.rowsPerWorkgroup, TOKENS: Math.min(R, MATVEC_MAX_TOKENS), ...io },
    };
  }
  const body = shape.f16 ? 'matmul_tiled_f16' : 'matmul_tiled';
  return { ...shader(`${body}+${format}`), constants: { TILE_M: shape.tileM, TILE_N: shape.tileN, ...io } };
}

/** Throws a typed error when `shape` cannot run `R` rows on this device. */
export function checkLinearShape(ctx: GpuContext, shape: LinearShape, R: number): void {
  const { caps } = ctx;
  const bad = (why: string) =>
    new TokenscopeError('bad-input', `Linear shape ${JSON.stringify(shape)} for ${R} rows: ${why}.`, 'Use linearShape() or autotuneLinear() for this device.');
  const pow2 = (n: number) => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
  if (shape.kernel === 'rows') {
    const { rowBlock, tokens } = shape;
    const maxRowBlock = shape.swar ? 16 : 8;
    if (!(
      Number.isInteger(rowBlock) &&
      Number.isInteger(tokens) &&
      rowBlock >= 1 &&
      rowBlock <= maxRowBlock &&
      tokens >= 1 &&
      tokens <= 8 &&
      rowBlock * tokens <= 16
    )) {
      throw bad(`rowBlock and tokens must be 1–${maxRowBlock} and 1–8 with rowBlock · tokens ≤ 16`);
    }
    // Whole 8-wide subgroups, so every lane the kernel broadcasts from runs.
    if (shape.swar && !(shape.q8dot && caps.subgroups && shape.lanes % 8 === 0 && tokens <= 4))
      throw bad('swar needs q8dot, subgroups, a multiple of 8 lanes and at most 4 tokens');
    if (!pow2(shape.lanes) || shape.lanes > caps.limits.maxComputeInvocationsPerWorkgroup) throw bad('lanes must be a power of two within the workgroup limit');
    if (shape.q8dot && !caps.packedDot) throw bad('q8dot needs the WGSL language feature packed_4x8_integer_dot_product');
    if (shape.shareX !== undefined && !(shape.nibbles && caps.subgroups && (shape.shareX === 4 || shape.shareX === 8) && shape.lanes % shape.shareX === 0)) {
      throw bad('shareX needs nibbles, subgroups, a size of 4 or 8 and whole subgroups of lanes');
    }
    return;
  }
  if (shape.kernel === 'matvec') {
    if (R > MATVEC_MAX_TOKENS && !shape.wide) throw bad(`only the wide matvec takes more than ${MATVEC_MAX_TOKENS} rows (in groups)`);
    if (!pow2(shape.lanes) || shape.lanes > caps.limits.maxComputeInvocationsPerWorkgroup) throw bad('lanes must be a power of two within the workgroup limit');
    if (shape.q8dot && !(shape.wide && caps.packedDot)) throw bad('q8dot needs a wide matvec and the WGSL language feature packed_4x8_integer_dot_product');
    if (shape.wide) {
      if (!caps.subgroups) throw bad('a wide matvec needs subgroups');
    } else if (shape.subgroups && !(caps.subgroups && shape.lanes <= caps.subgroupMinSize))
      throw bad('subgroups need the feature and lanes ≤ the minimum subgroup size');
    if (!(shape.rowBlock >= 1 && shape.rowBlock <= 8 && shape.rowsPerWorkgroup % shape.rowBlock === 0))
      throw bad('rowBlock must be 1–8 and divide rowsPerWorkgroup');
    return;
  }
  if (shape.f16 && !caps.shaderF16) throw bad('f16 tiles need shader-f16');
  if (shape.tileM % 4 !== 0 || shape.tileN % 4 !== 0 || (shape.tileM * shape.tileN) / 16 > caps.limits.maxComputeInvocationsPerWorkgroup)
    throw bad('tiles must be multiples of 4 within the workgroup limit');
  if (TILE_K * (shape.tileM + shape.tileN) * (shape.f16 ? 2 : 4) > caps.limits.maxComputeWorkgroupStorageSize) throw bad('tiles exceed workgroup memory');
}

function linearWorkgroups(ctx: GpuContext, shape: LinearShape, rows: number, R: number): [number, number, number] {
  const max = ctx.caps.limits.maxComputeWorkgroupsPerDimension;
  if (shape.kernel === 'matvec') {
    // The wide matvec takes the rows of X in groups of MATVEC_MAX_TOKENS, one group per grid z.
    const [x, y] = grid1d(Math.ceil(rows / shape.rowsPerWorkgroup), max);
    return [x, y, Math.ceil(R / MATVEC_MAX_TOKENS)];
  }
  if (shape.kernel === 'matmul') return [Math.ceil(rows / shape.tileN), Math.ceil(R / shape.tileM), 1];
  const [x, y] = grid1d(Math.ceil(rows / (shape.lanes * shape.rowBlock)), max);
  return [x, y, Math.ceil(R / Math.min(shape.tokens, R))];
}

/**
 * Shapes chosen at model load (autotune.ts's tuneLinears), per device and problem: linear() runs
 * them whenever the caller passes no shape, so the engine uses the tuned shapes without the
 * forward pass knowing about tuning.
 */
const tunedShapes = new WeakMap<GPUDevice, Map<string, LinearShape>>();

/** The problem a tuned shape serves: format, the whole tensor's rows × cols, and R's class (linearRowClass). */
export function linearProblemKey(format: WeightFormat, rows: number, cols: number, R: number): string {
  return `${format} ${rows}x${cols} ${linearRowClass(R)}`;
}

/** Step sizes one tuned shape serves: each R up to 8 its own (pipelines are specialised per R), then short prompts (≤ 64), then prefill. */
export function linearRowClass(R: number): string {
  return R <= MATVEC_MAX_TOKENS ? `R${R}` : R <= GROUPED_MAX_TOKENS ? 'short-prefill' : 'prefill';
}

/** Make `shape` the one linear() uses on `device` for this problem. */
export function useLinearShape(device: GPUDevice, format: WeightFormat, rows: number, cols: number, R: number, shape: LinearShape): void {
  const book = tunedShapes.get(device) ?? new Map<string, LinearShape>();
  book.set(linearProblemKey(format, rows, cols, R), shape);
  tunedShapes.set(device, book);
}

/** Every shape set with useLinearShape on `device`, by linearProblemKey. */
export function tunedLinearShapes(device: GPUDevice): Record<string, LinearShape> {
  return Object.fromEntries(tunedShapes.get(device) ?? []);
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
  let shape = opts.shape ?? tunedShapes.get(ctx.device)?.get(linearProblemKey(w.format, w.rows, w.cols, R)) ?? linearShape(ctx.caps, R, w.format, w.cols);
  checkLinearShape(ctx, shape, R);
  // X too wide for the 8-bit kernels' workgroup memory (e.g. a 14336-wide down projection): the static choice without them.
  if (!q8dotFits(ctx.caps, shape, w.format, R, w.cols)) shape = linearShape(ctx.caps, R, w.format, w.cols);
  // A gate|up pair must not straddle two workgroups.
  if (opts.gate && shape.kernel === 'matvec' && shape.rowsPerWorkgroup % 2 !== 0) shape = { ...shape, rowsPerWorkgroup: 2 * shape.rowsPerWorkgroup };
  // ...nor two subgroups of a wide matvec, nor two invocations of the register tile: an even row block.
  if (opts.gate && shape.kernel === 'matvec' && shape.wide && shape.rowBlock % 2 !== 0) {
    shape = { ...shape, rowBlock: shape.rowBlock + 1, rowsPerWorkgroup: (shape.rowsPerWorkgroup / shape.rowBlock) * (shape.rowBlock + 1) };
  }
  if (opts.gate && shape.kernel === 'rows' && shape.rowBlock % 2 !== 0) shape = { ...shape, rowBlock: shape.rowBlock === 1 ? 2 : shape.rowBlock - 1 };
  const io: LinearIo = { bias: opts.bias !== undefined, accumulate: opts.accumulate, norm: opts.norm !== undefined, gate: opts.gate };
  const spec = linearSpec(w.format, shape, R, io, w.cols);
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
      });
      const bindings: Binding[] = [x, y, params, opts.bias ?? x, opts.norm?.weight ?? x, shard.buffer];
      if (hasScaleRegion(w.format)) bindings.push(shard.buffer);
      const workgroups = linearWorkgroups(ctx, shape, shard.rows, R);
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

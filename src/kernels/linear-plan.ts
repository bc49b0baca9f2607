/**
 * The one linear plan: for a problem (weight format, rows × cols, rows of X, prologue/epilogue) and an
 * optional requested shape (a tuned one, or one a test forces), the shape that runs after every
 * fallback and fix-up, the pipeline (variant name and override constants) and the grid per shard.
 * Pure: no GPU objects, so the engine, the autotuner, the benchmarks and tests read the same
 * decision. Candidates and the static default come from linear-shapes.ts.
 *
 * Each (body, format) pair is one variant of variant-table.ts, written whole to shaders/variants/ by
 * `npm run shaders`: the body (matvec[_subgroups|_wide] + matvec_core | linear_rows[_q4_0…] |
 * matmul_tiled[_f16] + matmul_tiled_core | linear_q8dot_*), then linear_io (bindings, input prologue,
 * output epilogue, Params) and the format's WEIGHT_LIBRARIES parts.
 */
import { TokenscopeError } from '../errors.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import type { KernelSpec } from './shaders.ts';
import { grid1d } from './grid.ts';
import {
  GROUPED_MAX_TOKENS,
  MATVEC_MAX_TOKENS,
  SWAR_FORMATS,
  activationGroup,
  linearShape,
  q8dotFits,
  q8dotTokens,
  type LinearShape,
} from './linear-shapes.ts';
import { shader, type ShaderName } from './shaders.ts';
import { hasLinearPair, type LinearBody } from './variant-table.ts';
import type { WeightFormat } from './weights.ts';

/** The gate|up epilogue's activation (CONTRACTS §2): SiLU for Llama and Qwen, GELU-tanh for Gemma. */
export type GateActivation = 'silu' | 'gelu_tanh';

/** The epilogue and prologue switches a linear pipeline is built with. */
export interface LinearIo {
  bias?: boolean;
  accumulate?: boolean;
  norm?: boolean;
  gate?: GateActivation;
}

/** Matmul K-slab (TILE_K in matmul_tiled_core.wgsl): a multiple of every format's chunk (4, 16 or 32 weights). */
const TILE_K = 32;

/** A linear layer as the plan sees it: the whole tensor's format and shape, the rows of X, the fused switches. */
export interface LinearProblem {
  format: WeightFormat;
  rows: number;
  cols: number;
  R: number;
  io?: LinearIo;
}

export interface LinearPlan {
  /** The shape that runs: the requested one (or the static default) after fallbacks and fix-ups. */
  shape: LinearShape;
  /** Pipeline: the variant's name and text, and its override constants. */
  spec: KernelSpec & { name: LinearVariant };
  /** The grid for a shard of `rows` weight rows. */
  workgroups(rows: number): [number, number, number];
}

/**
 * The plan of `problem` on a device with `caps`: `requested` (a tuned shape, or one a test forces;
 * default select's static choice) checked — an impossible shape is an error — then, where its
 * 8-bit staged X exceeds workgroup memory (e.g. a 14336-wide down projection), the static choice
 * instead; and for a gated (gate|up) epilogue, widened so no (gate, up) pair straddles two
 * workgroups, subgroups or invocations.
 */
export function linearPlan(caps: Capabilities, problem: LinearProblem, requested?: LinearShape): LinearPlan {
  const { format, cols, R } = problem;
  const io = problem.io ?? {};
  let shape = requested ?? linearShape(caps, R, format, cols);
  checkLinearShape(caps, shape, R);
  if (!q8dotFits(caps, shape, format, R, cols)) shape = linearShape(caps, R, format, cols);
  if (io.gate) shape = pairedRows(shape);
  const spec = linearSpec(format, shape, R, io, cols);
  const planned = shape;
  return { shape, spec, workgroups: (rows) => linearWorkgroups(caps, planned, rows, R) };
}

/** `shape` with (gate, up) row pairs kept whole within a workgroup, a subgroup's row block and an invocation's rows. */
function pairedRows(shape: LinearShape): LinearShape {
  let s = shape;
  if (s.kernel === 'matvec' && s.rowsPerWorkgroup % 2 !== 0) s = { ...s, rowsPerWorkgroup: 2 * s.rowsPerWorkgroup };
  if (s.kernel === 'matvec' && s.wide && s.rowBlock % 2 !== 0) {
    s = { ...s, rowBlock: s.rowBlock + 1, rowsPerWorkgroup: (s.rowsPerWorkgroup / s.rowBlock) * (s.rowBlock + 1) };
  }
  if (s.kernel === 'rows' && s.rowBlock % 2 !== 0) s = { ...s, rowBlock: s.rowBlock === 1 ? 2 : s.rowBlock - 1 };
  return s;
}

/** The problem a tuned shape serves: format, the whole tensor's rows × cols, and R's class (linearRowClass). */
export function linearProblemKey(format: WeightFormat, rows: number, cols: number, R: number): string {
  return `${format} ${rows}x${cols} ${linearRowClass(R)}`;
}

/** Step sizes one tuned shape serves: each R up to 8 its own (pipelines are specialised per R), then short prompts (≤ 64), then prefill. */
export function linearRowClass(R: number): string {
  return R <= MATVEC_MAX_TOKENS ? `R${R}` : R <= GROUPED_MAX_TOKENS ? 'short-prefill' : 'prefill';
}

/** Every linear variant's name: `<body>+<format>` for each of variant-table.ts's LINEAR_BODIES. */
export type LinearVariant = Extract<ShaderName, `${LinearBody}+${string}`>;

/**
 * The pipeline for a shape and format (constants that do not depend on the shard). `cols` sizes the
 * staged X of the 8-bit-activation kernels (linear_q8dot*.wgsl; their default without it).
 */
export function linearSpec(format: WeightFormat, shape: LinearShape, R: number, opts: LinearIo = {}, cols?: number): KernelSpec & { name: LinearVariant } {
  const io = {
    ADD_BIAS: opts.bias ? 1 : 0,
    ACCUMULATE: opts.accumulate ? 1 : 0,
    NORM_INPUT: opts.norm ? 1 : 0,
    GATED: opts.gate ? 1 : 0,
    ACTIVATION: opts.gate === 'gelu_tanh' ? 1 : 0,
    ...(format === 'f16' ? { X_F16: 1 } : {}),
  };
  const q8Tokens = q8dotTokens(shape, format, R);
  if (q8Tokens > 0 && (shape.kernel === 'rows' || shape.kernel === 'matvec')) {
    // The wide shape is matvec_wide.wgsl's entry point over linear_q8dot.wgsl's staging and partial sums.
    // A swar shape runs linear_q8dot_swar.wgsl for q4_0 and q4_k (its register tile up to 16 rows ×
    // tokens), the plain 8-bit tile for q8_0.
    const swar = shape.kernel === 'rows' && shape.swar === true && SWAR_FORMATS.includes(format);
    const body = shape.kernel === 'rows' ? 'linear_q8dot_rows' : 'linear_q8dot_wide';
    const staged: Record<string, number> = cols === undefined ? {} : { X_BLOCKS: (q8Tokens * cols) / 32 };
    const group = activationGroup(format);
    const rowsPerWorkgroup: Record<string, number> = shape.kernel === 'matvec' ? { ROWS_PER_WG: shape.rowsPerWorkgroup } : {};
    const name = swar ? (`linear_q8dot_swar+${format as 'q4_0' | 'q4_k'}` as const) : (`${body}+${format as 'q4_0' | 'q8_0' | 'q4_k' | 'q6_k'}` as const);
    return {
      ...shader(name),
      // The plain tiles hold at most 8 rows per invocation (a swar shape's 16 are the SWAR kernel's).
      constants: {
        LANES: shape.lanes,
        ROW_BLOCK: swar ? shape.rowBlock : Math.min(shape.rowBlock, 8),
        TOKENS: q8Tokens,
        ...(group > 1 ? { X_GROUP: group } : {}),
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
export function checkLinearShape(caps: Capabilities, shape: LinearShape, R: number): void {
  const bad = (why: string) =>
    new TokenscopeError('bad-input', `Linear shape ${JSON.stringify(shape)} for ${R} rows: ${why}.`, 'Use linearShape() or the autotuner for this device.');
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

/** The grid of a shard of `rows` weight rows. */
function linearWorkgroups(caps: Capabilities, shape: LinearShape, rows: number, R: number): [number, number, number] {
  const max = caps.limits.maxComputeWorkgroupsPerDimension;
  if (shape.kernel === 'matvec') {
    // The wide matvec takes the rows of X in groups of MATVEC_MAX_TOKENS, one group per grid z.
    const [x, y] = grid1d(Math.ceil(rows / shape.rowsPerWorkgroup), max);
    return [x, y, Math.ceil(R / MATVEC_MAX_TOKENS)];
  }
  if (shape.kernel === 'matmul') return [Math.ceil(rows / shape.tileN), Math.ceil(R / shape.tileM), 1];
  const [x, y] = grid1d(Math.ceil(rows / (shape.lanes * shape.rowBlock)), max);
  return [x, y, Math.ceil(R / Math.min(shape.tokens, R))];
}

/** A pair variant's name: `<body>+<first format>+<second format>` (variant-table.ts's LINEAR_PAIRS). */
export type LinearPairVariant = Extract<ShaderName, `${LinearBody}+${string}+${string}`>;

/**
 * The one-dispatch plan of two matrices stacked by rows (linear.ts's linearPair), or null where it
 * does not apply: a pair variant exists for (a, b)'s formats; the shape linearPlan gives the whole
 * (in b's format: Q4_K_M's q6_k) stages 8-bit X in the wide matvec or the plain register tile (not
 * the SWAR tile, which has no q6_k); no gate; and a's rows end on a row block, so no subgroup or
 * invocation straddles the two.
 */
export function linearPairPlan(
  caps: Capabilities,
  a: { format: WeightFormat; rows: number; cols: number },
  b: { format: WeightFormat; rows: number; cols: number },
  R: number,
  io: LinearIo,
  requested?: LinearShape,
): { spec: KernelSpec & { name: LinearPairVariant }; shape: LinearShape; workgroups(rows: number): [number, number, number] } | null {
  if (io.gate || !hasLinearPair(a.format, b.format)) return null;
  const plan = linearPlan(caps, { format: b.format, rows: a.rows + b.rows, cols: b.cols, R, io }, requested);
  const { shape } = plan;
  const tile = shape.kernel === 'rows' ? !shape.swar : shape.kernel === 'matvec' && shape.wide === true;
  if (!tile || q8dotTokens(shape, b.format, R) === 0 || !q8dotFits(caps, shape, a.format, R, a.cols)) return null;
  if (shape.kernel !== 'matmul' && a.rows % shape.rowBlock !== 0) return null;
  const body = plan.spec.name.slice(0, plan.spec.name.indexOf('+'));
  return { spec: { ...plan.spec, ...shader(`${body}+${a.format}+${b.format}` as LinearPairVariant) }, shape, workgroups: plan.workgroups };
}

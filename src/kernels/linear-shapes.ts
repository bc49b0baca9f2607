/**
 * Which linear kernel runs, and in what shape: the shape types, the candidates per device kind,
 * format and rows of X (the static default first), and the limits that rule some out. Pure: no
 * GPU objects. linear-plan.ts turns a problem and a shape into the pipeline and grid; the
 * measurements behind each choice are rows of docs/KERNEL-CHOICES.md, named here as [L1]…
 */
import type { Capabilities } from '../gpu/capabilities.ts';
import { Q8DOT_PARTS, SWAR_PARTS } from './variant-table.ts';
import type { WeightFormat } from './weight-formats.ts';

/** Up to this many rows (tokens) a linear layer runs as one matvec; beyond, as the tiled matmul (or, on GPUs, grouped matvecs). */
export const MATVEC_MAX_TOKENS = 8;

/** On GPUs with subgroups, up to this many tokens run the wide matvec in groups of MATVEC_MAX_TOKENS (grid z) before the tiled matmul. */
export const GROUPED_MAX_TOKENS = 64;

/** Decode-shaped linear layer (shaders/matvec*.wgsl). */
export interface MatvecShape {
  kernel: 'matvec';
  /** Reduce with subgroupAdd, the workgroup being one subgroup (else a tree in workgroup memory). */
  subgroups: boolean;
  /**
   * Several subgroups per workgroup, each owning rowBlock rows at a time (shaders/matvec_wide.wgsl;
   * needs subgroups): lanes is then the workgroup size, and a subgroup's lanes split a row.
   */
  wide?: boolean;
  /** Invocations splitting one row's input features (a power of two); with `wide`, the workgroup size. */
  lanes: number;
  /** Weight rows each invocation works on at once (1–8): X loaded once feeds this many rows. */
  rowBlock: number;
  /** Output features per workgroup (a multiple of rowBlock). */
  rowsPerWorkgroup: number;
  /**
   * With `wide`, for q4_0 and q8_0 (other formats ignore it): X quantized to int8 per block in
   * workgroup memory and dot4I8Packed (shaders/matvec_wide.wgsl over linear_q8dot.wgsl; see Q8DOT_FORMATS).
   */
  q8dot?: boolean;
}

/** Prefill-shaped linear layer (shaders/matmul_tiled*.wgsl). */
export interface MatmulShape {
  kernel: 'matmul';
  /** f16 tiles and products with f32 accumulation (needs shader-f16). */
  f16: boolean;
  /** Tokens per workgroup tile (a multiple of 4). */
  tileM: number;
  /** Output features per workgroup tile (a multiple of 4). */
  tileN: number;
}

/** One invocation per weight row, X shared by the workgroup (shaders/linear_rows.wgsl): the CPU-adapter shape. */
export interface RowsShape {
  kernel: 'rows';
  /** Invocations per workgroup (a power of two). */
  lanes: number;
  /** Weight rows per invocation (1–8). */
  rowBlock: number;
  /** Rows of X per invocation (1–8); rowBlock · tokens ≤ 16 (the register tile). */
  tokens: number;
  /**
   * q4_0 only, other formats ignore it: the masked-nibble kernel (shaders/linear_rows_q4_0.wgsl), one
   * u32 load per 8 weights and a mask, a conversion and an FMA per weight (X pre-scaled per block).
   */
  nibbles?: boolean;
  /** With nibbles: each block of X is loaded once per subgroup of this size (4 or 8) and broadcast. */
  shareX?: number;
  /**
   * q4_0 and q8_0 only, other formats ignore it: X quantized to int8 per block in workgroup memory,
   * dot4I8Packed per 4 weights (shaders/linear_q8dot_rows.wgsl; see Q8DOT_FORMATS).
   */
  q8dot?: boolean;
  /**
   * With q8dot, q4_0 and q4_k (elsewhere the plain q8dot tile runs): shaders/linear_q8dot_swar.wgsl,
   * block products two at a time in 16-bit fields of a u32, one vec4 load per block and per 8 block
   * scales, X shared through 8-wide subgroups (needs subgroups); rowBlock up to 16.
   */
  swar?: boolean;
}

/**
 * Formats the 8-bit-activation kernels (shaders/linear_q8dot*.wgsl) read: blocks of integer quants
 * (4, 6 or 8 bits) times a scale, plus a fixed offset (q4_0, q6_k's −32) or the block's min (q4_k).
 */
export const Q8DOT_FORMATS = Object.keys(Q8DOT_PARTS) as readonly WeightFormat[];

/** Formats the SWAR kernel (shaders/linear_q8dot_swar.wgsl) reads: the nibble formats with a part of their own there. */
export const SWAR_FORMATS = Object.keys(SWAR_PARTS) as readonly WeightFormat[];

/** Workgroup bytes of linear_q8dot.wgsl's staged X: per 32-element block of each token, 32 int8 and 12 bytes of XBlock; a u32 group maximum per 8 blocks. */
export function q8dotWorkgroupBytes(tokens: number, cols: number): number {
  const blocks = (tokens * cols) / 32;
  return blocks * 44 + 4 * Math.ceil(blocks / 8);
}

/**
 * Blocks of 32 inputs that share one activation scale in linear_q8dot (its X_GROUP): 8 (256 per
 * scale, llama.cpp's Q8_K) for the K-quants, 1 (llama.cpp's Q8_0) for q4_0 and q8_0 — the
 * activations llama.cpp's CPU backend multiplies each of those weights with (its vec_dot_type).
 */
export function activationGroup(format: WeightFormat): 1 | 8 {
  return format === 'q4_k' || format === 'q6_k' ? 8 : 1;
}

/** The rows of X a q8dot shape stages per workgroup, or 0 when `shape` does not run linear_q8dot for `format`. */
export function q8dotTokens(shape: LinearShape, format: WeightFormat, R: number): number {
  if (!Q8DOT_FORMATS.includes(format)) return 0;
  if (shape.kernel === 'matvec' && shape.wide && shape.q8dot) return Math.min(R, MATVEC_MAX_TOKENS);
  if (shape.kernel === 'rows' && shape.q8dot) return Math.min(shape.tokens, R);
  return 0;
}

export type LinearShape = MatvecShape | MatmulShape | RowsShape;

/**
 * Candidate shapes for a linear layer over `R` rows, the static default first (the autotuner in
 * src/kernels/autotune.ts times the others), none whose staged X exceeds workgroup memory.
 *
 * GPUs: decode as the wide matvec, 8-bit activations first where the format has them [L1, L2];
 * 9–64 tokens as the wide matvec over groups of 8 [L3]; longer prefills as the tiled matmul [L4].
 * Without subgroups, a 64-lane workgroup-memory tree. CPU adapters run a subgroup as one SIMD
 * register, where a load whose index is not a compile-time constant is scalarised lane by lane:
 * they want the fewest loads per FMA [L6–L12]. The [ids] are rows of docs/KERNEL-CHOICES.md.
 */
export function linearShapes(caps: Capabilities, R: number, format?: WeightFormat, cols?: number): LinearShape[] {
  const shapes = allLinearShapes(caps, R, format, cols);
  if (cols === undefined || format === undefined) return shapes;
  return shapes.filter((s) => q8dotFits(caps, s, format, R, cols));
}

/** False when `shape` runs linear_q8dot for this problem and its staged X exceeds workgroup memory (then linear() falls back). */
export function q8dotFits(caps: Capabilities, shape: LinearShape, format: WeightFormat, R: number, cols: number): boolean {
  const tokens = q8dotTokens(shape, format, R);
  return tokens === 0 || q8dotWorkgroupBytes(tokens, cols) <= caps.limits.maxComputeWorkgroupStorageSize;
}

function allLinearShapes(caps: Capabilities, R: number, format?: WeightFormat, cols?: number): LinearShape[] {
  const sgSize = caps.subgroupMinSize;
  const subgroups = caps.subgroups && sgSize >= 4 && (sgSize & (sgSize - 1)) === 0;
  // GPUs run prefill (R > 8) as the tiled matmul; CPU adapters as linear_rows's register tile, f32 or 8-bit.
  const q8dot = caps.packedDot && format !== undefined && Q8DOT_FORMATS.includes(format) && (caps.cpuLike || R <= GROUPED_MAX_TOKENS);
  if (caps.cpuLike) {
    const shapes = cpuLinearShapes(caps, R, subgroups);
    const nibbles = R === 1 && format === 'q4_0' ? [...nibbleShapes(caps, subgroups), ...shapes] : shapes;
    if (!q8dot) return nibbles;
    const dots = cpuQ8dotShapes(caps, R, subgroups);
    // Prefill: the 8-bit 4 × 4 tile first, then the f32 ones, the 8 × 2 tile a candidate; not for q6_k [L12].
    const eightBitPrefill = format !== 'q6_k';
    const order = R > MATVEC_MAX_TOKENS ? (eightBitPrefill ? [dots[0], ...nibbles, ...dots.slice(1)] : [...nibbles, ...dots]) : [...dots, ...nibbles];
    // Q4_0 and Q4_K with subgroups: the SWAR kernel's tiles first [L8, L9].
    if (SWAR_FORMATS.includes(format!) && subgroups) return [cpuSwarShape(caps, R), ...order];
    if (R > MATVEC_MAX_TOKENS) return order;
    // One-token decode: the 8-bit kernels first for q8_0, q4_k and q6_k [L11], for q4_0 from some width [L10].
    return R === 1 && (format !== 'q4_0' || cpuQ8dotQ4_0(caps, cols)) ? [...dots, ...nibbles] : [...nibbles, ...dots];
  }
  const tiles = [
    [64, 64],
    [32, 64],
    [64, 32],
  ];
  const precisions = caps.shaderF16 ? [true, false] : [false];
  const matmuls = precisions.flatMap((f16) => tiles.map(([tileM, tileN]): LinearShape => ({ kernel: 'matmul', f16, tileM, tileN })));
  if (R > GROUPED_MAX_TOKENS || (R > MATVEC_MAX_TOKENS && !subgroups)) return matmuls;
  const tree = (rowBlock: number, k: number): LinearShape => ({ kernel: 'matvec', subgroups: false, lanes: 64, rowBlock, rowsPerWorkgroup: rowBlock * k });
  const rowBlock = R <= 2 ? 2 : 1;
  if (!subgroups) return [tree(rowBlock, 1), tree(rowBlock, 4), tree(Math.min(8, rowBlock * 2), 1)];
  // Rows per workgroup from the widest subgroup the device may run: one row block per subgroup.
  const wave = Math.max(sgSize, caps.subgroupMaxSize);
  const wide = (lanes: number, rb: number): LinearShape => ({
    kernel: 'matvec',
    subgroups: true,
    wide: true,
    lanes,
    rowBlock: rb,
    rowsPerWorkgroup: Math.max(1, lanes / wave) * rb,
  });
  const blocks = [rowBlock, rowBlock * 2, Math.max(1, rowBlock / 2)].filter((b, i, all) => all.indexOf(b) === i && b <= 8);
  const one: LinearShape = { kernel: 'matvec', subgroups: true, lanes: Math.min(sgSize, 64), rowBlock, rowsPerWorkgroup: rowBlock };
  const widest = blocks.flatMap((rb) => [wide(128, rb), wide(256, rb)]);
  // 8-bit activations first [L1]: a block costs 8 dot4I8Packed and one conversion where the f32
  // matvec spends 32 u32 → f32 conversions, which run at a fraction of FMA rate on GPUs. Each
  // workgroup quantizes all of X first, so the same shapes with 4 row blocks per subgroup too [L2].
  const staged = (s: Extract<LinearShape, { kernel: 'matvec' }>) => [s, { ...s, rowsPerWorkgroup: 4 * s.rowsPerWorkgroup }];
  const dots = q8dot ? widest.flatMap((s) => (s.kernel === 'matvec' ? staged({ ...s, q8dot: true }) : [])) : [];
  // 9–64 tokens (a short prompt): the wide matvec over groups of 8 tokens before the tiled matmul [L3].
  if (R > MATVEC_MAX_TOKENS) return [...dots, ...widest, ...matmuls];
  return [...dots, ...widest, one, tree(rowBlock, 1)];
}

/** Register tiles of linear_rows.wgsl for R tokens: tokens ≤ 4 per invocation, rows filling 16 accumulators. */
function rowsTiles(R: number): LinearShape[] {
  const tokens = Math.min(R, 4);
  const tiles: [number, number][] = [
    [Math.min(8, Math.floor(16 / tokens)), tokens],
    [8, Math.min(R, 2)],
    [4, Math.min(R, 2)],
  ];
  return tiles
    .filter(([rb, t], i) => tiles.findIndex(([rb2, t2]) => rb2 === rb && t2 === t) === i)
    .map(([rowBlock, t]): LinearShape => ({ kernel: 'rows', lanes: 8, rowBlock, tokens: t }));
}

function cpuLinearShapes(caps: Capabilities, R: number, subgroups: boolean): LinearShape[] {
  if (R > MATVEC_MAX_TOKENS) {
    const precisions = caps.shaderF16 ? [false, true] : [false];
    const tiled = precisions.flatMap((f16) =>
      [
        [32, 32],
        [64, 64],
      ].map(([tileM, tileN]): LinearShape => ({ kernel: 'matmul', f16, tileM, tileN })),
    );
    return [...rowsTiles(R), ...tiled];
  }
  // Each invocation takes as many weight rows as its registers allow (8 / R), a workgroup a few such blocks.
  const rowBlock = Math.max(1, Math.floor(MATVEC_MAX_TOKENS / R));
  const blocks = [rowBlock, Math.max(1, rowBlock / 2), Math.min(8, rowBlock * 2)].filter((b, i, all) => all.indexOf(b) === i);
  const reduction = subgroups ? { subgroups: true, lanes: Math.min(caps.subgroupMinSize, 64) } : { subgroups: false, lanes: 8 };
  const matvecs = blocks.flatMap((rb) => [4, 1, 16].map((k): LinearShape => ({ kernel: 'matvec', ...reduction, rowBlock: rb, rowsPerWorkgroup: rb * k })));
  const tree: LinearShape = { kernel: 'matvec', subgroups: false, lanes: 8, rowBlock, rowsPerWorkgroup: rowBlock * 4 };
  const matvecFirst = subgroups ? [...matvecs, tree] : matvecs;
  return R === 1 ? [...matvecFirst, ...rowsTiles(R)] : [...rowsTiles(R), ...matvecFirst];
}

/**
 * q4_0 one-token decode on CPU adapters: linear_rows_q4_0.wgsl, one u32 load per 8 weights, X shared
 * through the subgroup (loads per weight bound a CPU adapter's matvec, not bytes) [L7].
 */
function nibbleShapes(caps: Capabilities, subgroups: boolean): LinearShape[] {
  const shareX = subgroups && (caps.subgroupMinSize === 4 || caps.subgroupMinSize === 8) ? { shareX: caps.subgroupMinSize } : {};
  return [{ kernel: 'rows', lanes: 8, rowBlock: 8, tokens: 1, nibbles: true, ...shareX }];
}

/**
 * q4_0 and q4_k on CPU adapters with subgroups and packed_4x8_integer_dot_product:
 * linear_q8dot_swar.wgsl, 16 invocations per workgroup: one token with 16 rows per invocation
 * [L8], on SwiftShader 8 named rows (its one_token_rows8 body) [L14]; 8 rows × 2 tokens up to 8
 * tokens, 4 × 4 for prefill; SwiftShader one token per workgroup at every R [L9]. Where the staged
 * X exceeds workgroup memory, the next candidates run.
 */
function cpuSwarShape(caps: Capabilities, R: number): LinearShape {
  const swiftshader = caps.kind === 'swiftshader';
  const [rowBlock, tokens] = swiftshader ? [8, 1] : R === 1 ? [16, 1] : R <= MATVEC_MAX_TOKENS ? [8, 2] : [4, 4];
  return { kernel: 'rows', lanes: 16, rowBlock, tokens, q8dot: true, swar: true };
}

/**
 * q4_0 rows at least this wide run linear_q8dot at R = 1 on lavapipe; narrower ones the nibble
 * kernel, which re-reads f32 X from storage per row block and falls out of L1 beyond ~16 KiB [L10].
 */
const CPU_Q8DOT_Q4_0_COLS = 4096;

/** Whether q4_0 decode (R = 1) of rows `cols` wide runs linear_q8dot on this CPU adapter: from CPU_Q8DOT_Q4_0_COLS on lavapipe (and unmeasured kinds), always on SwiftShader [L10]. */
function cpuQ8dotQ4_0(caps: Capabilities, cols: number | undefined): boolean {
  if (caps.kind === 'swiftshader') return true;
  return cols !== undefined && cols >= CPU_Q8DOT_Q4_0_COLS;
}

/**
 * CPU adapters' 8-bit-activation shapes: at R = 1 one subgroup per workgroup owning 64 rows, 8 at a
 * time, else one invocation per 8 rows; R = 2–8 the rows shape with up to 4 tokens (candidates);
 * prefill linear_q8dot_rows' 4 rows × 4 tokens with 32 invocations per workgroup (128 weight rows
 * share the quantized X; grid z over the groups of 4 tokens), 8 × 2 a candidate [L12].
 */
function cpuQ8dotShapes(caps: Capabilities, R: number, subgroups: boolean): LinearShape[] {
  if (R > MATVEC_MAX_TOKENS) {
    return [
      { kernel: 'rows', lanes: 32, rowBlock: 4, tokens: 4, q8dot: true },
      { kernel: 'rows', lanes: 32, rowBlock: 8, tokens: 2, q8dot: true },
    ];
  }
  const tokens = Math.min(R, 4);
  const rows: LinearShape = { kernel: 'rows', lanes: 8, rowBlock: Math.min(8, Math.floor(16 / tokens)), tokens, q8dot: true };
  const wide: LinearShape = { kernel: 'matvec', subgroups: true, wide: true, q8dot: true, lanes: caps.subgroupMinSize, rowBlock: 8, rowsPerWorkgroup: 64 };
  return R === 1 && subgroups ? [wide, rows] : [rows];
}

/**
 * The static default shape for a linear layer over `R` rows (of a `format` tensor, where the
 * choice depends on it; of `cols` columns, where workgroup memory bounds it).
 */
export function linearShape(caps: Capabilities, R: number, format?: WeightFormat, cols?: number): LinearShape {
  return linearShapes(caps, R, format, cols)[0];
}

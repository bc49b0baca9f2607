/**
 * Every capability-based choice of kernel shape or variant, in one visible place.
 *
 * CPU adapters (SwiftShader, lavapipe) pay for each workgroup and barrier, so they want few,
 * long-running workgroups; real GPUs want many to hide memory latency. One fixed shape cannot be
 * fast on both, so shapes are chosen here from the capability record (and tuned further at
 * start where a kernel offers choices).
 */
import { TokenscopeError } from '../errors.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import { Q8DOT_PARTS, SWAR_PARTS } from './variant-table.ts';
import type { WeightFormat } from './weight-formats.ts';

export interface ProbeShapes {
  /** Default cap on the bandwidth working set (bytes). */
  workingSetCap: number;
  /** Grids tried for the streaming kernels; the fastest is kept. */
  bandwidthWorkgroups: number[];
  /** Consecutive 16-byte words per invocation step tried for the streaming read. */
  readRuns: number[];
  fmaWorkgroups: number;
  fmaIterations: number;
  /** The compute roofs' GEMM: weights of matmulSize × matmulSize (K = N) … */
  matmulSize: number;
  /** … times matmulTokens rows of activations (M, the prompt tokens). */
  matmulTokens: number;
}

const MiB = 1024 * 1024;

export function probeShapes(caps: Capabilities): ProbeShapes {
  if (caps.cpuLike) {
    return {
      workingSetCap: 256 * MiB,
      bandwidthWorkgroups: [16, 64, 256, 1024, 4096],
      readRuns: [1, 4],
      fmaWorkgroups: 32,
      fmaIterations: 512,
      // The GEMM roofs' K sets how far each workgroup's fixed cost (staging X, the barrier) is
      // amortised: at 384 lavapipe's 8-bit roof read 8.3–10.9 GFLOP/s, below the 9.4 that
      // llama-3.2-1b's 2048-wide prefill reached in the same run; at 1024, 11.1–11.8 (about a second
      // per roof there). SwiftShader computes ~5× slower and the page waits for it, so it keeps
      // K = N = 1024 with 64 tokens (a GEMM of 2·64·1024² FLOPs, about what 384³ cost): at 384³ its
      // short prompts read 110–131% "of the roof" (K = 960 amortises more than 384).
      matmulSize: 1024,
      matmulTokens: caps.kind === 'lavapipe' ? 1024 : 64,
    };
  }
  return {
    workingSetCap: 1024 * MiB,
    bandwidthWorkgroups: [1024, 4096, 16384, 65536],
    readRuns: [1, 4],
    fmaWorkgroups: 8192,
    fmaIterations: 4096,
    matmulSize: 2048,
    matmulTokens: 2048,
  };
}

/** A grid-stride elementwise kernel's shape: workgroup size and grid for `n` elements. */
export interface ElementwiseShape {
  wgSize: number;
  workgroups: [number, number, number];
}

/** GPUs: one element per invocation. CPU adapters: at most 16 long workgroups. */
export function elementwiseShape(caps: Capabilities, n: number): ElementwiseShape {
  const wgSize = caps.cpuLike ? 64 : 256;
  const wanted = Math.ceil(n / wgSize);
  const groups = caps.cpuLike ? Math.min(wanted, 16) : wanted;
  const max = caps.limits.maxComputeWorkgroupsPerDimension;
  const y = Math.ceil(groups / max);
  return { wgSize, workgroups: [Math.max(1, Math.ceil(groups / y)), y, 1] };
}

/** Kernels that reduce one row per workgroup (rmsnorm, argmax, sampling). */
export interface RowReductionShape {
  /** A power of two. */
  wgSize: number;
  /** Reduce with subgroup operations (else a tree in workgroup memory). */
  subgroups: boolean;
}

export function rowReductionShape(caps: Capabilities): RowReductionShape {
  return { wgSize: caps.cpuLike ? 64 : 256, subgroups: caps.subgroups };
}

/**
 * Logits per workgroup of greedy sampling's first pass, or null for one workgroup per row. GPUs
 * split a large vocabulary (Llama 3's 128,256 logits are 32 chunks of 4096, 16 per invocation)
 * so the head's last step is not one workgroup reading half a megabyte; CPU adapters want the
 * fewest workgroups and keep one pass.
 */
export function argmaxChunk(caps: Capabilities, vocab: number): number | null {
  const chunk = 4096;
  return !caps.cpuLike && vocab > 2 * chunk ? chunk : null;
}

/** The sampling kernel's workgroup: the row-reduction size, halved until its 72 bytes per invocation fit. */
export function sampleWorkgroupSize(caps: Capabilities): number {
  let wgSize = rowReductionShape(caps).wgSize;
  while (wgSize > 32 && 72 * wgSize + 4 > caps.limits.maxComputeWorkgroupStorageSize) wgSize /= 2;
  return wgSize;
}

/** Heads of a model as the attention kernels see them. */
export interface AttentionHeads {
  nHeads: number;
  nKvHeads: number;
  headDim: number;
}

/**
 * The KV cache's element type: f16 where the device has shader-f16 (half the bytes that dominate
 * decode at long context), f32 elsewhere and when the feature is disabled. Kernels accumulate in
 * f32 either way. The one place this is decided; kvBytesPerElement gives its size.
 */
export type KvElement = 'f16' | 'f32';

export function kvElement(caps: Pick<Capabilities, 'shaderF16'>): KvElement {
  return caps.shaderF16 ? 'f16' : 'f32';
}

export function kvBytesPerElement(kv: KvElement): number {
  return kv === 'f16' ? 2 : 4;
}

export interface DecodeAttentionShape {
  /**
   * 'workgroup' (shaders/attention_decode.wgsl): scores staged in workgroup memory, barriers per
   * block of keys. 'subgroups' (attention_decode_subgroups.wgsl): teams of `lanes` lanes across the
   * head dimension, one key at a time per team, scores summed by subgroup shuffles; each K/V load
   * serves every query head of the kv head; the teams merged in workgroup memory at the end.
   */
  kernel: 'workgroup' | 'subgroups';
  wgSize: number;
  /** Keys scored per block (staged scores in workgroup memory; 'workgroup' only). */
  keyBlock: number;
  /** Lanes across the head dimension per team ('subgroups' only): a power of two ≤ the subgroup size, dividing headDim/4. */
  lanes: number;
  /**
   * Workgroups per (row, kv head), each over its own stretch of the context ("split-K"); with one,
   * the workgroup writes the output and no combine pass is recorded.
   */
  splits: number;
  /** Fewest keys a split takes: a shorter context leaves the last splits empty (attention_decode_out.wgsl). */
  minChunk: number;
}

/**
 * Prefill attention: 'tiled' (shaders/attention_prefill.wgsl, GPUs): a workgroup per (tile of
 * rowTile query rows, kv head), K/V staged in workgroup memory keyBlock keys at a time. 'rows'
 * (shaders/attention_prefill_rows.wgsl, CPU adapters with subgroups): one invocation per (row,
 * query head), wgSize rows per workgroup, K/V rows shared through subgroups of 8.
 */
export type PrefillAttentionShape = { kernel: 'tiled'; wgSize: number; rowTile: number; keyBlock: number } | { kernel: 'rows'; wgSize: number };

/**
 * Prefill attention on CPU adapters with subgroups: attention_prefill_rows.wgsl, 8 rows per
 * workgroup (one subgroup on lavapipe, whose 8 lanes share each K/V row's loads). Measured on
 * lavapipe, smollm2-135m q4_0, 512-token prompt (`npm run bench -- --model smollm2-135m --quant q4_0
 * --prompt-lengths 512 --gen 4 --reps 1 --profile`, one run each): attention took 10.0 s of a 21.7 s
 * prefill with the decode kernel, 6.4 s of 16.9 s with the tiled one, 0.76 s of 14.0 s with this one.
 * Without subgroups, CPU adapters keep the decode kernel (the tiled one's workgroup memory costs
 * SwiftShader ~3 s to compile).
 */
const CPU_PREFILL_ATTENTION: PrefillAttentionShape = { kernel: 'rows', wgSize: 8 };

/** Workgroup bytes of shaders/attention_prefill.wgsl (mirrors its `var<workgroup>` declarations). */
export function prefillWorkgroupBytes(headDim: number, group: number, rowTile: number, keyBlock: number): number {
  const queries = rowTile * group;
  return 4 * (2 * queries * headDim + 2 * keyBlock * headDim + queries * keyBlock + 3 * queries);
}

/** Query (and accumulator) vec4s per lane of shaders/attention_decode_subgroups.wgsl (its MAX_SLOTS). */
export const SUBGROUP_DECODE_SLOTS = 16;

/** Workgroup bytes of shaders/attention_decode.wgsl. */
export function decodeWorkgroupBytes(headDim: number, group: number, keyBlock: number): number {
  return 4 * (2 * group * headDim + group * keyBlock + 3 * group);
}

export interface AttentionShapes {
  decode: DecodeAttentionShape;
  /** Null when no tile fits workgroup memory. */
  prefill: PrefillAttentionShape | null;
  /** Run one-slot (prefill) steps with `prefill` (the tiled kernel, or on CPU adapters the rows one); else with the decode kernel. */
  tiledPrefill: boolean;
}

/** Teams of the GPUs' subgroup decode kernel: a workgroup of 256 invocations. */
const GPU_DECODE_WG = 256;

/**
 * A GPU decode split takes at least this many keys per team. Each key step of a team is a dependent
 * load (~1 µs on an H200), so splits should be short; below two steps a split's fixed costs (its
 * queries, the merge, one more partial) outweigh what it saves the others.
 */
const GPU_KEYS_PER_TEAM = 2;

/**
 * Up to this many key steps per team (keys ÷ teams), GPU decode attention runs one workgroup per
 * (row, kv head) and no combine pass: the combine is a dispatch of its own, 3–4 µs on an H200
 * (the launch roof), which about 6 dependent key steps cost. Measured on an H200 (Dawn, Vulkan;
 * `dist-gpu-check/run.sh`, Llama-3.2-1B Q4_0, f32 cache): with 16 steps and 8 keys per team, TPOT
 * read 1.00 ms at 40 keys and 1.58 ms at 510–557 (4–5 splits of 16 steps) — 36 µs per layer for
 * the long context.
 */
const GPU_SHORT_STEPS = 6;

/**
 * Attention shapes for steps of `R` rows whose rows attend at most `keys` keys each (default: any
 * number — the long-context shape). Decode: the subgroup kernel where subgroups exist and the
 * group's queries fit its registers, else the workgroup-memory kernel. GPUs run a context of at
 * most GPU_SHORT_STEPS key steps per team as one workgroup per (row, kv head) with no combine pass
 * (decodeAttentionClass), a longer one split across enough workgroups to fill the device (~512
 * in all, ≤ 32 per (row, kv head)), each split taking at least GPU_KEYS_PER_TEAM keys per team —
 * so at 512 keys of Llama-3.2-1B (8 kv heads, 16 teams) 16 splits of 32 keys work, not 32 of 16.
 * CPU adapters split by their thread count, not the context (≥ 8 workgroups per step, ≤ 4 per (row,
 * kv head)). On lavapipe the subgroup kernel (8 lanes, one team per workgroup) measured 5–9× faster
 * than the workgroup one at a 512-token context (e.g. 32/8 heads of 64, f16 cache: 0.79 vs 7.2 ms;
 * 9/3 heads of 64: 0.32–0.47 vs 1.3–2.8 ms), and compiled in ~1 s instead of 1.5–3 s.
 * Prefill: the largest row tile (≤ 32 query vectors) and key block that fit workgroup memory;
 * where none fits, prefill steps run with the decode kernel. CPU adapters never stage K/V in
 * workgroup memory (it buys nothing on a CPU, and Dawn zero-initialises workgroup memory, which
 * SwiftShader compiles at ~1 ms per 16 bytes: ≈ 3 s for one tiled pipeline): with subgroups they run
 * attention_prefill_rows (CPU_PREFILL_ATTENTION), without them the decode kernel.
 */
export function attentionShapes(caps: Capabilities, heads: AttentionHeads, R: number, keys = Infinity): AttentionShapes {
  const group = heads.nHeads / heads.nKvHeads;
  const limit = caps.limits.maxComputeWorkgroupStorageSize;
  const wgSize = caps.cpuLike ? 64 : 128;
  const decodeBlock = Math.max(8, Math.floor(wgSize / group));
  if (decodeWorkgroupBytes(heads.headDim, group, decodeBlock) > limit) {
    throw tooWide(heads, limit);
  }
  const lanes = decodeLanes(caps, heads.headDim);
  const fitsRegisters = lanes > 0 && group * (heads.headDim / 4 / lanes) <= SUBGROUP_DECODE_SLOTS;
  const subgroupWg = caps.cpuLike
    ? Math.min(64, Math.max(lanes, caps.subgroupMinSize))
    : Math.min(GPU_DECODE_WG, caps.limits.maxComputeInvocationsPerWorkgroup);
  const subgroups = fitsRegisters && subgroupDecodeBytes(heads.headDim, group, subgroupWg / lanes) <= limit;
  const kernel = subgroups ? 'subgroups' : 'workgroup';
  const decodeWg = subgroups ? subgroupWg : wgSize;
  // Keys a workgroup scores at once: its teams, or its key block.
  const keyStep = subgroups ? decodeWg / lanes : decodeBlock;
  // CPU adapters: the subgroup kernel in workgroups of one subgroup (one SIMD batch), and enough
  // workgroups that every thread of the CPU gets some (≥ 8 per step, ≤ 4 per (row, kv head)); the
  // workgroup kernel as one workgroup per (row, kv head).
  const cpuSplits = subgroups ? Math.min(4, Math.ceil(8 / (R * heads.nKvHeads))) : 1;
  const gpuSplits = keys <= keyStep * GPU_SHORT_STEPS ? 1 : Math.min(32, Math.max(2, Math.ceil(512 / (R * heads.nKvHeads))));
  const splits = caps.cpuLike ? cpuSplits : gpuSplits;
  const minChunk = caps.cpuLike ? keyStep : keyStep * GPU_KEYS_PER_TEAM;
  const decode: DecodeAttentionShape = { kernel, wgSize: decodeWg, keyBlock: decodeBlock, lanes: Math.max(lanes, 1), splits, minChunk };
  if (caps.cpuLike) {
    // CPU adapters with subgroups: one-slot steps run attention_prefill_rows (CPU_PREFILL_ATTENTION).
    const rows = caps.subgroups && heads.headDim <= 256;
    return { decode, prefill: rows ? CPU_PREFILL_ATTENTION : null, tiledPrefill: rows };
  }
  const prefill = tiledPrefillShape(heads, R, wgSize, limit);
  return { decode, prefill, tiledPrefill: prefill !== null };
}

/**
 * The context class a decode step's program is built for: the largest key count that still gets
 * the same decode shape as `keys` (the short class's bound), or Infinity (the long class). Steps of
 * one class share a program; the engine keys its programs by it.
 */
export function decodeAttentionClass(caps: Capabilities, heads: AttentionHeads, R: number, keys: number): number {
  const short = attentionShapes(caps, heads, R, 1).decode;
  if (caps.cpuLike || short.splits !== 1) return Infinity;
  const bound = (short.kernel === 'subgroups' ? short.wgSize / short.lanes : short.keyBlock) * GPU_SHORT_STEPS;
  return keys <= bound ? bound : Infinity;
}

/** Workgroup bytes of shaders/attention_decode_subgroups.wgsl (its qs, teamAcc and teamMl). */
export function subgroupDecodeBytes(headDim: number, group: number, teams: number): number {
  return 16 * group * (headDim / 4) + 16 * teams * (headDim / 4) + 8 * teams;
}

/** Extra workgroup bytes of the fused RoPE prologue (attention_decode_rope_io.wgsl: the raw heads and their norms). */
export function fusedRopeBytes(headDim: number, group: number): number {
  return 4 * (group + 1) * headDim + 4 * 17;
}

/** The tiled prefill kernel's largest row tile (≤ 32 query vectors, < 2R rows) and key block that fit `limit` bytes of workgroup memory; null if none does. */
function tiledPrefillShape(heads: AttentionHeads, R: number, wgSize: number, limit: number): PrefillAttentionShape | null {
  const group = heads.nHeads / heads.nKvHeads;
  for (const rowTile of [16, 8, 4, 2, 1]) {
    if (rowTile > 1 && (rowTile * group > 32 || rowTile >= 2 * R)) continue;
    const keyBlock = [32, 16, 8].find((kb) => prefillWorkgroupBytes(heads.headDim, group, rowTile, kb) <= limit);
    if (keyBlock) return { kernel: 'tiled', wgSize, rowTile, keyBlock };
  }
  return null;
}

/**
 * Lanes across the head dimension for the subgroup decode kernel: the largest power of two that
 * divides headDim/4 and fits the device's smallest subgroup (≤ 32); 0 without usable subgroups.
 */
export function decodeLanes(caps: Pick<Capabilities, 'subgroups' | 'subgroupMinSize'>, headDim: number): number {
  const sg = caps.subgroupMinSize;
  if (!caps.subgroups || sg < 4 || (sg & (sg - 1)) !== 0) return 0;
  let lanes = Math.min(sg, 32);
  while (lanes > 1 && (headDim / 4) % lanes !== 0) lanes /= 2;
  return lanes;
}

function tooWide(heads: AttentionHeads, limit: number): TokenscopeError {
  return new TokenscopeError(
    'model-unsupported',
    `Attention over ${heads.nHeads / heads.nKvHeads} heads of ${heads.headDim} per kv head needs more than the ${limit} bytes of workgroup memory this device allows.`,
    'Pick a model with smaller heads, or a GPU with more workgroup memory.',
  );
}

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

/** Workgroup bytes of linear_q8dot.wgsl's staged X: per 32-element block of each token, 32 int8 and 12 bytes of XBlock. */
export function q8dotWorkgroupBytes(tokens: number, cols: number): number {
  return (tokens * cols * 44) / 32;
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
 * src/kernels/autotune.ts times the others).
 *
 * GPUs: decode runs the wide matvec (workgroups of 128 holding several subgroups, each owning a
 * block of rows; 2 rows per subgroup at R ≤ 2 keep ≥ 256 workgroups on a 2048-row matrix),
 * prefill the tiled matmul with f16 tiles where shader-f16 exists (also for q4_0/q8_0: the 8-bit
 * prefill tile below is one invocation per weight rows, uncoalesced, a CPU shape). Without subgroups, a
 * 64-lane workgroup-memory tree.
 *
 * CPU adapters run a subgroup as one SIMD register, where a load whose index is not a
 * compile-time constant is scalarised lane by lane and costs several FMAs: they want the fewest
 * loads per FMA. At R = 1 the one-subgroup matvec (8 rows per invocation share each X load); from
 * R = 2 on, and for prefill, linear_rows's register tile (rows × tokens ≤ 16: each weight chunk
 * loaded and dequantized once for up to 4 tokens, each X vector once for 4+ rows). The tiled
 * matmul (workgroup staging, two barriers per 32-wide slab, scalar staging stores) measured 5×
 * slower per token there (2048 × 2048 q4_0, 16 tokens, lavapipe), and f16 computes slower than
 * f32 on a CPU (the FMA roofs say so). Q4_0/Q8_0 prefill, where packed_4x8_integer_dot_product
 * exists, runs the same register tile with 8-bit activations (linear_q8dot_rows; cpuQ8dotShapes).
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
    // Prefill: the 8-bit 4 × 4 tile first, then the f32 ones (where its X does not fit), the 8 × 2 tile a
    // candidate. Not for q6_k, whose 6-bit quants are assembled into bytes per token: on lavapipe at
    // R = 64 its 8-bit tile took 91.5 ms per 2048×2048 matrix against 75.0 ms for the f32 4 × 4 one
    // (`npm run bench:matvec -- --format q6_k --shapes 2048x2048 --rows 64 --reps 3 --shape-json …`).
    const eightBitPrefill = format !== 'q6_k';
    const order = R > MATVEC_MAX_TOKENS ? (eightBitPrefill ? [dots[0], ...nibbles, ...dots.slice(1)] : [...nibbles, ...dots]) : [...dots, ...nibbles];
    // Q4_0 and Q4_K with subgroups: the SWAR kernel's tiles first (cpuSwarShape).
    if (SWAR_FORMATS.includes(format!) && subgroups) return [cpuSwarShape(caps, R), ...order];
    if (R > MATVEC_MAX_TOKENS) return order;
    // One-token decode: the 8-bit kernels first for q8_0, q4_k and q6_k, for q4_0 from some width (cpuQ8dotQ4_0).
    // q6_k on lavapipe (same command, --format q6_k, one run): 3.22 ms per 2048×2048 matrix in the wide
    // 8-bit shape against 4.98 ms for the f32 one-subgroup matvec, 17.2 vs 22.8 ms at 8192×2048.
    // q4_k on lavapipe (`npm run bench:matvec -- --format q4_k --shapes 2048x2048,8192x2048 --rows 1
    // --reps 5 --candidates`, one run): the wide 8-bit shape 1.78 ms per 2048×2048 matrix against 3.72 ms
    // for the f32 one-subgroup matvec, 7.79 vs 17.08 ms at 8192×2048. At R = 8 a tie (12.6 vs 13.4 ms),
    // so from 2 rows on the f32 tiles stay first.
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
  // q4_0/q8_0 with 8-bit activations first: a block costs 8 dot4I8Packed and one conversion where the
  // f32 matvec spends 32 u32 → f32 conversions, which run at a fraction of FMA rate on GPUs (KERNELS.md).
  // Each workgroup quantizes all of X before its first weight load, so candidates that give each
  // subgroup 4 row blocks in turn spread that over 4× the rows (the LM head's 128256 rows in 16-row
  // workgroups staged X 8016 times).
  const staged = (s: Extract<LinearShape, { kernel: 'matvec' }>) => [s, { ...s, rowsPerWorkgroup: 4 * s.rowsPerWorkgroup }];
  const dots = q8dot ? widest.flatMap((s) => (s.kernel === 'matvec' ? staged({ ...s, q8dot: true }) : [])) : [];
  // 9–64 tokens (a short prompt): the wide matvec over groups of 8 tokens (grid z) before the tiled
  // matmul, whose K loop runs serially per workgroup: on an H200 (Llama-3.2-1B Q4_0, 16 tokens, 64×64
  // tiles) the 16-token prefill took 18.4 ms of GPU time, more than 16 decode steps (1.0 ms each).
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
 * q4_0 decode on CPU adapters: linear_rows_q4_0.wgsl. There a storage load with a computed index
 * runs lane by lane (~12 scalar instructions per 32-bit word on lavapipe) while arithmetic runs on
 * all lanes, so loads per weight bound the matvec, not bytes: this kernel loads a weight word (8
 * weights) as one u32, shares X through the subgroup, and spends a mask, a conversion and an FMA
 * per weight. Measured 1.15–1.8× the one-subgroup matvec's speed at 2048×2048 and 8192×2048, R = 1,
 * across runs (lavapipe, cli/matvec-bench.ts, same run each; 4.6 → 3.7 instructions per weight
 * under callgrind), and llama-3.2-1b q4_0 TPOT 801 → 551 ms. Without subgroups it loads X itself,
 * still ~1.4× the workgroup-tree matvec; at R = 16 it was slower than linear_rows's register tile,
 * so it runs at R = 1 only.
 */
function nibbleShapes(caps: Capabilities, subgroups: boolean): LinearShape[] {
  const shareX = subgroups && (caps.subgroupMinSize === 4 || caps.subgroupMinSize === 8) ? { shareX: caps.subgroupMinSize } : {};
  return [{ kernel: 'rows', lanes: 8, rowBlock: 8, tokens: 1, nibbles: true, ...shareX }];
}

/**
 * q4_0 and q4_k on CPU adapters with subgroups and packed_4x8_integer_dot_product:
 * linear_q8dot_swar.wgsl, 16 rows per invocation and 16 invocations per workgroup (256 rows share
 * one staged X). On lavapipe each storage load runs lane by lane, so the kernel makes every load
 * as wide as it can (a vec4 per block, a vec4 per 8 block scales), shares X through the subgroup
 * and does two 4×8-bit products per multiply. Measured (`npm run bench:matvec -- --format q4_0
 * --rows 1 --shape-json …`, per-matrix time against select.ts's previous choice in the same run,
 * 5–7 reps): lavapipe 2048×2048 1.04 vs 1.75 ms (the nibble kernel), 8192×2048 5.97 vs 10.27 ms,
 * 512×2048 0.19 vs 0.31 ms, 128256×2048 42.8 vs 70.8 ms, 2048×8192 2.96 vs 4.92 ms (q8dot wide);
 * 8 rows per invocation were 1.1–1.4× slower than 16. SwiftShader (Chromium, `--runtime browser`):
 * 960×2560 3.03 vs 6.41 ms, 5120×960 6.74 vs 14.87 ms (q8dot wide). From 2 to 8 rows of X (batched
 * decode, short prompts) a register tile of 8 rows × 2 tokens: lavapipe 2048×2048 at R = 8 5.17 ms
 * vs 10.6 ms (linear_rows' f32 4 × 4 tile, the previous choice), 6.9 ms as 4 × 4 and 12.9 ms as
 * 16 × 1; at R = 4 3.0 vs 5.5 ms — so a short prompt's prefill is again faster than decoding it
 * token by token. Prefill (R > 8) as 4 rows × 4 tokens: at R = 64 40.4 ms vs 57.2 ms (linear_q8dot_rows'
 * 4 × 4 tile with dot4I8Packed), 41.9 ms as 8 × 2. Where its staged X (4 tokens) exceeds workgroup
 * memory, the next candidates run. SwiftShader runs one token per workgroup at every R: there the
 * tiles were slower per token than that (`--runtime browser`, 960×2560: R = 8 49.7 ms as 8 × 2 vs
 * 26.5 ms as 16 × 1; R = 32 224 ms as 4 × 4 vs 102 ms), so its prefill costs about what decoding
 * the prompt token by token does. q4_k, one token (`npm run bench:matvec -- --format q4_k --shapes
 * 2048x2048,8192x2048 --rows 1 --reps 7 --shape-json …`, one run): lavapipe 1.42 ms per 2048×2048
 * matrix against 2.46 ms for the wide 8-bit matvec and 3.19 ms for the f32 one (the previous
 * choice), 5.15 / 7.73 / 12.04 ms at 8192×2048; SwiftShader (`--runtime browser`, 2560×1024)
 * 4.38 / 9.17 / 19.86 ms.
 */
function cpuSwarShape(caps: Capabilities, R: number): LinearShape {
  const [rowBlock, tokens] = R === 1 || caps.kind === 'swiftshader' ? [16, 1] : R <= MATVEC_MAX_TOKENS ? [8, 2] : [4, 4];
  return { kernel: 'rows', lanes: 16, rowBlock, tokens, q8dot: true, swar: true };
}

/**
 * q4_0 rows at least this wide run linear_q8dot at R = 1 on CPU adapters (narrower ones the nibble kernel).
 * Measured on lavapipe (cli/matvec-bench.ts --q8dot, R = 1, 2–4 runs each, ratio to the read roof, medians;
 * a loaded 2-core machine): q4_0 2048×2048 0.36 nibbles vs 0.38 q8dot rows / 0.35 wide (a tie), 8192×2048
 * 0.32 vs 0.30 / 0.34 (a tie), 128256×2048 0.37 vs 0.38 / 0.33 (a tie; the nibbles less CPU time),
 * 2048×4096 0.17 vs 0.32 / 0.35, 2048×8192 0.19 vs 0.39 / 0.44; q8_0 2048×2048 0.23 (one-subgroup
 * matvec) vs 0.46 / 0.46, 2048×8192 0.22 vs 0.31 / 0.53. The nibble kernel reads X from storage for
 * every row block, and at 16–32 KiB of f32 X per row it falls out of the core's L1; linear_q8dot reads a
 * staged copy of 1.4 B per element.
 */
const CPU_Q8DOT_Q4_0_COLS = 4096;

/**
 * Whether q4_0 decode (R = 1) of rows `cols` wide runs linear_q8dot on this CPU adapter, per kind:
 * lavapipe (and CPU adapters not measured) from CPU_Q8DOT_Q4_0_COLS columns on; SwiftShader at every
 * width. There the nibble kernel measured slowest of the three (Chromium 156, SwiftShader's Subzero JIT,
 * `npm run bench:matvec -- --runtime browser --q8dot`, smollm2-360m's shapes, R = 1, ratio to the read
 * roof, per-rep medians of 5 on a loaded 2-core machine): 1600×960 nibbles 0.12 vs q8dot wide 0.21 /
 * rows 0.12; 960×2560 0.14 vs 0.21 / 0.23; 5120×960 0.07 vs 0.13 / 0.14; 49152×960 0.11 vs 0.16 / 0.18
 * (wide and rows a tie; wide, the CPU adapters' q8dot default, stays first). The profile of that
 * model's decode there: 99% of GPU time in the matvecs.
 */
function cpuQ8dotQ4_0(caps: Capabilities, cols: number | undefined): boolean {
  if (caps.kind === 'swiftshader') return true;
  return cols !== undefined && cols >= CPU_Q8DOT_Q4_0_COLS;
}

/**
 * CPU adapters: linear_q8dot at R = 1 as one subgroup per workgroup owning 64 rows, 8 at a time (the
 * one-subgroup matvec's shape: each staged X block feeds 8 rows), else one invocation per 8 rows;
 * from R = 2 to 8 (not measured; autotuner candidates only) the rows shape with up to 4 tokens.
 * Prefill (R > 8): linear_q8dot_rows with a register tile of 4 weight rows × 4 tokens, as
 * linear_rows's f32 default, and 32 invocations per workgroup, so the X the workgroup quantizes
 * into workgroup memory (4 tokens, 5.5 B per column) serves 128 weight rows; grid z covers the
 * groups of 4 tokens. Where 4 tokens' X exceeds workgroup memory (over ~5,900 columns at 32 KiB)
 * linear_rows runs; 8 rows × 2 tokens, which fits up to ~11,900 columns, is a candidate only (not
 * measured faster). Measured on lavapipe (cli/matvec-bench.ts, q4_0, R = 16/64/128, CPU time of the
 * process per rep against linear_rows's f32 4 × 4 tile with 8 lanes, medians; a 2-core machine under
 * load average ~10, so wall times scattered 0.4–4×): SmolLM2-135M's 576×576, 1536×576 and 576×1536
 * took 0.72–0.98 of the f32 tile's CPU time (median 0.78), Llama-3.2-1B's 2048×2048 and 8192×2048
 * 0.71–1.02 (median 0.93); the noise floor there: 2048×8192, where the tile falls back to the f32 one,
 * read 0.85–1.2 against itself. 8 lanes per workgroup (a quarter of the time staging X) were not faster.
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

/** Invocations per token of the embedding gather (one workgroup per token). */
export function embeddingWorkgroupSize(caps: Capabilities): number {
  return caps.cpuLike ? 16 : 64;
}

/** Workgroups (of 64) for the synthetic-weight fill of `words` u32 words: CPU adapters ≤ 32 long ones. */
export function fillWorkgroups(caps: Capabilities, words: number): number {
  const wanted = Math.ceil(words / (64 * 4));
  return Math.max(1, caps.cpuLike ? Math.min(wanted, 32) : wanted);
}

/** FLOPs one autotuning run may take (≈ 30 ms on a CPU adapter, well under 1 ms on a GPU). */
export function tuneFlopCap(caps: Capabilities): number {
  return caps.cpuLike ? 2 ** 26 : 2 ** 32;
}

/** The fused RoPE + KV-store kernel: one workgroup per head per row group. */
export interface RopeStoreShape {
  /** A power of two, ≤ headDim/2 where that is smaller. */
  wgSize: number;
  /** Workgroups along the rows (each walks every rowGroups-th row). */
  rowGroups: number;
}

/** GPUs: a workgroup per (head, row). CPU adapters: ≤ 4 row groups, so a step is a few long workgroups per head. */
export function ropeStoreShape(caps: Capabilities, headDim: number, R: number): RopeStoreShape {
  let wgSize = caps.cpuLike ? 16 : 64;
  while (wgSize > 4 && wgSize > headDim / 2) wgSize /= 2;
  return { wgSize, rowGroups: caps.cpuLike ? Math.min(R, 4) : Math.min(R, caps.limits.maxComputeWorkgroupsPerDimension) };
}

/**
 * Every capability-based choice of kernel shape or variant but the linear layers' (those are
 * linear-shapes.ts and linear-plan.ts), in one visible place. The measurements behind the choices
 * are rows of docs/KERNEL-CHOICES.md, named here as [A1]….
 *
 * CPU adapters (SwiftShader, lavapipe) pay for each workgroup and barrier, so they want few,
 * long-running workgroups; real GPUs want many to hide memory latency. One fixed shape cannot be
 * fast on both, so shapes are chosen here from the capability record (and tuned further at
 * start where a kernel offers choices).
 */
import { TokenscopeError } from '../errors.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import { TILE_RUN, tileBytes, type StreamReadShape } from './stream-read.ts';

export interface ProbeShapes {
  /** Default cap on the bandwidth working set (bytes). */
  workingSetCap: number;
  /** Grids tried for the streaming kernels (few long workgroups, each a contiguous chunk); the fastest is kept. */
  bandwidthWorkgroups: number[];
  /** Consecutive words per invocation step tried for the streaming read over those grids … */
  readRuns: number[];
  /** … in these loads (16-byte vec4<u32>, 4-byte u32). */
  readLoads: StreamReadShape['load'][];
  /** Streaming reads with one workgroup per STREAM_READ_WG × TILE_RUN words: thousands of short workgroups in one dispatch. */
  readTiles: Pick<StreamReadShape, 'load' | 'reduce'>[];
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
      readLoads: ['vec4'],
      // Thousands of workgroups pay a barrier each on CPU adapters (every invocation switches), so tiles
      // hand each invocation's sum out on its own [P1].
      readTiles: [
        { load: 'vec4', reduce: 'invocation' },
        { load: 'u32', reduce: 'invocation' },
      ],
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
    readLoads: ['vec4', 'u32'],
    readTiles: [
      { load: 'vec4', reduce: 'workgroup' },
      { load: 'u32', reduce: 'workgroup' },
      { load: 'vec4', reduce: 'invocation' },
    ],
    fmaWorkgroups: 8192,
    fmaIterations: 4096,
    matmulSize: 2048,
    matmulTokens: 2048,
  };
}

/**
 * The streaming-read shapes tried over `bytes`: every chunked grid × run × load (a workgroup tree
 * each), then every tile layout whose tile divides `bytes` (the working set is whole MiB, so all).
 */
export function streamReadShapes(shapes: Pick<ProbeShapes, 'bandwidthWorkgroups' | 'readRuns' | 'readLoads' | 'readTiles'>, bytes: number): StreamReadShape[] {
  const chunks = shapes.readLoads.flatMap((load) =>
    shapes.bandwidthWorkgroups.flatMap((workgroups) =>
      shapes.readRuns.map((run): StreamReadShape => ({ layout: 'chunks', load, workgroups, run, reduce: 'workgroup' })),
    ),
  );
  const tiles = shapes.readTiles
    .filter((t) => bytes % tileBytes(t.load) === 0)
    .map((t): StreamReadShape => ({ ...t, layout: 'tiles', run: TILE_RUN, workgroups: bytes / tileBytes(t.load) }));
  return [...chunks, ...tiles];
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

/** Prefill attention on CPU adapters with subgroups: attention_prefill_rows.wgsl, 8 rows per workgroup (one subgroup on lavapipe, whose lanes share each K/V row's loads) [A4]. */
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

/** A GPU decode split takes at least this many keys per team (each key step is a dependent load, ~1 µs on an H200) [A2]. */
const GPU_KEYS_PER_TEAM = 2;

/**
 * Up to this many key steps per team (keys ÷ teams), GPU decode attention runs one workgroup per
 * (row, kv head) and no combine pass, a dispatch of its own (3–4 µs on an H200, the launch roof) [A2].
 */
const GPU_SHORT_STEPS = 6;

/**
 * Attention shapes for steps of `R` rows whose rows attend at most `keys` keys each (default: any
 * number — the long-context shape). Decode: the subgroup kernel where subgroups exist and the
 * group's queries fit its registers, else the workgroup-memory kernel [A1]. GPUs run a context of
 * at most GPU_SHORT_STEPS key steps per team as one workgroup per (row, kv head) with no combine
 * pass (decodeAttentionClass), a longer one split across enough workgroups to fill the device (~512
 * in all, ≤ 32 per (row, kv head)), each split taking at least GPU_KEYS_PER_TEAM keys per team —
 * so at 512 keys of Llama-3.2-1B (8 kv heads, 16 teams) 16 splits of 32 keys work [A2]. CPU
 * adapters split by their thread count, not the context (≥ 8 workgroups per step, ≤ 4 per (row,
 * kv head)). Prefill: the largest row tile (≤ 32 query vectors) and key block that fit workgroup
 * memory; where none fits, prefill steps run with the decode kernel. CPU adapters never stage K/V
 * in workgroup memory (it buys nothing on a CPU, and Dawn zero-initialises workgroup memory, which
 * SwiftShader compiles at ~1 ms per 16 bytes: ≈ 3 s for one tiled pipeline): with subgroups they
 * run attention_prefill_rows [A4], without them the decode kernel.
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

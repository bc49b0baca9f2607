/**
 * Causal GQA attention over the KV cache with online softmax, scale 1/sqrt(headDim):
 * for each row r and query head h, out[r, h] = softmax(q[r, h] · K[slot_r, 0…pos_r]ᵀ) · V[…],
 * with kv head h / (nHeads / nKvHeads). The K/V cache holds f32 or f16 elements (shape.kv; each
 * kernel body's variant in variant-table.ts joins kv_load_f32.wgsl or kv_load_f16.wgsl); every kernel computes in f32.
 * Two implementations share one binding contract:
 *  - decode (attention_decode.wgsl, or attention_decode_subgroups.wgsl with lanes across the head
 *    dimension): rows of any slots and positions; each (row, kv head) one workgroup, or split across
 *    `splits` workgroups and merged by attention_combine.wgsl; where the step's rows are distinct
 *    sequences (decode), RoPE and the KV-cache store run inside it (attention_decode_rope_io.wgsl)
 *    instead of in rope_store's pass;
 *  - prefill (shaders/attention_prefill.wgsl): all rows of ONE slot (a prefill or prefill chunk,
 *    best with consecutive positions), tiled over rows with K/V blocks in workgroup memory.
 * `attention` picks between them from what the engine knows about the step's rows.
 */
import { storageBuffer } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { TokenscopeError } from '../errors.ts';
import { grid1d } from './grid.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { ROW_BYTES, type RowDesc } from './rows.ts';
import type { RopeConfig } from './rope-store.ts';
import {
  attentionShapes,
  fusedRopeBytes,
  kvBytesPerElement,
  SUBGROUP_DECODE_SLOTS,
  subgroupDecodeBytes,
  decodeWorkgroupBytes,
  type AttentionHeads,
  type DecodeAttentionShape,
  type KvElement,
  type PrefillAttentionShape,
} from './select.ts';
import { paramsBuffer, shader } from './shaders.ts';

export interface AttentionShape extends AttentionHeads {
  /** Positions per slot in the cache. */
  maxSeq: number;
  /** Sliding window: a row at pos attends to keys pos−window+1…pos; 0 or absent = all keys 0…pos. */
  window?: number;
  /** The cache's element type (kvElement in select.ts). */
  kv: KvElement;
}

export interface AttentionBuffers {
  q: GPUBuffer; // (R, nHeads·headDim)
  kCache: GPUBuffer; // (slots, maxSeq, nKvHeads·headDim) of shape.kv
  vCache: GPUBuffer; // (slots, maxSeq, nKvHeads·headDim) of shape.kv
  rows: GPUBuffer; // (R): (slot, pos); keys 0…pos of slot must already be in the cache
  out: GPUBuffer; // (R, nHeads·headDim)
  /** The decode kernel's partials, shared by every layer and step (the engine's); absent: the kernel allocates its own. */
  scratch?: DecodeScratch;
}

/** Split-decode partials written by pass 1 and merged by pass 2, sized by decodeScratchSize for the largest step. */
export interface DecodeScratch {
  partAcc: GPUBuffer; // (R, nHeads, splits, headDim)
  partMl: GPUBuffer; // (R, nHeads, splits, 2)
}

/** Bytes of the decode partials of a step of R rows at any context: for the engine to allocate them once, for its largest step. */
export function decodeScratchSize(caps: GpuContext['caps'], heads: AttentionHeads, maxRows: number): { partAcc: number; partMl: number } {
  let most = 0;
  for (let R = 1; R <= maxRows; R++) {
    const { splits } = attentionShapes(caps, heads, R).decode;
    if (splits > 1) most = Math.max(most, R * splits);
  }
  return { partAcc: 4 * most * heads.nHeads * heads.headDim, partMl: 8 * most * heads.nHeads };
}

/**
 * What the engine knows about a step's rows when it builds its dispatches: 'one-slot' (a prefill
 * or prefill chunk: every row of one sequence), 'distinct' (decode: every row its own sequence, so
 * RoPE and the new key's store can run inside attention — padding rows that repeat a row exactly
 * store the same bytes), or 'any'.
 */
export type RowLayout = 'one-slot' | 'distinct' | 'any';

/**
 * Distinct (slot, key) pairs a step must read: per slot, keys from the lowest the window lets in to max pos. Batched decode rows of
 * different slots each read their own keys; rows of one slot share theirs.
 */
function distinctKeys(rows: readonly RowDesc[], window = 0): number {
  const span = new Map<number, [number, number]>();
  for (const { slot, pos } of rows) {
    const lo = pos + 1 - keysOf(pos, window);
    const [a, b] = span.get(slot) ?? [lo, pos + 1];
    span.set(slot, [Math.min(a, lo), Math.max(b, pos + 1)]);
  }
  let keys = 0;
  for (const [lo, hi] of span.values()) keys += hi - lo;
  return keys;
}

/**
 * FLOPs 4·Σ_r (pos_r+1)·headDim·nHeads (q·k and p·v, 2 each per dim); bytes: K and V of every
 * distinct (slot, key) read once at kvBytesPerElement(kv), q read, out written (f32), the row
 * table read — the floor, whichever kernel runs (split decode's partials are its own scratch traffic).
 */
export function attentionCost(shape: AttentionHeads & { window?: number; kv: KvElement }, rows: readonly RowDesc[]): Cost {
  const { nHeads, nKvHeads, headDim } = shape;
  const scored = rows.reduce((n, row) => n + keysOf(row.pos, shape.window), 0);
  const qBytes = 4 * rows.length * nHeads * headDim;
  const kvBytes = 2 * kvBytesPerElement(shape.kv) * distinctKeys(rows, shape.window) * nKvHeads * headDim;
  return {
    flops: 4 * scored * headDim * nHeads,
    bytes: kvBytes + 2 * qBytes + rows.length * ROW_BYTES,
  };
}

/** The variant of an attention body that reads the KV cache's element (kv_load_*.wgsl; variant-table.ts). */
function withKvLoads<B extends 'attention_decode' | 'attention_decode_subgroups' | 'attention_prefill' | 'attention_prefill_rows'>(body: B, kv: KvElement) {
  return shader(`${body}+kv_load_${kv}`);
}

function checkShape(owner: string, shape: AttentionShape): number {
  if (shape.headDim % 4 !== 0 || shape.nHeads % shape.nKvHeads !== 0) {
    throw new TokenscopeError(
      'model-unsupported',
      `${owner}: attention needs headDim a multiple of 4 and nHeads a multiple of nKvHeads (got ${shape.headDim}, ${shape.nHeads}/${shape.nKvHeads}).`,
      'Pick a model with a standard head layout.',
    );
  }
  return shape.nHeads / shape.nKvHeads;
}

/** Keys a row at `pos` attends to under a sliding window (0 = none). */
function keysOf(pos: number, window = 0): number {
  return window > 0 ? Math.min(pos + 1, window) : pos + 1;
}

/**
 * RoPE and the KV-cache store fused into decode attention (attention_decode_rope_io.wgsl): the
 * un-rotated Q|K|V output replaces the rotated queries, and the kernel writes the new key and value.
 */
export interface FusedRope extends Omit<RopeConfig, 'headDim'> {
  qkv: GPUBuffer; // (R, (nHeads + 2·nKvHeads)·headDim): the Q|K|V linear's output
  invFreq: GPUBuffer; // (ropeDim/2) f32, from ropeInvFreq
  /** Per-head RMSNorm of q and k before RoPE: (headDim) f32 weights each, and eps. */
  headNorm?: { q: GPUBuffer; k: GPUBuffer; eps: number };
}

/** Whether the fused RoPE prologue fits this device's workgroup memory beside `choice`'s own arrays. */
export function fusedRopeFits(caps: GpuContext['caps'], heads: AttentionHeads, choice: DecodeAttentionShape): boolean {
  const group = heads.nHeads / heads.nKvHeads;
  const own =
    choice.kernel === 'subgroups'
      ? subgroupDecodeBytes(heads.headDim, group, choice.wgSize / choice.lanes)
      : decodeWorkgroupBytes(heads.headDim, group, choice.keyBlock);
  return group < 17 && own + fusedRopeBytes(heads.headDim, group) <= caps.limits.maxComputeWorkgroupStorageSize;
}

/**
 * Decode attention for rows of any slots and positions: one dispatch where the step runs one split
 * (choice.splits), else the splits and the combine. With `rope`, RoPE and the new key's store run
 * inside it (the rows must be distinct sequences, or exact repeats of a row).
 */
export async function attentionDecode(
  ctx: GpuContext,
  owner: string,
  bufs: AttentionBuffers,
  R: number,
  shape: AttentionShape,
  choice: DecodeAttentionShape = attentionShapes(ctx.caps, shape, R).decode,
  rope?: FusedRope,
): Promise<Dispatch[]> {
  const group = checkShape(owner, shape);
  const { nHeads, headDim } = shape;
  const { splits } = choice;
  const d4 = headDim / 4;
  const subgroups = choice.kernel === 'subgroups';
  if (subgroups && (d4 % choice.lanes !== 0 || choice.wgSize % choice.lanes !== 0 || group * (d4 / choice.lanes) > SUBGROUP_DECODE_SLOTS)) {
    throw new RangeError(`${owner}: ${choice.lanes} lanes do not fit ${group} heads of ${headDim} per kv head in workgroups of ${choice.wgSize}.`);
  }
  if (rope && !fusedRopeFits(ctx.caps, shape, choice)) throw new RangeError(`${owner}: the fused RoPE prologue does not fit workgroup memory here.`);
  const accBytes = 4 * R * nHeads * splits * headDim; // (R, nHeads, splits, headDim)
  const mlBytes = 8 * R * nHeads * splits; // (R, nHeads, splits, 2)
  if (splits > 1 && bufs.scratch && (bufs.scratch.partAcc.size < accBytes || bufs.scratch.partMl.size < mlBytes)) {
    throw new RangeError(`${owner}: the shared decode partials are too small for ${R} rows × ${splits} splits`);
  }
  // One split writes the output itself: the partials are bound (at least one element each, never
  // aliasing the output, which WebGPU refuses for writable bindings) but never touched.
  const own = bufs.scratch
    ? []
    : [storageBuffer(ctx.device, `${owner}.partAcc`, Math.max(accBytes, 16)), storageBuffer(ctx.device, `${owner}.partMl`, Math.max(mlBytes, 16))];
  const { partAcc, partMl } = bufs.scratch ?? { partAcc: own[0], partMl: own[1] };
  const body = subgroups ? 'attention_decode_subgroups' : 'attention_decode';
  const kernelConstants: Record<string, number> = subgroups
    ? { WG_SIZE: choice.wgSize, HEAD_DIM: headDim, GROUP: group, LANES: choice.lanes }
    : { WG_SIZE: choice.wgSize, HEAD_DIM: headDim, GROUP: group, KEY_BLOCK: choice.keyBlock };
  const common = { nHeads, maxSeq: shape.maxSeq, splits, scale: 1 / Math.sqrt(headDim), window: shape.window ?? 0, minChunk: choice.minChunk };
  let partial: Dispatch;
  if (rope) {
    const variant = shader(`${body}+rope+kv_rw_${shape.kv}`);
    const params = paramsBuffer(ctx.device, `${owner}.params`, variant.name, { ...common, half: rope.ropeDim / 2, eps: rope.headNorm?.eps ?? 0 });
    const constants = { ...kernelConstants, NEOX: rope.ropeStyle === 'neox' ? 1 : 0, HEAD_NORM: rope.headNorm ? 1 : 0 };
    const norms = [rope.headNorm?.q ?? rope.invFreq, rope.headNorm?.k ?? rope.invFreq];
    partial = await makeDispatch(
      ctx,
      { ...variant, constants },
      {
        owner,
        kind: 'attention',
        bindings: [rope.qkv, bufs.kCache, bufs.vCache, bufs.rows, partAcc, partMl, params, bufs.out, rope.invFreq, ...norms],
        workgroups: [splits, shape.nKvHeads, R],
        owned: [params, ...own],
      },
    );
  } else {
    const variant = withKvLoads(body, shape.kv);
    const params = paramsBuffer(ctx.device, `${owner}.params`, variant.name, common);
    partial = await makeDispatch(
      ctx,
      { ...variant, constants: kernelConstants },
      {
        owner,
        kind: 'attention',
        bindings: [bufs.q, bufs.kCache, bufs.vCache, bufs.rows, partAcc, partMl, params, bufs.out],
        workgroups: [splits, shape.nKvHeads, R],
        owned: [params, ...own],
      },
    );
  }
  if (splits === 1) return [partial];
  const heads = R * nHeads;
  const combineParams = paramsBuffer(ctx.device, `${owner}.combineParams`, 'attention_combine', { heads, splits, d4 });
  const combine = await makeDispatch(
    ctx,
    { ...shader('attention_combine'), constants: { WG_SIZE: Math.min(64, Math.max(8, 2 ** Math.ceil(Math.log2(d4)))) } },
    {
      owner,
      kind: 'attention',
      bindings: [partAcc, partMl, bufs.out, combineParams],
      workgroups: grid1d(heads, ctx.caps.limits.maxComputeWorkgroupsPerDimension),
      owned: [combineParams],
    },
  );
  return [partial, combine];
}

/**
 * Tiled prefill attention. Contract: every row of the step has the same slot (rows[0]'s);
 * positions may be anything (consecutive is the efficient case). One dispatch.
 */
export async function attentionPrefill(
  ctx: GpuContext,
  owner: string,
  bufs: AttentionBuffers,
  R: number,
  shape: AttentionShape,
  choice: PrefillAttentionShape | null = attentionShapes(ctx.caps, shape, R).prefill,
): Promise<Dispatch[]> {
  const group = checkShape(owner, shape);
  if (!choice) {
    throw new TokenscopeError(
      'model-unsupported',
      `${owner}: no prefill tile of ${group} heads of ${shape.headDim} fits this device's workgroup memory.`,
      'Use the decode kernel for this step (attention() does so by itself).',
    );
  }
  const variant = withKvLoads(choice.kernel === 'rows' ? 'attention_prefill_rows' : 'attention_prefill', shape.kv);
  const params = paramsBuffer(ctx.device, `${owner}.params`, variant.name, {
    R,
    nHeads: shape.nHeads,
    maxSeq: shape.maxSeq,
    scale: 1 / Math.sqrt(shape.headDim),
    window: shape.window ?? 0,
  });
  const dispatch = await makeDispatch(
    ctx,
    {
      ...variant,
      constants:
        choice.kernel === 'rows'
          ? { WG_SIZE: choice.wgSize, HEAD_DIM: shape.headDim, GROUP: group }
          : { WG_SIZE: choice.wgSize, HEAD_DIM: shape.headDim, GROUP: group, ROW_TILE: choice.rowTile, KEY_BLOCK: choice.keyBlock },
    },
    {
      owner,
      kind: 'attention',
      bindings: [bufs.q, bufs.kCache, bufs.vCache, bufs.rows, bufs.out, params],
      // The rows kernel: a workgroup per (rows tile, query head); the tiled one per (rows tile, kv head).
      workgroups: choice.kernel === 'rows' ? [Math.ceil(R / choice.wgSize), shape.nHeads, 1] : [Math.ceil(R / choice.rowTile), shape.nKvHeads, 1],
      owned: [params],
    },
  );
  return [dispatch];
}

/**
 * The engine-facing attention for a step of R rows whose rows attend at most `keys` keys: the tiled
 * prefill kernel when the engine guarantees all rows share one slot, there are several of them and
 * the device wants it (select.ts), else the decode kernel — with RoPE and the cache store fused in
 * (`rope`) where the rows are distinct sequences and the prologue fits (ropeFusedInto says when; the
 * caller records rope_store only where it says no).
 */
export async function attention(
  ctx: GpuContext,
  owner: string,
  bufs: AttentionBuffers,
  R: number,
  shape: AttentionShape,
  layout: RowLayout,
  keys = Infinity,
  rope?: FusedRope,
): Promise<Dispatch[]> {
  const choice = attentionShapes(ctx.caps, shape, R, keys);
  if (layout === 'one-slot' && R > 1 && choice.tiledPrefill) return attentionPrefill(ctx, owner, bufs, R, shape, choice.prefill);
  const fused = rope && ropeFusedInto(ctx.caps, shape, R, layout, keys) ? rope : undefined;
  return attentionDecode(ctx, owner, bufs, R, shape, choice.decode, fused);
}

/** Whether attention() runs RoPE and the cache store itself for such a step (so no rope_store pass is recorded). */
export function ropeFusedInto(caps: GpuContext['caps'], heads: AttentionHeads, R: number, layout: RowLayout, keys = Infinity): boolean {
  const choice = attentionShapes(caps, heads, R, keys);
  const decodeKernel = !(layout === 'one-slot' && R > 1 && choice.tiledPrefill);
  const distinct = layout === 'distinct' || R === 1;
  return decodeKernel && distinct && fusedRopeFits(caps, heads, choice.decode);
}

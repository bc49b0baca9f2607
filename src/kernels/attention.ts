/**
 * Causal GQA attention over the KV cache with online softmax, scale 1/sqrt(headDim):
 * for each row r and query head h, out[r, h] = softmax(q[r, h] · K[slot_r, 0…pos_r]ᵀ) · V[…],
 * with kv head h / (nHeads / nKvHeads). The K/V cache holds f32 or f16 elements (shape.kv; each
 * kernel body's variant in variant-table.ts joins kv_load_f32.wgsl or kv_load_f16.wgsl); every kernel computes in f32.
 * Two implementations share one binding contract:
 *  - decode (attention_decode.wgsl, or attention_decode_subgroups.wgsl with lanes across the head
 *    dimension, + attention_combine.wgsl): rows of any slots and positions; each (row, kv head)
 *    split across `splits` workgroups, then merged;
 *  - prefill (shaders/attention_prefill.wgsl): all rows of ONE slot (a prefill or prefill chunk,
 *    best with consecutive positions), tiled over rows with K/V blocks in workgroup memory.
 * `attention` picks between them from what the engine knows about the step's rows.
 */
import { storageBuffer } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { TokenscopeError } from '../errors.ts';
import { gridInvocations } from './grid.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { ROW_BYTES, type RowDesc } from './rows.ts';
import {
  attentionShapes,
  elementwiseShape,
  kvBytesPerElement,
  SUBGROUP_DECODE_SLOTS,
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

/** Partials per (row, head) the decode kernel writes: one per split, times the teams of a subgroup workgroup. */
function decodeParts(choice: DecodeAttentionShape): number {
  return choice.kernel === 'subgroups' ? choice.splits * (choice.wgSize / choice.lanes) : choice.splits;
}

/** Bytes of the decode partials of a step of R rows: for the engine to allocate them once, for its largest step. */
export function decodeScratchSize(caps: GpuContext['caps'], heads: AttentionHeads, maxRows: number): { partAcc: number; partMl: number } {
  let most = 0;
  for (let R = 1; R <= maxRows; R++) most = Math.max(most, R * decodeParts(attentionShapes(caps, heads, R).decode));
  return { partAcc: 4 * most * heads.nHeads * heads.headDim, partMl: 8 * most * heads.nHeads };
}

/** What the engine knows about a step's rows when it builds its dispatches. */
export type RowLayout = 'one-slot' | 'any';

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
 * Split-K decode attention for rows of any slots and positions: two dispatches (partials, combine).
 * The subgroup kernel writes one partial per team of each split: splits · teams in all.
 */
export async function attentionDecode(
  ctx: GpuContext,
  owner: string,
  bufs: AttentionBuffers,
  R: number,
  shape: AttentionShape,
  choice: DecodeAttentionShape = attentionShapes(ctx.caps, shape, R).decode,
): Promise<Dispatch[]> {
  const group = checkShape(owner, shape);
  const { nHeads, headDim } = shape;
  const { splits } = choice;
  const d4 = headDim / 4;
  const subgroups = choice.kernel === 'subgroups';
  if (subgroups && (d4 % choice.lanes !== 0 || choice.wgSize % choice.lanes !== 0 || group * (d4 / choice.lanes) > SUBGROUP_DECODE_SLOTS)) {
    throw new RangeError(`${owner}: ${choice.lanes} lanes do not fit ${group} heads of ${headDim} per kv head in workgroups of ${choice.wgSize}.`);
  }
  const parts = decodeParts(choice);
  const accBytes = 4 * R * nHeads * parts * headDim; // (R, nHeads, parts, headDim)
  const mlBytes = 8 * R * nHeads * parts; // (R, nHeads, parts, 2)
  if (bufs.scratch && (bufs.scratch.partAcc.size < accBytes || bufs.scratch.partMl.size < mlBytes)) {
    throw new RangeError(`${owner}: the shared decode partials are too small for ${R} rows × ${parts} partials`);
  }
  const own = bufs.scratch ? [] : [storageBuffer(ctx.device, `${owner}.partAcc`, accBytes), storageBuffer(ctx.device, `${owner}.partMl`, mlBytes)];
  const { partAcc, partMl } = bufs.scratch ?? { partAcc: own[0], partMl: own[1] };
  const variant = withKvLoads(subgroups ? 'attention_decode_subgroups' : 'attention_decode', shape.kv);
  const params = paramsBuffer(ctx.device, `${owner}.params`, variant.name, {
    nHeads,
    maxSeq: shape.maxSeq,
    splits,
    scale: 1 / Math.sqrt(headDim),
    window: shape.window ?? 0,
  });
  const partial = await makeDispatch(
    ctx,
    {
      ...variant,
      constants: subgroups
        ? { WG_SIZE: choice.wgSize, HEAD_DIM: headDim, GROUP: group, LANES: choice.lanes }
        : { WG_SIZE: choice.wgSize, HEAD_DIM: headDim, GROUP: group, KEY_BLOCK: choice.keyBlock },
    },
    {
      owner,
      kind: 'attention',
      bindings: [bufs.q, bufs.kCache, bufs.vCache, bufs.rows, partAcc, partMl, params],
      workgroups: [splits, shape.nKvHeads, R],
      owned: [params, ...own],
    },
  );
  const count = R * nHeads * d4;
  const grid = elementwiseShape(ctx.caps, count);
  const combineParams = paramsBuffer(ctx.device, `${owner}.combineParams`, 'attention_combine', {
    count,
    stride: gridInvocations(grid.workgroups, grid.wgSize),
    splits: parts,
    d4,
  });
  const combine = await makeDispatch(
    ctx,
    { ...shader('attention_combine'), constants: { WG_SIZE: grid.wgSize } },
    {
      owner,
      kind: 'attention',
      bindings: [partAcc, partMl, bufs.out, combineParams],
      workgroups: grid.workgroups,
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
 * The engine-facing attention for a step of R rows: the tiled prefill kernel when the engine
 * guarantees all rows share one slot, there are several of them and the device wants it
 * (select.ts), else the decode kernel.
 */
export function attention(ctx: GpuContext, owner: string, bufs: AttentionBuffers, R: number, shape: AttentionShape, layout: RowLayout): Promise<Dispatch[]> {
  const choice = attentionShapes(ctx.caps, shape, R);
  return layout === 'one-slot' && R > 1 && choice.tiledPrefill
    ? attentionPrefill(ctx, owner, bufs, R, shape, choice.prefill)
    : attentionDecode(ctx, owner, bufs, R, shape, choice.decode);
}

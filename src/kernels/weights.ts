/**
 * Weight matrices on the GPU: GGUF-shaped (`rows` = output features, `cols` = input features,
 * each row contiguous), repacked at load into the layout the shaders read (weight-formats.ts),
 * sharded by rows when a tensor exceeds the device's storage-binding limit, or synthesized on
 * the GPU for benchmarks.
 */
import { TokenscopeError } from '../errors.ts';
import { align, storageBuffer, storageBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { encodeDispatches, makeDispatch, releaseDispatches, type Dispatch } from './kernel.ts';
import { grid1d, gridInvocations } from './grid.ts';
import { fillWorkgroups } from './select.ts';
import { paramsBuffer, shader } from './shaders.ts';
import { FORMATS, hasScaleRegion, mainBlockBytes, packBlocks, type WeightFormat } from './weight-formats.ts';

export { FORMATS, WEIGHT_FORMATS, hasScaleRegion, type WeightFormat } from './weight-formats.ts';

export interface WeightShard {
  buffer: GPUBuffer;
  /** First row (output feature) of the tensor held by this shard. */
  rowStart: number;
  rows: number;
}

export interface WeightTensor {
  label: string;
  format: WeightFormat;
  rows: number;
  cols: number;
  shards: WeightShard[];
  /** Bytes a full read touches (quants + scales: 4.5 bits per weight for q4_0). */
  bytes: number;
}

export interface ShardOptions {
  /** Largest shard in bytes; default the device's storage-binding and buffer limits (tests force small shards). */
  maxShardBytes?: number;
  /** Shards hold whole groups of this many rows (2: the (gate, up) pairs of a gate|up tensor). */
  rowMultiple?: number;
}

const FILL_WG_SIZE = 64;

/** Block formats (a scale per block of weights), as opposed to f32/f16/bf16. */
export function isQuantized(format: WeightFormat): boolean {
  return FORMATS[format].block > 1;
}

/** Weights per GGUF block: the multiple a row length must be (4 for the float formats: whole vec4 loads). */
export function rowMultiple(format: WeightFormat): number {
  return Math.max(4, FORMATS[format].block);
}

/** Bytes of a (rows, cols) tensor as stored in GGUF and as read by a full pass over it. */
export function weightBytes(format: WeightFormat, rows: number, cols: number): number {
  const f = FORMATS[format];
  return ((rows * cols) / f.block) * f.blockBytes;
}

/** Where the regions of a packed shard lie, in u32 words. */
export interface PackedLayout {
  valueWords: number;
  /** First word of the scale region (= valueWords); it exists only for formats with a side f16 (hasScaleRegion). */
  scaleBase: number;
  scaleWords: number;
  /** Buffer size: both regions, padded to 16 bytes. */
  bytes: number;
}

export function packedLayout(format: WeightFormat, rows: number, cols: number): PackedLayout {
  const blocks = (rows * cols) / FORMATS[format].block;
  const valueWords = (blocks * mainBlockBytes(format)) / 4;
  const scaleWords = hasScaleRegion(format) ? Math.ceil(blocks / 2) : 0;
  return { valueWords, scaleBase: valueWords, scaleWords, bytes: align((valueWords + scaleWords) * 4, 16) };
}

/**
 * cols must be a multiple of the block (32, or 256 for the K-quants) and of 4 for the float
 * formats: the kernels read whole 16-byte vectors of activations (every real model satisfies both).
 */
export function checkWeightShape(format: WeightFormat, rows: number, cols: number, label: string): void {
  const multiple = rowMultiple(format);
  if (!(Number.isInteger(rows) && rows > 0 && Number.isInteger(cols) && cols > 0 && cols % multiple === 0)) {
    throw new TokenscopeError(
      'model-unsupported',
      `${label}: a ${format} matrix of ${rows}×${cols} is not supported (input features must be a positive multiple of ${multiple}).`,
      `Use a model whose dimensions are multiples of ${multiple}, or another weight format.`,
    );
  }
}

/** Repack `rows` GGUF rows (contiguous `ggufBytes`) into the packed layout of weight-formats.ts. */
export function packWeight(format: WeightFormat, rows: number, cols: number, ggufBytes: Uint8Array): Uint8Array {
  checkGgufBytes(format, rows, cols, ggufBytes);
  const layout = packedLayout(format, rows, cols);
  const out = new Uint8Array(layout.bytes);
  const blocks = (rows * cols) / FORMATS[format].block;
  const side = hasScaleRegion(format) ? out.subarray(layout.scaleBase * 4, layout.scaleBase * 4 + 2 * blocks) : null;
  packBlocks(format, ggufBytes, blocks, out.subarray(0, layout.valueWords * 4), side);
  return out;
}

function checkGgufBytes(format: WeightFormat, rows: number, cols: number, ggufBytes: Uint8Array): number {
  const need = weightBytes(format, rows, cols);
  if (ggufBytes.byteLength < need) {
    throw new TokenscopeError(
      'model-format',
      `A ${format} tensor of ${rows}×${cols} needs ${need} bytes but has ${ggufBytes.byteLength}.`,
      'The model file is truncated or corrupt; download it again.',
    );
  }
  return need;
}

/** Row ranges of at most `maxShardBytes` packed bytes each, starting at multiples of `rowMultiple`. */
export function shardRows(format: WeightFormat, rows: number, cols: number, maxShardBytes: number, rowMultiple = 1): { rowStart: number; rows: number }[] {
  const perRow = packedLayout(format, 1, cols);
  // 16 bytes of slack for the padding of a shard's scale region.
  const rowsPerShard = rowMultiple * Math.floor((maxShardBytes - 16) / ((perRow.valueWords + perRow.scaleWords) * 4 * rowMultiple));
  if (rowsPerShard < 1) {
    throw new TokenscopeError(
      'model-too-large',
      `One row of a ${format} matrix with ${cols} columns exceeds the ${maxShardBytes}-byte buffer limit.`,
      'Pick a smaller model.',
    );
  }
  const out: { rowStart: number; rows: number }[] = [];
  for (let rowStart = 0; rowStart < rows; rowStart += rowsPerShard) out.push({ rowStart, rows: Math.min(rowsPerShard, rows - rowStart) });
  return out;
}

function maxShard(ctx: GpuContext, opts: ShardOptions): number {
  const { maxStorageBufferBindingSize, maxBufferSize } = ctx.caps.limits;
  return Math.min(opts.maxShardBytes ?? Infinity, maxStorageBufferBindingSize, maxBufferSize);
}

/** Upload a GGUF tensor (rows × cols, `ggufBytes` as in the file), repacked and sharded. */
export function uploadWeight(
  ctx: GpuContext,
  label: string,
  format: WeightFormat,
  rows: number,
  cols: number,
  ggufBytes: Uint8Array,
  opts: ShardOptions = {},
): WeightTensor {
  checkWeightShape(format, rows, cols, label);
  checkGgufBytes(format, rows, cols, ggufBytes);
  const rowBytes = weightBytes(format, 1, cols);
  const shards = shardRows(format, rows, cols, maxShard(ctx, opts), opts.rowMultiple).map((s, i) => ({
    ...s,
    buffer: storageBufferWith(
      ctx.device,
      `${label}.shard${i}`,
      packWeight(format, s.rows, cols, ggufBytes.subarray(s.rowStart * rowBytes, (s.rowStart + s.rows) * rowBytes)),
    ),
  }));
  return { label, format, rows, cols, shards, bytes: weightBytes(format, rows, cols) };
}

/**
 * A tensor of random weights made on the GPU (nothing big crosses the bus): values roughly
 * uniform in (−scale, scale), |w| ≤ scale, mean 0, fixed by `seed` and independent of sharding
 * (the random stream is keyed by the element's index in the whole tensor).
 *   f32/f16/bf16: uniform(−1, 1)·scale (f16/bf16 rounded toward zero where rounding would exceed scale).
 *   q8_0: q uniform in [−127, 127] (−128 becomes 0), d = scale/127·u, u ∈ [0.5, 1), d rounded down to f16.
 *   q4_0, q4_1 (m = −8d): q − 8 uniform in [−7, 7] (q = 0 becomes 8), d = scale/7·u likewise.
 *   q5_0, q5_1 (m = −16d): q − 16 in [−15, 15] (q = 0 becomes 16), d = scale/15·u.
 *   q4_k: sub-block scales sc ∈ [4, 7], mins m = 8·sc, dmin = d: w = d·sc·(q − 8), d = scale/49·u.
 *   q5_k: sc ∈ [4, 7], m = 8·sc, dmin = 2d: w = d·sc·(q − 16), d = scale/105·u.
 *   q6_k: int8 sc ∈ [64, 127]: w = d·sc·(q − 32), q − 32 in [−31, 31], d = scale/(31·127)·u.
 * Every block is valid for its format, so a preset's bytes and decode work are the real file's.
 */
export async function syntheticWeight(
  ctx: GpuContext,
  label: string,
  format: WeightFormat,
  rows: number,
  cols: number,
  seed: number,
  scale: number,
  opts: ShardOptions = {},
): Promise<WeightTensor> {
  checkWeightShape(format, rows, cols, label);
  const shards: WeightShard[] = [];
  const encoder = ctx.device.createCommandEncoder({ label: `${label}.fill` });
  const fills: Dispatch[] = [];
  try {
    for (const [i, s] of shardRows(format, rows, cols, maxShard(ctx, opts), opts.rowMultiple).entries()) {
      const layout = packedLayout(format, s.rows, cols);
      const buffer = storageBuffer(ctx.device, `${label}.shard${i}`, layout.bytes);
      shards.push({ ...s, buffer });
      const grid = grid1d(fillWorkgroups(ctx.caps, layout.valueWords), ctx.caps.limits.maxComputeWorkgroupsPerDimension);
      const firstBlock = (s.rowStart * cols) / FORMATS[format].block;
      const uniform = paramsBuffer(ctx.device, `${label}.fill${i}.params`, 'weights_fill', {
        value_words: layout.valueWords,
        scale_words: layout.scaleWords,
        word_base: (firstBlock * mainBlockBytes(format)) / 4,
        block_base: firstBlock,
        seed: seed >>> 0,
        scale,
        stride: gridInvocations(grid, FILL_WG_SIZE),
      });
      fills.push(
        await makeDispatch(
          ctx,
          { ...shader('weights_fill'), entryPoint: `fill_${format}`, constants: { WG_SIZE: FILL_WG_SIZE } },
          {
            owner: `${label}.fill${i}`,
            kind: 'elementwise',
            bindings: [buffer, uniform],
            workgroups: grid,
            owned: [uniform],
          },
        ),
      );
    }
    encodeDispatches(encoder, fills);
    ctx.device.queue.submit([encoder.finish()]);
  } catch (e) {
    for (const s of shards) s.buffer.destroy();
    throw e;
  } finally {
    releaseDispatches(fills);
  }
  return { label, format, rows, cols, shards, bytes: weightBytes(format, rows, cols) };
}

export function destroyWeight(w: WeightTensor): void {
  for (const s of w.shards) s.buffer.destroy();
}

/** GGUF bytes of tensors with the same format and cols stacked by rows (Q|K|V): a plain concatenation. */
export function stackRows(format: WeightFormat, cols: number, parts: readonly { rows: number; bytes: Uint8Array }[]): Uint8Array {
  const rowBytes = weightBytes(format, 1, cols);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.rows * rowBytes, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p.bytes.subarray(0, p.rows * rowBytes), at);
    at += p.rows * rowBytes;
  }
  return out;
}

/** GGUF bytes of two (rows, cols) tensors of one format interleaved by rows: a₀ b₀ a₁ b₁ … (gate|up pairs). */
export function interleaveRows(format: WeightFormat, rows: number, cols: number, a: Uint8Array, b: Uint8Array): Uint8Array {
  const rowBytes = weightBytes(format, 1, cols);
  const out = new Uint8Array(2 * rows * rowBytes);
  for (let r = 0; r < rows; r++) {
    out.set(a.subarray(r * rowBytes, (r + 1) * rowBytes), 2 * r * rowBytes);
    out.set(b.subarray(r * rowBytes, (r + 1) * rowBytes), (2 * r + 1) * rowBytes);
  }
  return out;
}

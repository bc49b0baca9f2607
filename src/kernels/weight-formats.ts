/**
 * The weight formats the GPU kernels read: for each, its GGUF block and the packed layout it is
 * uploaded in. The WGSL library that decodes it (contract in docs: w_raw, w_quants, w_scale, w_bias,
 * W_HAS_BIAS, w_dequant) is named by WEIGHT_LIBRARIES in variant-table.ts. Packing never changes a
 * tensor's size beyond 16-byte padding: bytes read per token = the file's bytes (the cost model is exact).
 *
 * Packed layout of one shard of r rows (u32 words, little-endian):
 *   main region: each GGUF block with its "side" f16 (if any) taken out and, for the K-quants,
 *     its bits reordered so that one chunk (sub-block) is contiguous:
 *     f32/f16/bf16  the values, row-major.
 *     q8_0 / q4_0   the 32 / 16 bytes of quants (side: d).
 *     q4_1 / q5_1   the block as in GGUF (20 / 24 bytes: d|m, (qh,) nibbles).
 *     q5_0          qh, nibbles (20 bytes; side: d).
 *     q4_k          header (d|dmin, 12 bytes of scales), 8 sub-blocks × 16 bytes (byte j: weight j
 *                   low nibble, j + 16 high nibble).
 *     q5_k          header, 8 words of fifth bits (word s, bit j = weight j of sub-block s), the
 *                   8 sub-blocks' nibbles as q4_k.
 *     q6_k          16 sub-blocks × 8 bytes of low nibbles (byte k: weight k low, k + 8 high),
 *                   16 words of high bit pairs (word s: bits 2k.. = weight k), 16 int8 scales (side: d).
 *   scale region (from scaleBase): the side f16s, two per word (block 2i in the low half of word i).
 * Odd-sized GGUF blocks (34, 18, 22, 210 bytes) are not word aligned; moving their f16 out makes
 * every block's bits a whole number of words (of 16-byte vectors for q8_0, q4_0, q4_k, q5_k).
 */
export type WeightFormat = 'f32' | 'f16' | 'bf16' | 'q8_0' | 'q4_0' | 'q4_1' | 'q5_0' | 'q5_1' | 'q4_k' | 'q5_k' | 'q6_k';

interface FormatSpec {
  /** Weights per GGUF block (1 for the float formats). */
  block: number;
  /** GGUF bytes per block. */
  blockBytes: number;
  /** Byte offset in the GGUF block of the f16 moved to the scale region, or null. */
  sideAt: number | null;
  /** Reorders a block's bytes (side removed) into the shader's order; `unpack` undoes it. */
  pack?: (src: Uint8Array, dst: Uint8Array) => void;
  unpack?: (src: Uint8Array, dst: Uint8Array) => void;
}

const nibble = (byte: number, high: boolean) => (high ? byte >> 4 : byte & 15);

/** q4_k/q5_k: sub-block s's 32 nibbles come from the low (s even) or high (s odd) nibbles of qs[32·(s>>1)..]. */
function packK4Nibbles(src: Uint8Array, qs: number, dst: Uint8Array, out: number): void {
  for (let s = 0; s < 8; s++) {
    const g = qs + 32 * (s >> 1);
    for (let j = 0; j < 16; j++) dst[out + 16 * s + j] = nibble(src[g + j], (s & 1) === 1) | (nibble(src[g + 16 + j], (s & 1) === 1) << 4);
  }
}

function unpackK4Nibbles(src: Uint8Array, at: number, dst: Uint8Array, qs: number): void {
  for (let s = 0; s < 8; s++) {
    const g = qs + 32 * (s >> 1);
    const shift = (s & 1) * 4;
    for (let j = 0; j < 16; j++) {
      const b = src[at + 16 * s + j];
      dst[g + j] |= (b & 15) << shift;
      dst[g + 16 + j] |= (b >> 4) << shift;
    }
  }
}

function packQ4K(src: Uint8Array, dst: Uint8Array): void {
  dst.set(src.subarray(0, 16));
  packK4Nibbles(src, 16, dst, 16);
}

function unpackQ4K(src: Uint8Array, dst: Uint8Array): void {
  dst.set(src.subarray(0, 16));
  dst.fill(0, 16);
  unpackK4Nibbles(src, 16, dst, 16);
}

function packQ5K(src: Uint8Array, dst: Uint8Array): void {
  dst.set(src.subarray(0, 16));
  dst.fill(0, 16, 48);
  for (let s = 0; s < 8; s++) for (let l = 0; l < 32; l++) dst[16 + 4 * s + (l >> 3)] |= ((src[16 + l] >> s) & 1) << (l & 7);
  packK4Nibbles(src, 48, dst, 48);
}

function unpackQ5K(src: Uint8Array, dst: Uint8Array): void {
  dst.set(src.subarray(0, 16));
  dst.fill(0, 16);
  for (let s = 0; s < 8; s++) for (let l = 0; l < 32; l++) dst[16 + l] |= ((src[16 + 4 * s + (l >> 3)] >> (l & 7)) & 1) << s;
  unpackK4Nibbles(src, 48, dst, 48);
}

/** Q6_K weight i (0..255) of a GGUF block: byte offsets of its low nibble and high bit pair. */
function q6kPlace(i: number): { ql: number; high: boolean; qh: number; shift: number } {
  const half = i >> 7;
  const quarter = (i & 127) >> 5;
  const l = i & 31;
  return { ql: 64 * half + l + (quarter & 1 ? 32 : 0), high: quarter >= 2, qh: 128 + 32 * half + l, shift: 2 * quarter };
}

function packQ6K(src: Uint8Array, dst: Uint8Array): void {
  dst.fill(0, 0, 192);
  for (let i = 0; i < 256; i++) {
    const p = q6kPlace(i);
    const s = i >> 4;
    const k = i & 15;
    dst[8 * s + (k & 7)] |= nibble(src[p.ql], p.high) << (k >= 8 ? 4 : 0);
    dst[128 + 4 * s + (k >> 2)] |= ((src[p.qh] >> p.shift) & 3) << (2 * (k & 3));
  }
  dst.set(src.subarray(192, 208), 192);
}

function unpackQ6K(src: Uint8Array, dst: Uint8Array): void {
  dst.fill(0, 0, 192);
  for (let i = 0; i < 256; i++) {
    const p = q6kPlace(i);
    const s = i >> 4;
    const k = i & 15;
    dst[p.ql] |= nibble(src[8 * s + (k & 7)], k >= 8) << (p.high ? 4 : 0);
    dst[p.qh] |= ((src[128 + 4 * s + (k >> 2)] >> (2 * (k & 3))) & 3) << p.shift;
  }
  dst.set(src.subarray(192, 208), 192);
}

export const FORMATS: Record<WeightFormat, FormatSpec> = {
  f32: { block: 1, blockBytes: 4, sideAt: null },
  f16: { block: 1, blockBytes: 2, sideAt: null },
  bf16: { block: 1, blockBytes: 2, sideAt: null },
  q8_0: { block: 32, blockBytes: 34, sideAt: 0 },
  q4_0: { block: 32, blockBytes: 18, sideAt: 0 },
  q4_1: { block: 32, blockBytes: 20, sideAt: null },
  q5_0: { block: 32, blockBytes: 22, sideAt: 0 },
  q5_1: { block: 32, blockBytes: 24, sideAt: null },
  q4_k: { block: 256, blockBytes: 144, sideAt: null, pack: packQ4K, unpack: unpackQ4K },
  q5_k: { block: 256, blockBytes: 176, sideAt: null, pack: packQ5K, unpack: unpackQ5K },
  q6_k: { block: 256, blockBytes: 210, sideAt: 208, pack: packQ6K, unpack: unpackQ6K },
};

export const WEIGHT_FORMATS = Object.keys(FORMATS) as WeightFormat[];

/** Whether the format keeps f16s in a scale region (bound a second time at W_BINDING + 1). */
export function hasScaleRegion(format: WeightFormat): boolean {
  return FORMATS[format].sideAt !== null;
}

/** GGUF bytes of the main (bits) part of one block, side f16 taken out. */
export function mainBlockBytes(format: WeightFormat): number {
  const f = FORMATS[format];
  return f.blockBytes - (f.sideAt === null ? 0 : 2);
}

/** GGUF block bytes → packed main bytes + side f16 bits, for `blocks` consecutive blocks. */
export function packBlocks(format: WeightFormat, gguf: Uint8Array, blocks: number, main: Uint8Array, side: Uint8Array | null): void {
  const f = FORMATS[format];
  if (f.sideAt === null && !f.pack) {
    main.set(gguf.subarray(0, blocks * f.blockBytes));
    return;
  }
  const mainBytes = mainBlockBytes(format);
  const body = new Uint8Array(mainBytes);
  for (let b = 0; b < blocks; b++) {
    const at = b * f.blockBytes;
    const src = gguf.subarray(at, at + f.blockBytes);
    if (f.sideAt !== null) {
      side![2 * b] = src[f.sideAt];
      side![2 * b + 1] = src[f.sideAt + 1];
      body.set(src.subarray(0, f.sideAt));
      body.set(src.subarray(f.sideAt + 2), f.sideAt);
    } else {
      body.set(src);
    }
    const dst = main.subarray(b * mainBytes, (b + 1) * mainBytes);
    if (f.pack) f.pack(body, dst);
    else dst.set(body);
  }
}

/** The inverse of packBlocks (tests read GPU-made weights back through it). */
export function unpackBlocks(format: WeightFormat, main: Uint8Array, side: Uint8Array | null, blocks: number, gguf: Uint8Array): void {
  const f = FORMATS[format];
  if (f.sideAt === null && !f.unpack) {
    gguf.set(main.subarray(0, blocks * f.blockBytes));
    return;
  }
  const mainBytes = mainBlockBytes(format);
  const body = new Uint8Array(mainBytes);
  for (let b = 0; b < blocks; b++) {
    const src = main.subarray(b * mainBytes, (b + 1) * mainBytes);
    if (f.unpack) f.unpack(src, body);
    else body.set(src);
    const dst = gguf.subarray(b * f.blockBytes, (b + 1) * f.blockBytes);
    if (f.sideAt !== null) {
      dst.set(body.subarray(0, f.sideAt));
      dst[f.sideAt] = side![2 * b];
      dst[f.sideAt + 1] = side![2 * b + 1];
      dst.set(body.subarray(f.sideAt), f.sideAt + 2);
    } else {
      dst.set(body);
    }
  }
}

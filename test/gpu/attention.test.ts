import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import type { Dispatch } from '../../src/kernels/kernel.ts';
import { attention, attentionCost, attentionDecode, attentionPrefill, type AttentionShape } from '../../src/kernels/attention.ts';
import { prefillRows, rowTableData, type RowDesc } from '../../src/kernels/rows.ts';
import { attentionShapes, decodeLanes, kvElement, type DecodeAttentionShape, type KvElement, type PrefillAttentionShape } from '../../src/kernels/select.ts';
import { f16BitsToF32, f32ToF16Bits } from '../../src/f16.ts';
import { inBrowser, testGpu } from './context.ts';
import { gpuCase, nmse, randn, readF32, seeded, submit, type GpuScope } from './harness.ts';
import { attentionRef } from './oracles.ts';

// Scores are f32 dots of ≤ 80 terms (relative error ~1e-7); exp is specified to 3 + 2|x| ulp, and
// with unit-variance q and k the scaled scores stay within |x| < 10, so each softmax weight is off
// by ≤ ~3e-6 relative — NMSE ≤ ~1e-11. 1e-9 leaves margin; a wrong key, head or mask gives ≥ 1e-3.
const TOLERANCE = 1e-9;
// An f16 cache stores each K and V element with relative error ≤ u = 2^-10 (pack2x16float may
// round to either neighbour; the host rounds to nearest, 2^-11). With unit-variance q and k a
// score q·k/√d then moves by Σ q_i k_i ε_i / √d, rms ≤ u/√3, which perturbs each softmax weight
// relatively by as much; V's own rounding adds u/√3 to the output. NMSE ≈ 2u²/3 ≈ 6.4e-7 at worst;
// 4e-6 leaves margin, and a wrong key, head or mask still gives ≥ 1e-3.
const TOLERANCE_F16 = 4e-6;

type Heads = Omit<AttentionShape, 'maxSeq' | 'kv'>;
const HEADS: Heads[] = [
  { nHeads: 4, nKvHeads: 4, headDim: 8 }, // 1:1
  { nHeads: 4, nKvHeads: 2, headDim: 64 }, // 2:1
  { nHeads: 8, nKvHeads: 2, headDim: 80 }, // 4:1
  { nHeads: 8, nKvHeads: 1, headDim: 64 }, // 8:1
];
const SLOTS = 4;
const MAX_SEQ = 224;

/** Batched decode (context lengths 1, 2, 31, 200 and random), and prefill chunks of one slot. */
const DECODE_STEPS: RowDesc[][] = [
  [{ slot: 2, pos: 199 }],
  [
    { slot: 0, pos: 0 },
    { slot: 1, pos: 1 },
    { slot: 3, pos: 30 },
  ],
  Array.from({ length: 17 }, (_, r) => ({ slot: r % SLOTS, pos: [0, 1, 30, 199, 7, 64, 150, 2][r % 8] + (r >> 3) })),
];
const PREFILL_STEPS: RowDesc[][] = [prefillRows(1, 0, 17), prefillRows(3, 197, 3), prefillRows(0, 183, 17), prefillRows(2, 0, 3)];

interface Fixture {
  shape: AttentionShape;
  /** K and V as the cache holds them (f16-rounded for an f16 cache), and as drawn. */
  kData: Float32Array;
  vData: Float32Array;
  kDrawn: Float32Array;
  vDrawn: Float32Array;
  kCache: GPUBuffer;
  vCache: GPUBuffer;
}

/** `data` in the cache's element type: the bytes to upload and the values they hold. */
function asCache(data: Float32Array, kv: KvElement): { bytes: ArrayBufferView; values: Float32Array } {
  if (kv === 'f32') return { bytes: data, values: data };
  const bits = Uint16Array.from(data, f32ToF16Bits);
  return { bytes: bits, values: Float32Array.from(bits, f16BitsToF32) };
}

function fixture(s: GpuScope, heads: Heads, kv: KvElement, maxSeq = MAX_SEQ): Fixture {
  const shape = { ...heads, maxSeq, kv };
  const rand = seeded(heads.nHeads * 100 + heads.headDim);
  const size = SLOTS * maxSeq * heads.nKvHeads * heads.headDim;
  const kDrawn = randn(rand, size);
  const vDrawn = randn(rand, size);
  const k = asCache(kDrawn, kv);
  const v = asCache(vDrawn, kv);
  return { shape, kData: k.values, vData: v.values, kDrawn, vDrawn, kCache: s.upload('kCache', k.bytes), vCache: s.upload('vCache', v.bytes) };
}

async function run(
  s: GpuScope,
  f: Fixture,
  rows: RowDesc[],
  qData: Float32Array,
  build: (bufs: Parameters<typeof attention>[2]) => Promise<Dispatch[]>,
): Promise<Float32Array> {
  const out = s.keep(storageBuffer(s.ctx.device, 'out', 4 * qData.length));
  const kernel = await build({ q: s.upload('q', qData), kCache: f.kCache, vCache: f.vCache, rows: s.upload('rows', rowTableData(rows)), out });
  submit(s.ctx, s.track(kernel));
  return readF32(s.ctx, out, qData.length);
}

/**
 * The CPU adapters' prefill kernel (attention_prefill_rows.wgsl; needs subgroups): one subgroup of
 * 8 rows per workgroup (lavapipe shares K/V loads across it; other subgroup sizes, and head dims not
 * a multiple of 32, load per lane), and two per workgroup.
 */
/** The tiled prefill kernel in small tiles (every adapter compiles its workgroup memory quickly). */
const SMALL_TILE: PrefillAttentionShape = { kernel: 'tiled', wgSize: 32, rowTile: 2, keyBlock: 8 };

const ROWS_KERNELS = (ctx: GpuContext): PrefillAttentionShape[] =>
  ctx.caps.subgroups
    ? [
        { kernel: 'rows', wgSize: 8 },
        { kernel: 'rows', wgSize: 16 },
      ]
    : [];

describe('attention', () => {
  let ctx: GpuContext;
  let kv: KvElement;
  beforeAll(async () => {
    ctx = await testGpu();
    kv = kvElement(ctx.caps);
  });
  afterAll(() => ctx?.destroy());

  for (const heads of HEADS) {
    const name = `${heads.nHeads}/${heads.nKvHeads} heads of ${heads.headDim}`;

    it(`decode, ${name}: batched rows of different slots and positions, split 1, 3, 8 ways`, async () => {
      await gpuCase(ctx, 'attention decode', async (s) => {
        const f = fixture(s, heads, kv);
        for (const rows of DECODE_STEPS) {
          const R = rows.length;
          const qData = randn(seeded(R), R * heads.nHeads * heads.headDim);
          const expected = attentionRef(qData, f.kData, f.vData, rows, f.shape);
          const choice = attentionShapes(ctx.caps, heads, R).decode;
          for (const splits of [1, 3, 8]) {
            const actual = await run(s, f, rows, qData, (bufs) => attentionDecode(ctx, 'test.decode', bufs, R, f.shape, { ...choice, splits }));
            expect(nmse(actual, expected), `R=${R} splits=${splits}`).toBeLessThan(TOLERANCE);
          }
        }
      });
    });

    it(`prefill, ${name}: chunks from pos 0 and pos > 0 agree with the CPU and with decode`, async () => {
      await gpuCase(ctx, 'attention prefill', async (s) => {
        const f = fixture(s, heads, kv);
        // The tiled kernel in small tiles everywhere; in the GPU's default tiles for one layout
        // (SwiftShader compiles their workgroup memory slowly); and whatever the engine picks here.
        const tiles: PrefillAttentionShape[] = [SMALL_TILE, ...ROWS_KERNELS(ctx)];
        const gpuDefault = attentionShapes(ctx.caps, heads, 17).prefill;
        if (gpuDefault && heads.headDim === 64 && heads.nKvHeads === 2) tiles.push(gpuDefault);
        for (const rows of PREFILL_STEPS) {
          const R = rows.length;
          const qData = randn(seeded(R + rows[0].pos), R * heads.nHeads * heads.headDim);
          const expected = attentionRef(qData, f.kData, f.vData, rows, f.shape);
          const engine = await run(s, f, rows, qData, (bufs) => attention(ctx, 'test.onSlot', bufs, R, f.shape, 'one-slot'));
          const decode = await run(s, f, rows, qData, (bufs) => attention(ctx, 'test.anyRows', bufs, R, f.shape, 'any'));
          expect(nmse(engine, expected), `engine's pick, R=${R} from ${rows[0].pos}`).toBeLessThan(TOLERANCE);
          expect(nmse(decode, expected), `decode, R=${R} from ${rows[0].pos}`).toBeLessThan(TOLERANCE);
          for (const choice of tiles) {
            const tiled = await run(s, f, rows, qData, (bufs) => attentionPrefill(ctx, 'test.prefill', bufs, R, f.shape, choice));
            expect(nmse(tiled, expected), `tiled ${JSON.stringify(choice)}, R=${R} from ${rows[0].pos}`).toBeLessThan(TOLERANCE);
            expect(nmse(tiled, decode), `tiled vs decode, R=${R}`).toBeLessThan(TOLERANCE);
          }
        }
      });
    });
  }

  it('a sliding window limits every kernel to keys pos − window + 1 … pos', async () => {
    await gpuCase(ctx, 'attention window', async (s) => {
      const heads = { nHeads: 4, nKvHeads: 2, headDim: 64 };
      const f = fixture(s, heads, kv);
      for (const window of [1, 5, 40]) {
        const shape = { ...f.shape, window };
        for (const rows of [...DECODE_STEPS, ...PREFILL_STEPS]) {
          const R = rows.length;
          const qData = randn(seeded(R + window), R * heads.nHeads * heads.headDim);
          const expected = attentionRef(qData, f.kData, f.vData, rows, shape);
          // The engine's pick (the subgroup kernel where there are subgroups) and the workgroup kernel.
          const choice = attentionShapes(ctx.caps, heads, R).decode;
          const workgroup: DecodeAttentionShape = { ...attentionShapes({ ...ctx.caps, subgroups: false }, heads, R).decode, kernel: 'workgroup' };
          for (const kernel of choice.kernel === 'workgroup' ? [choice] : [choice, workgroup])
            for (const splits of [1, 3]) {
              const actual = await run(s, f, rows, qData, (bufs) => attentionDecode(ctx, 'test.decode', bufs, R, shape, { ...kernel, splits }));
              expect(nmse(actual, expected), `decode ${kernel.kernel} window=${window} R=${R} splits=${splits}`).toBeLessThan(TOLERANCE);
            }
          if (rows.every((r) => r.slot === rows[0].slot)) {
            for (const choice of [SMALL_TILE, ...ROWS_KERNELS(ctx)]) {
              const tiled = await run(s, f, rows, qData, (bufs) => attentionPrefill(ctx, 'test.prefill', bufs, R, shape, choice));
              expect(nmse(tiled, expected), `${JSON.stringify(choice)} window=${window} R=${R}`).toBeLessThan(TOLERANCE);
            }
          }
        }
      }
    });
  });

  // Awkward shapes at the contexts that matter (1 key, a partial block, several blocks and splits),
  // for both cache element types (the f16 loads need no shader-f16, so every adapter runs both),
  // with every decode kernel this adapter can run and the GPU-default shapes forced. Chromium
  // runs the one layout that also takes the GPU's prefill tiles (SwiftShader compiles ~10x slower).
  for (const heads of [
    { nHeads: 4, nKvHeads: 1, headDim: 64 },
    { nHeads: 6, nKvHeads: 2, headDim: 48 },
    { nHeads: 8, nKvHeads: 8, headDim: 48 },
  ].filter((h) => !inBrowser || h.nKvHeads === 2)) {
    for (const cacheKv of ['f16', 'f32'] as const) {
      it(`${heads.nHeads}/${heads.nKvHeads} heads of ${heads.headDim}, ${cacheKv} cache: decode kernels and the tiled prefill at contexts 1, 37, 300`, async () => {
        await gpuCase(ctx, 'attention awkward', async (s) => {
          const f = fixture(s, heads, cacheKv, 304);
          const gpuLike = { ...ctx.caps, cpuLike: false };
          const tolerance = cacheKv === 'f16' ? TOLERANCE_F16 : TOLERANCE;
          const steps: RowDesc[][] = [
            [{ slot: 1, pos: 0 }],
            [
              { slot: 0, pos: 36 },
              { slot: 3, pos: 299 },
            ],
            [{ slot: 2, pos: 299 }],
          ];
          for (const rows of steps) {
            const R = rows.length;
            const qData = randn(seeded(R + rows[0].pos), R * heads.nHeads * heads.headDim);
            const drawn = attentionRef(qData, f.kDrawn, f.vDrawn, rows, f.shape);
            const stored = attentionRef(qData, f.kData, f.vData, rows, f.shape);
            const gpu = attentionShapes(gpuLike, heads, R).decode;
            const lanes = decodeLanes(ctx.caps, heads.headDim);
            const choices: DecodeAttentionShape[] = [{ ...gpu, kernel: 'workgroup' }];
            if (lanes > 0) choices.push({ ...gpu, kernel: 'subgroups', lanes }, { ...gpu, kernel: 'subgroups', lanes, splits: 1, wgSize: 4 * lanes });
            for (const choice of choices) {
              const actual = await run(s, f, rows, qData, (bufs) => attentionDecode(ctx, 'test.decode', bufs, R, f.shape, choice));
              const what = `${JSON.stringify(choice)} R=${R} pos ${rows[0].pos}`;
              expect(nmse(actual, stored), what).toBeLessThan(TOLERANCE);
              expect(nmse(actual, drawn), what).toBeLessThan(tolerance);
            }
          }
          // Small tiles everywhere; the GPU's default tiles for one layout (SwiftShader compiles their workgroup memory slowly).
          const gpuTiles = heads.headDim === 48 && heads.nKvHeads === 2 ? attentionShapes(gpuLike, heads, 37).prefill : null;
          for (const prefill of [SMALL_TILE, ...ROWS_KERNELS(ctx), ...(gpuTiles ? [gpuTiles] : [])])
            for (const rows of [prefillRows(1, 0, 37), prefillRows(2, 263, 37)]) {
              const qData = randn(seeded(rows[0].pos), rows.length * heads.nHeads * heads.headDim);
              const drawn = attentionRef(qData, f.kDrawn, f.vDrawn, rows, f.shape);
              const stored = attentionRef(qData, f.kData, f.vData, rows, f.shape);
              const tiled = await run(s, f, rows, qData, (bufs) => attentionPrefill(ctx, 'test.prefill', bufs, rows.length, f.shape, prefill));
              expect(nmse(tiled, stored), `tiled from ${rows[0].pos}`).toBeLessThan(TOLERANCE);
              expect(nmse(tiled, drawn), `tiled from ${rows[0].pos}`).toBeLessThan(tolerance);
            }
        });
      });
    }
  }

  it('costs what a step must read: each slot’s keys once, q, out and the row table', () => {
    const shape = { nHeads: 8, nKvHeads: 2, headDim: 64, kv: 'f32' as const };
    const decode = attentionCost(shape, [
      { slot: 0, pos: 9 },
      { slot: 1, pos: 19 },
    ]);
    expect(decode.flops).toBe(4 * (10 + 20) * 64 * 8);
    expect(decode.bytes).toBe(2 * 4 * (10 + 20) * 2 * 64 + 2 * 4 * 2 * 8 * 64 + 2 * 8);
    const prefill = attentionCost(shape, prefillRows(0, 10, 5));
    expect(prefill.bytes).toBe(2 * 4 * 15 * 2 * 64 + 2 * 4 * 5 * 8 * 64 + 5 * 8);
    // An f16 cache halves the K/V bytes and nothing else (q, out and partials stay f32).
    const half = attentionCost({ ...shape, kv: 'f16' }, prefillRows(0, 10, 5));
    expect(half.bytes).toBe(2 * 2 * 15 * 2 * 64 + 2 * 4 * 5 * 8 * 64 + 5 * 8);
  });
});

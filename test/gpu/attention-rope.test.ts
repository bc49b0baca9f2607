/**
 * Decode attention with RoPE and the KV-cache store fused in (attention_decode_rope_io.wgsl): the
 * engine's decode path where a step's rows are distinct sequences. Against the two-pass path it
 * replaces — rope_store (tested against the CPU in rope-store.test.ts) then decode attention — on
 * the same inputs: the same output and the same cache bytes, for both decode kernels, one split and
 * several, both RoPE styles, partial rotary dims, per-head q/k norms and both cache element types.
 * The two-pass output is checked against the CPU attention on the cache it wrote, so the fused
 * kernel is tied to the CPU too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { attentionDecode, fusedRopeFits, type AttentionShape } from '../../src/kernels/attention.ts';
import { ropeStore } from '../../src/kernels/rope-store.ts';
import { rowTableData, type RowDesc } from '../../src/kernels/rows.ts';
import { attentionShapes, decodeLanes, kvElement, SUBGROUP_DECODE_SLOTS, type DecodeAttentionShape, type KvElement } from '../../src/kernels/select.ts';
import { ropeFrequencies } from '../../src/model/variants.ts';
import { f16BitsToF32, f32ToF16Bits } from '../../src/f16.ts';
import { testGpu } from './context.ts';
import { gpuCase, nmse, randn, readF32, seeded, submit, type GpuScope } from './harness.ts';
import { attentionRef } from './oracles.ts';

// The same rotation formulas on the same f32 inputs; the head norm's sum runs in another order
// (~1e-7 relative), which moves scores and outputs by as much: NMSE ~1e-13. 1e-9 leaves margin, and
// a wrong position, head, key or cache row gives ≥ 1e-3.
const TOLERANCE = 1e-9;
// A cache element: the same value (bit for bit without head norms), or off by the norm's rounding,
// which an f16 cache may round to the neighbouring f16 (2^-10 relative).
const CACHE_ABS = 3e-6;
const SLOTS = 4;
const MAX_SEQ = 96;

interface Case {
  nHeads: number;
  nKvHeads: number;
  headDim: number;
  ropeDim: number;
  ropeStyle: 'adjacent' | 'neox';
  headNorm: boolean;
}

// Each case with one cache element type (both types across the cases), to keep the pipelines compiled few.
const CASES: (Case & { kv: KvElement })[] = [
  { nHeads: 4, nKvHeads: 2, headDim: 64, ropeDim: 64, ropeStyle: 'adjacent', headNorm: false, kv: 'f32' },
  { nHeads: 5, nKvHeads: 1, headDim: 64, ropeDim: 32, ropeStyle: 'neox', headNorm: true, kv: 'f16' },
  { nHeads: 6, nKvHeads: 3, headDim: 80, ropeDim: 40, ropeStyle: 'adjacent', headNorm: true, kv: 'f32' },
  { nHeads: 8, nKvHeads: 8, headDim: 32, ropeDim: 32, ropeStyle: 'neox', headNorm: false, kv: 'f16' },
];

/** Decode steps: a row at a long context, and rows of distinct slots (the last a padding repeat of the one before). */
const STEPS: RowDesc[][] = [
  [{ slot: 2, pos: 90 }],
  [
    { slot: 0, pos: 0 },
    { slot: 3, pos: 77 },
    { slot: 1, pos: 33 },
    { slot: 1, pos: 33 },
  ],
];

async function readCache(ctx: GpuContext, buffer: GPUBuffer, n: number, kv: KvElement): Promise<Float32Array> {
  if (kv === 'f32') return readF32(ctx, buffer, n);
  return Float32Array.from(new Uint16Array((await readF32(ctx, buffer, n / 2)).buffer), f16BitsToF32);
}

describe('decode attention with RoPE and the cache store fused in', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  for (const c of CASES) {
    const name = `${c.nHeads}/${c.nKvHeads} heads of ${c.headDim}, ${c.ropeStyle} RoPE over ${c.ropeDim}${c.headNorm ? ', q/k norms' : ''}, ${c.kv} cache`;
    it(`${name}: the output and the stored key/value of rope_store + attention`, async () => {
      await gpuCase(ctx, 'fused rope attention', async (s) => {
        await checkCase(s, c, c.kv);
      });
    });
  }

  it('the CPU adapters’ default for one row fuses RoPE where it fits', () => {
    const heads = { nHeads: 32, nKvHeads: 8, headDim: 64 };
    expect(fusedRopeFits(ctx.caps, heads, attentionShapes(ctx.caps, heads, 1).decode)).toBe(true);
    expect(kvElement(ctx.caps)).toBe(ctx.caps.shaderF16 ? 'f16' : 'f32');
  });
});

async function checkCase(s: GpuScope, c: Case, kv: KvElement): Promise<void> {
  const ctx = s.ctx;
  const kvDim = c.nKvHeads * c.headDim;
  const qDim = c.nHeads * c.headDim;
  const width = qDim + 2 * kvDim;
  const shape: AttentionShape = { nHeads: c.nHeads, nKvHeads: c.nKvHeads, headDim: c.headDim, maxSeq: MAX_SEQ, kv };
  const invFreq = s.upload('invFreq', ropeFrequencies(c.ropeDim, 10000));
  const rand = seeded(c.headDim * 31 + c.nHeads);
  const headNorm = c.headNorm ? { q: s.upload('qNorm', randn(rand, c.headDim, 0.5)), k: s.upload('kNorm', randn(rand, c.headDim, 0.5)), eps: 1e-6 } : undefined;
  // A cache of random keys and values at every position (a row's own position is overwritten by the step).
  const elements = SLOTS * MAX_SEQ * kvDim;
  const kInit = randn(rand, elements);
  const vInit = randn(rand, elements);
  const asBytes = (x: Float32Array) => (kv === 'f32' ? x : Uint16Array.from(x, f32ToF16Bits));
  const gpuLike = { ...ctx.caps, cpuLike: false };
  const lanes = decodeLanes(ctx.caps, c.headDim);
  for (const rows of STEPS) {
    const R = rows.length;
    const qkvData = randn(rand, R * width);
    // A padding row repeats its row exactly: the same token, so the same projection.
    rows.forEach((row, r) => {
      const same = rows.findIndex((o) => o.slot === row.slot && o.pos === row.pos);
      if (same < r) qkvData.copyWithin(r * width, same * width, (same + 1) * width);
    });
    const rowTable = s.upload('rows', rowTableData(rows));
    const qkv = s.upload('qkv', qkvData);
    const gpu = attentionShapes(gpuLike, shape, R).decode;
    // This adapter's pick; the workgroup kernel split 3 ways; the subgroup kernel as GPUs run it (several teams, one split).
    const choices: DecodeAttentionShape[] = [attentionShapes(ctx.caps, shape, R).decode, { ...gpu, kernel: 'workgroup', splits: 3 }];
    // (Where this adapter's subgroup holds too many of the group's slices per lane, e.g. SwiftShader's 4 lanes for 5 heads of 64, the subgroup kernel cannot run.)
    const group = c.nHeads / c.nKvHeads;
    if (lanes > 0 && group * (c.headDim / 4 / lanes) <= SUBGROUP_DECODE_SLOTS)
      choices.push({ ...gpu, kernel: 'subgroups', lanes, splits: 1, wgSize: 4 * lanes });
    for (const choice of choices) {
      const what = `${JSON.stringify(choice)} rows ${JSON.stringify(rows)}`;
      // Two passes: rope_store, then attention on the rotated queries.
      const kTwo = s.upload('kTwo', asBytes(kInit));
      const vTwo = s.upload('vTwo', asBytes(vInit));
      const q = s.keep(storageBuffer(ctx.device, 'q', 4 * R * qDim));
      const outTwo = s.keep(storageBuffer(ctx.device, 'outTwo', 4 * R * qDim));
      const rope = await ropeStore(ctx, 'test.rope', { qkv, rows: rowTable, invFreq, q, kCache: kTwo, vCache: vTwo, headNorm }, R, {
        ...c,
        slots: SLOTS,
        maxSeq: MAX_SEQ,
        kv,
      });
      const twoPass = await attentionDecode(ctx, 'test.twoPass', { q, kCache: kTwo, vCache: vTwo, rows: rowTable, out: outTwo }, R, shape, choice);
      submit(ctx, s.track([rope, ...twoPass]));
      // Fused.
      const kOne = s.upload('kOne', asBytes(kInit));
      const vOne = s.upload('vOne', asBytes(vInit));
      const outOne = s.keep(storageBuffer(ctx.device, 'outOne', 4 * R * qDim));
      const fused = await attentionDecode(ctx, 'test.fused', { q, kCache: kOne, vCache: vOne, rows: rowTable, out: outOne }, R, shape, choice, {
        qkv,
        invFreq,
        headNorm,
        ropeDim: c.ropeDim,
        ropeStyle: c.ropeStyle,
      });
      submit(ctx, s.track(fused));
      const [two, one] = [await readF32(ctx, outTwo, R * qDim), await readF32(ctx, outOne, R * qDim)];
      const [k2, v2, k1, v1] = [
        await readCache(ctx, kTwo, elements, kv),
        await readCache(ctx, vTwo, elements, kv),
        await readCache(ctx, kOne, elements, kv),
        await readCache(ctx, vOne, elements, kv),
      ];
      // The two-pass output is the CPU's attention over the cache it wrote and the queries it rotated.
      const expected = attentionRef(await readF32(ctx, q, R * qDim), k2, v2, rows, shape);
      expect(nmse(two, expected), `two-pass vs CPU, ${what}`).toBeLessThan(TOLERANCE);
      expect(nmse(one, two), `fused vs two-pass, ${what}`).toBeLessThan(TOLERANCE);
      const f16Slack = kv === 'f16' ? 2 ** -10 : 0;
      for (const [got, want, label] of [
        [k1, k2, 'K'],
        [v1, v2, 'V'],
      ] as const) {
        const bad = want.findIndex((w, i) => !(Math.abs(got[i] - w) <= CACHE_ABS + f16Slack * Math.abs(w)));
        expect(bad, `${label} cache [${bad}]: ${got[bad]} vs ${want[bad]}, ${what}`).toBe(-1);
      }
    }
  }
}

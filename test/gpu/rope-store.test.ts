import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { ropeStore, type RopeStoreDims } from '../../src/kernels/rope-store.ts';
import { rowTableData, type RowDesc } from '../../src/kernels/rows.ts';
import { rope as ropeModelRef } from '../../src/model/reference.ts';
import { ropeFrequencies } from '../../src/model/variants.ts';
import type { KvElement } from '../../src/kernels/select.ts';
import { f16BitsToF32 } from '../../src/f16.ts';
import { testGpu } from './context.ts';
import { gpuCase, maxAbsError, nmse, randn, readF32, seeded, submit, type GpuScope } from './harness.ts';
import { ropeRef } from './oracles.ts';

// The GPU angle is the same f32 as the CPU's (one correctly rounded multiply); cos/sin come from
// the kernel's own range reduction + polynomials (~1e-7 absolute up to 10^5 rad), the rotation
// adds a few f32 roundings. So |GPU − CPU| ≤ ~5e-7 per element for |x| ~ 1 at any position:
// 3e-6 bounds it with margin and sits well under the 1e-5 target. The optional head norm adds a
// sum of ≤ 80 squares and an inverseSqrt (~1e-7 relative).
const MAX_ABS = 3e-6;
// An f16 cache rounds each stored value to a neighbouring f16 (pack2x16float): relative error ≤ 2^-10.
const F16_RELATIVE = 2 ** -10;
const SLOTS = 3;
const MAX_SEQ = 40;

interface Case {
  R: number;
  nHeads: number;
  nKvHeads: number;
  headDim: number;
  ropeDim: number;
  ropeTheta: number;
  ropeStyle: 'adjacent' | 'neox';
}

const CASES: Case[] = [
  { R: 1, nHeads: 4, nKvHeads: 4, headDim: 8, ropeDim: 8, ropeTheta: 10000, ropeStyle: 'adjacent' },
  { R: 3, nHeads: 2, nKvHeads: 1, headDim: 64, ropeDim: 64, ropeTheta: 1e6, ropeStyle: 'neox' },
  { R: 17, nHeads: 6, nKvHeads: 3, headDim: 80, ropeDim: 40, ropeTheta: 10000, ropeStyle: 'adjacent' },
  { R: 17, nHeads: 5, nKvHeads: 1, headDim: 64, ropeDim: 32, ropeTheta: 500000, ropeStyle: 'neox' },
];

/** Rows of random distinct (slot, pos); one lies outside the cache (stores no K/V, still rotates q). */
function randomRows(rand: () => number, R: number): RowDesc[] {
  const taken = new Set<number>();
  return Array.from({ length: R }, (_, r) => {
    if (r === 1) return { slot: SLOTS, pos: 3 };
    let pos = r === 0 ? MAX_SEQ - 1 : Math.floor(rand() * MAX_SEQ);
    while (taken.has((r % SLOTS) * MAX_SEQ + pos)) pos = (pos + 1) % MAX_SEQ;
    taken.add((r % SLOTS) * MAX_SEQ + pos);
    return { slot: r % SLOTS, pos };
  });
}

/** Per-head RMSNorm in place, as llama.cpp applies Qwen3's q_norm/k_norm. */
function headNormRef(x: Float32Array, heads: number, headDim: number, weight: Float32Array, eps: number): void {
  for (let h = 0; h < heads; h++) {
    const v = x.subarray(h * headDim, (h + 1) * headDim);
    const ss = v.reduce((a, b) => a + b * b, 0);
    const scale = 1 / Math.sqrt(ss / headDim + eps);
    for (let i = 0; i < headDim; i++) v[i] = weight[i] * (scale * v[i]);
  }
}

/** Every element within MAX_ABS (f32 cache) or MAX_ABS + 2^-10 relative (f16 cache); zeros (unwritten) exactly. */
function expectCache(got: Float32Array, want: Float32Array, kv: KvElement, what: string): void {
  const relative = kv === 'f16' ? F16_RELATIVE : 0;
  const bad = Array.from(want).findIndex((w, i) => (w === 0 ? got[i] !== 0 : !(Math.abs(got[i] - w) <= MAX_ABS + relative * Math.abs(w))));
  expect(bad, `${what}[${bad}]: ${got[bad]} vs ${want[bad]}`).toBe(-1);
}

async function readCache(ctx: GpuContext, buffer: GPUBuffer, n: number, kv: KvElement): Promise<Float32Array> {
  if (kv === 'f32') return readF32(ctx, buffer, n);
  return Float32Array.from(new Uint16Array((await readF32(ctx, buffer, n / 2)).buffer), f16BitsToF32);
}

async function runCase(s: GpuScope, c: Case, rows: RowDesc[], data: Float32Array, norm?: { q: Float32Array; k: Float32Array }, kv: KvElement = 'f32') {
  const ctx = s.ctx;
  const qDim = c.nHeads * c.headDim;
  const kvDim = c.nKvHeads * c.headDim;
  const cacheSize = SLOTS * MAX_SEQ * kvDim;
  const q = s.keep(storageBuffer(ctx.device, 'q', 4 * c.R * qDim));
  const elementBytes = kv === 'f16' ? 2 : 4;
  const kCache = s.keep(storageBuffer(ctx.device, 'kCache', elementBytes * cacheSize));
  const vCache = s.keep(storageBuffer(ctx.device, 'vCache', elementBytes * cacheSize));
  const shape: RopeStoreDims = { ...c, slots: SLOTS, maxSeq: MAX_SEQ, kv };
  const headNorm = norm && { q: s.upload('qNorm', norm.q), k: s.upload('kNorm', norm.k), eps: 1e-6 };
  const invFreq = s.upload('invFreq', ropeFrequencies(c.ropeDim, c.ropeTheta));
  const d = await ropeStore(
    ctx,
    'test.ropeStore',
    { qkv: s.upload('qkv', data), rows: s.upload('rows', rowTableData(rows)), invFreq, q, kCache, vCache, headNorm },
    c.R,
    shape,
  );
  submit(ctx, [s.track(d)]);
  return { q: await readF32(ctx, q, c.R * qDim), k: await readCache(ctx, kCache, cacheSize, kv), v: await readCache(ctx, vCache, cacheSize, kv) };
}

/** The CPU's q, kCache and vCache for the same step. */
function expected(c: Case, rows: RowDesc[], data: Float32Array, norm?: { q: Float32Array; k: Float32Array }) {
  const qDim = c.nHeads * c.headDim;
  const kvDim = c.nKvHeads * c.headDim;
  const width = qDim + 2 * kvDim;
  const q = new Float32Array(c.R * qDim);
  const k = new Float32Array(c.R * kvDim);
  rows.forEach((_, r) => {
    q.set(data.subarray(r * width, r * width + qDim), r * qDim);
    k.set(data.subarray(r * width + qDim, r * width + qDim + kvDim), r * kvDim);
    if (norm) {
      headNormRef(q.subarray(r * qDim, (r + 1) * qDim), c.nHeads, c.headDim, norm.q, 1e-6);
      headNormRef(k.subarray(r * kvDim, (r + 1) * kvDim), c.nKvHeads, c.headDim, norm.k, 1e-6);
    }
  });
  ropeRef(q, rows, c.nHeads, c);
  ropeRef(k, rows, c.nKvHeads, c);
  const kCache = new Float32Array(SLOTS * MAX_SEQ * kvDim);
  const vCache = new Float32Array(SLOTS * MAX_SEQ * kvDim);
  rows.forEach(({ slot, pos }, r) => {
    if (slot >= SLOTS || pos >= MAX_SEQ) return;
    kCache.set(k.subarray(r * kvDim, (r + 1) * kvDim), (slot * MAX_SEQ + pos) * kvDim);
    vCache.set(data.subarray(r * width + qDim + kvDim, (r + 1) * width), (slot * MAX_SEQ + pos) * kvDim);
  });
  return { q, k: kCache, v: vCache };
}

describe('rope_store (RoPE + KV-cache store)', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  for (const c of CASES) {
    for (const [withNorm, kv] of [
      [false, 'f32'],
      [true, 'f32'],
      [false, 'f16'],
      [true, 'f16'],
    ] as const) {
      it(`${c.ropeStyle} R=${c.R} heads=${c.nHeads}/${c.nKvHeads} headDim=${c.headDim} ropeDim=${c.ropeDim}${withNorm ? ', per-head q/k norm' : ''}, ${kv} cache`, async () => {
        await gpuCase(ctx, 'rope_store', async (s) => {
          const rand = seeded(c.R * 31 + c.headDim + (withNorm ? 7 : 0));
          const rows = randomRows(rand, c.R);
          const data = randn(rand, c.R * (c.nHeads + 2 * c.nKvHeads) * c.headDim);
          const norm = withNorm ? { q: randn(rand, c.headDim), k: randn(rand, c.headDim) } : undefined;
          const got = await runCase(s, c, rows, data, norm, kv);
          const want = expected(c, rows, data, norm);
          expect(maxAbsError(got.q, want.q)).toBeLessThan(MAX_ABS);
          expectCache(got.k, want.k, kv, 'k');
          // v is a copy (rounded to f16 in an f16 cache); nothing is written for the row outside the cache
          if (kv === 'f32') expect(got.v).toEqual(want.v);
          else expectCache(got.v, want.v, kv, 'v');
          if (!withNorm) for (let i = c.ropeDim; i < c.headDim; i++) expect(got.q[i]).toBe(data[i]);
        });
      });
    }
  }

  it('agrees with the model reference (f64 angles) at short positions', async () => {
    await gpuCase(ctx, 'rope_store vs model reference', async (s) => {
      const c: Case = { R: 17, nHeads: 2, nKvHeads: 1, headDim: 64, ropeDim: 64, ropeTheta: 10000, ropeStyle: 'adjacent' };
      const rows = Array.from({ length: 17 }, (_, pos) => ({ slot: 0, pos }));
      const data = randn(seeded(5), 17 * 4 * 64);
      const got = await runCase(s, c, rows, data);
      const want = new Float32Array(17 * 128);
      rows.forEach(({ pos }, r) => {
        want.set(data.subarray(r * 256, r * 256 + 128), r * 128);
        ropeModelRef(want.subarray(r * 128, (r + 1) * 128), pos, 2, c);
      });
      // at pos < 17 the f32 angle differs from the f64 one by < 1e-6 rad
      expect(nmse(got.q, want)).toBeLessThan(1e-11);
    });
  });
});

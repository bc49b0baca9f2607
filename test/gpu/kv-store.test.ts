import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { kvStore } from '../../src/kernels/kv-store.ts';
import { rowTableData, type RowDesc } from '../../src/kernels/rows.ts';
import { testGpu } from './context.ts';
import { gpuCase, randn, readF32, seeded, submit } from './harness.ts';

describe('kv_store', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  // A copy: the cache must hold exactly the rows' values at their (slot, pos), zeros elsewhere.
  for (const [kvDim, rows] of [
    [80, [{ slot: 1, pos: 0 }]],
    [172, [{ slot: 2, pos: 30 }, { slot: 0, pos: 199 }, { slot: 1, pos: 1 }]],
    [64, Array.from({ length: 17 }, (_, i) => ({ slot: 3, pos: 183 + i }))],
    [8, [{ slot: 0, pos: 5 }, { slot: 4, pos: 0 }, { slot: 1, pos: 200 }]], // the last two are outside the cache: skipped
  ] as [number, RowDesc[]][]) {
    it(`writes ${rows.length} rows of ${kvDim} at their slots and positions`, async () => {
      await gpuCase(ctx, 'kv_store', async (s) => {
        const cache = { slots: 4, maxSeq: 200, kvDim };
        const R = rows.length;
        const rand = seeded(kvDim + R);
        const k = randn(rand, R * kvDim);
        const v = randn(rand, R * kvDim);
        const size = cache.slots * cache.maxSeq * kvDim;
        const kCache = s.keep(storageBuffer(ctx.device, 'kCache', 4 * size));
        const vCache = s.keep(storageBuffer(ctx.device, 'vCache', 4 * size));
        const d = await kvStore(ctx, 'test.kvStore', { k: s.upload('k', k), v: s.upload('v', v), rows: s.upload('rows', rowTableData(rows)), kCache, vCache }, R, cache);
        submit(ctx, [s.track(d)]);
        const expectedK = new Float32Array(size);
        const expectedV = new Float32Array(size);
        rows.forEach(({ slot, pos }, r) => {
          if (slot >= cache.slots || pos >= cache.maxSeq) return;
          const at = (slot * cache.maxSeq + pos) * kvDim;
          expectedK.set(k.subarray(r * kvDim, (r + 1) * kvDim), at);
          expectedV.set(v.subarray(r * kvDim, (r + 1) * kvDim), at);
        });
        expect(await readF32(ctx, kCache, size)).toEqual(expectedK);
        expect(await readF32(ctx, vCache, size)).toEqual(expectedV);
      });
    });
  }
});

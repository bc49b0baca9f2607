import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { rope, ropeFrequencies, type RopeConfig } from '../../src/kernels/rope.ts';
import { rowTableData, type RowDesc } from '../../src/kernels/rows.ts';
import { rope as ropeModelRef } from '../../src/model/reference.ts';
import { testGpu } from './context.ts';
import { gpuCase, maxAbsError, nmse, randn, readF32, seeded, submit } from './harness.ts';
import { ropeRef } from './oracles.ts';

// The GPU angle is the same f32 as the CPU's (one correctly rounded multiply); cos/sin come from
// the kernel's own range reduction + polynomials (~1e-7 absolute up to 10^5 rad), the rotation
// adds a few f32 roundings. So |GPU − CPU| ≤ ~5e-7 per element for |x| ~ 1 at any position:
// 3e-6 bounds it with margin and sits well under the 1e-5 target.
const MAX_ABS = 3e-6;

interface Case {
  R: number;
  nHeads: number;
  cfg: RopeConfig;
}

const CASES: Case[] = [
  { R: 1, nHeads: 4, cfg: { headDim: 8, ropeDim: 8, ropeTheta: 10000, ropeStyle: 'adjacent' } },
  { R: 3, nHeads: 2, cfg: { headDim: 64, ropeDim: 64, ropeTheta: 1e6, ropeStyle: 'neox' } },
  { R: 17, nHeads: 3, cfg: { headDim: 80, ropeDim: 40, ropeTheta: 10000, ropeStyle: 'adjacent' } },
  { R: 17, nHeads: 5, cfg: { headDim: 64, ropeDim: 32, ropeTheta: 500000, ropeStyle: 'neox' } },
];

function randomRows(rand: () => number, R: number, maxPos: number): RowDesc[] {
  return Array.from({ length: R }, (_, r) => ({ slot: r % 3, pos: r === 0 ? maxPos : Math.floor(rand() * maxPos) }));
}

describe('rope', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  it('uses theta^(−2i/ropeDim) rounded once to f32', () => {
    const f = ropeFrequencies(64, 10000);
    expect(f.length).toBe(32);
    expect(f[0]).toBe(1);
    expect(f[31]).toBe(Math.fround(10000 ** (-62 / 64)));
  });

  for (const { R, nHeads, cfg } of CASES) {
    for (const maxPos of [4096, 32768]) {
      it(`${cfg.ropeStyle} R=${R} heads=${nHeads} headDim=${cfg.headDim} ropeDim=${cfg.ropeDim} pos ≤ ${maxPos}`, async () => {
        await gpuCase(ctx, 'rope', async (s) => {
          const rand = seeded(R * 31 + cfg.headDim + maxPos);
          const rows = randomRows(rand, R, maxPos);
          const data = randn(rand, R * nHeads * cfg.headDim);
          const x = s.upload('x', data);
          submit(ctx, [s.track(await rope(ctx, 'test.rope', x, s.upload('rows', rowTableData(rows)), R, nHeads, cfg))]);
          const expected = data.slice();
          ropeRef(expected, rows, nHeads, cfg);
          const actual = await readF32(ctx, x, data.length);
          expect(maxAbsError(actual, expected)).toBeLessThan(MAX_ABS);
          // dims past ropeDim pass through untouched
          for (let i = cfg.ropeDim; i < cfg.headDim; i++) expect(actual[i]).toBe(data[i]);
        });
      });
    }
  }

  it('agrees with the model reference (f64 angles) at short positions', async () => {
    await gpuCase(ctx, 'rope vs model reference', async (s) => {
      const cfg: RopeConfig = { headDim: 64, ropeDim: 64, ropeTheta: 10000, ropeStyle: 'adjacent' };
      const rows = Array.from({ length: 17 }, (_, pos) => ({ slot: 0, pos }));
      const data = randn(seeded(5), 17 * 2 * 64);
      const x = s.upload('x', data);
      submit(ctx, [s.track(await rope(ctx, 'test.rope', x, s.upload('rows', rowTableData(rows)), 17, 2, cfg))]);
      const expected = data.slice();
      rows.forEach(({ pos }, r) => ropeModelRef(expected.subarray(r * 128, (r + 1) * 128), pos, 2, cfg));
      // at pos < 17 the f32 angle differs from the f64 one by < 1e-6 rad
      expect(nmse(await readF32(ctx, x, data.length), expected)).toBeLessThan(1e-11);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { add, swiglu } from '../../src/kernels/elementwise.ts';
import { swiglu as swigluRef } from '../../src/model/reference.ts';
import { testGpu } from './context.ts';
import { gpuCase, nmse, randn, readF32, seeded, submit } from './harness.ts';

// f32 elementwise ops: each GPU value is within a few ulp of the f64 reference (exp is specified
// to 3 + 2|x| ulp), so NMSE ≤ 1e-12 leaves two orders of margin above that noise.
const TOLERANCE = 1e-12;

describe('elementwise kernels', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  for (const [R, hiddenDim] of [
    [1, 172],
    [3, 257],
    [17, 64],
  ] as const) {
    it(`swiglu (${R}, ${hiddenDim}), out of place and in place`, async () => {
      await gpuCase(ctx, 'swiglu', async (s) => {
        const rand = seeded(R * 1000 + hiddenDim);
        const n = R * hiddenDim;
        const gateData = randn(rand, n, 4);
        const upData = randn(rand, n);
        const gate = s.upload('gate', gateData);
        const up = s.upload('up', upData);
        const out = s.keep(storageBuffer(ctx.device, 'out', 4 * n));
        submit(ctx, [s.track(await swiglu(ctx, 'test.swiglu', gate, up, out, R, hiddenDim))]);
        const expected = new Float32Array(n);
        swigluRef(expected, gateData, upData);
        expect(nmse(await readF32(ctx, out, n), expected)).toBeLessThan(TOLERANCE);
        submit(ctx, [s.track(await swiglu(ctx, 'test.swigluInPlace', gate, up, gate, R, hiddenDim))]);
        expect(nmse(await readF32(ctx, gate, n), expected)).toBeLessThan(TOLERANCE);
      });
    });
  }

  it('add is exact: a += b over awkward sizes', async () => {
    await gpuCase(ctx, 'add', async (s) => {
      for (const [R, features] of [
        [1, 172],
        [17, 33],
      ] as const) {
        const rand = seeded(features);
        const n = R * features;
        const aData = randn(rand, n);
        const bData = randn(rand, n);
        const a = s.upload('a', aData);
        submit(ctx, [s.track(await add(ctx, 'test.add', a, s.upload('b', bData), R, features))]);
        const expected = aData.map((v, i) => Math.fround(v + bData[i]));
        expect(await readF32(ctx, a, n)).toEqual(expected);
      }
    });
  });
});

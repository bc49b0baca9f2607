import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { swiglu } from '../../src/kernels/elementwise.ts';
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

  for (const [R, hiddenDim] of [[1, 172], [3, 257], [17, 64]] as const) {
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
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { rmsnorm } from '../../src/kernels/rmsnorm.ts';
import { rmsnorm as rmsnormRef } from '../../src/model/reference.ts';
import { testGpu } from './context.ts';
import { gpuCase, nmse, randn, readF32, seeded, submit } from './harness.ts';

// The f32 sum of ≤ 4096 squares is off by ~1e-7 relative (a few ulp, tree-ordered), inverseSqrt
// by 2 ulp: per-element errors ~1e-7, NMSE ~1e-14. 1e-11 catches any real mistake (a wrong
// element or a mis-scaled row gives NMSE ≥ 1e-4).
const TOLERANCE = 1e-11;

for (const variant of ['default', 'no subgroups'] as const) {
  describe(`rmsnorm (${variant})`, () => {
    let ctx: GpuContext;
    beforeAll(async () => {
      ctx = await testGpu(variant === 'default' ? undefined : new Set(['subgroups']));
    });
    afterAll(() => ctx?.destroy());

    for (const [R, dim] of [
      [1, 172],
      [3, 64],
      [17, 1000],
      [2, 4096],
    ] as const) {
      it(`(${R}, ${dim}) matches the CPU`, async () => {
        await gpuCase(ctx, 'rmsnorm', async (s) => {
          const rand = seeded(R * 7919 + dim);
          const xData = randn(rand, R * dim, 3);
          const weightData = randn(rand, dim);
          const out = s.keep(storageBuffer(ctx.device, 'out', 4 * R * dim));
          const eps = 1e-5;
          submit(ctx, [s.track(await rmsnorm(ctx, 'test.rmsnorm', s.upload('x', xData), s.upload('weight', weightData), out, R, dim, eps))]);
          const expected = new Float32Array(R * dim);
          for (let r = 0; r < R; r++) {
            rmsnormRef(expected.subarray(r * dim, (r + 1) * dim), xData.subarray(r * dim, (r + 1) * dim), weightData, eps);
          }
          expect(nmse(await readF32(ctx, out, R * dim), expected)).toBeLessThan(TOLERANCE);
        });
      });
    }

    it('uses the subgroup reduction exactly when the device has subgroups', () => {
      expect(ctx.caps.subgroups).toBe(variant === 'default' && ctx.adapter.features.has('subgroups'));
    });
  });
}

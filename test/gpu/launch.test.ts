import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { GpuTimer } from '../../src/gpu/timer.ts';
import { launchChains, measureLaunch } from '../../src/measure/launch.ts';
import { testGpu } from './context.ts';

describe('launch roof', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  it('times dependent dispatches, passes and a readback round trip, after checking every chained dispatch ran', async () => {
    const timer = GpuTimer.create(ctx.device, 8);
    try {
      const l = await measureLaunch(ctx, timer, { warmup: 1, minReps: 3, maxReps: 3, minDurationMs: 0 });
      const { short, long } = launchChains(ctx.caps.cpuLike);
      for (const key of ['dispatch_us', 'pass_us', 'roundtrip_us'] as const) {
        const m = l.measurements[key];
        expect(l[key]).toBe(m.value);
        expect(m.value).toBeGreaterThan(0);
        expect(m.min).toBeLessThanOrEqual(m.value);
        expect(m.max).toBeGreaterThanOrEqual(m.value);
        expect(m.n).toBe(3);
      }
      expect(l.measurements.dispatch_us.lengths).toEqual([short, long]);
      expect(l.measurements.dispatch_us.clock).toBe(ctx.caps.timestampQuery ? 'gpu-timestamp' : 'host');
      expect(l.measurements.pass_us.clock).toBe('host');
      expect(l.measurements.roundtrip_us.lengths).toEqual([1]);
    } finally {
      timer?.destroy();
    }
  });
});

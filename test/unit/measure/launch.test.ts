import { describe, expect, it } from 'vitest';
import { launchChains, slopeMeasurement } from '../../../src/measure/launch.ts';
import { decodeWaterfall, type LatencyRow, type Roofs } from '../../../src/measure/latency-summary.ts';

describe('launch roof arithmetic', () => {
  it("takes the difference of each length's p10 (medians beside it): (long − short) ms × 1000 / (long − short dispatches) µs", () => {
    // 16 vs 256 dispatches; per pair 0.1 vs 1.06 → 4 µs, 0.1 vs 0.82 → 3 µs, 0.2 vs 1.4 → 5 µs.
    const m = slopeMeasurement([0.1, 0.1, 0.2], [1.06, 0.82, 1.4], 16, 256, 'gpu-timestamp');
    // p10 (numpy linear): short 0.1, long 0.82 + 0.2 · 0.24 = 0.868 → 768 µs / 240 = 3.2 µs; medians 0.1 and 1.06 → 4 µs.
    expect(m.value).toBeCloseTo(3.2, 9);
    expect(m.median).toBeCloseTo(4, 9);
    expect(m.min).toBeCloseTo(3, 9);
    expect(m.max).toBeCloseTo(5, 9);
    expect(m).toMatchObject({ n: 3, clock: 'gpu-timestamp', lengths: [16, 256] });
  });

  it('is not pulled to the floor by pairs whose short run was delayed (a loaded machine)', () => {
    // Ten pairs at 4 µs a dispatch; in two the short run was preempted for 2 ms, so its slope reads ≤ 0.
    const short = [0.1, 0.1, 2.1, 0.1, 0.1, 0.1, 2.1, 0.1, 0.1, 0.1];
    const long = short.map((s) => (s > 1 ? 0.1 : s) + 0.96);
    const m = slopeMeasurement(short, long, 16, 256, 'host');
    expect(m.min).toBe(0.01);
    expect(m.value).toBeCloseTo(4, 9);
    expect(m.median).toBeCloseTo(4, 9);
  });

  it('floors a slope the clock cannot resolve at 0.01 µs and refuses unpaired samples', () => {
    expect(slopeMeasurement([0.5], [0.4], 16, 256, 'host').value).toBe(0.01);
    expect(() => slopeMeasurement([0.1], [], 16, 256, 'host')).toThrow(RangeError);
    expect(() => slopeMeasurement([0.1], [0.2], 16, 16, 'host')).toThrow(RangeError);
  });

  it('uses shorter chains on CPU adapters', () => {
    expect(launchChains(true).long).toBeLessThan(launchChains(false).long);
    expect(launchChains(false)).toEqual({ short: 16, long: 256 });
  });
});

describe('decode waterfall', () => {
  const roofs: Roofs = { read_bandwidth_gbps: 1000, f32_gflops: 10000, matmul_f32_gflops: 5000, launch: { dispatch_us: 4, roundtrip_us: 50 } };
  const row = (tpot: number, gpu: number | null) =>
    ({ prompt_tokens: 32, tpot: { p50: tpot }, gpu_decode_ms: gpu, decode_bytes_per_token: 5e8 }) as unknown as LatencyRow;

  it('splits TPOT into launch floor, stream at the read roof, kernel inefficiency and host time', () => {
    // 100 dispatches × 4 µs = 0.4 ms; 0.5 GB at 1000 GB/s = 0.5 ms; GPU 1.2 ms → kernels 0.3 ms; host 1.5 − 1.2 = 0.3 ms.
    const w = decodeWaterfall(row(1.5, 1.2), roofs, 100)!;
    expect(w.launch_ms).toBeCloseTo(0.4, 12);
    expect(w.stream_ms).toBeCloseTo(0.5, 12);
    expect(w.kernel_ms).toBeCloseTo(0.3, 12);
    expect(w.host_ms).toBeCloseTo(0.3, 12);
    expect(w.readback_ms).toBeCloseTo(0.05, 12);
    expect(w.launch_ms + w.stream_ms + w.kernel_ms + w.host_ms).toBeCloseTo(w.tpot_ms, 12);
  });

  it('reads no kernel inefficiency when the GPU time is within the floors, and is absent without GPU time or a launch roof', () => {
    const fits = decodeWaterfall(row(1.0, 0.95), roofs, 100)!;
    expect(fits.kernel_ms).toBeCloseTo(0.05, 12);
    expect(fits).not.toHaveProperty('floors_exceed_gpu');
    // 0.4 + 0.5 ms of floors against 0.8 ms of GPU time: the launch probe over-read, and the row says so.
    const w = decodeWaterfall(row(1.0, 0.8), roofs, 100)!;
    expect(w.kernel_ms).toBe(0);
    expect(w.floors_exceed_gpu).toBe(true);
    expect(decodeWaterfall(row(1.0, null), roofs, 100)).toBeNull();
    expect(decodeWaterfall(row(1.0, 0.8), { ...roofs, launch: undefined }, 100)).toBeNull();
  });
});

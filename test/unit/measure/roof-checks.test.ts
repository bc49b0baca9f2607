import { describe, expect, it } from 'vitest';
import {
  READ_OF_B2B_LIMIT,
  ROOF_SPREAD_LIMIT,
  roofConsistency,
  readRoofDrift,
  roofSpread,
  roofWindow,
  sustainedRoof,
} from '../../../src/measure/roof-checks.ts';

const steady = (label: string, value: number) => ({ label, value, unit: 'GB/s', samples: [value * 0.95, value, value * 1.02] });

describe('roofs as sustained maxima', () => {
  // Repetitions long enough that 5 of them last 250 ms: 1 GB at ~10 GB/s takes ~100 ms.
  const long = 1e9;
  it('takes the best median of consecutive samples: at least 5, three of which must reach it', () => {
    // Windows of 5 over 3 1 4 10 5 9 2 6: medians 4, 5, 5, 6 → 6.
    expect(sustainedRoof([3, 1, 4, 10, 5, 9, 2, 6], long)).toBe(6);
    // Slow outliers (a shared machine) do not pull it down as they pull the median of all.
    expect(sustainedRoof([10, 10.2, 9.9, 10.1, 3, 2.5, 10, 4], long)).toBe(10);
    // Fast samples one at a time between slow ones (a burst) are not a sustained rate: an upper decile would read ~14.
    expect(sustainedRoof([9, 14, 9.2, 9.1, 13.8, 9, 9.3, 14.2, 9.1, 9], long)).toBe(9.3);
    // Order matters: the same values with the fast ones together are sustained.
    expect(sustainedRoof([9, 9.2, 9.1, 9, 9.3, 9.1, 9, 14, 13.8, 14.2], long)).toBe(13.8);
    // Five or fewer samples: their median.
    expect(sustainedRoof([4, 1, 3], long)).toBe(3);
  });

  it('makes the window last 250 ms: short repetitions need more of them, and a short burst is no roof', () => {
    // 128 MiB at ~9.5 GB/s takes 14 ms: 18 repetitions make 250 ms.
    const mib128 = 128 * 2 ** 20;
    expect(roofWindow([9.5, 9.5, 9.5], mib128)).toBe(18);
    expect(roofWindow([9.5], 1e9)).toBe(5);
    // A lavapipe read roof (measured): steady ~9.5 GB/s with a burst of 12–13.5 over a few repetitions.
    // The best median of 5 read 12.6 there; over 250 ms the burst is a minority.
    const burst = [
      9.6, 9.4, 9.5, 9.4, 9.2, 9.3, 9.5, 9.4, 9.1, 9.3, 7.6, 12.8, 9.0, 9.3, 10.9, 11.8, 13.0, 12.6, 8.3, 13.5, 6.8, 8.5, 9.0, 9.5, 9.5, 9.6, 9.1, 9.3, 9.5,
    ];
    expect(sustainedRoof(burst, 1e9)).toBeCloseTo(12.6, 9);
    expect(sustainedRoof(burst, mib128)).toBeCloseTo(9.5, 9);
    // Repetitions that together last under 250 ms (a GPU's): the median of all.
    expect(sustainedRoof([400, 410, 405, 398, 402, 395, 408], mib128)).toBe(402);
  });

  it('measures the spread as (max − min) / median', () => {
    expect(roofSpread([7.2, 11.3, 23.1])).toBeCloseTo((23.1 - 7.2) / 11.3, 12);
    expect(roofSpread([5, 5, 5])).toBe(0);
  });
});

describe('roofConsistency', () => {
  it('passes roofs that agree and held steady', () => {
    const c = roofConsistency(4.4, 6, 9, [steady('streaming read', 4.4), steady('f32 FMA', 100)], false);
    expect(c.warnings).toEqual([]);
    expect(c.read_of_copy_read_half).toBeCloseTo(4.4 / 3, 12);
    expect(c.read_of_b2b_read_half).toBeCloseTo(4.4 / 4.5, 12);
  });

  it("flags a read below the copy kernel's read half", () => {
    // Chromium before the wider search: read 1.00 GB/s, the copy kernel 1.83 (read + write).
    const c = roofConsistency(0.8, 1.83, 2, [steady('streaming read', 0.8)], false);
    expect(c.read_of_copy_read_half).toBeLessThan(1);
    expect(c.warnings).toHaveLength(1);
    expect(c.warnings[0]).toMatch(/below the copy kernel's read half \(0\.92 GB\/s\)/);
  });

  it('flags a read far below copyBufferToBuffer, and only far below (farther on CPU adapters)', () => {
    const b2b = 20;
    for (const [cpu, limit, shown] of [
      [false, READ_OF_B2B_LIMIT.gpu, '49%'],
      [true, READ_OF_B2B_LIMIT.cpu, '9%'],
    ] as const) {
      const justAbove = roofConsistency((limit + 0.01) * (b2b / 2), 1, b2b, [], cpu);
      expect(justAbove.warnings).toEqual([]);
      const below = roofConsistency((limit - 0.01) * (b2b / 2), 1, b2b, [], cpu);
      expect(below.warnings).toHaveLength(1);
      expect(below.warnings[0]).toContain(`reads ${shown} of copyBufferToBuffer's read half (10.00 GB/s), below ${limit * 100}%`);
    }
    // SwiftShader under load: 2.22 GB/s against a 31.1 GB/s memcpy passes as a CPU adapter, not as a GPU.
    expect(roofConsistency(2.22, 1.79, 31.1, [], true).warnings).toEqual([]);
    expect(roofConsistency(2.22, 1.79, 31.1, [], false).warnings).toHaveLength(1);
  });

  it('flags each roof whose samples span more than the bound, naming it', () => {
    // lavapipe under load: the read spanned 7.2–23.1 GB/s (median 11.3), the f32 FMA peak 19–122.
    const wide = { label: 'streaming read', value: 20, unit: 'GB/s', samples: [7.2, 11.3, 23.1] };
    const fma = { label: 'f32 FMA', value: 100, unit: 'GFLOP/s', samples: [19, 60, 122] };
    const edge = { label: 'copy kernel', value: 10, unit: 'GB/s', samples: [9, 10, 9 + 10 * ROOF_SPREAD_LIMIT] };
    const c = roofConsistency(20, 30, 40, [wide, fma, edge, { label: 'one sample', value: 1, unit: 'GB/s', samples: [1] }], false);
    expect(c.warnings).toHaveLength(2);
    expect(c.warnings[0]).toMatch(/^The streaming read samples span 7\.20–23\.1 GB\/s, 141% of their median/);
    expect(c.warnings[1]).toMatch(/^The f32 FMA samples span 19\.0–122 GFLOP\/s/);
  });
});

describe('read roof drift over a run', () => {
  it('flags a roof that moved beyond ±15% between the start and the end of a run', () => {
    expect(readRoofDrift(10, 11)).toEqual({ read_after_gbps: 11, ratio: 1.1, bound: 0.15, warning: null });
    expect(readRoofDrift(10, 8.6).warning).toBeNull();
    expect(readRoofDrift(10, 8).warning).toMatch(/moved from 10\.0 to 8\.00 GB\/s during the run \(×0\.80, beyond ±15%\)/);
    expect(readRoofDrift(10, 8).raised_from_gbps).toBeUndefined();
    expect(readRoofDrift(10, 12).warning).toMatch(/×1\.20/);
  });

  it('raises a roof the device beat after the model phases: the later reading is the roof in use', () => {
    const d = readRoofDrift(7.85, 11.5);
    expect(d.raised_from_gbps).toBe(7.85);
    expect(d.ratio).toBeCloseTo(11.5 / 7.85, 12);
    expect(d.warning).toMatch(/moved from 7\.85 to 11\.5 GB\/s .*the later reading is the read roof in use/);
    expect(readRoofDrift(10, 11.5).raised_from_gbps).toBeUndefined();
  });
});

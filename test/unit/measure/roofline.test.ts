import { describe, expect, it } from 'vitest';
import { costReport, dollarsPer1kTokens, joulesPerToken } from '../../../src/measure/cost.ts';
import {
  arithmeticIntensity,
  attainableFlopsPerS,
  decodeCeilingTokensPerS,
  decodeEfficiency,
  perTokenOverheadMs,
  ridgePoint,
  verdict,
} from '../../../src/measure/roofline.ts';
import { isTokenscopeError } from '../../../src/errors.ts';

// A device with 10 TFLOP/s and 500 GB/s: ridge point 20 FLOP/byte.
const roofs = { computeFlopsPerS: 10e12, bandwidthBytesPerS: 500e9 };

describe('roofline', () => {
  it('intensity = FLOPs / bytes: a Q4_0 block, 64 FLOPs over 18 bytes ≈ 3.56 FLOP/byte', () => {
    expect(arithmeticIntensity(64, 18)).toBeCloseTo(3.5556, 4);
  });

  it('attainable = min(compute, bandwidth × intensity); ridge = compute / bandwidth', () => {
    expect(ridgePoint(10e12, 500e9)).toBe(20);
    expect(attainableFlopsPerS(4, 10e12, 500e9)).toBe(2e12); // below the ridge: 500 GB/s × 4
    expect(attainableFlopsPerS(100, 10e12, 500e9)).toBe(10e12); // above: the compute roof
  });

  it('decode ceiling, efficiency and per-token overhead', () => {
    // 4 GB of weights per token at 500 GB/s: 125 tokens/s, 8 ms per token.
    expect(decodeCeilingTokensPerS(500e9, 4e9)).toBe(125);
    expect(decodeEfficiency(100, 125)).toBe(0.8);
    expect(perTokenOverheadMs(10, 4e9, 500e9)).toBeCloseTo(2, 12);
  });

  it('rejects non-positive roofs', () => {
    try {
      ridgePoint(0, 1);
      expect.unreachable();
    } catch (e) {
      expect(isTokenscopeError(e, 'bad-input')).toBe(true);
    }
  });
});

describe('verdict', () => {
  it('memory-bound: 4 GB read in 10 ms = 400 GB/s (80% of peak), intensity 1 < ridge 20', () => {
    const v = verdict({ flops: 4e9, bytes: 4e9, ms: 10 }, roofs);
    expect(v.bound).toBe('memory-bound');
    expect(v.floorMs).toBe(8);
    expect(v.efficiency).toBe(0.8);
    expect(v.bandwidthShare).toBe(0.8);
    expect(v.sentence).toBe(
      'Memory-bound: 400.00 GB/s of 500.00 GB/s peak bandwidth (80%) at 1.00 FLOP/byte (ridge point 20.00); ' +
        'the phase took 10.00 ms against a 8.00 ms roofline floor.',
    );
  });

  it('compute-bound: 60 GFLOP in 10 ms = 6 TFLOP/s of 10 (60%), intensity 100 > ridge 20', () => {
    const v = verdict({ flops: 6e10, bytes: 6e8, ms: 10 }, roofs);
    expect(v.bound).toBe('compute-bound');
    expect(v.floorMs).toBeCloseTo(6, 12);
    expect(v.computeShare).toBeCloseTo(0.6, 12);
    expect(v.sentence).toMatch(/^Compute-bound: 6000\.00 GFLOP\/s of 10000\.00 GFLOP\/s peak compute \(60%\)/);
  });

  it('overhead-bound: the floor is 8 ms but the phase took 20 ms (40% < 50%)', () => {
    const v = verdict({ flops: 4e9, bytes: 4e9, ms: 20 }, roofs);
    expect(v.bound).toBe('overhead-bound');
    expect(v.efficiency).toBe(0.4);
    expect(v.sentence).toMatch(/^Overhead-bound: the phase took 20\.00 ms against a 8\.00 ms roofline floor \(40% /);
    expect(v.sentence).toMatch(/40% of peak bandwidth and 2% of peak compute/);
  });

  it('exactly half the roofline speed is still memory-bound (the rule is "< 50%")', () => {
    expect(verdict({ flops: 4e9, bytes: 4e9, ms: 16 }, roofs).bound).toBe('memory-bound');
  });

  it('launch-bound: 100 dispatches at 4 µs = 0.4 ms outweigh 0.2 ms of bytes; the phase took 0.5 ms (80% of the floor speed)', () => {
    const v = verdict({ flops: 1e8, bytes: 1e8, ms: 0.5, dispatches: 100 }, { ...roofs, dispatchUs: 4 });
    expect(v.bound).toBe('launch-bound');
    expect(v.launchMs).toBeCloseTo(0.4, 12);
    expect(v.floorMs).toBeCloseTo(0.4, 12);
    expect(v.efficiency).toBeCloseTo(0.8, 12);
    expect(v.sentence).toMatch(/^Launch-bound: 100 dependent dispatches at 4\.00 µs each need 0\.40 ms, more than the bytes \(0\.20 ms/);
  });

  it('the launch term joins the floor only with both the dispatch count and the launch roof', () => {
    // Without either, the same phase reads overhead-bound (0.2 ms floor of 0.5 ms).
    expect(verdict({ flops: 1e8, bytes: 1e8, ms: 0.5, dispatches: 100 }, roofs).bound).toBe('overhead-bound');
    expect(verdict({ flops: 1e8, bytes: 1e8, ms: 0.5 }, { ...roofs, dispatchUs: 4 }).bound).toBe('overhead-bound');
    expect(verdict({ flops: 1e8, bytes: 1e8, ms: 0.5 }, { ...roofs, dispatchUs: 4 })).not.toHaveProperty('launchMs');
    // A memory-bound phase with a small launch term stays memory-bound and says what the launches cost.
    const v = verdict({ flops: 4e9, bytes: 4e9, ms: 10, dispatches: 100 }, { ...roofs, dispatchUs: 4 });
    expect(v.bound).toBe('memory-bound');
    expect(v.floorMs).toBe(8);
    expect(v.sentence).toMatch(/Its 100 dispatches cost at least 0\.40 ms at 4\.00 µs each \(4% of the time\)\.$/);
  });

  it('leaves the launch term out of the floor when the phase ran faster than it (the probe over-read)', () => {
    // 100 dispatches × 4 µs = 0.4 ms, but the phase took 0.3 ms: at most 3 µs a dispatch.
    const v = verdict({ flops: 1e8, bytes: 1e8, ms: 0.3, dispatches: 100 }, { ...roofs, dispatchUs: 4 });
    expect(v.launchMs).toBeCloseTo(0.4, 12);
    expect(v.floorMs).toBeCloseTo(0.2, 12);
    expect(v.bound).toBe('memory-bound');
    expect(v.efficiency).toBeLessThanOrEqual(1);
    expect(v.sentence).toMatch(/took 3\.00 µs each at most, below the launch roof's 4\.00 µs, so the launch term is left out of the floor/);
  });
});

describe('cost and energy', () => {
  it('$2/h at 100 output tok/s: 2 / 360000 · 1000 = $0.00556 per 1k tokens', () => {
    expect(dollarsPer1kTokens(2, 100)).toBeCloseTo(2 / 360, 12);
  });

  it('energy: 300 W at 50 tok/s = 6 J per token', () => {
    expect(joulesPerToken(300, 50)).toBe(6);
  });

  it('report uses output throughput for output cost and energy, total throughput for total cost', () => {
    expect(costReport({ dollarsPerHour: 3.6, watts: 200, outputTokensPerS: 100, totalTokensPerS: 400 })).toEqual({
      dollarsPer1kOutputTokens: expect.closeTo(0.01, 12),
      dollarsPer1kTotalTokens: expect.closeTo(0.0025, 12),
      joulesPerOutputToken: 2,
    });
    expect(costReport({ dollarsPerHour: 1, outputTokensPerS: 1, totalTokensPerS: 1 })).not.toHaveProperty('joulesPerOutputToken');
  });

  it('rejects zero throughput', () => {
    expect(() => dollarsPer1kTokens(1, 0)).toThrow(/tokensPerS must be a positive number/);
  });
});

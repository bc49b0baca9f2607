import { describe, expect, it } from 'vitest';
import {
  confidenceInterval,
  isP99FromFewSamples,
  mean,
  normalQuantile,
  percentile,
  percentileNearestRank,
  stdPopulation,
  stdSample,
  studentTQuantile,
  summarize,
} from '../../../src/measure/stats.ts';
import { isTokenscopeError } from '../../../src/errors.ts';

function badInput(f: () => unknown): boolean {
  try {
    f();
  } catch (e) {
    return isTokenscopeError(e, 'bad-input');
  }
  return false;
}

describe('percentile (numpy linear)', () => {
  // [15, 20, 35, 40, 50]: h = 4·p/100. p90 → h = 3.6 → 40 + 0.6·(50 − 40) = 46; p99 → h = 3.96 → 49.6.
  const five = [50, 15, 40, 20, 35];
  // Expected values are numpy.percentile's output on the same samples.
  it.each([
    [five, 0, 15],
    [five, 25, 20],
    [five, 50, 35],
    [five, 90, 46],
    [five, 95, 48],
    [five, 99, 49.6],
    [five, 100, 50],
    [[3.1, 1.2, 9.9, 4.4, 7.0, 2.5, 8.8, 6.1], 25, 2.95],
    [[3.1, 1.2, 9.9, 4.4, 7.0, 2.5, 8.8, 6.1], 50, 5.25],
    [[3.1, 1.2, 9.9, 4.4, 7.0, 2.5, 8.8, 6.1], 95, 9.515],
    [[3.1, 1.2, 9.9, 4.4, 7.0, 2.5, 8.8, 6.1], 99, 9.823],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9.1],
    [[1, 2, 3, 4], 37.5, 2.125],
    [[7], 99, 7],
  ])('%j p%d = %d', (xs, p, expected) => {
    expect(percentile(xs, p)).toBeCloseTo(expected, 12);
  });

  it('matches numpy to the last bit where numpy interpolates from the upper end', () => {
    // numpy computes b − (b − a)·(1 − t) for t ≥ 0.5: np.percentile(x, 66) == 6.658, where the
    // one-sided a + (b − a)·t would give 6.6579999999999995.
    expect(percentile([3.1, 1.2, 9.9, 4.4, 7.0, 2.5, 8.8, 6.1], 66)).toBe(6.658);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(9.549999999999999);
  });

  it('nearest rank (MLPerf/TGI) takes x[⌊n·p⌋]: p99 of 5 samples is the max, p50 of 4 is x[2]', () => {
    expect(percentileNearestRank(five, 99)).toBe(50);
    expect(percentileNearestRank([4, 1, 3, 2], 50)).toBe(3);
  });

  it('rejects empty samples and percents outside [0, 100]', () => {
    expect(badInput(() => percentile([], 50))).toBe(true);
    expect(badInput(() => percentile([1], 101))).toBe(true);
    expect(badInput(() => percentile([1], NaN))).toBe(true);
  });
});

describe('mean and std', () => {
  // mean 32; squared deviations 289 + 144 + 9 + 64 + 324 = 830.
  it('population std divides by n, sample std by n − 1', () => {
    expect(mean([15, 20, 35, 40, 50])).toBe(32);
    expect(stdPopulation([15, 20, 35, 40, 50])).toBeCloseTo(Math.sqrt(830 / 5), 12);
    expect(stdSample([15, 20, 35, 40, 50])).toBeCloseTo(Math.sqrt(830 / 4), 12);
  });

  it('sample std needs two samples', () => {
    expect(stdPopulation([3])).toBe(0);
    expect(badInput(() => stdSample([3]))).toBe(true);
  });

  it('summarize reports count, population std and the numpy percentiles', () => {
    expect(summarize([50, 15, 40, 20, 35])).toEqual({
      count: 5,
      mean: 32,
      std: Math.sqrt(166),
      min: 15,
      p50: 35,
      p90: 46,
      p95: 48,
      p99: expect.closeTo(49.6, 12),
      max: 50,
    });
  });

  it('flags a p99 from fewer than 20 samples', () => {
    expect(isP99FromFewSamples(19)).toBe(true);
    expect(isP99FromFewSamples(20)).toBe(false);
  });
});

describe('Student t', () => {
  // Reference quantiles from scipy.stats.t.ppf / norm.ppf.
  it.each([
    [0.975, 1, 12.706204736174694],
    [0.975, 2, 4.302652729749462],
    [0.975, 4, 2.7764451051977934],
    [0.975, 9, 2.262157162798205],
    [0.975, 30, 2.0422724563012378],
    [0.995, 5, 4.032142983555228],
    [0.975, 1000, 1.9623390808264083],
    [0.975, 5000, 1.9604385517065073],
    [0.025, 4, -2.7764451051977934],
    [0.975, Infinity, 1.959963984540054],
  ])('t(%d, %d) = %d', (p, df, expected) => {
    expect(studentTQuantile(p, df)).toBeCloseTo(expected, 10);
  });

  it('normal quantile z(0.95) = 1.6448536269514722', () => {
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 12);
    expect(normalQuantile(0.5)).toBe(0);
  });

  it('95% interval of [100, 102, 98, 101, 99]: s = √2.5, half-width = t(0.975, 4)·s/√5', () => {
    const ci = confidenceInterval([100, 102, 98, 101, 99]);
    expect(ci.mean).toBe(100);
    expect(ci.std).toBeCloseTo(Math.sqrt(2.5), 12);
    expect(ci.halfWidth).toBeCloseTo((2.7764451051977934 * Math.sqrt(2.5)) / Math.sqrt(5), 10);
    expect(ci.halfWidth).toBeCloseTo(1.9632431614775572, 10);
    expect(ci.low).toBeCloseTo(100 - ci.halfWidth, 12);
    expect(ci.cv).toBeCloseTo(0.0158113883008419, 12);
  });

  it('rejects non-integer df, p outside (0, 1) and single-run intervals', () => {
    expect(badInput(() => studentTQuantile(0.975, 2.5))).toBe(true);
    expect(badInput(() => studentTQuantile(1, 3))).toBe(true);
    expect(badInput(() => confidenceInterval([5]))).toBe(true);
  });
});

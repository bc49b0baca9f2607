/**
 * Descriptive statistics for benchmark samples (pure, no I/O).
 *
 * Conventions follow docs/METRICS.md: percentiles use numpy's default linear interpolation,
 * per-run spread is the population std (ddof 0, as vLLM and AIPerf report it), spread across
 * repetitions is the sample std (ddof 1, as llama-bench and confidence intervals use it).
 */
import { TokenscopeError } from '../errors.ts';

/** Below this many samples a p99 is mostly the maximum: flag it next to the number. */
export const MIN_SAMPLES_FOR_P99 = 20;

/** One run's distribution, in the samples' unit. `std` is the population std (ddof 0). */
export interface Summary {
  count: number;
  mean: number;
  std: number;
  min: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

/** Multi-run result: mean, sample std and a two-sided Student-t interval. */
export interface ConfidenceInterval {
  n: number;
  mean: number;
  /** Sample std (ddof 1). */
  std: number;
  /** Confidence level, e.g. 0.95. */
  level: number;
  /** t(1 − (1 − level)/2, n − 1) · std / √n. */
  halfWidth: number;
  low: number;
  high: number;
  /** Coefficient of variation std / mean (AIPerf: < 5% excellent, > 20% unstable). */
  cv: number;
}

/** Throws bad-input unless every named value is a finite number > 0 (shared by the bench formulas). */
export function requirePositive(values: Record<string, number>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!(value > 0 && Number.isFinite(value))) {
      throw new TokenscopeError('bad-input', `${name} must be a positive number, got ${value}`);
    }
  }
}

function requireSamples(xs: readonly number[], min: number, what: string): void {
  if (xs.length < min) {
    throw new TokenscopeError(
      'bad-input',
      `${what} needs at least ${min} sample${min === 1 ? '' : 's'}, got ${xs.length}`,
      'Run more requests or repetitions.',
    );
  }
}

/** mean = Σx / n. */
export function mean(xs: readonly number[]): number {
  requireSamples(xs, 1, 'mean');
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

function sumSquaredDeviations(xs: readonly number[]): number {
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) * (x - m);
  return ss;
}

/** Population std (ddof 0, numpy's `np.std` default): √(Σ(x − mean)² / n). */
export function stdPopulation(xs: readonly number[]): number {
  requireSamples(xs, 1, 'population std');
  return Math.sqrt(sumSquaredDeviations(xs) / xs.length);
}

/** Sample std (ddof 1): √(Σ(x − mean)² / (n − 1)). */
export function stdSample(xs: readonly number[]): number {
  requireSamples(xs, 2, 'sample std');
  return Math.sqrt(sumSquaredDeviations(xs) / (xs.length - 1));
}

function sortedCopy(xs: readonly number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

function requirePercent(p: number): void {
  if (!(p >= 0 && p <= 100)) {
    throw new TokenscopeError('bad-input', `percentile ${p} is outside [0, 100]`, 'Pass a percent such as 50 or 99.');
  }
}

/** Linear-interpolation percentile of already sorted samples (see {@link percentile}). */
function percentileOfSorted(sorted: readonly number[], p: number): number {
  const h = (sorted.length - 1) * (p / 100);
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  const t = h - lo;
  const a = sorted[lo];
  const b = sorted[hi];
  // numpy's _lerp: interpolate from the nearer end, so t = 1 returns b exactly.
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

/**
 * numpy's default percentile (method 'linear', Hyndman & Fan type 7):
 * sort x[0..n−1], h = (n − 1)·p/100, Q = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
 */
export function percentile(xs: readonly number[], p: number): number {
  requireSamples(xs, 1, 'percentile');
  requirePercent(p);
  return percentileOfSorted(sortedCopy(xs), p);
}

/**
 * Nearest-rank percentile as MLPerf loadgen and TGI take it: x[min(n − 1, ⌊n·p/100⌋)] of the
 * sorted samples. At small n its p99 is the maximum.
 */
export function percentileNearestRank(xs: readonly number[], p: number): number {
  requireSamples(xs, 1, 'percentile');
  requirePercent(p);
  const sorted = sortedCopy(xs);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

/** count, mean, population std, min, p50/p90/p95/p99 (numpy linear) and max of one run. */
export function summarize(xs: readonly number[]): Summary {
  requireSamples(xs, 1, 'summary');
  const sorted = sortedCopy(xs);
  return {
    count: sorted.length,
    mean: mean(sorted),
    std: stdPopulation(sorted),
    min: sorted[0],
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p95: percentileOfSorted(sorted, 95),
    p99: percentileOfSorted(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

/** True when a p99 over `count` samples is too thin to trust (fewer than {@link MIN_SAMPLES_FOR_P99}). */
export function isP99FromFewSamples(count: number): boolean {
  return count < MIN_SAMPLES_FOR_P99;
}

/**
 * erf(x) for x ≥ 0 by its all-positive series erf(x) = (2/√π)·e^(−x²)·Σₖ (2x²)ᵏ·x / (1·3·…·(2k+1)),
 * which has no cancellation and converges for every x.
 */
function erfNonNegative(x: number): number {
  const twoX2 = 2 * x * x;
  let term = x;
  let sum = x;
  for (let k = 1; term > sum * 1e-17; k++) {
    term *= twoX2 / (2 * k + 1);
    sum += term;
  }
  return Math.min(1, (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x) * sum);
}

/**
 * P(−t < T < t) for Student's t with integer ν degrees of freedom, by the finite series of
 * Abramowitz & Stegun 26.7.3 (ν odd) and 26.7.4 (ν even), with θ = atan(t/√ν):
 * odd:  (2/π)·(θ + sin θ·(cos θ + (2/3)cos³θ + … + (2·4…(ν−3))/(1·3…(ν−2))·cos^(ν−2)θ))
 * even: sin θ·(1 + (1/2)cos²θ + … + (1·3…(ν−3))/(2·4…(ν−2))·cos^(ν−2)θ)
 */
function studentTCentralProbability(t: number, nu: number): number {
  const theta = Math.atan(t / Math.sqrt(nu));
  const c2 = Math.cos(theta) ** 2;
  if (nu % 2 === 1) {
    let sum = 0;
    if (nu > 1) {
      let term = Math.cos(theta);
      sum = term;
      for (let k = 1; 2 * k + 1 <= nu - 2; k++) {
        term *= (c2 * (2 * k)) / (2 * k + 1);
        sum += term;
      }
    }
    return (2 / Math.PI) * (theta + Math.sin(theta) * sum);
  }
  let term = 1;
  let sum = 1;
  for (let k = 1; 2 * k <= nu - 2; k++) {
    term *= (c2 * (2 * k - 1)) / (2 * k);
    sum += term;
  }
  return Math.sin(theta) * sum;
}

/** Smallest x ≥ 0 with f(x) ≥ target, for increasing f, by doubling then bisection to full precision. */
function invertIncreasing(f: (x: number) => number, target: number): number {
  let hi = 1;
  while (f(hi) < target) hi *= 2;
  let lo = 0;
  for (let i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) < target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

function requireProbability(p: number): void {
  if (!(p > 0 && p < 1)) {
    throw new TokenscopeError('bad-input', `probability ${p} is outside (0, 1)`, 'Pass a value such as 0.975.');
  }
}

/** Standard normal quantile z(p): Φ(z) = p with Φ(x) = (1 + erf(x/√2)) / 2, inverted by bisection. */
export function normalQuantile(p: number): number {
  requireProbability(p);
  if (p === 0.5) return 0;
  const z = invertIncreasing((x) => erfNonNegative(x / Math.SQRT2), Math.abs(2 * p - 1));
  return p > 0.5 ? z : -z;
}

/** Above this many degrees of freedom the Cornish–Fisher expansion is exact to ~1e-13. */
const CORNISH_FISHER_MIN_DF = 1000;

/**
 * Student-t quantile t(p, ν) for integer ν ≥ 1 or ν = ∞ (then the normal quantile).
 * ν ≤ 1000: the exact CDF ({@link studentTCentralProbability}) inverted by bisection.
 * ν > 1000: Cornish–Fisher expansion in z = z(p) (A&S 26.7.5):
 * t = z + g₁/ν + g₂/ν² + g₃/ν³ + g₄/ν⁴, g₁ = (z³ + z)/4, g₂ = (5z⁵ + 16z³ + 3z)/96,
 * g₃ = (3z⁷ + 19z⁵ + 17z³ − 15z)/384, g₄ = (79z⁹ + 776z⁷ + 1482z⁵ − 1920z³ − 945z)/92160.
 */
export function studentTQuantile(p: number, df: number): number {
  requireProbability(p);
  if (!(df === Infinity || (Number.isInteger(df) && df >= 1))) {
    throw new TokenscopeError('bad-input', `degrees of freedom ${df} must be a positive integer or Infinity`);
  }
  if (df === Infinity) return normalQuantile(p);
  if (df > CORNISH_FISHER_MIN_DF) {
    const z = normalQuantile(p);
    const g1 = (z ** 3 + z) / 4;
    const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
    const g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384;
    const g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160;
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
  }
  if (p === 0.5) return 0;
  const t = invertIncreasing((x) => studentTCentralProbability(x, df), Math.abs(2 * p - 1));
  return p > 0.5 ? t : -t;
}

/**
 * Multi-run interval: mean ± t(1 − (1 − level)/2, n − 1)·s/√n with s the sample std (ddof 1),
 * and CV = s / mean. Needs n ≥ 2 repetitions.
 */
export function confidenceInterval(xs: readonly number[], level = 0.95): ConfidenceInterval {
  requireSamples(xs, 2, 'confidence interval');
  if (!(level > 0 && level < 1)) {
    throw new TokenscopeError('bad-input', `confidence level ${level} is outside (0, 1)`, 'Use 0.95 for a 95% interval.');
  }
  const m = mean(xs);
  const s = stdSample(xs);
  const halfWidth = (studentTQuantile(1 - (1 - level) / 2, xs.length - 1) * s) / Math.sqrt(xs.length);
  return { n: xs.length, mean: m, std: s, level, halfWidth, low: m - halfWidth, high: m + halfWidth, cv: s / m };
}

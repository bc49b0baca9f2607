/**
 * What a roof is (the best sustained value of its samples) and the checks a set of roofs must pass
 * to be trusted as denominators (pure, no I/O; docs/METRICS.md states both).
 */
import { percentile } from './stats.ts';

/** Above this (max − min) / median a roof's samples are flagged (webai-bench's bound for thermal variance). */
export const ROOF_SPREAD_LIMIT = 0.25;

/**
 * The streaming read is flagged below this fraction of copyBufferToBuffer's read half: on GPUs both
 * stream through the same memory, so only a read far below it says the search missed. CPU adapters'
 * copyBufferToBuffer is a host memcpy no shader comes near (SwiftShader: 31 GB/s against 2.2 for its
 * best shader read under load, lavapipe 12 against 2.6), so there only a read below a tenth is flagged.
 */
export const READ_OF_B2B_LIMIT = { gpu: 0.5, cpu: 0.1 } as const;

/** The fewest consecutive repetitions whose median can be a roof: three of five must reach it. */
export const ROOF_RUN = 5;

/** How long a window of consecutive repetitions must last for its median to count as sustained, ms. */
export const ROOF_WINDOW_MS = 250;

/** The roof's statistic, as `measurements.*.statistic` names it. */
export const ROOF_STATISTIC = 'best-median-250ms';

/** What the statistics a result may carry mean, in words (older results hold 'p90'; the oldest none: their value is the median). */
export function roofStatisticText(statistic: string | undefined): string {
  if (statistic === ROOF_STATISTIC)
    return `the best median of consecutive repetitions lasting at least ${ROOF_WINDOW_MS} ms (at least ${ROOF_RUN} of them; the median of all where they last less): the rate the device sustained at its best`;
  if (statistic === 'best-median-of-5') return 'the best median of 5 consecutive repetitions (an older result): the rate the device sustained at its best';
  if (statistic === 'p90') return 'the upper decile (p90) of its repetitions: the best rate the device sustained';
  return 'the median of its repetitions (an older result)';
}

/**
 * Repetitions in a roof's window: enough to last ROOF_WINDOW_MS at the samples' median duration
 * (`workPerRep` bytes or FLOPs at a rate in units of 1e9 per second), and at least ROOF_RUN.
 */
export function roofWindow(samples: readonly number[], workPerRep: number): number {
  const medianMs = workPerRep / (percentile(samples, 50) * 1e6);
  return Math.max(ROOF_RUN, Math.ceil(ROOF_WINDOW_MS / medianMs));
}

/**
 * The best sustained rate of `samples`, in repetition order (higher is better): the highest median
 * of a window of consecutive repetitions lasting ROOF_WINDOW_MS (roofWindow; the median of all
 * where they last less). A maximum would be one lucky repetition, and an upper decile lands on
 * scattered bursts (six lavapipe read roofs in a row read 8.5–11.9 GB/s as p90s). A window counted
 * in repetitions rather than time caught short bursts where repetitions are short: on lavapipe,
 * whose 128 MiB read takes ~14 ms and runs ~9.5 GB/s with bursts of 12–14 lasting a few
 * repetitions, the best median of 5 read 9.2–12.6 GB/s over eight roofs in a row (back-to-back 1B
 * runs divided by 9.6 and 12.0 for the same decode speed) and this 9.0–9.6. A median of the whole
 * counts the repetitions another process slowed as typical.
 */
export function sustainedRoof(samples: readonly number[], workPerRep: number): number {
  const k = roofWindow(samples, workPerRep);
  if (samples.length <= k) return percentile(samples, 50);
  let best = -Infinity;
  for (let i = 0; i + k <= samples.length; i++) best = Math.max(best, percentile(samples.slice(i, i + k), 50));
  return best;
}

/** (max − min) / median of `samples`: how far they part. */
export function roofSpread(samples: readonly number[]): number {
  const median = percentile(samples, 50);
  return (Math.max(...samples) - Math.min(...samples)) / median;
}

/** The roofs the checks read: each one's value, samples and name. */
export interface RoofForChecks {
  label: string;
  value: number;
  unit: string;
  samples: readonly number[];
}

export interface RoofConsistency {
  /** Streaming read ÷ the copy kernel's read half (copy GB/s counts bytes read + written). */
  read_of_copy_read_half: number;
  /** Streaming read ÷ copyBufferToBuffer's read half. */
  read_of_b2b_read_half: number;
  /** One sentence per failed check; empty when the roofs agree and held steady. */
  warnings: string[];
}

/**
 * The checks: the streaming read may not read below the copy kernel's read half (that kernel reads
 * and writes every byte, so its reads alone are a floor for a read-only kernel), nor below
 * READ_OF_B2B_LIMIT (for a GPU or a CPU adapter) of copyBufferToBuffer's read half; and no roof's samples may span more than
 * ROOF_SPREAD_LIMIT of their median.
 */
export function roofConsistency(read: number, copy: number, b2b: number, roofs: readonly RoofForChecks[], cpuAdapter: boolean): RoofConsistency {
  const ofCopy = read / (copy / 2);
  const ofB2b = read / (b2b / 2);
  const b2bLimit = READ_OF_B2B_LIMIT[cpuAdapter ? 'cpu' : 'gpu'];
  const warnings: string[] = [];
  const gbps = (x: number) => `${x.toFixed(2)} GB/s`;
  if (ofCopy < 1) {
    warnings.push(
      `The streaming read (${gbps(read)}) reads below the copy kernel's read half (${gbps(copy / 2)}): its shape search missed this device's best, so the read roof is low.`,
    );
  }
  if (ofB2b < b2bLimit) {
    warnings.push(
      `The streaming read (${gbps(read)}) reads ${(ofB2b * 100).toFixed(0)}% of copyBufferToBuffer's read half (${gbps(b2b / 2)}), below ${b2bLimit * 100}%: the read roof may be low.`,
    );
  }
  for (const r of roofs) {
    if (r.samples.length < 2) continue;
    const spread = roofSpread(r.samples);
    if (spread > ROOF_SPREAD_LIMIT) {
      const lo = Math.min(...r.samples);
      const hi = Math.max(...r.samples);
      warnings.push(
        `The ${r.label} samples span ${lo.toPrecision(3)}–${hi.toPrecision(3)} ${r.unit}, ${(spread * 100).toFixed(0)}% of their median (over ${ROOF_SPREAD_LIMIT * 100}%): the device was throttled or shared while it was measured.`,
      );
    }
  }
  return { read_of_copy_read_half: ofCopy, read_of_b2b_read_half: ofB2b, warnings };
}

/** How far the read roof may move between the start and the end of a run before the result flags it (±15%, issue 22's repeatability goal). */
export const DRIFT_BOUND = 0.15;

export interface RoofDrift {
  /** The read roof re-measured after the model phases, GB/s. */
  read_after_gbps: number;
  /** read_after_gbps ÷ the read roof measured first. */
  ratio: number;
  bound: number;
  /** A sentence when |ratio − 1| > bound, else null. */
  warning: string | null;
  /**
   * Where the device read more than 1 + bound times the first roof after the model phases: that first
   * roof, GB/s. The run then divides by the later reading (a roof below what the device does would
   * inflate every "% of roof"); absent otherwise.
   */
  raised_from_gbps?: number;
}

/**
 * The drift of the read roof over a run: `before` (the roof measured first) against `after`
 * (re-measured at the end). A roof that fell is kept (the best the device sustained) and flagged;
 * one that rose beyond the bound is raised to `after` (raised_from_gbps) and flagged.
 */
export function readRoofDrift(before: number, after: number): RoofDrift {
  const ratio = after / before;
  const moved = `The streaming read moved from ${before.toPrecision(3)} to ${after.toPrecision(3)} GB/s during the run (×${ratio.toFixed(2)}, beyond ±${DRIFT_BOUND * 100}%)`;
  if (ratio > 1 + DRIFT_BOUND) {
    return {
      read_after_gbps: after,
      ratio,
      bound: DRIFT_BOUND,
      warning: `${moved}: the device was busier when the roofs were first measured, so the later reading is the read roof in use and every "% of read roof" divides by it.`,
      raised_from_gbps: before,
    };
  }
  const warning = ratio < 1 - DRIFT_BOUND ? `${moved}: the device throttled or was shared, so the "% of roof" figures carry that much doubt.` : null;
  return { read_after_gbps: after, ratio, bound: DRIFT_BOUND, warning };
}

/**
 * Roofline model (Williams, Waterman & Patterson, CACM 2009) and the decode ceiling it implies.
 * Units: FLOP/s, bytes/s, FLOP/byte, ms. Definitions: docs/METRICS.md § Roofline.
 */
import { requirePositive } from './stats.ts';

export type Bound = 'memory-bound' | 'compute-bound' | 'launch-bound' | 'overhead-bound';

/** Peak compute and memory bandwidth of one device (ideally measured on it). */
export interface RoofRates {
  computeFlopsPerS: number;
  bandwidthBytesPerS: number;
  /** The launch roof: µs per dependent dispatch (ceilings.launch.dispatch_us), where measured. */
  dispatchUs?: number;
}

/** What one phase (prefill, a decode step, a kernel) did and how long it took. */
export interface PhaseWork {
  flops: number;
  /** Bytes moved to and from device memory. */
  bytes: number;
  ms: number;
  /** Dependent dispatches the phase recorded, where known (the launch term of the floor). */
  dispatches?: number;
}

export interface Verdict {
  bound: Bound;
  /** One plain sentence with the numbers behind the verdict. */
  sentence: string;
  achievedFlopsPerS: number;
  achievedBytesPerS: number;
  /** achieved FLOP/s ÷ compute roof. */
  computeShare: number;
  /** achieved bytes/s ÷ bandwidth roof. */
  bandwidthShare: number;
  /** FLOP per byte. */
  intensity: number;
  ridgePoint: number;
  /** Roofline time: the phase cannot run faster than this, ms. */
  floorMs: number;
  /** The launch floor: dispatches × the launch roof, ms (absent where either is unknown); in floorMs only when it fits within the phase's time. */
  launchMs?: number;
  /** floorMs ÷ ms = max(computeShare, bandwidthShare): share of the roofline's speed reached. */
  efficiency: number;
}

/** Below this share of the roofline's prediction, neither roof explains the time. */
export const OVERHEAD_BOUND_BELOW = 0.5;

/** Arithmetic intensity = FLOPs / bytes moved to and from device memory (FLOP/byte). */
export function arithmeticIntensity(flops: number, bytes: number): number {
  requirePositive({ bytes });
  return flops / bytes;
}

/** Attainable FLOP/s = min(compute roof, bandwidth × intensity). */
export function attainableFlopsPerS(intensity: number, computeFlopsPerS: number, bandwidthBytesPerS: number): number {
  requirePositive({ computeFlopsPerS, bandwidthBytesPerS });
  return Math.min(computeFlopsPerS, bandwidthBytesPerS * intensity);
}

/** Ridge point = compute roof / bandwidth (FLOP/byte): below it a kernel is memory-bound. */
export function ridgePoint(computeFlopsPerS: number, bandwidthBytesPerS: number): number {
  requirePositive({ computeFlopsPerS, bandwidthBytesPerS });
  return computeFlopsPerS / bandwidthBytesPerS;
}

/** Decode ceiling (tokens/s) = bandwidth / bytes read per token (weights + KV cache + activations). */
export function decodeCeilingTokensPerS(bandwidthBytesPerS: number, bytesPerToken: number): number {
  requirePositive({ bandwidthBytesPerS, bytesPerToken });
  return bandwidthBytesPerS / bytesPerToken;
}

/** Decode efficiency = observed decode tokens/s ÷ the bandwidth ceiling. */
export function decodeEfficiency(observedTokensPerS: number, ceilingTokensPerS: number): number {
  requirePositive({ ceilingTokensPerS });
  return observedTokensPerS / ceilingTokensPerS;
}

/** Per-token overhead (ms) = TPOT − bytes per token / bandwidth: the time the bytes do not explain. */
export function perTokenOverheadMs(tpotMs: number, bytesPerToken: number, bandwidthBytesPerS: number): number {
  requirePositive({ bandwidthBytesPerS });
  return tpotMs - (1000 * bytesPerToken) / bandwidthBytesPerS;
}

const percent = (x: number) => `${(100 * x).toFixed(0)}%`;
const giga = (x: number) => (x / 1e9).toFixed(2);

/**
 * Which roof limits a phase, by this rule:
 * floor = max(flops / compute roof, bytes / bandwidth, dispatches × launch roof) is the fastest the
 * roofline allows (the launch term where both the dispatch count and the launch roof are known) and
 * efficiency = floor / measured time.
 * - efficiency < {@link OVERHEAD_BOUND_BELOW} (50%): **overhead-bound** — the phase is more than twice
 *   as slow as any roof predicts, so synchronisation, the host or kernel quality set the time;
 * - otherwise the largest term names the bound: **launch-bound** (the dispatches' fixed cost),
 *   **memory-bound** (the bytes; intensity ≤ ridge point) or **compute-bound**.
 */
export function verdict(phase: PhaseWork, roofs: RoofRates): Verdict {
  requirePositive({ ms: phase.ms, computeFlopsPerS: roofs.computeFlopsPerS, bandwidthBytesPerS: roofs.bandwidthBytesPerS });
  const { computeFlopsPerS, bandwidthBytesPerS } = roofs;
  const computeMs = (1000 * phase.flops) / computeFlopsPerS;
  const memoryMs = (1000 * phase.bytes) / bandwidthBytesPerS;
  const launchMs = phase.dispatches !== undefined && roofs.dispatchUs !== undefined ? (phase.dispatches * roofs.dispatchUs) / 1000 : 0;
  // A phase that ran faster than its launch floor shows the probe's per-dispatch cost is above what
  // these dispatches cost here (a CPU adapter's queue, a loaded machine): the term is left out.
  const launchFits = launchMs > 0 && launchMs <= phase.ms;
  const floorMs = Math.max(computeMs, memoryMs, launchFits ? launchMs : 0);
  const achievedFlopsPerS = phase.flops / (phase.ms / 1000);
  const achievedBytesPerS = phase.bytes / (phase.ms / 1000);
  const computeShare = achievedFlopsPerS / computeFlopsPerS;
  const bandwidthShare = achievedBytesPerS / bandwidthBytesPerS;
  const efficiency = floorMs / phase.ms;
  const intensity = arithmeticIntensity(phase.flops, phase.bytes);
  const ridge = ridgePoint(computeFlopsPerS, bandwidthBytesPerS);
  const timing = `the phase took ${phase.ms.toFixed(2)} ms against a ${floorMs.toFixed(2)} ms roofline floor`;
  const at = `at ${intensity.toFixed(2)} FLOP/byte (ridge point ${ridge.toFixed(2)})`;
  const launches = launchFits
    ? ` Its ${phase.dispatches} dispatches cost at least ${launchMs.toFixed(2)} ms at ${roofs.dispatchUs!.toFixed(2)} µs each (${percent(launchMs / phase.ms)} of the time).`
    : launchMs > 0
      ? ` Its ${phase.dispatches} dispatches took ${((1000 * phase.ms) / phase.dispatches!).toFixed(2)} µs each at most, below the launch roof's ${roofs.dispatchUs!.toFixed(2)} µs, so the launch term is left out of the floor (the probe over-reads here).`
      : '';

  let bound: Bound;
  let sentence: string;
  if (efficiency < OVERHEAD_BOUND_BELOW) {
    bound = 'overhead-bound';
    sentence =
      `Overhead-bound: ${timing} (${percent(efficiency)} of the speed the roofs allow), reaching only ` +
      `${percent(bandwidthShare)} of peak bandwidth and ${percent(computeShare)} of peak compute, ` +
      `so synchronisation, the host or kernel inefficiency set the time, not the hardware.${launches}`;
  } else if (launchFits && launchMs > memoryMs && launchMs > computeMs) {
    bound = 'launch-bound';
    sentence =
      `Launch-bound: ${phase.dispatches} dependent dispatches at ${roofs.dispatchUs!.toFixed(2)} µs each need ${launchMs.toFixed(2)} ms, ` +
      `more than the bytes (${memoryMs.toFixed(2)} ms at the read roof) or the FLOPs (${computeMs.toFixed(2)} ms); ${timing}. Fewer, larger kernels would help.`;
  } else if (memoryMs >= computeMs) {
    bound = 'memory-bound';
    sentence =
      `Memory-bound: ${giga(achievedBytesPerS)} GB/s of ${giga(bandwidthBytesPerS)} GB/s peak bandwidth ` +
      `(${percent(bandwidthShare)}) ${at}; ${timing}.${launches}`;
  } else {
    bound = 'compute-bound';
    sentence =
      `Compute-bound: ${giga(achievedFlopsPerS)} GFLOP/s of ${giga(computeFlopsPerS)} GFLOP/s peak compute ` +
      `(${percent(computeShare)}) ${at}; ${timing}.${launches}`;
  }
  return {
    bound,
    sentence,
    achievedFlopsPerS,
    achievedBytesPerS,
    computeShare,
    bandwidthShare,
    intensity,
    ridgePoint: ridge,
    floorMs,
    ...(launchMs > 0 ? { launchMs } : {}),
    efficiency,
  };
}

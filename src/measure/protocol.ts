/**
 * The repetition protocol, implemented once: `warmup` untimed runs, then timed runs until at
 * least `minReps` runs and `minDurationMs` of measured time (or `maxReps` runs).
 */
import { TokenscopeError } from '../errors.ts';

export interface RepeatProtocol {
  warmup: number;
  minReps: number;
  maxReps: number;
  /** Keep repeating until the timed runs add up to this much (ms). */
  minDurationMs: number;
}

export const DEFAULT_PROTOCOL: RepeatProtocol = { warmup: 1, minReps: 5, maxReps: 50, minDurationMs: 400 };

export interface RepSample {
  /** Host clock, submit → work done (ms). */
  hostMs: number;
  /** GPU timestamp delta (ms), when timestamp-query exists. */
  gpuMs?: number;
}

/** Throws a typed `cancelled` error if the signal fired. */
export function throwIfCancelled(signal?: AbortSignal): void {
  if (signal?.aborted) throw new TokenscopeError('cancelled', 'The run was cancelled.', 'Start it again when ready.');
}

export async function repeat(protocol: RepeatProtocol, once: () => Promise<RepSample>, signal?: AbortSignal): Promise<RepSample[]> {
  for (let i = 0; i < protocol.warmup; i++) {
    throwIfCancelled(signal);
    await once();
  }
  const samples: RepSample[] = [];
  let total = 0;
  while (samples.length < protocol.maxReps && (samples.length < protocol.minReps || total < protocol.minDurationMs)) {
    throwIfCancelled(signal);
    const s = await once();
    samples.push(s);
    total += s.gpuMs ?? s.hostMs;
  }
  return samples;
}

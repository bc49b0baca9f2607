/**
 * What a serving run records (scheduler.ts writes it): per request and per engine step, and why a
 * request failed. The serving metrics and the page's reports read it without loading the scheduler.
 */
import type { RequestTiming } from '../measure/metrics.ts';

/**
 * Why a request failed: refused at the door (queue full), past its timeout, refused a KV slot by the
 * engine (no memory, longer than the context), lost with the device, or an engine error in its step.
 */
export type FailureCause = 'rejected' | 'timeout' | 'admission' | 'device-lost' | 'engine';
export const FAILURE_CAUSES: readonly FailureCause[] = ['rejected', 'timeout', 'admission', 'device-lost', 'engine'];

/** What happened to one request. Times are clock ms. */
export interface RequestTrace {
  id: number;
  promptTokens: number;
  tArrival: number;
  /** When it got a KV slot; absent if it never did. */
  tAdmit?: number;
  /** When each output token became available. */
  tTokens: number[];
  /** When it completed or failed (a timeout: its deadline). */
  tFinish: number;
  error?: string;
  /** Set with `error`. */
  cause?: FailureCause;
  /** Admitted with its output capped below what it asked for (the degradation policy). */
  degradedTo?: number;
  /** The request's class, when the workload has classes. */
  className?: string;
  /** Prompt tokens found in the prefix cache at admission (not prefilled). */
  cachedTokens?: number;
  /** The output token ids, in order. */
  tokenIds?: number[];
}

/** One engine step, for the batch timeline. */
export interface StepRecord {
  tStart: number;
  tEnd: number;
  /** Sequences decoded. */
  decode: number[];
  /** Sequences prefilled and how many prompt tokens each. */
  prefill: { seq: number; tokens: number }[];
  /** Sequences holding a slot, and requests queued behind them, when the step was planned. */
  running: number;
  waiting: number;
  error?: string;
}

export interface ServeTrace {
  tStart: number;
  tEnd: number;
  /** In the order the requests were given. */
  requests: RequestTrace[];
  steps: StepRecord[];
  /**
   * The error that ended the run early (a lost device, non-finite output): every request unfinished
   * then failed with it. Callers that cannot go on rethrow it ({@link throwIfFatal}).
   */
  fatal?: unknown;
}

/** Rethrow the error that ended a run, if one did. */
export function throwIfFatal(trace: ServeTrace): void {
  if (trace.fatal !== undefined) throw trace.fatal;
}

/** The raw timing the metrics read: t_send = arrival, so TTFT includes time queued. */
export function requestTiming(trace: RequestTrace): RequestTiming {
  const timing: RequestTiming = { promptTokens: trace.promptTokens, tSend: trace.tArrival, tTokens: trace.tTokens };
  if (trace.error !== undefined) timing.error = trace.error;
  return timing;
}

/**
 * A benchmark job: a plain JSON-serialisable description of what to run, executed by the same
 * code in the page, in Node, and in the browser driven by the CLI (`window.tokenscope.runJob`).
 */
import type { Fallbacks } from '../gpu/capabilities.ts';
import type { GpuContext } from '../gpu/device.ts';
import { measureCeilings } from './ceilings.ts';
import { describeEnvironment } from './environment.ts';
import type { RepeatProtocol } from './protocol.ts';
import { newResult, type BenchResult } from './schema.ts';

export interface BenchJob {
  /** Measure the device's roofs. */
  probe: boolean;
  /** Cap on the bandwidth working set, MiB (default: chosen per device). */
  probeMiB?: number;
  protocol?: RepeatProtocol;
}

export interface JobHooks {
  signal?: AbortSignal;
  /** What is running and how far along the whole job is (0..1). */
  onProgress?: (step: string, fraction: number) => void;
  /** Partial results as they arrive (the page draws them live). */
  onPartial?: (result: BenchResult) => void;
}

export async function runJob(ctx: GpuContext, job: BenchJob, disabled: Fallbacks, hooks: JobHooks = {}): Promise<BenchResult> {
  const result = newResult(describeEnvironment(ctx, disabled));
  if (job.probe) {
    result.ceilings = await measureCeilings(ctx, {
      maxWorkingSetBytes: job.probeMiB ? job.probeMiB * 1024 * 1024 : undefined,
      protocol: job.protocol,
      signal: hooks.signal,
      onProgress: (step, f) => hooks.onProgress?.(`roofs: ${step}`, f),
    });
    hooks.onPartial?.(result);
  }
  return result;
}

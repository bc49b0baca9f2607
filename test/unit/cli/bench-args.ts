/** Shared by the CLI flag tests: `npm run bench`'s flags parsed as bench.ts parses them, and a refusal's message. */
import { expect } from 'vitest';
import { parseFlags, UsageError } from '../../../cli/args.ts';
import { BENCH_FLAGS, misplacedFlag } from '../../../cli/bench-flags.ts';
import { jobFromFlags } from '../../../cli/bench-job.ts';
import type { BenchJob } from '../../../src/jobs/job-spec.ts';

export const parseBench = (argv: string[]) => parseFlags(argv, BENCH_FLAGS, misplacedFlag);

/** The job the flags ask for, on a CPU adapter's defaults. */
export const benchJob = (argv: string[]): BenchJob => jobFromFlags(parseBench(argv), true);

/** The usage error `run` throws (exit 2, before any GPU work); fails the test when it is accepted. */
export function usageError(run: () => unknown, what: string): string {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`${what} was accepted`);
}

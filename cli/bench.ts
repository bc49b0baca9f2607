/**
 * `npm run bench` — the headless runner. Drives the same job code as the page, in Node on the
 * `webgpu` package (Dawn) or in Chromium/Chrome on the built page.
 */
import { writeFileSync } from 'node:fs';
import { runJob, type BenchJob } from '../src/bench/job.ts';
import { formatCeilings, formatEnvironment } from '../src/bench/report.ts';
import type { BenchResult } from '../src/bench/schema.ts';
import { describeError } from '../src/errors.ts';
import { parseFallbacks } from '../src/gpu/capabilities.ts';
import { parseFlags, usage, UsageError, type FlagSpec } from './args.ts';

const FLAGS: Record<string, FlagSpec> = {
  runtime: { type: 'string', choices: ['node', 'browser'], help: 'where to run: Node + Dawn (default) or the built page in Chromium' },
  browser: { type: 'string', value: 'PATH', help: 'Chromium/Chrome executable (else $CHROME_PATH, else the usual paths)' },
  probe: { type: 'boolean', help: "measure the device's roofs only (bandwidth and compute)" },
  'probe-mib': { type: 'int', value: 'MIB', help: 'cap on the bandwidth working set in MiB (default: per device)' },
  reps: { type: 'int', value: 'N', help: 'minimum timed repetitions per measurement (default 5)' },
  disable: { type: 'list', value: 'FEATURES', help: 'force fallbacks: any of timestamp-query,shader-f16,subgroups' },
  json: { type: 'string', value: 'FILE', help: 'write the result (versioned JSON schema) to FILE' },
  quiet: { type: 'boolean', help: 'no progress lines' },
  help: { type: 'boolean', help: 'show this help' },
};

const SUMMARY = 'Measure this machine with tokenscope. With no arguments: the roofs of the default device.';

async function main(argv: string[]): Promise<number> {
  let flags: Map<string, unknown>;
  try {
    flags = parseFlags(argv, FLAGS);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n\n${usage('npm run bench --', SUMMARY, FLAGS)}`);
      return 2;
    }
    throw e;
  }
  if (flags.get('help')) {
    process.stdout.write(usage('npm run bench --', SUMMARY, FLAGS));
    return 0;
  }
  const disableList = (flags.get('disable') as string[] | undefined) ?? [];
  let disabled;
  try {
    disabled = parseFallbacks(disableList.join(','));
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 2;
  }
  const reps = flags.get('reps') as number | undefined;
  const job: BenchJob = {
    probe: true,
    probeMiB: flags.get('probe-mib') as number | undefined,
    protocol: reps ? { warmup: 1, minReps: reps, maxReps: Math.max(reps, 50), minDurationMs: 400 } : undefined,
  };
  const quiet = Boolean(flags.get('quiet'));
  const onProgress = (step: string, f: number) => {
    if (!quiet) process.stderr.write(`[${(f * 100).toFixed(0).padStart(3)}%] ${step}\n`);
  };

  let result: BenchResult;
  try {
    if (flags.get('runtime') === 'browser') {
      const { runInBrowser } = await import('./browser-runner.ts');
      result = await runInBrowser(job, {
        browser: flags.get('browser') as string | undefined,
        disable: [...disabled],
        onProgress,
        onLog: (l) => process.stderr.write(`${l}\n`),
      });
    } else {
      const { acquireNodeGpu } = await import('../src/gpu/node-gpu.ts');
      const ctx = await acquireNodeGpu({ disable: disabled, onError: (m) => process.stderr.write(`${m}\n`) });
      try {
        result = await runJob(ctx, job, disabled, { onProgress });
      } finally {
        ctx.destroy();
      }
    }
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 1;
  }

  process.stdout.write(`${formatEnvironment(result)}\n\n`);
  if (result.ceilings) process.stdout.write(`${formatCeilings(result.ceilings)}\n`);
  const jsonPath = flags.get('json') as string | undefined;
  if (jsonPath) {
    writeFileSync(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`\nWrote ${jsonPath}\n`);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

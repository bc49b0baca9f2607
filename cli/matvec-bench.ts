/**
 * `npm run bench:matvec` — the linear-layer micro-benchmark (src/measure/matvec-bench.ts) in Node
 * (Dawn) or, with `--runtime browser`, in Chromium on the built page (`npm run build` first), through
 * the same runner as `npm run bench -- --runtime browser`.
 *
 *   npm run bench:matvec -- --format q4_0 --shapes 2048x2048,8192x2048 --reps 7
 *   … --runtime browser    in Chromium (SwiftShader here)
 *   … --shape-json '{"kernel":"matvec",...}'   to time a shape other than select.ts's default
 *   … --q8dot   to time, besides, the 8-bit-activation kernels (linear_q8dot*.wgsl; q4_0, q8_0)
 *               in select.ts's candidates for this device and in the wide shape
 *   … --candidates   to time, besides, every candidate select.ts lists for the problem
 *   … --dispatch-cost   first print the fixed cost of one dispatch (a tiny one, 256 in a pass)
 */
import { describeError } from '../src/errors.ts';
import type { Fallbacks } from '../src/gpu/capabilities.ts';
import { UsageError } from './args.ts';
import { parseMatvecArgs, USAGE } from './matvec-args.ts';

const log = (line: string) => console.log(line);

async function main(argv: string[]): Promise<number> {
  const parsed = parseMatvecArgs(argv);
  if (!parsed) {
    console.log(USAGE);
    return 0;
  }
  const { opts, runtime, browser, disable } = parsed;
  if (runtime === 'browser') {
    const { matvecBenchInBrowser } = await import('./browser-runner.ts');
    await matvecBenchInBrowser(opts, { browser, disable, onLog: log });
    return 0;
  }
  const { acquireNodeGpu } = await import('../src/gpu/node-gpu.ts');
  const { matvecBench } = await import('../src/measure/matvec-bench.ts');
  const ctx = await acquireNodeGpu({ disable: new Set(disable) as Fallbacks, onError: (m) => console.error(m) });
  // CPU ms of this process: lavapipe's threads run in it, so this column is robust to other load.
  const cpuClock = () => {
    const c0 = process.cpuUsage();
    return () => {
      const c = process.cpuUsage(c0);
      return (c.user + c.system) / 1000;
    };
  };
  try {
    await matvecBench(ctx, opts, log, cpuClock);
  } finally {
    ctx.destroy();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`error: ${describeError(e)}`);
    if (e instanceof UsageError) console.error(`\n${USAGE}`);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);

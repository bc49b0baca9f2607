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
import { parseArgs } from 'node:util';
import type { Fallbacks } from '../src/gpu/capabilities.ts';
import type { LinearShape } from '../src/kernels/linear-shapes.ts';
import type { WeightFormat } from '../src/kernels/weights.ts';
import type { MatvecBenchOptions } from '../src/measure/matvec-bench.ts';

const { values } = parseArgs({
  options: {
    runtime: { type: 'string', default: 'node' },
    browser: { type: 'string' },
    format: { type: 'string', default: 'q4_0' },
    shapes: { type: 'string', default: '2048x2048,8192x2048,2048x8192' },
    rows: { type: 'string', default: '1' },
    reps: { type: 'string', default: '7' },
    copies: { type: 'string', default: '' },
    'shape-json': { type: 'string', multiple: true, default: [] },
    disable: { type: 'string', default: '' },
    q8dot: { type: 'boolean', default: false },
    candidates: { type: 'boolean', default: false },
    'dispatch-cost': { type: 'boolean', default: false },
  },
});

const opts: MatvecBenchOptions = {
  format: values.format as WeightFormat,
  shapes: values.shapes.split(',').map((d) => d.split('x').map(Number) as [number, number]),
  rows: values.rows.split(',').map(Number),
  reps: Number(values.reps),
  copies: Number(values.copies) || 0,
  extra: values['shape-json'].map((j) => JSON.parse(j) as LinearShape),
  q8dot: values.q8dot,
  candidates: values.candidates,
  dispatchCost: values['dispatch-cost'],
};
const disable = values.disable ? values.disable.split(',') : [];
const log = (line: string) => console.log(line);

if (values.runtime === 'browser') {
  const { matvecBenchInBrowser } = await import('./browser-runner.ts');
  await matvecBenchInBrowser(opts, { browser: values.browser, disable, onLog: log });
} else {
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
}

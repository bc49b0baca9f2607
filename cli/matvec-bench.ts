/**
 * Linear-layer micro-benchmark (Node + Dawn): times linear() over real decode shapes against the
 * streaming-read kernel over the same weight buffers, in one process, alternating the two rep by
 * rep so machine load hits both alike. Prints medians and the ratio to the read roof.
 *
 * Several copies of each matrix are read in turn (`--copies`), so the working set exceeds the
 * last-level cache as a whole model's weights do.
 *
 *   node --import tsx --import ./cli/register.mjs cli/matvec-bench.ts --format q4_0 --shapes 2048x2048,8192x2048 --reps 7
 *   … --shape-json '{"kernel":"matvec",...}'   to time a shape other than select.ts's default
 *   … --q8dot   to time, besides, the 8-bit-activation kernels (linear_q8dot*.wgsl; q4_0, q8_0)
 *               in select.ts's candidates for this device and in the wide shape
 *   … --rows 16,64,128   prefill shapes (R > 8): each shape's GFLOP/s and its time relative to the
 *               first (select.ts's choice) per rep, median [min–max], are the figures to read there
 */
import { parseArgs } from 'node:util';
import { storageBuffer, storageBufferWith } from '../src/gpu/buffers.ts';
import { acquireNodeGpu } from '../src/gpu/node-gpu.ts';
import { hostNow } from '../src/gpu/timer.ts';
import { encodeDispatches, releaseDispatches, type Dispatch } from '../src/kernels/kernel.ts';
import { linear } from '../src/kernels/linear.ts';
import { linearShape, linearShapes, q8dotTokens, type LinearShape } from '../src/kernels/select.ts';
import { streamRead } from '../src/kernels/stream-read.ts';
import { destroyWeight, syntheticWeight, WEIGHT_FORMATS, type WeightFormat, type WeightTensor } from '../src/kernels/weights.ts';
import type { Fallbacks } from '../src/gpu/capabilities.ts';

const { values } = parseArgs({
  options: {
    format: { type: 'string', default: 'q4_0' },
    shapes: { type: 'string', default: '2048x2048,8192x2048,2048x8192' },
    rows: { type: 'string', default: '1' },
    reps: { type: 'string', default: '7' },
    copies: { type: 'string', default: '' },
    'shape-json': { type: 'string', multiple: true, default: [] },
    disable: { type: 'string', default: '' },
    q8dot: { type: 'boolean', default: false },
  },
});

const format = values.format as WeightFormat;
if (!WEIGHT_FORMATS.includes(format)) throw new Error(`unknown format ${format}`);
const disable = values.disable ? (new Set(values.disable.split(',')) as Fallbacks) : undefined;
const ctx = await acquireNodeGpu({ disable, onError: (m) => console.error(m) });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const reps = Number(values.reps);

/** Wall ms, and CPU ms of this process (lavapipe's threads run in it: robust to other load). */
async function time(dispatches: Dispatch[]): Promise<number> {
  return (await timeBoth(dispatches)).wall;
}

/** Host time of record → submit → onSubmittedWorkDone, ms. */
async function hostTimeMs(record: (encoder: GPUCommandEncoder) => void): Promise<number> {
  const encoder = ctx.device.createCommandEncoder();
  record(encoder);
  const commands = encoder.finish();
  const t0 = hostNow();
  ctx.device.queue.submit([commands]);
  await ctx.device.queue.onSubmittedWorkDone();
  return hostNow() - t0;
}

async function timeBoth(dispatches: Dispatch[]): Promise<{ wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const wall = await hostTimeMs((encoder) => encodeDispatches(encoder, dispatches));
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

/** The 8-bit-activation shapes among select.ts's candidates, and the wide one with a subgroup per workgroup where subgroups exist. */
function q8dotShapes(R: number): LinearShape[] {
  const listed = linearShapes(ctx.caps, R, format).filter((s) => q8dotTokens(s, format, R) > 0);
  const sg = ctx.caps.subgroupMinSize;
  const wide: LinearShape[] =
    ctx.caps.subgroups && sg >= 4 ? [{ kernel: 'matvec', subgroups: true, wide: true, q8dot: true, lanes: sg, rowBlock: 8, rowsPerWorkgroup: 64 }] : [];
  return [...listed, ...wide.filter((w) => !listed.some((s) => JSON.stringify(s) === JSON.stringify(w)))];
}

for (const R of values.rows.split(',').map(Number)) {
  for (const dims of values.shapes.split(',')) {
    const [rows, cols] = dims.split('x').map(Number);
    // select.ts's choice for this problem first (the engine's), then the others asked for.
    const first = linearShape(ctx.caps, R, format, cols);
    const more = [...(values.q8dot ? q8dotShapes(R) : []), ...values['shape-json'].map((j) => JSON.parse(j) as LinearShape)];
    const shapes: LinearShape[] = [first, ...more.filter((s) => JSON.stringify(s) !== JSON.stringify(first))];
    const copies = Number(values.copies) || Math.max(4, Math.ceil((96 * 2 ** 20) / ((rows * cols) / 2)));
    const weights: WeightTensor[] = [];
    for (let i = 0; i < copies; i++) weights.push(await syntheticWeight(ctx, `bench.w${i}`, format, rows, cols, i + 1, 0.05));
    const x = storageBufferWith(
      ctx.device,
      'bench.x',
      Float32Array.from({ length: R * cols }, (_, i) => Math.sin(i)),
    );
    const y = storageBuffer(ctx.device, 'bench.y', R * rows * 4);
    const partials = storageBuffer(ctx.device, 'bench.partials', 4096 * 4);
    const bytes = weights.reduce((n, w) => n + w.shards.reduce((m, s) => m + s.buffer.size, 0), 0);
    // The read roof: the fastest streaming-read grid over one buffer of as many bytes (as the bench's roof).
    const roofBytes = Math.min(bytes, ctx.caps.limits.maxStorageBufferBindingSize) & ~15;
    const big = storageBuffer(ctx.device, 'bench.big', roofBytes);
    let best: Dispatch[] = [];
    let bestMs = Infinity;
    for (const wg of [16, 64, 256, 1024]) {
      for (const run of [1, 4]) {
        const ds = [await streamRead(ctx, big, roofBytes, partials, wg, run)];
        await time(ds);
        const ms = median([await time(ds), await time(ds), await time(ds)]);
        if (ms < bestMs) {
          releaseDispatches(best);
          [best, bestMs] = [ds, ms];
        } else releaseDispatches(ds);
      }
    }
    const kernels: Dispatch[][] = [];
    for (const shape of shapes) kernels.push((await Promise.all(weights.map((w) => linear(ctx, 'bench.linear', w, x, y, R, { shape })))).flat());
    const roof: number[] = [];
    const roofCpu: number[] = [];
    const times: number[][] = kernels.map(() => []);
    const cpus: number[][] = kernels.map(() => []);
    for (const ds of kernels) await time(ds);
    for (let r = 0; r < reps; r++) {
      const t = await timeBoth(best);
      roof.push((t.wall * bytes) / roofBytes);
      roofCpu.push((t.cpu * bytes) / roofBytes);
      for (const [k, ds] of kernels.entries()) {
        const u = await timeBoth(ds);
        times[k].push(u.wall);
        cpus[k].push(u.cpu);
      }
    }
    const roofMs = median(roof);
    console.log(
      `${format} ${rows}x${cols} R=${R} ×${copies} (${(bytes / 2 ** 20).toFixed(0)} MiB): read roof ${roofMs.toFixed(2)} ms (cpu min ${Math.min(...roofCpu).toFixed(1)} ms) = ${(bytes / roofMs / 1e6).toFixed(2)} GB/s`,
    );
    for (const [k, shape] of shapes.entries()) {
      const ms = median(times[k]);
      const perRep = median(times[k].map((m, r) => roof[r] / m));
      const cpu = median(cpus[k].map((m, r) => roofCpu[r] / m));
      // Against the first shape (select.ts's choice), rep by rep: > 1 is faster than it.
      const speedups = times[k].map((m, r) => times[0][r] / m);
      const cpuSpeedups = cpus[k].map((m, r) => cpus[0][r] / m);
      const gflops = (2 * R * rows * cols * copies) / ms / 1e6;
      console.log(
        `  ${perRep.toFixed(3)} of roof (wall, per rep)  ${cpu.toFixed(3)} (cpu time)  ${ms.toFixed(2)} ms  ${gflops.toFixed(2)} GFLOP/s  ×${median(speedups).toFixed(2)} [${Math.min(...speedups).toFixed(2)}–${Math.max(...speedups).toFixed(2)}] of first (cpu time ×${median(cpuSpeedups).toFixed(2)} [${Math.min(...cpuSpeedups).toFixed(2)}–${Math.max(...cpuSpeedups).toFixed(2)}])  cpu median ${median(cpus[k]).toFixed(1)} min ${Math.min(...cpus[k]).toFixed(1)} ms  ${JSON.stringify(shape)}`,
      );
    }
    for (const ds of [best, ...kernels]) releaseDispatches(ds);
    for (const w of weights) destroyWeight(w);
    for (const b of [x, y, partials, big]) b.destroy();
  }
}
ctx.destroy();

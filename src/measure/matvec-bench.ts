/**
 * Linear-layer micro-benchmark: times linear() over real decode shapes against the streaming-read
 * kernel over the same weight buffers, alternating the two rep by rep so machine load hits both
 * alike, and prints medians and the ratio to the read roof. One implementation for both runtimes:
 * `cli/matvec-bench.ts` calls it in Node (Dawn) or, with `--runtime browser`, in the built page
 * through its automation entry point (`window.tokenscope.matvecBench`).
 *
 * Several copies of each matrix are read in turn (`copies`), so the working set exceeds the
 * last-level cache as a whole model's weights do.
 */
import { storageBuffer, storageBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { hostNow } from '../gpu/timer.ts';
import { encodeDispatches, releaseDispatches, type Dispatch } from '../kernels/kernel.ts';
import { linear } from '../kernels/linear.ts';
import { linearShape, linearShapes, q8dotTokens, type LinearShape } from '../kernels/linear-shapes.ts';
import { probeShapes, streamReadShapes } from '../kernels/select.ts';
import { streamRead, streamReadPartials } from '../kernels/stream-read.ts';
import { destroyWeight, syntheticWeight, WEIGHT_FORMATS, type WeightFormat, type WeightTensor } from '../kernels/weights.ts';

export interface MatvecBenchOptions {
  format: WeightFormat;
  /** Matrices as [rows, cols]. */
  shapes: [number, number][];
  /** Token rows R of each problem. */
  rows: number[];
  reps: number;
  /** Copies of each matrix read in turn (0: enough for ≥ 96 MiB of weights). */
  copies?: number;
  /** Shapes to time besides select.ts's default. */
  extra?: LinearShape[];
  /** Also every 8-bit-activation shape among select.ts's candidates, and the one-subgroup wide one. */
  q8dot?: boolean;
  /** Also every candidate select.ts lists for the problem (linearShapes). */
  candidates?: boolean;
  /** First print the fixed cost of a dispatch: a one-workgroup streaming read of 4 KiB, 256 times in one pass. */
  dispatchCost?: boolean;
}

/** CPU ms spent by this process since an earlier reading (Node only: lavapipe's threads run in it). */
export type CpuClock = () => () => number;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs the benchmark, handing each printed line to `log`. `cpuClock` adds CPU-time columns. */
export async function matvecBench(ctx: GpuContext, opts: MatvecBenchOptions, log: (line: string) => void, cpuClock?: CpuClock): Promise<void> {
  const { format, reps } = opts;
  if (!WEIGHT_FORMATS.includes(format)) throw new Error(`unknown format ${format}`);

  async function timeBoth(dispatches: Dispatch[]): Promise<{ wall: number; cpu: number }> {
    const cpu = cpuClock?.();
    const encoder = ctx.device.createCommandEncoder();
    encodeDispatches(encoder, dispatches);
    const commands = encoder.finish();
    const t0 = hostNow();
    ctx.device.queue.submit([commands]);
    await ctx.device.queue.onSubmittedWorkDone();
    const wall = hostNow() - t0;
    return { wall, cpu: cpu ? cpu() : NaN };
  }
  const time = async (ds: Dispatch[]) => (await timeBoth(ds)).wall;

  /** The 8-bit-activation shapes among select.ts's candidates, and the wide one with a subgroup per workgroup where subgroups exist. */
  function q8dotShapes(R: number): LinearShape[] {
    const listed = linearShapes(ctx.caps, R, format).filter((s) => q8dotTokens(s, format, R) > 0);
    const sg = ctx.caps.subgroupMinSize;
    const wide: LinearShape[] =
      ctx.caps.subgroups && sg >= 4 ? [{ kernel: 'matvec', subgroups: true, wide: true, q8dot: true, lanes: sg, rowBlock: 8, rowsPerWorkgroup: 64 }] : [];
    return [...listed, ...wide.filter((w) => !listed.some((s) => JSON.stringify(s) === JSON.stringify(w)))];
  }

  if (opts.dispatchCost) {
    const tiny = storageBuffer(ctx.device, 'bench.tiny', 4096);
    const partials = storageBuffer(ctx.device, 'bench.partials', 4096 * 4);
    const one = [await streamRead(ctx, tiny, 4096, partials, { layout: 'chunks', load: 'vec4', workgroups: 1, run: 1, reduce: 'workgroup' })];
    const many = Array.from({ length: 256 }, () => one[0]);
    await time(many);
    const ones: number[] = [];
    const manys: number[] = [];
    for (let r = 0; r < Math.max(reps, 5); r++) {
      ones.push(await time(one));
      manys.push(await time(many));
    }
    const perDispatch = (median(manys) - median(ones)) / 255;
    log(
      `dispatch: one pass of 1 tiny dispatch ${median(ones).toFixed(3)} ms (submit → done), of 256: ${median(manys).toFixed(2)} ms → ${(perDispatch * 1000).toFixed(1)} µs per dispatch`,
    );
    releaseDispatches(one);
    tiny.destroy();
    partials.destroy();
  }

  for (const R of opts.rows) {
    for (const [rows, cols] of opts.shapes) {
      // select.ts's choice for this problem first (the engine's), then the others asked for.
      const first = linearShape(ctx.caps, R, format, cols);
      const more = [...(opts.candidates ? linearShapes(ctx.caps, R, format, cols) : []), ...(opts.q8dot ? q8dotShapes(R) : []), ...(opts.extra ?? [])];
      const shapes: LinearShape[] = [first];
      for (const s of more) if (!shapes.some((t) => JSON.stringify(t) === JSON.stringify(s))) shapes.push(s);
      const copies = opts.copies || Math.max(4, Math.ceil((96 * 2 ** 20) / ((rows * cols) / 2)));
      const weights: WeightTensor[] = [];
      for (let i = 0; i < copies; i++) weights.push(await syntheticWeight(ctx, `bench.w${i}`, format, rows, cols, i + 1, 0.05));
      const x = storageBufferWith(
        ctx.device,
        'bench.x',
        Float32Array.from({ length: R * cols }, (_, i) => Math.sin(i)),
      );
      const y = storageBuffer(ctx.device, 'bench.y', R * rows * 4);
      const bytes = weights.reduce((n, w) => n + w.shards.reduce((m, s) => m + s.buffer.size, 0), 0);
      // The read roof: the fastest streaming-read shape (the bench's candidates) over one buffer of as many bytes.
      const roofBytes = Math.min(bytes, ctx.caps.limits.maxStorageBufferBindingSize) & ~15;
      const big = storageBuffer(ctx.device, 'bench.big', roofBytes);
      const readShapes = streamReadShapes(probeShapes(ctx.caps), roofBytes);
      const partials = storageBuffer(ctx.device, 'bench.partials', Math.max(...readShapes.map((s) => streamReadPartials(ctx, s))) * 4);
      let best: Dispatch[] = [];
      let bestMs = Infinity;
      for (const shape of readShapes) {
        const ds = [await streamRead(ctx, big, roofBytes, partials, shape)];
        await time(ds);
        const ms = median([await time(ds), await time(ds), await time(ds)]);
        if (ms < bestMs) {
          releaseDispatches(best);
          [best, bestMs] = [ds, ms];
        } else releaseDispatches(ds);
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
      const cpuNote = cpuClock ? ` (cpu min ${Math.min(...roofCpu).toFixed(1)} ms)` : '';
      log(
        `${format} ${rows}x${cols} R=${R} ×${copies} (${(bytes / 2 ** 20).toFixed(0)} MiB): read roof ${roofMs.toFixed(2)} ms${cpuNote} = ${(bytes / roofMs / 1e6).toFixed(2)} GB/s`,
      );
      for (const [k, shape] of shapes.entries()) {
        const ms = median(times[k]);
        const ratios = times[k].map((m, r) => roof[r] / m);
        const perRep = median(ratios);
        const spread = `${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`;
        const cpu = cpuClock
          ? `  ${median(cpus[k].map((m, r) => roofCpu[r] / m)).toFixed(3)} (cpu time)  cpu median ${median(cpus[k]).toFixed(1)} min ${Math.min(...cpus[k]).toFixed(1)} ms`
          : '';
        log(
          `  ${perRep.toFixed(3)} of roof (wall, per rep; ${spread})${cpu}  ${ms.toFixed(2)} ms (${(ms / copies).toFixed(3)} per matrix)  ${JSON.stringify(shape)}`,
        );
      }
      for (const ds of [best, ...kernels]) releaseDispatches(ds);
      for (const w of weights) destroyWeight(w);
      for (const b of [x, y, partials, big]) b.destroy();
    }
  }
}

/**
 * Per-device autotuning of the linear kernels, and their throughput measurement.
 *
 * `autotuneLinear` times select.ts's candidate shapes for one format and problem class on
 * synthetic weights (GPU timestamps when present, else the host clock), keeps the fastest, and
 * caches it per adapter in a caller-provided `TuneCache` (the page backs it with localStorage,
 * the CLI with a JSON file). Problems too big to time quickly are tuned on a proxy with the same
 * kernel class, shrunk to `tuneFlopCap` FLOPs (CPU adapters: ~30 ms a run, so a sweep stays
 * within about 2 s).
 */
import { storageBuffer } from '../gpu/buffers.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import type { GpuContext } from '../gpu/device.ts';
import { GpuTimer, hostNow, type ClockKind } from '../gpu/timer.ts';
import { encodeDispatches, releaseDispatches, totalCost, type Dispatch } from './kernel.ts';
import { checkLinearShape, linear } from './linear.ts';
import { MATVEC_MAX_TOKENS, linearShape, linearShapes, tuneFlopCap, type LinearShape } from './select.ts';
import { destroyWeight, syntheticWeight, type WeightFormat } from './weights.ts';

/** Where tuned shapes persist between runs: string keys to JSON strings. */
export interface TuneCache {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

export class MemoryTuneCache implements TuneCache {
  private readonly entries = new Map<string, string>();
  get(key: string): string | undefined {
    return this.entries.get(key);
  }
  set(key: string, value: string): void {
    this.entries.set(key, value);
  }
}

/**
 * The cache key: the adapter's identity, the format, and the problem class — the exact R for a
 * matvec (its pipelines are specialised per R), "prefill" for the matmul, and rows/cols rounded
 * up to powers of two.
 */
export function tuneKey(caps: Capabilities, format: WeightFormat, rows: number, cols: number, R: number): string {
  const a = caps.adapter;
  const tokens = R <= MATVEC_MAX_TOKENS ? `R${R}` : 'prefill';
  const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(n));
  return `linear|${a.vendor}|${a.architecture}|${a.device}|${a.description}|${format}|${tokens}|${pow2(rows)}x${pow2(cols)}`;
}

/** The problem timed for (R, rows, cols): halve rows (to 256), then cols (to 1024), then a matmul's R (to 64) until under the cap. */
export function proxyProblem(R: number, rows: number, cols: number, flopCap: number): { R: number; rows: number; cols: number } {
  const p = { R, rows, cols };
  while (2 * p.R * p.rows * p.cols > flopCap) {
    if (p.rows > 256) p.rows = Math.ceil(p.rows / 2);
    else if (p.cols > 1024) p.cols = Math.ceil(p.cols / 64) * 32;
    else if (p.R > 64 && p.R > MATVEC_MAX_TOKENS) p.R = Math.ceil(p.R / 2);
    else break;
  }
  return p;
}

export interface TimedRuns {
  /** One duration per timed run (ms). */
  samples: number[];
  clock: ClockKind;
}

/** Run `dispatches` as one pass `warmup + reps` times, timing the last `reps`. */
export async function timeDispatches(ctx: GpuContext, dispatches: readonly Dispatch[], reps: number, warmup = 1): Promise<TimedRuns> {
  const timer = GpuTimer.create(ctx.device, reps);
  const samples: number[] = [];
  try {
    for (let i = 0; i < warmup + reps; i++) {
      const encoder = ctx.device.createCommandEncoder({ label: 'autotune' });
      encodeDispatches(encoder, dispatches, { timer: i >= warmup ? timer : null, phase: 'autotune' });
      const commands = encoder.finish();
      const t0 = hostNow();
      ctx.device.queue.submit([commands]);
      await ctx.device.queue.onSubmittedWorkDone();
      if (i >= warmup && !timer) samples.push(hostNow() - t0);
    }
    if (timer) samples.push(...(await timer.read()).map((t) => t.ns / 1e6));
  } finally {
    timer?.destroy();
  }
  return { samples, clock: timer ? 'gpu-timestamp' : 'host' };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A synthetic (rows, cols) weight with zeroed X (R, cols) and Y (R, rows), freed after `use`. */
async function withProblem<T>(ctx: GpuContext, format: WeightFormat, p: { R: number; rows: number; cols: number }, use: (run: (shape: LinearShape) => Promise<Dispatch[]>) => Promise<T>): Promise<T> {
  const w = await syntheticWeight(ctx, 'autotune.w', format, p.rows, p.cols, 1, 0.05);
  const x = storageBuffer(ctx.device, 'autotune.x', p.R * p.cols * 4);
  const y = storageBuffer(ctx.device, 'autotune.y', p.R * p.rows * 4);
  try {
    return await use((shape) => linear(ctx, 'autotune', w, x, y, p.R, { shape }));
  } finally {
    destroyWeight(w);
    x.destroy();
    y.destroy();
  }
}

function parseShape(text: string): LinearShape | undefined {
  try {
    const shape = JSON.parse(text) as LinearShape;
    return shape.kernel === 'matvec' || shape.kernel === 'matmul' ? shape : undefined;
  } catch {
    return undefined;
  }
}

function valid(ctx: GpuContext, shape: LinearShape, R: number): boolean {
  try {
    checkLinearShape(ctx, shape, R);
    return true;
  } catch {
    return false;
  }
}

export interface TuneOptions {
  /** Stop trying further candidates after this long (ms); the default shape is always timed. Default 2000. */
  budgetMs?: number;
  /** Timed runs per candidate (after one warm-up). Default 3. */
  reps?: number;
}

/**
 * The fastest linear shape for `format` and a problem of R × (rows × cols) on this device:
 * from `cache` when tuned before, else measured now and stored there.
 */
export async function autotuneLinear(ctx: GpuContext, cache: TuneCache, format: WeightFormat, rows: number, cols: number, R: number, opts: TuneOptions = {}): Promise<LinearShape> {
  const key = tuneKey(ctx.caps, format, rows, cols, R);
  const cached = cache.get(key);
  if (cached !== undefined) {
    const shape = parseShape(cached);
    // A stale or foreign entry is tuned again and overwritten.
    if (shape && valid(ctx, shape, R)) return shape;
  }
  const budgetMs = opts.budgetMs ?? 2000;
  const reps = opts.reps ?? 3;
  const start = hostNow();
  const best = await withProblem(ctx, format, proxyProblem(R, rows, cols, tuneFlopCap(ctx.caps)), async (run) => {
    let winner = { shape: linearShape(ctx.caps, R), ms: Infinity };
    for (const shape of linearShapes(ctx.caps, R).filter((s) => valid(ctx, s, R))) {
      if (hostNow() - start > budgetMs && winner.ms < Infinity) break;
      const dispatches = await run(shape);
      try {
        const ms = median((await timeDispatches(ctx, dispatches, reps)).samples);
        if (ms < winner.ms) winner = { shape, ms };
      } finally {
        releaseDispatches(dispatches);
      }
    }
    return winner.shape;
  });
  cache.set(key, JSON.stringify(best));
  return best;
}

export interface LinearBench {
  shape: LinearShape;
  /** Median time of one run (ms). */
  ms: number;
  /** Cost-model bytes / time: weights (quants + scales) + X + Y. */
  gbps: number;
  /** 2·R·rows·cols / time. */
  gflops: number;
  clock: ClockKind;
  samples: number[];
}

/** Throughput of one linear layer R × (rows × cols) of `format` on synthetic weights. */
export async function benchLinear(
  ctx: GpuContext,
  format: WeightFormat,
  rows: number,
  cols: number,
  R: number,
  opts: { shape?: LinearShape; reps?: number } = {},
): Promise<LinearBench> {
  const shape = opts.shape ?? linearShape(ctx.caps, R);
  return withProblem(ctx, format, { R, rows, cols }, async (run) => {
    const dispatches = await run(shape);
    try {
      const { samples, clock } = await timeDispatches(ctx, dispatches, opts.reps ?? 5);
      const ms = median(samples);
      const cost = totalCost(dispatches);
      return { shape, ms, gbps: cost.bytes / (ms * 1e6), gflops: cost.flops / (ms * 1e6), clock, samples };
    } finally {
      releaseDispatches(dispatches);
    }
  });
}

/**
 * Per-device autotuning of the linear kernels, and their throughput measurement.
 *
 * `autotuneLinear` times select.ts's candidate shapes for one format and problem class on
 * synthetic weights (GPU timestamps when present, else the host clock) — on GPUs over enough
 * copies of the matrix to exceed the last-level cache (tuneCopies) — keeps the fastest, and
 * caches it per adapter in a caller-provided `TuneCache` (the page backs it with localStorage,
 * the CLI with a JSON file). Problems too big to time quickly are tuned on a proxy with the same
 * kernel class, shrunk to `tuneFlopCap` FLOPs (CPU adapters: ~30 ms a run, so a sweep stays
 * within about 2 s).
 */
import { storageBuffer } from '../gpu/buffers.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import type { GpuContext } from '../gpu/device.ts';
import { GpuTimer, hostNow, type ClockKind } from '../gpu/timer.ts';
import { encodeDispatches, releaseDispatches, type Dispatch } from './kernel.ts';
import { linear, linearCost } from './linear.ts';
import { checkLinearShape, linearProblemKey, linearRowClass } from './linear-plan.ts';
import { tuneFlopCap } from './select.ts';
import { MATVEC_MAX_TOKENS, linearShape, linearShapes, type LinearShape } from './linear-shapes.ts';
import { destroyWeight, syntheticWeight, weightBytes, type WeightFormat } from './weights.ts';

export { linearProblemKey };

/** Where tuned shapes persist between runs: string keys to JSON strings. */
export interface TuneCache {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

/** The page's cache: localStorage under one prefix (a memory cache where storage is unavailable, e.g. blocked cookies). */
export function localStorageTuneCache(prefix = 'tokenscope.tune.'): TuneCache {
  const storage = (globalThis as { localStorage?: Storage }).localStorage;
  try {
    storage?.getItem(prefix);
  } catch {
    return new MemoryTuneCache();
  }
  if (!storage) return new MemoryTuneCache();
  return {
    get: (key) => storage.getItem(prefix + key) ?? undefined,
    set: (key, value) => {
      try {
        storage.setItem(prefix + key, value);
      } catch {
        // Full or blocked storage: the shape is still used for this run.
      }
    },
  };
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
 * The cache key: the tuning method's version (TUNE_VERSION), the adapter's identity, the format,
 * and the problem class — the exact R for a matvec (its pipelines are specialised per R),
 * "prefill" for the matmul, and rows/cols rounded up to powers of two.
 */
/** Bumped when candidates or the timing change, so shapes tuned the old way are tuned again (v2: timed over cache-exceeding copies). */
export const TUNE_VERSION = 'v2';

export function tuneKey(caps: Capabilities, format: WeightFormat, rows: number, cols: number, R: number): string {
  const a = caps.adapter;
  const tokens = linearRowClass(R);
  const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(n));
  return `linear|${TUNE_VERSION}|${a.vendor}|${a.architecture}|${a.device}|${a.description}|${format}|${tokens}|${pow2(rows)}x${pow2(cols)}`;
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

/** A quantized clock decides only runs longer than this many quanta; shorter ones go to the host clock. */
const MIN_QUANTA = 32;
/** Host-clock timing repeats the work in one pass until a run lasts this long (ms), so submit overhead fades. */
const HOST_RUN_MS = 5;

/**
 * Run `dispatches` as one pass `warmup + reps` times, timing the last `reps` — on the GPU clock,
 * unless its timestamps are quantized (Dawn's 65.5 µs) and a run lasts under MIN_QUANTA quanta:
 * then on the host clock, each sample one pass that repeats the work enough times to last
 * HOST_RUN_MS, divided by the repetitions.
 */
export async function timeDispatches(ctx: GpuContext, dispatches: readonly Dispatch[], reps: number, warmup = 1): Promise<TimedRuns> {
  const gpu = await timeOnGpu(ctx, dispatches, reps, warmup);
  const q = ctx.timestamps;
  if (gpu.clock === 'gpu-timestamp' && q?.quantized && median(gpu.samples) * 1e6 < MIN_QUANTA * q.quantum_ns) return timeRepeatedOnHost(ctx, dispatches, reps);
  return gpu;
}

/** Host time of `times` back-to-back copies of the work in one pass (ms). */
async function hostRun(ctx: GpuContext, dispatches: readonly Dispatch[], times: number): Promise<number> {
  const encoder = ctx.device.createCommandEncoder({ label: 'autotune.host' });
  encodeDispatches(encoder, Array.from({ length: times }, () => dispatches).flat());
  const commands = encoder.finish();
  const t0 = hostNow();
  ctx.device.queue.submit([commands]);
  await ctx.device.queue.onSubmittedWorkDone();
  return hostNow() - t0;
}

async function timeRepeatedOnHost(ctx: GpuContext, dispatches: readonly Dispatch[], reps: number): Promise<TimedRuns> {
  const once = await hostRun(ctx, dispatches, 1);
  const times = Math.max(1, Math.min(1024, Math.ceil(HOST_RUN_MS / Math.max(once, 1e-3))));
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) samples.push((await hostRun(ctx, dispatches, times)) / times);
  return { samples, clock: 'host' };
}

async function timeOnGpu(ctx: GpuContext, dispatches: readonly Dispatch[], reps: number, warmup: number): Promise<TimedRuns> {
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

/**
 * Bytes of weights a GPU candidate is timed over: several copies of the matrix read in turn, so the
 * working set exceeds the largest last-level cache a GPU plausibly has (50–96 MB of L2 on NVIDIA's
 * and AMD's largest, Apple's system cache up to ~96 MB) and the timing ranks memory streaming, not
 * cache hits — decode reads every weight once per token, from memory. CPU adapters time one copy
 * (their proxies are shrunk to ~30 ms of work, and their caches are a few MB).
 */
export const TUNE_WORKING_SET_BYTES = 192 * 2 ** 20;
/** At most this many copies (a tiny matrix's dispatches would otherwise time launches, not bytes). */
const MAX_TUNE_COPIES = 64;

/** Copies of a `bytes`-byte matrix a candidate is timed over on this device (see TUNE_WORKING_SET_BYTES). */
export function tuneCopies(caps: Capabilities, bytes: number): number {
  if (caps.cpuLike) return 1;
  return Math.max(1, Math.min(MAX_TUNE_COPIES, Math.ceil(TUNE_WORKING_SET_BYTES / Math.max(bytes, 1))));
}

/**
 * `copies` synthetic (rows, cols) weights with zeroed X (R, cols) and Y (R, rows), freed after
 * `use`; `run(shape)` records the linear over every copy in turn.
 */
async function withProblem<T>(
  ctx: GpuContext,
  format: WeightFormat,
  p: { R: number; rows: number; cols: number },
  use: (run: (shape: LinearShape) => Promise<Dispatch[]>, copies: number) => Promise<T>,
): Promise<T> {
  const first = await syntheticWeight(ctx, 'autotune.w0', format, p.rows, p.cols, 1, 0.05);
  const copies = tuneCopies(ctx.caps, weightBytes(format, p.rows, p.cols));
  const weights = [first];
  const x = storageBuffer(ctx.device, 'autotune.x', p.R * p.cols * 4);
  const y = storageBuffer(ctx.device, 'autotune.y', p.R * p.rows * 4);
  try {
    for (let i = 1; i < copies; i++) weights.push(await syntheticWeight(ctx, `autotune.w${i}`, format, p.rows, p.cols, i + 1, 0.05));
    return await use(async (shape) => (await Promise.all(weights.map((w) => linear(ctx, 'autotune', w, x, y, p.R, { shape })))).flat(), copies);
  } finally {
    for (const w of weights) destroyWeight(w);
    x.destroy();
    y.destroy();
  }
}

function parseShape(text: string): LinearShape | undefined {
  try {
    const shape = JSON.parse(text) as LinearShape;
    return shape.kernel === 'matvec' || shape.kernel === 'matmul' || shape.kernel === 'rows' ? shape : undefined;
  } catch {
    return undefined;
  }
}

function valid(ctx: GpuContext, shape: LinearShape, R: number): boolean {
  try {
    checkLinearShape(ctx.caps, shape, R);
    return true;
  } catch {
    return false;
  }
}

export interface TuneOptions {
  /** The race's time (ms): candidates enter it during the first half, the default always; the rounds then end near it. Default 2000. */
  budgetMs?: number;
  /** Timed runs per candidate (after one warm-up), one per interleaved round. Default 3. */
  reps?: number;
  /** The shapes to try, the default first (default: select.ts's linearShapes). */
  candidates?: (R: number) => LinearShape[];
}

/**
 * The fastest linear shape for `format` and a problem of R × (rows × cols) on this device:
 * from `cache` when tuned before, else measured now and stored there.
 */
export async function autotuneLinear(
  ctx: GpuContext,
  cache: TuneCache,
  format: WeightFormat,
  rows: number,
  cols: number,
  R: number,
  opts: TuneOptions = {},
): Promise<LinearShape> {
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
  const best = await withProblem(ctx, format, proxyProblem(R, rows, cols, tuneFlopCap(ctx.caps)), async (run, copies) => {
    // The format's own candidates (the q4_0 nibble kernel, the 8-bit-activation kernels) for the real columns.
    const candidates = (opts.candidates?.(R) ?? linearShapes(ctx.caps, R, format, cols)).filter((s) => valid(ctx, s, R));
    if (candidates.length === 0) return linearShape(ctx.caps, R, format, cols);
    // Interleaved rounds: round one warms each candidate up and times it once, in order, until half
    // the budget is spent (the default always; a round-one entry costs two runs, the later rounds
    // reps − 1 more, so the race ends near the budget); each later round times every candidate in
    // the race once more, in turn. A burst of load from another process then lands on all of them alike,
    // not on whichever happened to be timed during it. The score is the median of a candidate's samples.
    const raced: { shape: LinearShape; dispatches: Dispatch[]; samples: number[] }[] = [];
    const sample = async (c: (typeof raced)[number], warmup: number) => {
      c.samples.push(median((await timeDispatches(ctx, c.dispatches, 1, warmup)).samples) / copies);
    };
    try {
      for (const shape of candidates) {
        if (hostNow() - start > budgetMs / 2 && raced.length > 0) break;
        const c = { shape, dispatches: await run(shape), samples: [] };
        raced.push(c);
        await sample(c, 1);
      }
      for (let round = 1; round < reps; round++) for (const c of raced) await sample(c, 0);
    } finally {
      for (const c of raced) releaseDispatches(c.dispatches);
    }
    return raced.reduce((a, b) => (median(b.samples) < median(a.samples) ? b : a)).shape;
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
  const shape = opts.shape ?? linearShape(ctx.caps, R, format, cols);
  return withProblem(ctx, format, { R, rows, cols }, async (run, copies) => {
    const dispatches = await run(shape);
    try {
      const timed = await timeDispatches(ctx, dispatches, opts.reps ?? 5);
      const samples = timed.samples.map((t) => t / copies);
      const clock = timed.clock;
      const ms = median(samples);
      const cost = linearCost(format, rows, cols, R);
      return { shape, ms, gbps: cost.bytes / (ms * 1e6), gflops: cost.flops / (ms * 1e6), clock, samples };
    } finally {
      releaseDispatches(dispatches);
    }
  });
}

/** A linear problem of a model: one weight matrix's format and shape. */
export interface LinearProblem {
  format: WeightFormat;
  rows: number;
  cols: number;
}

export interface TuneReport {
  /** Wall time of the tuning, cache hits included (ms). */
  ms: number;
  /** The shape linear() now uses per problem (linearProblemKey), tuned or from the cache. */
  shapes: Record<string, LinearShape>;
  /** Why nothing was tuned (then select.ts's static shapes run), if so. */
  skipped?: string;
}

/**
 * Tune every distinct problem for each step size in `Rs` within `budgetMs` in all (cache hits
 * are free; once the budget is spent, the remaining problems keep their static shape), and make
 * return the winners by linearProblemKey (the engine passes them to each linear).
 */
export async function tuneLinears(
  ctx: GpuContext,
  cache: TuneCache,
  problems: readonly LinearProblem[],
  Rs: readonly number[],
  budgetMs: number,
  candidates?: (R: number) => LinearShape[],
): Promise<TuneReport> {
  const start = hostNow();
  const shapes: Record<string, LinearShape> = {};
  const seen = new Set<string>();
  for (const R of Rs) {
    for (const p of problems) {
      const key = linearProblemKey(p.format, p.rows, p.cols, R);
      if (seen.has(key)) continue;
      seen.add(key);
      const left = budgetMs - (hostNow() - start);
      const cached = cache.get(tuneKey(ctx.caps, p.format, p.rows, p.cols, R));
      if (left <= 0 && cached === undefined) continue;
      const shape = await autotuneLinear(ctx, cache, p.format, p.rows, p.cols, R, { budgetMs: Math.max(0, left), candidates });
      shapes[key] = shape;
    }
  }
  return { ms: hostNow() - start, shapes };
}

/**
 * The device's two roofs, measured on the device: memory bandwidth (streaming read, read+write
 * copy, copyBufferToBuffer) and compute (FMA chains in f32 and f16, and the engine's own prefill GEMM on
 * f32 weights and, where its Q4_0 prefill runs 8-bit activations, on q4_0 weights).
 *
 * Protocol: the working set is sized from the device's limits to be far larger than any cache;
 * one warm-up, then repetitions until a minimum duration; the median is the headline and
 * min–max the spread. Each kernel's output is checked against the CPU first: a kernel that
 * computes the wrong thing fails the run instead of reporting a number.
 */
import { describeError, TokenscopeError } from '../errors.ts';
import { f16BitsToF32 } from '../f16.ts';
import { mulberry32 } from '../random.ts';
import { readBuffer, storageBuffer, storageBufferWith, withErrorScopes } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { GpuTimer, hostNow, type ClockKind } from '../gpu/timer.ts';
import { copyKernel } from '../kernels/copy.ts';
import { fillHash, hashSum, hashU32 } from '../kernels/fill-hash.ts';
import { fmaCost, fmaExpected, fmaGrid, fmaKernel, type FmaPrecision } from '../kernels/fma.ts';
import { encodeDispatches, releaseDispatches, type Dispatch } from '../kernels/kernel.ts';
import { linear } from '../kernels/linear.ts';
import { probeShapes, streamReadShapes, type ProbeShapes } from '../kernels/select.ts';
import { linearShape, q8dotTokens, type LinearShape } from '../kernels/linear-shapes.ts';
import { describeStreamRead, streamRead, streamReadPartials, sumPartials, type StreamReadShape } from '../kernels/stream-read.ts';
import { destroyWeight, uploadWeight } from '../kernels/weights.ts';
import { GGMLType } from '../model/gguf/types.ts';
import { dequantize } from '../model/quant.ts';
import { quantizeQ4_0 } from '../model/quantize.ts';
import { measureLaunch, type LaunchRoof } from './launch.ts';
import { DEFAULT_PROTOCOL, repeat, throwIfCancelled, type RepeatProtocol, type RepSample } from './protocol.ts';
import { CEILING_LABELS, type CeilingKey, type CeilingMeasurement, type Ceilings } from './sections/environment.ts';
import { readRoofDrift, ROOF_STATISTIC, roofConsistency, roofSpread, sustainedRoof } from './roof-checks.ts';
import { percentile } from './stats.ts';

export interface CeilingOptions {
  /** Upper bound on the bandwidth working set (bytes); the device's limits may lower it. */
  maxWorkingSetBytes?: number;
  protocol?: RepeatProtocol;
  /** Override the per-device kernel shapes (tests use fewer candidates to stay fast on CPU adapters). */
  shapes?: Partial<ProbeShapes>;
  signal?: AbortSignal;
  onProgress?: (step: string, fraction: number) => void;
}

const MiB = 1024 * 1024;

/** The working set: as large as the limits allow up to the cap, a multiple of 1 MiB. */
export function workingSetBytes(limits: { maxBufferSize: number; maxStorageBufferBindingSize: number }, cap: number): number {
  const allowed = Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize, cap);
  return Math.max(MiB, Math.floor(allowed / MiB) * MiB);
}

/** Measure every roof on `ctx`'s device. */
export async function measureCeilings(ctx: GpuContext, opts: CeilingOptions = {}): Promise<Ceilings> {
  const shapes = { ...probeShapes(ctx.caps), ...opts.shapes };
  const bytes = workingSetBytes(ctx.caps.limits, opts.maxWorkingSetBytes ?? shapes.workingSetCap);
  const protocol = opts.protocol ?? DEFAULT_PROTOCOL;
  const timer = GpuTimer.create(ctx.device, 8);
  const progress = opts.onProgress ?? (() => {});
  const run = new Runner(ctx, timer, protocol, opts.signal);
  const measured: Partial<Record<CeilingKey, CeilingMeasurement | null>> = {};
  const steps: [CeilingKey, string, () => Promise<CeilingMeasurement | null>][] = [
    ['read_bandwidth_gbps', 'streaming read', () => measureRead(run, bytes, shapes)],
    ['copy_bandwidth_gbps', 'read+write copy', () => measureCopy(run, bytes, shapes, 'copy')],
    ['copy_buffer_to_buffer_gbps', 'copyBufferToBuffer', () => measureCopy(run, bytes, shapes, 'b2b')],
    ['f32_gflops', 'f32 FMA chains', () => measureFma(run, 'f32', shapes.fmaWorkgroups, shapes.fmaIterations)],
    ['f16_gflops', 'f16 FMA chains', () => (ctx.caps.shaderF16 ? measureFma(run, 'f16', shapes.fmaWorkgroups, shapes.fmaIterations) : Promise.resolve(null))],
    ['matmul_f32_gflops', 'prefill GEMM (f32 weights)', () => measureMatmul(run, shapes.matmulTokens, shapes.matmulSize, 'f32')],
    ['matmul_q8_gflops', 'prefill GEMM (8-bit activations)', () => measureMatmul(run, shapes.matmulTokens, shapes.matmulSize, 'q4_0')],
  ];
  let launch: LaunchRoof | undefined;
  try {
    for (const [i, [key, name, measure]] of steps.entries()) {
      progress(name, i / steps.length);
      throwIfCancelled(opts.signal);
      ctx.assertAlive();
      measured[key] = await withErrorScopes(ctx.device, `Measuring ${name}`, measure);
    }
    progress('launch cost', steps.length / (steps.length + 1));
    throwIfCancelled(opts.signal);
    launch = await withErrorScopes(ctx.device, 'Measuring the launch cost', () => measureLaunch(ctx, timer, protocol, opts.signal));
    progress('done', 1);
  } finally {
    timer?.destroy();
  }
  // Every roof but f16 and the 8-bit GEMM is measured or the run threw.
  const measurements: Ceilings['measurements'] = {
    read_bandwidth_gbps: measured.read_bandwidth_gbps!,
    copy_bandwidth_gbps: measured.copy_bandwidth_gbps!,
    copy_buffer_to_buffer_gbps: measured.copy_buffer_to_buffer_gbps!,
    f32_gflops: measured.f32_gflops!,
    f16_gflops: measured.f16_gflops ?? null,
    matmul_f32_gflops: measured.matmul_f32_gflops!,
    matmul_q8_gflops: measured.matmul_q8_gflops ?? null,
  };
  return {
    read_bandwidth_gbps: measurements.read_bandwidth_gbps.value,
    copy_bandwidth_gbps: measurements.copy_bandwidth_gbps.value,
    copy_buffer_to_buffer_gbps: measurements.copy_buffer_to_buffer_gbps.value,
    f32_gflops: measurements.f32_gflops.value,
    f16_gflops: measurements.f16_gflops?.value ?? null,
    matmul_f32_gflops: measurements.matmul_f32_gflops.value,
    matmul_q8_gflops: measurements.matmul_q8_gflops?.value ?? null,
    working_set_bytes: bytes,
    launch,
    consistency: consistencyOf(measurements, ctx.caps.cpuLike),
    measurements,
  };
}

/** The read roof alone, measured as measureCeilings measures it (the same shapes, working set and protocol). */
export async function measureReadRoof(ctx: GpuContext, opts: Omit<CeilingOptions, 'onProgress'> = {}): Promise<CeilingMeasurement> {
  const shapes = { ...probeShapes(ctx.caps), ...opts.shapes };
  const bytes = workingSetBytes(ctx.caps.limits, opts.maxWorkingSetBytes ?? shapes.workingSetCap);
  const timer = GpuTimer.create(ctx.device, 8);
  try {
    const run = new Runner(ctx, timer, opts.protocol ?? DEFAULT_PROTOCOL, opts.signal);
    return await withErrorScopes(ctx.device, 'Measuring streaming read', () => measureRead(run, bytes, shapes));
  } finally {
    timer?.destroy();
  }
}

/** A streaming read kept ready between a sweep's requests: {@link readSampler}. */
export interface ReadSampler {
  /** One block of the read (a warm-up, then the median of the passes of SAMPLER_PROTOCOL), GB/s. */
  sample(): Promise<number>;
  destroy(): void;
}

/** The largest buffer a read sampler keeps beside the model: beyond any GPU's last-level cache, and small beside the weights it shares memory with. */
const SAMPLER_MAX_BYTES = 256 * MiB;

/**
 * The sampler's protocol: a pass to evict the model's data, then timed passes for at least 200 ms
 * (3–50 of them; their median). Three passes of 14 ms on lavapipe, whose passes span 2×, moved a
 * row's ratio by up to ±8% between runs.
 */
const SAMPLER_PROTOCOL: RepeatProtocol = { warmup: 1, minReps: 3, maxReps: 50, minDurationMs: 200 };

/**
 * The read roof's own kernel (the shape `roof` names, found again among streamReadShapes'
 * candidates) over its own buffer of up to SAMPLER_MAX_BYTES, ready to be timed between requests: a
 * sweep divides each request's decode bandwidth by the read measured beside it, so load that slows
 * both alike cancels (latency-summary's decode_of_read_beside). Null where the roof's shape is not
 * among today's candidates (roofs cached by another version). Verified as the roof is, once; a
 * buffer the device cannot allocate beside the model throws (withErrorScopes), its parts released.
 */
export async function readSampler(
  ctx: GpuContext,
  roof: Pick<Ceilings, 'working_set_bytes' | 'measurements'>,
  opts: { shapes?: Partial<ProbeShapes>; signal?: AbortSignal } = {},
): Promise<ReadSampler | null> {
  const shapes = { ...probeShapes(ctx.caps), ...opts.shapes };
  const roofShape = streamReadShapes(shapes, roof.working_set_bytes).find((c) => describeStreamRead(c) === roof.measurements.read_bandwidth_gbps.shape);
  const bytes = Math.min(roof.working_set_bytes, SAMPLER_MAX_BYTES);
  // The same kernel over fewer bytes: a tile grid has as many workgroups as the buffer has tiles.
  const shape = roofShape
    ? streamReadShapes(shapes, bytes).find(
        (c) =>
          c.layout === roofShape.layout &&
          c.load === roofShape.load &&
          c.run === roofShape.run &&
          c.reduce === roofShape.reduce &&
          (c.layout === 'tiles' || c.workgroups === roofShape.workgroups),
      )
    : undefined;
  if (!shape) return null;
  const seed = 0x5eed;
  const made: Dispatch[] = [];
  const buffers: GPUBuffer[] = [];
  const timer = GpuTimer.create(ctx.device, 8);
  const destroy = () => {
    releaseDispatches(made);
    for (const b of buffers) b.destroy();
    timer?.destroy();
  };
  try {
    return await withErrorScopes(ctx.device, 'Preparing the read timed beside the requests', async () => {
      const src = storageBuffer(ctx.device, 'sampler.src', bytes);
      const partials = storageBuffer(ctx.device, 'sampler.partials', streamReadPartials(ctx, shape) * 4);
      buffers.push(src, partials);
      const run = new Runner(ctx, timer, SAMPLER_PROTOCOL, opts.signal);
      const fill = await fillHash(ctx, src, bytes / 4, seed, 4096);
      made.push(fill);
      const read = await streamRead(ctx, src, bytes, partials, shape);
      made.push(read);
      await run.once((encoder) => encodeDispatches(encoder, [fill, read]));
      const got = sumPartials(await readU32(ctx, partials, 0, streamReadPartials(ctx, shape) * 4));
      const expected = hashSum(bytes / 4, seed);
      if (got !== expected) throw mismatch('streaming-read', `${describeStreamRead(shape)}: sum ${got} ≠ ${expected}`);
      const sample = async () => {
        const reps = await run.repeatDispatches([read]);
        return percentile(
          reps.map((r) => bytes / ((r.gpuMs ?? r.hostMs) / 1e3) / 1e9),
          50,
        );
      };
      return { sample, destroy };
    });
  } catch (e) {
    destroy();
    throw e;
  }
}

/**
 * readSampler for a latency sweep, or the sentence its notes carry where there is none (the roof's
 * shape not among this version's candidates, or its buffer refused beside the model): the sweep
 * then runs without "of read beside". A lost device or a cancel still throws.
 */
export async function besideSampler(
  ctx: GpuContext,
  roof: Pick<Ceilings, 'working_set_bytes' | 'measurements'>,
  opts: { shapes?: Partial<ProbeShapes>; signal?: AbortSignal } = {},
): Promise<ReadSampler | string> {
  const without = 'The latency sweep ran without the read measured beside each request (no "of read beside" figures):';
  try {
    return (await readSampler(ctx, roof, opts)) ?? `${without} the roofs' streaming-read shape is not among this version's candidates.`;
  } catch (e) {
    if (ctx.isLost() || (e instanceof TokenscopeError && e.code === 'cancelled')) throw e;
    return `${without} ${describeError(e)}`;
  }
}

/** The roofs' checks against each other (roof-checks.ts), from their measurements. */
function consistencyOf(measurements: Ceilings['measurements'], cpuAdapter: boolean): NonNullable<Ceilings['consistency']> {
  return roofConsistency(
    measurements.read_bandwidth_gbps.value,
    measurements.copy_bandwidth_gbps.value,
    measurements.copy_buffer_to_buffer_gbps.value,
    Object.entries(measurements).flatMap(([key, m]) =>
      m ? [{ label: CEILING_LABELS[key as CeilingKey], value: m.value, unit: m.unit, samples: m.samples }] : [],
    ),
    cpuAdapter,
  );
}

/**
 * `c` with its read roof measured again at the end of a run (`after`): the drift recorded, and where
 * the device read more than the bound above the first roof (drift.raised_from_gbps), the later
 * measurement is the read roof, its checks redone.
 */
export function withReadDrift(c: Ceilings, after: CeilingMeasurement, cpuAdapter: boolean): Ceilings {
  const drift = readRoofDrift(c.read_bandwidth_gbps, after.value);
  if (drift.raised_from_gbps === undefined) return { ...c, drift };
  const measurements = { ...c.measurements, read_bandwidth_gbps: after };
  return { ...c, read_bandwidth_gbps: after.value, measurements, consistency: consistencyOf(measurements, cpuAdapter), drift };
}

/** Times one recorded piece of GPU work per repetition, on the GPU clock when it can. */
class Runner {
  constructor(
    readonly ctx: GpuContext,
    private readonly timer: GpuTimer | null,
    private readonly protocol: RepeatProtocol,
    private readonly signal?: AbortSignal,
  ) {}

  get clock(): ClockKind {
    return this.timer ? 'gpu-timestamp' : 'host';
  }

  /** One submission of `record`, timed on both clocks. */
  async once(record: (encoder: GPUCommandEncoder, timer: GpuTimer | null) => void): Promise<RepSample> {
    // Every submission checks first, so Cancel lands within one submission (grid search and checks included).
    throwIfCancelled(this.signal);
    const encoder = this.ctx.device.createCommandEncoder({ label: 'ceilings' });
    record(encoder, this.timer);
    const commands = encoder.finish();
    const t0 = hostNow();
    this.ctx.device.queue.submit([commands]);
    await this.ctx.device.queue.onSubmittedWorkDone();
    const hostMs = hostNow() - t0;
    const gpu = this.timer ? await this.timer.read() : [];
    return gpu.length > 0 ? { hostMs, gpuMs: gpu[0].ns / 1e6 } : { hostMs };
  }

  checkCancelled(): void {
    throwIfCancelled(this.signal);
  }

  async repeat(record: (encoder: GPUCommandEncoder, timer: GpuTimer | null) => void): Promise<RepSample[]> {
    return repeat(this.protocol, () => this.once(record), this.signal);
  }

  /** Encode dispatches as one timed pass. */
  async repeatDispatches(dispatches: Dispatch[]): Promise<RepSample[]> {
    return this.repeat((encoder, timer) => encodeDispatches(encoder, dispatches, { timer, phase: 'probe' }));
  }

  measurement(samples: RepSample[], work: number, unit: CeilingMeasurement['unit'], shape: string): CeilingMeasurement {
    // GB/s and GFLOP/s: 1e9 per second.
    const values = samples.map((s) => work / (((s.gpuMs ?? s.hostMs) / 1e3) * 1e9));
    return {
      value: sustainedRoof(values, work),
      statistic: ROOF_STATISTIC,
      median: percentile(values, 50),
      spread: roofSpread(values),
      unit,
      min: Math.min(...values),
      max: Math.max(...values),
      samples: values,
      n: values.length,
      clock: samples[0]?.gpuMs !== undefined ? 'gpu-timestamp' : 'host',
      work_per_rep: work,
      shape,
      verified: true,
    };
  }
}

function mismatch(what: string, detail: string): TokenscopeError {
  return new TokenscopeError(
    'kernel-mismatch',
    `The ${what} kernel computed the wrong result on this device (${detail}); no number is reported for it.`,
    'This points at a driver or WebGPU implementation bug; try another browser or update the GPU driver.',
  );
}

async function readU32(ctx: GpuContext, buffer: GPUBuffer, offset: number, bytes: number): Promise<Uint32Array> {
  return new Uint32Array(await readBuffer(ctx.device, buffer, offset, bytes));
}

/** Rounds of the shape search; each samples every candidate still in it once more. */
const SEARCH_ROUNDS = 3;

/** A candidate stays in the search while its best time is within this factor of the best candidate's. */
const SEARCH_KEEP = 1.5;

/**
 * The index of the fastest of `candidates`, by interleaved rounds: round one warms each candidate up
 * and times it once, every later round times each candidate still within SEARCH_KEEP of the best
 * time once more, and of those that ran every round the one with the lowest median time wins (what
 * it sustains, as the roofs are: a best time alone let one lucky run pick a slower shape).
 * Interleaving spreads a transient slowdown over all candidates instead of one, and a shape several
 * times too slow costs one run instead of several.
 */
async function fastestShape(run: Runner, candidates: readonly Dispatch[]): Promise<number> {
  const times: number[][] = candidates.map(() => []);
  const best = () => Math.min(...times.flat());
  for (let round = 0; round < SEARCH_ROUNDS; round++) {
    const cutoff = round === 0 ? Infinity : SEARCH_KEEP * best();
    for (const [i, d] of candidates.entries()) {
      if (times[i].length < round || Math.min(...times[i]) > cutoff) continue;
      if (round === 0) await run.once((e) => encodeDispatches(e, [d]));
      const s = await run.once((e, timer) => encodeDispatches(e, [d], { timer, phase: 'probe' }));
      times[i].push(s.gpuMs ?? s.hostMs);
    }
  }
  const finalists = [...times.keys()].filter((i) => times[i].length === SEARCH_ROUNDS);
  return finalists.reduce((a, b) => (percentile(times[b], 50) < percentile(times[a], 50) ? b : a));
}

/**
 * The streaming read over `bytes`: the fastest of streamReadShapes' candidates, verified by the sum of
 * the partials that shape itself wrote (every word read once, none twice).
 */
async function measureRead(run: Runner, bytes: number, shapes: ProbeShapes): Promise<CeilingMeasurement> {
  const { ctx } = run;
  const seed = 0x5eed;
  const candidates = streamReadShapes(shapes, bytes);
  const src = storageBuffer(ctx.device, 'ceilings.src', bytes);
  const partials = storageBuffer(ctx.device, 'ceilings.partials', Math.max(...candidates.map((c) => streamReadPartials(ctx, c))) * 4);
  const made: Dispatch[] = [];
  try {
    const fill = await fillHash(ctx, src, bytes / 4, seed, 4096);
    made.push(fill);
    await run.once((encoder) => encodeDispatches(encoder, [fill]));
    for (const c of candidates) {
      run.checkCancelled();
      made.push(await streamRead(ctx, src, bytes, partials, c));
    }
    const pick = await fastestShape(run, made.slice(1));
    const shape = candidates[pick];
    const d = made[1 + pick];
    const samples = await run.repeatDispatches([d]);
    const got = sumPartials(await readU32(ctx, partials, 0, streamReadPartials(ctx, shape) * 4));
    const expected = hashSum(bytes / 4, seed);
    if (got !== expected) throw mismatch('streaming-read', `${describeStreamRead(shape)}: sum ${got} ≠ ${expected}`);
    return run.measurement(samples, bytes, 'GB/s', describeStreamRead(shape));
  } finally {
    releaseDispatches(made);
    src.destroy();
    partials.destroy();
  }
}

/** The shape that re-reads what the copies wrote: a plain chunked read, as many partials as the fill's grid. */
const CHECK_READ: StreamReadShape = { layout: 'chunks', load: 'vec4', workgroups: 4096, run: 1, reduce: 'workgroup' };

/** Kernel copy or copyBufferToBuffer over `bytes`, verified by re-reading what was written. */
async function measureCopy(run: Runner, bytes: number, shapes: ProbeShapes, mode: 'copy' | 'b2b'): Promise<CeilingMeasurement> {
  const { ctx } = run;
  const words = bytes / 4;
  const seed = 0x5eed;
  const src = storageBuffer(ctx.device, 'ceilings.src', bytes);
  const dst = storageBuffer(ctx.device, 'ceilings.dst', bytes);
  const partials = storageBuffer(ctx.device, 'ceilings.partials', streamReadPartials(ctx, CHECK_READ) * 4);
  const made: Dispatch[] = [];
  try {
    const fill = await fillHash(ctx, src, words, seed, CHECK_READ.workgroups);
    made.push(fill);
    await run.once((encoder) => encodeDispatches(encoder, [fill]));
    const expected = hashSum(words, seed);

    let samples: RepSample[];
    let shape: string;
    if (mode === 'copy') {
      const grids = shapes.bandwidthWorkgroups;
      const kernels: Dispatch[] = [];
      for (const wg of grids) {
        run.checkCancelled();
        kernels.push(await copyKernel(ctx, src, dst, bytes, wg));
      }
      made.push(...kernels);
      const pick = await fastestShape(run, kernels);
      samples = await run.repeatDispatches([kernels[pick]]);
      shape = `${grids[pick]} workgroups × 256 invocations`;
    } else {
      samples = await run.repeat((encoder, timer) => {
        // The copy sits outside any pass, so two empty passes bracket it with timestamps.
        const span = timer?.span({ phase: 'copyBufferToBuffer' });
        encoder.beginComputePass({ timestampWrites: span?.begin }).end();
        encoder.copyBufferToBuffer(src, 0, dst, 0, bytes);
        encoder.beginComputePass({ timestampWrites: span?.end }).end();
      });
      shape = `copyBufferToBuffer ${bytes / MiB} MiB`;
    }

    // Verify: what the copy wrote, summed by the streaming read and sampled word by word.
    const check = await streamRead(ctx, dst, bytes, partials, CHECK_READ);
    made.push(check);
    await run.once((e) => encodeDispatches(e, [check]));
    const got = sumPartials(await readU32(ctx, partials, 0, streamReadPartials(ctx, CHECK_READ) * 4));
    if (got !== expected) throw mismatch(mode, `sum ${got} ≠ ${expected}`);
    const sampleAt = [0, words / 2, words - 1024].map((w) => Math.floor(w));
    for (const w of sampleAt) {
      const got = await readU32(ctx, dst, w * 4, 4096);
      for (let i = 0; i < got.length; i++) {
        if (got[i] !== hashU32(((w + i) ^ seed) >>> 0)) throw mismatch(mode, `word ${w + i} differs`);
      }
    }
    return run.measurement(samples, 2 * bytes, 'GB/s', shape);
  } finally {
    releaseDispatches(made);
    src.destroy();
    dst.destroy();
    partials.destroy();
  }
}

async function measureFma(run: Runner, precision: FmaPrecision, workgroups: number, iterations: number): Promise<CeilingMeasurement> {
  const { ctx } = run;
  const invocations = workgroups * 256;
  const bytesPerVec = precision === 'f32' ? 16 : 8;
  const out = storageBuffer(ctx.device, `ceilings.fma_${precision}`, invocations * bytesPerVec);
  // f32: m = 1 makes each chain count its iterations exactly; f16 cannot count that high, so it
  // converges to c / (1 − m) instead.
  const m = precision === 'f32' ? 1 : 0.875;
  const d = await fmaKernel(ctx, precision, out, workgroups, iterations, m);
  try {
    const samples = await run.repeatDispatches([d]);
    const raw = await readBuffer(ctx.device, out, 0, Math.min(invocations, 64) * bytesPerVec);
    const got = precision === 'f32' ? new Float32Array(raw) : Float32Array.from(new Uint16Array(raw), f16BitsToF32);
    const tolerance = precision === 'f32' ? 1e-6 : 2e-2;
    for (let i = 0; i < got.length / 4; i++) {
      const want = fmaExpected(i, iterations, m);
      for (let lane = 0; lane < 4; lane++) {
        const g = got[i * 4 + lane];
        if (!(Math.abs(g - want[lane]) <= tolerance * Math.max(1, Math.abs(want[lane])))) {
          throw mismatch(`fma_${precision}`, `invocation ${i} lane ${lane}: ${g} ≠ ${want[lane]}`);
        }
      }
    }
    return run.measurement(
      samples,
      fmaCost(fmaGrid(ctx, workgroups).invocations, iterations, precision).flops,
      'GFLOP/s',
      `${workgroups} workgroups × 256 invocations × ${iterations} iterations × 8 chains`,
    );
  } finally {
    releaseDispatches([d]);
    out.destroy();
  }
}

// 8-bit activations: each x is rounded to d·round(x/d) with d = max|x_block|/127 per 32-element
// block of a row of X (linear_q8dot.wgsl), off by at most d/2 = max|x_block|/254. So an output's error
// is at most Σ_k |w_k|·max|x_block(k)|/254 (1% slack for the f32 rounding of d and of the products),
// which bounds every sampled output; that bound grows with n, a random-sign sum of the errors with √n,
// so the sampled outputs' NMSE is checked too. For the uniform X here max²/E[x²] ≤ 3, so the NMSE is
// ≈ 3/(12·127²) = 1.6e-5 (linear-check.ts derives the same); 2e-4 allows 12× that, and a wrong nibble
// order, offset or block scale gives ≳ 1e-2.
const Q8_ROUNDING = 1.01 / 254;
const Q8_NMSE = 2e-4;

/**
 * A prefill GEMM roof: the engine's own linear kernel (whatever select.ts, or the tuner, runs for
 * `tokens` tokens) on an n × n weight, Y = X·Wᵀ with `tokens` rows of X (probeShapes' matmulTokens).
 * So "of matmul roof" compares a model's prefill with what this engine's GEMM reaches on this
 * device, not with a separate probe kernel that prefill could outrun. 'f32': f32 weights, on every
 * device. 'q4_0': q4_0 weights where select.ts runs their prefill with 8-bit activations (CPU
 * adapters with packed_4x8_integer_dot_product), which is faster than the f32 kernel there, else
 * null. Q4_0 rather than Q8_0 or Q4_K: no more weight bytes than either and the cheapest scale
 * decode, so it should bound both (Q4_K prefill has not been timed against it).
 */
async function measureMatmul(run: Runner, tokens: number, n: number, format: 'f32' | 'q4_0'): Promise<CeilingMeasurement | null> {
  const { ctx } = run;
  const shape = format === 'f32' ? linearShape(ctx.caps, tokens) : linearShape(ctx.caps, tokens, format, n);
  const q8 = q8dotTokens(shape, format, tokens) > 0;
  if (format === 'q4_0' && !q8) return null;
  const x = seededFloats(tokens * n, 1);
  const seeded = seededFloats(n * n, 2);
  const bytes = format === 'f32' ? new Uint8Array(seeded.buffer) : quantizeQ4_0(seeded);
  // The weights the kernel multiplies by, as the CPU decodes them.
  const w = format === 'f32' ? seeded : dequantize(GGMLType.Q4_0, bytes, n * n);
  const X = storageBufferWith(ctx.device, 'ceilings.X', x);
  const W = uploadWeight(ctx, 'ceilings.W', format, n, n, bytes);
  const Y = storageBuffer(ctx.device, 'ceilings.Y', tokens * n * 4);
  const ds = await linear(ctx, `ceilings.matmul_${format}`, W, X, Y, tokens, { shape });
  try {
    const samples = await run.repeatDispatches(ds);
    const y = new Float32Array(await readBuffer(ctx.device, Y));
    // f32 products: |error| ≤ n·ε·Σ|x·w| at worst, 1e-5·Σ|x·w| is far above typical; f16 tiles
    // round each input to 11 bits (relative 2⁻¹¹ per product).
    const tolerance = shape.kernel === 'matmul' && shape.f16 ? 2e-3 : 1e-5;
    let squaredError = 0;
    let squaredRef = 0;
    for (let s = 0; s < 64; s++) {
      const r = (s * 7919) % tokens;
      const c = (s * 104729 + 13) % n;
      let ref = 0;
      let mag = 0;
      let rounding = 0;
      for (let k0 = 0; k0 < n; k0 += 32) {
        let xMax = 0;
        let wSum = 0;
        for (let k = k0; k < Math.min(n, k0 + 32); k++) {
          ref += x[r * n + k] * w[c * n + k];
          mag += Math.abs(x[r * n + k] * w[c * n + k]);
          xMax = Math.max(xMax, Math.abs(x[r * n + k]));
          wSum += Math.abs(w[c * n + k]);
        }
        rounding += xMax * wSum;
      }
      const bound = tolerance * mag + 1e-6 + (q8 ? Q8_ROUNDING * rounding : 0);
      if (!(Math.abs(y[r * n + c] - ref) <= bound)) throw mismatch(`prefill GEMM (${format})`, `Y[${r},${c}] = ${y[r * n + c]} ≠ ${ref}`);
      squaredError += (y[r * n + c] - ref) ** 2;
      squaredRef += ref ** 2;
    }
    if (q8 && !(squaredError <= Q8_NMSE * squaredRef)) {
      throw mismatch('prefill GEMM (q4_0)', `NMSE ${(squaredError / squaredRef).toExponential(2)} over 64 outputs > ${Q8_NMSE}`);
    }
    const flops = 2 * tokens * n * n;
    const size = tokens === n ? `${n}×${n}×${n}` : `${tokens} tokens × ${n}×${n}`;
    return run.measurement(samples, flops, 'GFLOP/s', `${size}, ${format} weights, the engine's prefill kernel (${describeLinearShape(shape)})`);
  } finally {
    releaseDispatches(ds);
    X.destroy();
    destroyWeight(W);
    Y.destroy();
  }
}

function describeLinearShape(s: LinearShape): string {
  if (s.kernel === 'matmul') return `tiled matmul ${s.tileM}×${s.tileN}${s.f16 ? ', f16 tiles' : ''}`;
  const activations = s.q8dot ? `, 8-bit activations${s.kernel === 'rows' && s.swar ? ', SWAR products' : ''}` : '';
  if (s.kernel === 'rows') return `register tile ${s.rowBlock} rows × ${s.tokens} tokens${activations}`;
  return `matvec ${s.rowBlock} rows per ${s.wide ? 'subgroup' : 'invocation'}${activations}`;
}

/** Uniform floats in [-1, 1), seeded. */
function seededFloats(n: number, seed: number): Float32Array {
  const random = mulberry32(seed);
  return Float32Array.from({ length: n }, () => 2 * random() - 1);
}

/**
 * The launch roof: what one dispatch costs on this device before it does any work. Three figures,
 * each from the trivial dependent kernel of shaders/launch_probe.wgsl (one invocation adds 1 to a
 * counter the next dispatch reads):
 *  - dispatch_us: a dependent dispatch inside one compute pass — the slope of the pass's time over
 *    two chain lengths (GPU timestamps where they exist, else the host clock), so the pass's and
 *    the submission's fixed costs cancel;
 *  - pass_us: the same dispatch, each in a compute pass of its own, one submission — the slope of
 *    the host time over two pass counts;
 *  - roundtrip_us: one submission of one dispatch plus a 4-byte readback (copy, map, read): the
 *    floor of a decode step's host round trip.
 * Each chain's counter is read back and must equal its length: a probe that skipped dispatches
 * fails the run instead of reporting a number. Definitions: docs/METRICS.md § Launch roof.
 */
import { TokenscopeError } from '../errors.ts';
import { readBuffer, storageBuffer } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { hostNow, type GpuTimer } from '../gpu/timer.ts';
import { encodeDispatches, makeDispatch, releaseDispatches, type Dispatch } from '../kernels/kernel.ts';
import { shader } from '../kernels/shaders.ts';
import { repeat, type RepeatProtocol, type RepSample } from './protocol.ts';
import { percentile, summarize } from './stats.ts';

/**
 * One launch figure (µs): `value` the p10 of its repetitions — a cost's best sustained value, as a
 * bandwidth roof is the best run of its rates (a loaded machine only ever adds to a dispatch's cost) —
 * with the median and spread beside it, and how it was timed.
 */
export interface LaunchMeasurement {
  value: number;
  median: number;
  min: number;
  max: number;
  n: number;
  clock: 'gpu-timestamp' | 'host';
  /** The chain lengths whose difference the slope is over (dispatch_us, pass_us); one for roundtrip_us. */
  lengths: number[];
}

export interface LaunchRoof {
  dispatch_us: number;
  pass_us: number;
  roundtrip_us: number;
  measurements: { dispatch_us: LaunchMeasurement; pass_us: LaunchMeasurement; roundtrip_us: LaunchMeasurement };
}

/** Chain lengths: short and long. CPU adapters run each dispatch for tens of µs, so shorter chains keep the probe quick there. */
export function launchChains(cpuLike: boolean): { short: number; long: number } {
  return cpuLike ? { short: 8, long: 64 } : { short: 16, long: 256 };
}

/** Measure the launch roof with `protocol` (its repetitions per chain length) on `ctx`'s device. */
export async function measureLaunch(ctx: GpuContext, timer: GpuTimer | null, protocol: RepeatProtocol, signal?: AbortSignal): Promise<LaunchRoof> {
  const counter = storageBuffer(ctx.device, 'launch.counter', 16);
  const readback = ctx.device.createBuffer({ label: 'launch.readback', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const made: Dispatch[] = [];
  try {
    const d = await makeDispatch(
      ctx,
      { ...shader('launch_probe'), constants: {} },
      { owner: 'probe.launch', kind: 'probe', bindings: [counter], workgroups: [1, 1, 1] },
    );
    made.push(d);
    const { short, long } = launchChains(ctx.caps.cpuLike);
    const chain = (n: number) => Array.from({ length: n }, () => d);

    // One pass of n dependent dispatches (timed on the GPU where it can be).
    const onePass = async (n: number): Promise<RepSample> => {
      const encoder = ctx.device.createCommandEncoder({ label: 'launch.pass' });
      encodeDispatches(encoder, chain(n), { timer, phase: 'probe' });
      const t0 = hostNow();
      ctx.device.queue.submit([encoder.finish()]);
      await ctx.device.queue.onSubmittedWorkDone();
      const hostMs = hostNow() - t0;
      const gpu = timer ? await timer.read() : [];
      return gpu.length > 0 ? { hostMs, gpuMs: gpu[0].ns / 1e6 } : { hostMs };
    };
    // n passes of one dispatch each, one submission (host clock: a pass's boundaries are what is timed).
    const manyPasses = async (n: number): Promise<RepSample> => {
      const encoder = ctx.device.createCommandEncoder({ label: 'launch.passes' });
      for (let i = 0; i < n; i++) encodeDispatches(encoder, [d]);
      const t0 = hostNow();
      ctx.device.queue.submit([encoder.finish()]);
      await ctx.device.queue.onSubmittedWorkDone();
      return { hostMs: hostNow() - t0 };
    };
    // One dispatch and a 4-byte readback, as a decode step ends.
    const roundTrip = async (): Promise<RepSample> => {
      const t0 = hostNow();
      const encoder = ctx.device.createCommandEncoder({ label: 'launch.roundtrip' });
      encodeDispatches(encoder, [d]);
      encoder.copyBufferToBuffer(counter, 0, readback, 0, 4);
      ctx.device.queue.submit([encoder.finish()]);
      await readback.mapAsync(GPUMapMode.READ, 0, 4);
      // Read the 4 bytes as a decode step reads its token id.
      readback.getMappedRange(0, 4).slice(0);
      readback.unmap();
      return { hostMs: hostNow() - t0 };
    };

    // Correctness first: each shape must run every dispatch.
    await verifyChain(ctx, counter, long, () => onePass(long), 'one pass');
    await verifyChain(ctx, counter, short, () => manyPasses(short), 'a pass each');

    const slope = async (run: (n: number) => Promise<RepSample>, gpuClock: boolean): Promise<LaunchMeasurement> => {
      // Interleave the two lengths so drift hits both alike.
      const a: number[] = [];
      const b: number[] = [];
      await repeat(
        protocol,
        async () => {
          const s = await run(short);
          const l = await run(long);
          const ms = (x: RepSample) => (gpuClock && x.gpuMs !== undefined ? x.gpuMs : x.hostMs);
          a.push(ms(s));
          b.push(ms(l));
          return { hostMs: s.hostMs + l.hostMs };
        },
        signal,
      );
      // The warm-up runs pushed pairs too: drop them.
      const w = protocol.warmup;
      return slopeMeasurement(a.slice(w), b.slice(w), short, long, gpuClock && timer !== null ? 'gpu-timestamp' : 'host');
    };
    const dispatch = await slope(onePass, true);
    const pass = await slope(manyPasses, false);
    const trips = (await repeat(protocol, roundTrip, signal)).map((s) => s.hostMs * 1e3);
    const roundtrip = costMeasurement(trips, 'host', [1]);
    return {
      dispatch_us: dispatch.value,
      pass_us: pass.value,
      roundtrip_us: roundtrip.value,
      measurements: { dispatch_us: dispatch, pass_us: pass, roundtrip_us: roundtrip },
    };
  } finally {
    releaseDispatches(made);
    counter.destroy();
    readback.destroy();
  }
}

/**
 * µs per dispatch from interleaved times (ms) of `short`- and `long`-dispatch runs: the difference
 * of each length's p10 over the difference in dispatches (the median's difference beside it). Noise
 * on a shared machine only adds time, and to one run of a pair at a time: the p10 of each length
 * removes it from both, where the p10 of per-pair slopes kept every pair whose short run was hit
 * (lavapipe under load: a tenth of the pairs at or below zero, a launch roof of "0.01 µs" against
 * a median of 15.6). min/max are the per-pair slopes' spread. A difference the clock cannot resolve
 * reads as "below 0.01 µs", never as zero or negative.
 */
export function slopeMeasurement(
  shortMs: readonly number[],
  longMs: readonly number[],
  short: number,
  long: number,
  clock: LaunchMeasurement['clock'],
): LaunchMeasurement {
  if (shortMs.length === 0 || shortMs.length !== longMs.length || long <= short)
    throw new RangeError('slopeMeasurement: paired samples of two different lengths are needed');
  const per = (a: number, b: number) => Math.max(0.01, ((b - a) * 1e3) / (long - short));
  const slopes = shortMs.map((s, i) => per(s, longMs[i]));
  const [s, l] = [summarize(shortMs), summarize(longMs)];
  return {
    value: per(percentile(shortMs, 10), percentile(longMs, 10)),
    median: per(s.p50, l.p50),
    min: Math.min(...slopes),
    max: Math.max(...slopes),
    n: slopes.length,
    clock,
    lengths: [short, long],
  };
}

/** A cost's samples (µs) as a launch figure: p10 (its best sustained value), median, min, max. */
function costMeasurement(samples: readonly number[], clock: LaunchMeasurement['clock'], lengths: number[]): LaunchMeasurement {
  const st = summarize(samples);
  return { value: percentile(samples, 10), median: st.p50, min: st.min, max: st.max, n: samples.length, clock, lengths };
}

async function verifyChain(ctx: GpuContext, counter: GPUBuffer, n: number, run: () => Promise<RepSample>, what: string): Promise<void> {
  ctx.device.queue.writeBuffer(counter, 0, new Uint32Array([0, 0, 0, 0]));
  await run();
  const got = new Uint32Array(await readBuffer(ctx.device, counter, 0, 4))[0];
  if (got !== n) {
    throw new TokenscopeError(
      'kernel-mismatch',
      `The launch probe ran ${got} of ${n} dependent dispatches (${what}); no launch roof is reported.`,
      'This points at a driver or WebGPU implementation bug; try another browser or update the GPU driver.',
    );
  }
}

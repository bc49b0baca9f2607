import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/jobs/job.ts';
import { roofFigures, runLatency, type LatencySection } from '../../src/measure/latency.ts';
import { presetChoice } from '../../src/model/choice.ts';
import { loadModel } from '../../src/model/load.ts';
import { validateResult } from '../../src/measure/validate.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { testGpu } from './context.ts';

describe('a latency sweep on a tiny model', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  it('--cached-prefix: TTFT per (prompt, cached length) beside the uncached row, for each C shorter than the prompt', async () => {
    const result = await runJob(
      ctx,
      {
        probe: true,
        probeMiB: 4,
        probeShapes: { bandwidthWorkgroups: [64], readRuns: [1], matmulSize: 128 },
        protocol: { warmup: 1, minReps: 2, maxReps: 2, minDurationMs: 0 },
        model: { preset: 'stories260k', quant: 'f32' },
        latency: { promptLengths: [4, 40], gen: 2, reps: 2, cooldownMs: 0, cachedPrefixes: [8, 32] },
      },
      new Set(),
    );
    const l = validateResult(JSON.parse(JSON.stringify(result))).latency as LatencySection;
    // Prompt 4 has no shorter cached length; prompt 40 has both.
    expect(l.prefix_ttft!.map((r) => [r.prompt_tokens, r.cached_tokens, r.n])).toEqual([
      [40, 8, 2],
      [40, 32, 2],
    ]);
    for (const r of l.prefix_ttft!) {
      expect(r.uncached_ttft_p50_ms).toBe(l.rows[1].ttft.p50);
      expect(r.ttft.p50).toBeGreaterThan(0);
      expect(r.saved_ms).toBeCloseTo(r.uncached_ttft_p50_ms - r.ttft.p50, 9);
      expect(r.saved_share).toBeCloseTo(r.saved_ms / r.uncached_ttft_p50_ms, 9);
    }
    // The cached-prefix requests are not timed requests of the sweep.
    expect(l.requests).toHaveLength(4);
  });

  it("the figures that divide by a roof are one function of the requests: the sweep's own, and halved against a doubled read roof", async () => {
    const loaded = await loadModel(ctx, presetChoice('stories260k', 'f32'), { shape: { maxSeq: 64, slots: 1, maxRows: 16 } });
    try {
      const roofs = { read_bandwidth_gbps: 10, f32_gflops: 100, matmul_f32_gflops: 50, launch: { dispatch_us: 1, roundtrip_us: 10 } };
      const settings = { prompt_lengths: [4, 12], output_tokens: 4, reps: 2, warmup: 0, cooldown_ms: 0, seed: 1, chunk: 16, profile: false };
      const l = await runLatency(loaded.engine, loaded.cold, roofs, settings);
      const again = roofFigures(loaded.engine, l.settings, l.requests, l.dispatches_per_step, roofs);
      expect(again).toEqual({ rows: l.rows, depth_curve: l.depth_curve, verdicts: l.verdicts, decode_waterfall: l.decode_waterfall });
      const doubled = roofFigures(loaded.engine, l.settings, l.requests, l.dispatches_per_step, { ...roofs, read_bandwidth_gbps: 20 });
      for (const [i, row] of doubled.rows.entries()) {
        expect(row.decode_efficiency!).toBeCloseTo(l.rows[i].decode_efficiency! / 2, 12);
        expect(row.decode_ceiling_tokens_per_s).toBeCloseTo(2 * l.rows[i].decode_ceiling_tokens_per_s, 9);
        expect(row.ttft).toEqual(l.rows[i].ttft);
      }
      for (const [i, w] of doubled.decode_waterfall!.entries()) expect(w.stream_ms).toBeCloseTo(l.decode_waterfall![i].stream_ms / 2, 12);
    } finally {
      await loaded.engine.destroy();
    }
  });

  it('times the read beside the requests: once before each length, once after each timed request; a request gets the mean of its two', async () => {
    const loaded = await loadModel(ctx, presetChoice('stories260k', 'f32'), { shape: { maxSeq: 64, slots: 1, maxRows: 16 } });
    try {
      const roofs = { read_bandwidth_gbps: 10, f32_gflops: 100, matmul_f32_gflops: 50 };
      const settings = { prompt_lengths: [4, 12], output_tokens: 3, reps: 2, warmup: 1, cooldown_ms: 0, seed: 1, chunk: 16, profile: false };
      // Blocks read 1, 2, 3 GB/s … in the order they are taken (warm-ups take none).
      let blocks = 0;
      const l = await runLatency(loaded.engine, loaded.cold, roofs, settings, { readBeside: async () => ++blocks });
      expect(blocks).toBe(6);
      expect(l.requests.map((r) => [r.prompt_tokens, r.read_beside_gbps])).toEqual([
        [4, 1.5],
        [4, 2.5],
        [12, 4.5],
        [12, 5.5],
      ]);
    } finally {
      await loaded.engine.destroy();
    }
  });

  it('yields a schema-valid result: TTFT grows with prompt length, GPU phases within wall time, kernels add up', async () => {
    const result = await runJob(
      ctx,
      {
        probe: true,
        probeMiB: 4,
        probeShapes: { bandwidthWorkgroups: [64], readRuns: [1], matmulSize: 128 },
        protocol: { warmup: 1, minReps: 2, maxReps: 2, minDurationMs: 0 },
        model: { preset: 'stories260k', quant: 'f32' },
        latency: { promptLengths: [4, 96], gen: 6, reps: 3, profile: true, cooldownMs: 0 },
      },
      new Set(),
    );
    const checked = validateResult(JSON.parse(JSON.stringify(result)));
    const l = checked.latency as LatencySection;
    expect(l.rows.map((r) => r.prompt_tokens)).toEqual([4, 96]);
    // The read roof re-measured after the model phases, and the launch roof with a waterfall per row.
    const c = checked.ceilings!;
    expect(c.drift!.read_after_gbps).toBeGreaterThan(0);
    expect(c.drift!.ratio).toBeCloseTo(c.drift!.read_after_gbps / (c.drift!.raised_from_gbps ?? c.read_bandwidth_gbps), 9);
    // Every row divides by the roof in use (the re-measured one where the run raised it).
    for (const r of l.rows) if (r.decode_bandwidth_gbps !== null) expect(r.decode_efficiency!).toBeCloseTo(r.decode_bandwidth_gbps / c.read_bandwidth_gbps, 6);
    expect(c.launch!.dispatch_us).toBeGreaterThan(0);
    if (ctx.caps.timestampQuery) {
      expect(l.decode_waterfall!.map((w) => w.prompt_tokens)).toEqual([4, 96]);
      for (const w of l.decode_waterfall!) expect(w.launch_ms).toBeCloseTo((l.dispatches_per_step!.decode * c.launch!.dispatch_us) / 1000, 9);
    }
    expect(l.requests).toHaveLength(6);
    // The read timed beside each request (the roof's kernel, verified on this device), and each row's
    // decode against it: the median of the requests' own ratios.
    expect(checked.notes ?? []).toEqual([]);
    for (const r of l.requests) expect(r.read_beside_gbps!).toBeGreaterThan(0);
    for (const row of l.rows) {
      const ratios = l.requests
        .filter((r) => r.prompt_tokens === row.prompt_tokens)
        .map((r) => row.decode_bytes_per_token / ((r.token_ms[5] - r.token_ms[0]) / 5 / 1000) / 1e9 / r.read_beside_gbps!)
        .sort((a, b) => a - b);
      expect(row.decode_of_read_beside!).toBeCloseTo(ratios[1], 9);
    }
    // 96 tokens of prefill are 24× the work of 4: the median TTFT must grow.
    expect(l.rows[1].ttft.p50).toBeGreaterThan(l.rows[0].ttft.p50);
    expect(l.rows[1].prefill_flops).toBeGreaterThan(20 * l.rows[0].prefill_flops);
    for (const r of l.requests) {
      expect(r.token_ms).toHaveLength(6);
      if (!ctx.caps.timestampQuery) continue;
      // GPU time of a phase is part of the wall time the host saw for it.
      expect(r.gpu_prefill_ms!).toBeGreaterThan(0);
      expect(r.gpu_prefill_ms!).toBeLessThanOrEqual(r.token_ms[0]);
      const decodeWall = r.token_ms[5] - r.token_ms[0];
      const decodeGpu = r.gpu_decode_ms!.reduce((a, b) => a + b, 0);
      expect(r.gpu_decode_ms).toHaveLength(5);
      expect(decodeGpu).toBeLessThanOrEqual(decodeWall + r.gpu_decode_ms![0]);
    }
    if (ctx.caps.timestampQuery) {
      // Profile mode times each kernel in its own pass. Per decode step, the kernels' times must add
      // up to the step's GPU span in that run (first pass begin → last pass end) less the idle gaps
      // between passes: at most the span, and at least half of it — a kernel class left out of the
      // attribution, or one counted twice, breaks this. (Against the unprofiled step time the sum is
      // inflated by the per-pass cost, several-fold on CPU adapters, so that is reported, not tested.)
      // The fused layer has no norm or elementwise pass of its own: RMSNorm is the prologue of the
      // next matvec/matmul, the residual add and SwiGLU are epilogues.
      const kernels = l.kernels!;
      expect(new Set(kernels.map((k) => k.kind))).toEqual(new Set(['embedding', 'matvec', 'matmul', 'rope', 'attention', 'sampling']));
      const decodeKernelMs = kernels.filter((k) => k.phase === 'decode').reduce((n, k) => n + k.ms_per_step, 0);
      const span = l.profile_step_ms!.decode!;
      // Each class's figure is its median over the steps and the span is the median step: medians
      // of different steps need not add up, so allow a quarter (a noisy step under load moves them).
      expect(decodeKernelMs).toBeLessThanOrEqual(span * 1.25);
      expect(decodeKernelMs).toBeGreaterThanOrEqual(span * 0.5);
      // Each profiled class is a roofline point: cost-model work per step, e.g. decode's matvec
      // moves weight bytes at ~1–2 FLOP/byte (f32 weights), prefill's matmul far more per byte.
      const points = l.kernel_points!;
      const at = (phase: string, kind: string) => points.find((p) => p.prompt_tokens === 96 && p.phase === phase && p.kind === kind)!;
      expect(at('decode', 'matvec').flops / at('decode', 'matvec').bytes).toBeLessThan(2);
      expect(at('prefill', 'matmul').flops / at('prefill', 'matmul').bytes).toBeGreaterThan(5);
      expect(points.every((p) => p.ms > 0 && p.bytes > 0)).toBe(true);
      const shares = kernels.filter((k) => k.phase === 'decode').reduce((n, k) => n + k.share, 0);
      expect(shares).toBeCloseTo(1, 6);
    } else {
      expect(l.gpu_clock).toBe('host');
    }
    expect(l.verdicts).toHaveLength(2);
    expect(l.depth_curve.length).toBeGreaterThan(0);
    expect(checked.model).toMatchObject({ id: 'stories260k', synthetic: true, label: 'synthetic weights — speed only' });
    // Synthetic weights have no file for the CPU reference: the section says so.
    expect(checked.accuracy).toEqual({ skipped: expect.stringMatching(/^synthetic weights: speed only/) });
  });
});

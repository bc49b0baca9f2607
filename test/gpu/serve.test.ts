import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { generate } from '../../src/model/generate.ts';
import { loadModel, type LoadedModel } from '../../src/model/load.ts';
import { GpuServingEngine, realClock } from '../../src/serve/gpu-engine.ts';
import { runServing } from '../../src/serve/run.ts';
import { runServe } from '../../src/serve/scheduler.ts';
import type { ServeRequest } from '../../src/serve/workload.ts';
import { testGpu } from './context.ts';
import { HAVE_MODEL, MISSING, openStories } from './models.ts';

const PROMPTS = [
  [1, 403, 407, 261, 378],
  [1, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282],
  [1, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394, 261],
];
const GEN = 12;

describe.skipIf(!HAVE_MODEL)(HAVE_MODEL ? 'serving on the real engine (stories260K)' : `serving — ${MISSING}`, () => {
  let ctx: GpuContext;
  let loaded: LoadedModel;
  beforeAll(async () => {
    ctx = await testGpu();
    loaded = await loadModel(ctx, { kind: 'gguf', model: await openStories(), id: 'stories260k' }, { shape: { maxSeq: 128, slots: 3, maxRows: 16 } });
  });
  afterAll(async () => {
    await loaded?.engine.destroy();
    ctx?.destroy();
  });

  it('B sequences decoded together (with chunked prefill sharing steps) produce the same tokens as each decoded alone', async () => {
    const alone: number[][] = [];
    for (const p of PROMPTS) alone.push((await generate(loaded.engine, p, GEN)).outputTokens);
    const requests: ServeRequest[] = PROMPTS.map((prompt, id) => ({ id, arrivalMs: 0, prompt, maxOutputTokens: GEN }));
    const gpu = new GpuServingEngine(loaded.engine, 3);
    // A 16-token step budget with 8-token chunks: the 21-token prompt is split and shares steps with decodes.
    const produced = new Map<number, number[]>();
    const recording = {
      maxBatch: gpu.maxBatch,
      admit: (seq: number, n: number) => gpu.admit(seq, n),
      release: (seq: number) => gpu.release(seq),
      step: async (plan: Parameters<typeof gpu.step>[0]) => {
        const out = await gpu.step(plan);
        for (const [seq, t] of out) produced.set(seq, [...(produced.get(seq) ?? []), t]);
        return out;
      },
    };
    const trace = await runServe(requests, recording, realClock, { maxTokensPerStep: 16, chunkSize: 8 });
    expect(trace.requests.every((r) => r.error === undefined)).toBe(true);
    expect(trace.steps.some((s) => s.decode.length > 0 && s.prefill.length > 0)).toBe(true);
    expect(trace.steps.some((s) => s.decode.length > 1)).toBe(true);
    PROMPTS.forEach((_, id) => expect(produced.get(id)).toEqual(alone[id]));
  });

  it('a small serve run yields a valid vLLM-style result with every request accounted for', async () => {
    const roofs = { read_bandwidth_gbps: 1, f32_gflops: 1, matmul_f32_gflops: 1 };
    const s = await runServing(
      loaded.engine,
      {
        requests: 6,
        rate: 50,
        burstiness: 1,
        prompt: { kind: 'uniform', min: 4, max: 24 },
        output: { kind: 'fixed', tokens: 6 },
        max_batch: 3,
        max_tokens_per_step: 16,
        chunk: 8,
        slo: { ttft: 10_000, tpot: 1_000 },
        seed: 7,
        sweep_batch: [1, 2],
      },
      roofs,
    );
    const r = s.run.result;
    expect(r.completed + r.failed).toBe(6);
    expect(r.failed).toBe(0);
    expect(r.total_output_tokens).toBe(36);
    expect(r.request_goodput!).toBeLessThanOrEqual(r.request_throughput + 1e-12);
    expect(s.run.slo_attainment).toBeGreaterThan(0);
    expect(s.run.timeline).toHaveLength(6);
    for (const t of s.run.timeline) {
      expect(t.admit_ms!).toBeGreaterThanOrEqual(t.arrival_ms);
      expect(t.first_token_ms!).toBeGreaterThanOrEqual(t.admit_ms!);
      expect(t.finish_ms).toBeGreaterThanOrEqual(t.first_token_ms!);
    }
    expect(s.batch_sweep!.map((b) => b.batch)).toEqual([1, 2]);
    expect(s.batch_sweep!.every((b) => b.output_throughput > 0)).toBe(true);
    // Batched decode moves right on the roofline: more FLOPs per byte at B = 2 than at B = 1.
    const [b1, b2] = s.batch_sweep!.map((b) => b.decode!);
    expect(b2.intensity).toBeGreaterThan(b1.intensity);
    // Queue time, the batch sizes the scheduler ran and the busy shares come from the same run's timestamps.
    expect(s.run.queue!.count).toBe(6);
    expect(s.run.batch_histogram!.reduce((n, b) => n + b.steps, 0)).toBe(s.run.steps.length);
    expect(s.run.busy_share!).toBeGreaterThan(0);
    expect(s.run.submit_busy_share!).toBeGreaterThan(0);
    expect(s.run.submit_busy_share!).toBeLessThanOrEqual(s.run.busy_share! + 1e-9);
    expect(s.run.availability).toMatchObject({ requests: 6, successful: 6, failed: 0, availability: 1, sla: null });
  });

  it('an overloaded run with a queue limit, a timeout and two classes accounts for every request, by cause and by class', async () => {
    const roofs = { read_bandwidth_gbps: 1, f32_gflops: 1, matmul_f32_gflops: 1 };
    const s = await runServing(
      loaded.engine,
      {
        requests: 16,
        rate: Infinity,
        burstiness: 1,
        prompt: { kind: 'fixed', tokens: 8 },
        output: { kind: 'fixed', tokens: 8 },
        max_batch: 3,
        max_tokens_per_step: 16,
        chunk: 8,
        slo: {},
        seed: 5,
        max_queue: 2,
        timeout_ms: 60_000,
        degrade_over: 1,
        sla_percent: 99.9,
        dollars_per_hour: 1,
        classes: [
          { name: 'chat', share: 0.5, slo: { ttft: 60_000 } },
          { name: 'batch', share: 0.5, slo: {}, output: { kind: 'fixed', tokens: 4 } },
        ],
      },
      roofs,
    );
    const a = s.run.availability!;
    // All 16 arrive at once: 3 slots + 2 queued are taken, the other 11 are rejected at the door.
    expect(a.errors_by_cause.rejected).toBe(11);
    expect(a.successful + a.failed).toBe(16);
    expect(s.run.result.completed + s.run.result.failed).toBe(16);
    expect(a.meets_sla).toBe(false);
    expect(a.degraded).toBeGreaterThan(0);
    const rows = s.run.classes!;
    expect(rows.map((c) => c.name)).toEqual(['chat', 'batch']);
    expect(rows.reduce((n, c) => n + c.requests, 0)).toBe(16);
    expect(rows.reduce((n, c) => n + c.step_time_share, 0)).toBeCloseTo(1, 9);
    for (const c of rows) if (c.completed > 0) expect(c.dollars_per_1k_output_tokens!).toBeGreaterThan(0);
  });
});

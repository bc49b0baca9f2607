/**
 * Prefix caching on the real engine (stories260K): hits copy cached K/V blocks into a sequence's
 * slot instead of prefilling them, and the greedy tokens must be exactly those of the same
 * requests served with the cache off — for full hits, partial hits and under eviction pressure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { runJob } from '../../src/jobs/job.ts';
import { findPreset } from '../../src/model/catalog.ts';
import { checkModelFits, loadModel, type LoadedModel } from '../../src/model/load.ts';
import { GpuServingEngine, realClock } from '../../src/serve/gpu-engine.ts';
import { runServe, type SchedulerOptions } from '../../src/serve/scheduler.ts';
import { mulberry32, type ServeRequest } from '../../src/serve/workload.ts';
import { testGpu } from './context.ts';
import { HAVE_MODEL, MISSING, openStories } from './models.ts';

const random = mulberry32(11);
const ids = (n: number) => Array.from({ length: n }, () => 1 + Math.floor(random() * 500));
const A = ids(16);
const B = ids(16);
const OPTIONS: SchedulerOptions = { maxTokensPerStep: 32, chunkSize: 16 };
const GEN = 6;

describe.skipIf(!HAVE_MODEL)(HAVE_MODEL ? 'prefix caching on the real engine (stories260K)' : `prefix caching — ${MISSING}`, () => {
  let ctx: GpuContext;
  let loaded: LoadedModel;
  beforeAll(async () => {
    ctx = await testGpu();
    loaded = await loadModel(ctx, { kind: 'gguf', model: await openStories(), id: 'stories260k' }, { shape: { maxSeq: 96, slots: 3, maxRows: 32 } });
  });
  afterAll(async () => {
    await loaded?.engine.destroy();
    ctx?.destroy();
  });

  /** Serve `prompts` (all at t = 0) with the cache on (a pool of `blocks`) or off: each request's tokens and cached length. */
  async function serve(prompts: number[][], maxBatch: number, blocks: number | null) {
    const requests: ServeRequest[] = prompts.map((prompt, id) => ({ id, arrivalMs: 0, prompt, maxOutputTokens: GEN }));
    const gpu = blocks === null ? new GpuServingEngine(loaded.engine, maxBatch) : await GpuServingEngine.withPrefixCache(loaded.engine, maxBatch, blocks);
    const trace = await runServe(requests, gpu, realClock, OPTIONS);
    expect(trace.requests.map((r) => r.error ?? null)).toEqual(prompts.map(() => null));
    return { tokens: trace.requests.map((r) => r.tokenIds), cached: trace.requests.map((r) => r.cachedTokens), use: gpu.prefixCacheUse() };
  }

  it('full and partial hits prefill only the uncached tokens and give the tokens of the run without the cache', async () => {
    const prompts = [
      [...A, ...B, ...ids(7)], // miss: caches A and A·B
      [...A, ...B, ...ids(5)], // hits both blocks
      [...A, ...ids(20)], // partial hit: the first block only
      [...ids(16), ...B, 3], // B after another block is a different prefix: miss
      [...A, ...B], // the whole prompt is cached: its last block is still prefilled
    ];
    // One sequence at a time, so each request sees the blocks of every earlier one.
    const on = await serve(prompts, 1, 32);
    const off = await serve(prompts, 1, null);
    expect(on.cached).toEqual([0, 32, 16, 0, 16]);
    expect(off.cached).toEqual([0, 0, 0, 0, 0]);
    expect(on.tokens).toEqual(off.tokens);
    expect(on.tokens.every((t) => t?.length === GEN)).toBe(true);
    expect(on.use).toMatchObject({ blocks_copied_in: 2 + 1 + 1, evictions: 0, capacity_blocks: 32 });
    expect(on.use!.bytes).toBe(on.use!.blocks * on.use!.block_bytes);
    expect(off.use).toBeNull();
  });

  it('batched sequences sharing a prefix, and a pool too small for the blocks, still give identical tokens', async () => {
    const prompts = Array.from({ length: 8 }, (_, i) => [...(i % 2 ? A : B), ...ids(16), ...ids(3 + i)]);
    const off = await serve(prompts, 3, null);
    // Room for 3 blocks: the runs evict (least recently used, unreferenced blocks) all along.
    const tight = await serve(prompts, 3, 3);
    expect(tight.tokens).toEqual(off.tokens);
    expect(tight.use!.evictions).toBeGreaterThan(0);
    expect(tight.use!.blocks).toBeLessThanOrEqual(3);
    expect(tight.cached.some((c) => (c ?? 0) > 0)).toBe(true);
    const roomy = await serve(prompts, 3, 64);
    expect(roomy.tokens).toEqual(off.tokens);
    expect(roomy.use!.evictions).toBe(0);
    // Requests admitted after the first of their prefix was prefilled hit its block.
    expect(roomy.cached.filter((c) => c === 16).length).toBeGreaterThanOrEqual(4);
  });

  it("conversations hit the previous turn's prompt and answer, with the tokens of the run without the cache", async () => {
    // Turn t + 1's prompt is turn t's prompt + its answer + a new message: the answer's blocks were written by decode steps.
    const requests: ServeRequest[] = [0, 1].flatMap((c) =>
      [0, 1, 2].map((t): ServeRequest => ({
        id: 3 * c + t,
        arrivalMs: 0,
        prompt: t === 0 ? [...A, ...ids(5 + c)] : ids(9),
        maxOutputTokens: 12,
        ...(t > 0 ? { follows: 3 * c + t - 1 } : {}),
      })),
    );
    const run = async (gpu: GpuServingEngine) => {
      const trace = await runServe(requests, gpu, realClock, OPTIONS);
      expect(trace.requests.map((r) => r.error ?? null)).toEqual(requests.map(() => null));
      return trace.requests;
    };
    const off = await run(new GpuServingEngine(loaded.engine, 2));
    const on = await run(await GpuServingEngine.withPrefixCache(loaded.engine, 2, 32));
    expect(on.map((r) => r.tokenIds)).toEqual(off.map((r) => r.tokenIds));
    expect(on.map((r) => r.promptTokens)).toEqual(off.map((r) => r.promptTokens));
    // Each later turn finds every full block of the turn before it (prompt and answer, less the last output) cached.
    for (const r of on.filter((_, i) => i % 3 > 0)) {
      const before = on[r.id - 1];
      expect(r.cachedTokens).toBe(Math.floor((before.promptTokens + 12 - 1) / 16) * 16);
    }
  });

  it('a memory budget the model fits but not with the pool beside it is refused before allocation, naming --prefix-cache off', async () => {
    const serve = {
      requests: 2,
      rate: Infinity,
      burstiness: 1,
      prompt: { kind: 'fixed' as const, tokens: 24 },
      output: { kind: 'fixed' as const, tokens: 4 },
      max_batch: 2,
      max_tokens_per_step: 32,
      chunk: 32,
      slo: {},
      seed: 42,
      shared_prefix: 16,
    };
    const job = {
      probe: true,
      probeMiB: 4,
      probeShapes: { bandwidthWorkgroups: [64], readRuns: [1], matmulSize: 128 },
      protocol: { warmup: 1, minReps: 2, maxReps: 2, minDurationMs: 0 },
      model: { preset: 'stories260k', quant: 'f32' as const },
      serve,
      context: 64,
    };
    const choice = { kind: 'preset' as const, preset: findPreset('stories260k')!, quant: 'f32' as const };
    const alone = checkModelFits(ctx.caps, choice, { maxSeq: 64, slots: 2, maxRows: 32 }).totalBytes;
    const doubled = checkModelFits(ctx.caps, choice, { maxSeq: 64, slots: 4, maxRows: 32 }).totalBytes;
    expect(doubled).toBeGreaterThan(alone);
    const budget = Math.floor((alone + doubled) / 2);
    await expect(runJob(ctx, { ...job, memoryBudgetBytes: budget }, new Set())).rejects.toMatchObject({
      code: 'model-too-large',
      message: expect.stringMatching(/^The model fits, but not with the prefix cache's pool beside it/),
      hint: expect.stringContaining('--prefix-cache off'),
    });
    // The same budget without the cache runs.
    const result = await runJob(ctx, { ...job, memoryBudgetBytes: budget, serve: { ...serve, prefix_cache: false } }, new Set());
    expect(result.serve?.run?.result.completed).toBe(2);
  });
});

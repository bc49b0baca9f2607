import { isTokenscopeError } from '../../src/errors.ts';
/**
 * A device lost in the middle of a run ends it with a typed `device-lost` error that gives the real
 * reason, in latency and in serving mode alike; nothing rejects unhandled afterwards (the step
 * queued ahead of the host included).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runLatency } from '../../src/measure/latency.ts';
import { TokenscopeError } from '../../src/errors.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import type { Engine } from '../../src/model/engine.ts';
import { bytesSource } from '../../src/model/gguf/source.ts';
import { buildTestModel } from '../../src/model/gguf/synthetic.ts';
import { loadModel, type LoadedModel } from '../../src/model/load.ts';
import { openModel } from '../../src/model/open.ts';
import { runServing } from '../../src/serve/run.ts';
import { runJob } from '../../src/jobs/job.ts';
import { testGpu } from './context.ts';

const ROOFS = { read_bandwidth_gbps: 100, f32_gflops: 1000, matmul_f32_gflops: 1000 };

async function tinyModel(ctx: GpuContext, slots: number): Promise<LoadedModel> {
  const bytes = buildTestModel({ architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 300 });
  const model = await openModel(bytesSource(bytes, 'tiny.gguf'));
  return loadModel(ctx, { kind: 'gguf', model, id: 'tiny' }, { shape: { maxSeq: 64, slots, maxRows: 16 } });
}

/** Destroys the device (as a driver reset would) when the engine's `n`-th step is submitted. */
function loseDeviceAtStep(engine: Engine, ctx: GpuContext, n: number): void {
  const submit = engine.submit.bind(engine);
  let steps = 0;
  engine.submit = (...args: Parameters<Engine['submit']>) => {
    if (++steps === n) ctx.destroy();
    return submit(...args);
  };
}

async function failure(action: () => Promise<unknown>): Promise<TokenscopeError> {
  const error = await action().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the run must fail, not finish').toBeInstanceOf(TokenscopeError);
  return error as TokenscopeError;
}

describe('a device lost mid-run', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  let ctx: GpuContext | undefined;
  beforeAll(() => {
    if (typeof process !== 'undefined') process.on('unhandledRejection', onUnhandled);
  });
  afterAll(() => {
    if (typeof process !== 'undefined') process.off('unhandledRejection', onUnhandled);
  });
  afterEach(() => ctx?.destroy());

  it('latency sweep: fails with the real reason, and the step queued ahead does not reject unhandled', async () => {
    ctx = await testGpu();
    const loaded = await tinyModel(ctx, 1);
    loseDeviceAtStep(loaded.engine, ctx, 6);
    const settings = { prompt_lengths: [4, 8], output_tokens: 8, reps: 3, warmup: 0, cooldown_ms: 0, seed: 1, chunk: 16, profile: false };
    const error = await failure(() => runLatency(loaded.engine, loaded.cold, ROOFS, settings));
    expect(error.code).toBe('device-lost');
    expect(error.message).toMatch(/The GPU device was lost \(destroyed/);
    expect(error.message).not.toMatch(/unknown reason/);
    await new Promise((r) => setTimeout(r, 300));
    expect(unhandled).toEqual([]);
  });

  it('serving: fails the run like latency mode instead of reporting a finished run of failed requests', async () => {
    ctx = await testGpu();
    const loaded = await tinyModel(ctx, 4);
    loseDeviceAtStep(loaded.engine, ctx, 5);
    const settings = {
      requests: 16,
      rate: Infinity,
      burstiness: 1,
      prompt: { kind: 'fixed', tokens: 8 } as const,
      output: { kind: 'fixed', tokens: 8 } as const,
      max_batch: 4,
      max_tokens_per_step: 16,
      chunk: 8,
      slo: {},
      seed: 3,
    };
    const error = await failure(() => runServing(loaded.engine, settings, ROOFS));
    expect(error.code).toBe('device-lost');
    expect(error.message).toMatch(/The GPU device was lost \(destroyed.*Results gathered so far are kept/);
    await new Promise((r) => setTimeout(r, 300));
    expect(unhandled).toEqual([]);
  });

  it('a bad model file is refused before any roof is measured', async () => {
    ctx = await testGpu();
    const steps: string[] = [];
    const bad = buildTestModel({ architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 300 });
    new DataView(bad.buffer).setUint32(4, 99, true); // GGUF version 99
    const error = await failure(() =>
      runJob(ctx!, { probe: true, probeMiB: 4, model: { preset: 'stories260k' }, latency: { promptLengths: [4], gen: 2, reps: 1 } }, new Set(), {
        modelSource: bytesSource(bad, 'bad.gguf'),
        onProgress: (step) => steps.push(step),
      }),
    );
    expect(error.message).toMatch(/bad\.gguf: GGUF version 99/);
    expect(steps.filter((s) => s.startsWith('roofs'))).toEqual([]);
  });

  it('a model that cannot fit the memory budget is refused before any roof is measured', async () => {
    ctx = await testGpu();
    const steps: string[] = [];
    const error = await failure(() =>
      runJob(
        ctx!,
        { probe: true, probeMiB: 4, model: { preset: 'stories260k' }, latency: { promptLengths: [4], gen: 2, reps: 1 }, memoryBudgetBytes: 64 * 1024 },
        new Set(),
        {
          onProgress: (step) => steps.push(step),
        },
      ),
    );
    expect(isTokenscopeError(error, 'model-too-large')).toBe(true);
    expect(error.message).toMatch(/more than the 0\.1 MiB budget/);
    expect(steps.filter((s) => s.startsWith('roofs'))).toEqual([]);
  });
});

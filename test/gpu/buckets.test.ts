/**
 * Steps padded to row buckets (serving): the padded steps give exactly the tokens of exact-size
 * steps, the padding rows compute bitwise what the row they repeat computes (so the K/V they store
 * over it are the same bytes), and after the serving warm-up no pipeline is compiled — and no
 * program built — inside a measured step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { getPipeline, pipelinesCreated } from '../../src/gpu/pipelines.ts';
import { shaderCode } from '../../src/kernels/shaders.ts';
import { readBuffer } from '../../src/gpu/buffers.ts';
import { buckets } from '../../src/model/buckets.ts';
import type { Engine } from '../../src/model/engine.ts';
import type { StepBuffers } from '../../src/model/forward.ts';
import { loadModel, type LoadedModel } from '../../src/model/load.ts';
import { GpuServingEngine, realClock } from '../../src/serve/gpu-engine.ts';
import { schedulerOptions, warmUpServing, workloadSpec, type ServeSettings } from '../../src/serve/run.ts';
import { runServe, type ServingEngine } from '../../src/serve/scheduler.ts';
import { generateWorkload } from '../../src/serve/workload.ts';
import { testGpu } from './context.ts';
import { HAVE_MODEL, MISSING, openStories } from './models.ts';

const SHAPE = { maxSeq: 128, slots: 4, maxRows: 16 };

const SETTINGS: ServeSettings = {
  requests: 8,
  rate: Infinity,
  burstiness: 1,
  prompt: { kind: 'uniform', min: 3, max: 30 },
  output: { kind: 'uniform', min: 2, max: 7 },
  max_batch: 4,
  max_tokens_per_step: 13,
  chunk: 5,
  slo: {},
  seed: 11,
};

/** The engine as a serving engine whose steps run at their exact size (padding turned off). */
function exactSteps(engine: Engine): Engine {
  return new Proxy(engine, {
    get(target, key) {
      if (key === 'submit') return (req: Parameters<Engine['submit']>[0], t: Parameters<Engine['submit']>[1]) => target.submit({ ...req, pad: false }, t);
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Serve the settings' workload on `engine`, recording every sampled token per sequence. */
async function serve(engine: Engine, settings = SETTINGS) {
  const gpu = new GpuServingEngine(engine, settings.max_batch);
  const produced = new Map<number, number[]>();
  const recording: ServingEngine = {
    maxBatch: gpu.maxBatch,
    admit: (seq, n) => gpu.admit(seq, n),
    release: (seq) => gpu.release(seq),
    step: async (plan) => {
      const out = await gpu.step(plan);
      for (const [seq, t] of out) produced.set(seq, [...(produced.get(seq) ?? []), t]);
      return out;
    },
  };
  const trace = await runServe(
    generateWorkload(workloadSpec(engine, settings, settings.rate, settings.requests)),
    recording,
    realClock,
    schedulerOptions(settings),
  );
  expect(trace.requests.every((r) => r.error === undefined)).toBe(true);
  return { trace, produced, rows: gpu.work.map((w) => w.decodeRows + w.prefillRows) };
}

describe.skipIf(!HAVE_MODEL)(HAVE_MODEL ? 'steps padded to row buckets (stories260K)' : `steps padded to row buckets — ${MISSING}`, () => {
  let ctx: GpuContext;
  let loaded: LoadedModel;
  beforeAll(async () => {
    ctx = await testGpu();
    loaded = await loadModel(ctx, { kind: 'gguf', model: await openStories(), id: 'stories260k' }, { shape: SHAPE });
  });
  afterAll(async () => {
    await loaded?.engine.destroy();
    ctx?.destroy();
  });

  it('give exactly the greedy tokens of exact-size steps, for steps of every size', async () => {
    const padded = await serve(loaded.engine);
    const exact = await serve(exactSteps(loaded.engine));
    // The run has steps whose size is not a bucket, batched decodes and mixed steps.
    const sizes = new Set(padded.rows);
    expect([...sizes].some((n) => !buckets(SHAPE.maxRows).includes(n))).toBe(true);
    expect(padded.trace.steps.some((s) => s.decode.length > 1)).toBe(true);
    expect(padded.trace.steps.some((s) => s.decode.length > 0 && s.prefill.length > 0)).toBe(true);
    expect(exact.rows).toEqual(padded.rows);
    expect(padded.produced.size).toBe(SETTINGS.requests);
    for (const [seq, tokens] of exact.produced) expect(padded.produced.get(seq), `sequence ${seq}`).toEqual(tokens);
  });

  it('padding rows compute bitwise what the row they repeat computes (the K/V they store are the same bytes)', async () => {
    const engine = loaded.engine;
    const b = (engine as unknown as { buffers: StepBuffers }).buffers;
    const c = engine.config;
    // 5 rows (a 3-token prefill chunk of slot 1 and decodes of slots 0 and 2) run as 8.
    const rows = [
      { slot: 0, pos: 0 },
      { slot: 2, pos: 0 },
      { slot: 1, pos: 0 },
      { slot: 1, pos: 1 },
      { slot: 1, pos: 2 },
    ];
    const out = await engine.submit({ rows, tokens: [1, 1, 1, 403, 407], sample: [0, 1, 4], pad: true });
    expect(out.tokens).toHaveLength(3);
    const qkvRow = (c.nHeads + 2 * c.nKvHeads) * c.headDim * 4;
    for (const [buffer, bytes] of [
      [b.qkv, qkvRow],
      [b.x, c.dim * 4],
    ] as const) {
      const data = new Uint8Array(await readBuffer(ctx.device, buffer, 0, 8 * bytes));
      const last = data.slice(4 * bytes, 5 * bytes);
      for (let r = 5; r < 8; r++) expect(data.slice(r * bytes, (r + 1) * bytes), `${buffer.label} row ${r}`).toEqual(last);
    }
    // The head's padding row (3 sampled → 4) repeats the last sampled row's logits.
    const logits = [await engine.readLogits(2), await engine.readLogits(3)];
    expect(logits[1]).toEqual(logits[0]);
  });

  it('compile no pipeline and build no program inside the measured steps after the serving warm-up', async () => {
    const engine = loaded.engine;
    const device = ctx.device;
    let compiled = 0;
    let modules = 0;
    // Count at the device too, so a pipeline made outside the pipeline cache is caught as well.
    const spy = device as unknown as Record<string, (...a: unknown[]) => unknown>;
    const originals = { sync: spy.createComputePipeline, async: spy.createComputePipelineAsync, module: spy.createShaderModule };
    spy.createComputePipeline = (...a) => (compiled++, originals.sync.apply(device, a));
    spy.createComputePipelineAsync = (...a) => (compiled++, originals.async.apply(device, a));
    spy.createShaderModule = (...a) => (modules++, originals.module.apply(device, a));
    try {
      // The counters see a compilation: a module not compiled before.
      await getPipeline(device, { name: 'copy', code: `${await shaderCode('copy')}\n// counted` });
      expect([compiled, modules]).toEqual([1, 1]);
      for (const [batch, settings] of [
        [4, SETTINGS],
        [2, { ...SETTINGS, max_tokens_per_step: 16, chunk: 16, prompt: { kind: 'uniform', min: 1, max: 16 } }],
      ] as const) {
        const s = { ...settings, max_batch: batch, seed: settings.seed + batch };
        await warmUpServing(engine, s, batch);
        const before = { compiled, modules, cached: pipelinesCreated(device), held: engine.programsHeld };
        const { rows } = await serve(engine, s);
        expect(new Set(rows).size).toBeGreaterThan(2);
        expect({ compiled, modules, cached: pipelinesCreated(device), held: engine.programsHeld }).toEqual(before);
      }
    } finally {
      Object.assign(spy, { createComputePipeline: originals.sync, createComputePipelineAsync: originals.async, createShaderModule: originals.module });
    }
  });
});

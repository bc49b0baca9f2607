/**
 * The accuracy pass (measure/accuracy-run.ts) on stories260K: F32 weights follow the f32 CPU
 * reference (top-1 everywhere, mean KLD below 1e-4: only f32 rounding and the KV cache's element
 * type differ); Q8_0/Q4_0 re-encodings with the 8-bit-activation kernels forced onto every decode
 * linear give a small positive KLD, and the section says int8 ran; a file quantized on load is
 * compared against the reference on the same rounded weights. In a page the reference runs in a
 * worker, in Node in the test's thread; the figures are the same either way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { MemoryTuneCache } from '../../src/kernels/autotune.ts';
import type { LinearShape } from '../../src/kernels/linear-shapes.ts';
import { runJob } from '../../src/jobs/job.ts';
import { measureAccuracy, type AccuracyMeasurement } from '../../src/measure/accuracy-run.ts';
import { validateResult } from '../../src/measure/validate.ts';
import { bytesSource } from '../../src/model/gguf/source.ts';
import { loadModel, type LoadOptions } from '../../src/model/load.ts';
import type { OpenModel } from '../../src/model/open.ts';
import { inBrowser, testGpu } from './context.ts';
import { HAVE_MODEL, MISSING, openStories, quantizedStories, readTestFile } from './models.ts';

const SHAPE = { maxSeq: 64, slots: 1, maxRows: 16 };

describe.skipIf(!HAVE_MODEL)(HAVE_MODEL ? 'accuracy beside speed on stories260K' : `accuracy on stories260K — ${MISSING}`, () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  async function measure(model: OpenModel, opts: Partial<LoadOptions> = {}): Promise<AccuracyMeasurement> {
    const loaded = await withErrorScopes(ctx.device, 'load', () =>
      loadModel(ctx, { kind: 'gguf', model, id: 'stories260k' }, { shape: SHAPE, warmShapes: [[1, 1]], ...opts }),
    );
    try {
      return await withErrorScopes(ctx.device, 'accuracy', () => measureAccuracy(loaded.engine, model));
    } finally {
      await loaded.engine.destroy();
    }
  }

  it('F32: top-1 at every position and mean KLD below 1e-4, all linears in f32', async () => {
    const a = await measure(await openStories());
    console.info(
      `stories260K F32: KLD mean ${a.kld_mean.toExponential(2)}, p99 ${a.kld_p99.toExponential(2)}, top-1 ${a.top1_agreement}, ${a.positions} positions, ${a.wall_ms.toFixed(0)} ms (reference ${a.reference_ms.toFixed(0)}, engine ${a.engine_ms.toFixed(0)})`,
    );
    expect(a.positions).toBe(64);
    expect(a.sequence.token_ids[0]).toBe(1);
    expect(a.top1_agreement).toBe(1);
    expect(a.first_disagreement).toBeNull();
    expect(a.kld_mean).toBeLessThan(1e-4);
    expect(a.kld_p99).toBeGreaterThanOrEqual(a.kld_mean);
    expect(a.arithmetic.linears.every((l) => l.format === 'f32' && l.precision === 'f32')).toBe(true);
    expect(a.arithmetic.kv_cache).toBe(ctx.caps.shaderF16 ? 'f16' : 'f32');
  });

  it(`the reference runs ${inBrowser ? 'in a worker, with the same figures as in this thread' : 'in this thread (Node has no page to keep free)'}`, async () => {
    const model = await openStories();
    const loaded = await loadModel(ctx, { kind: 'gguf', model, quant: 'q4_0', id: 'stories260k' }, { shape: SHAPE, warmShapes: [[1, 1]] });
    try {
      const byDefault = await measureAccuracy(loaded.engine, model, { quant: 'q4_0' });
      expect(byDefault.reference_thread).toBe(inBrowser ? 'worker' : 'main');
      expect(byDefault.reference_ms).toBeGreaterThan(0);
      expect(byDefault.reference_load_ms).toBeGreaterThan(0);
      if (!inBrowser) return;
      const inThread = await measureAccuracy(loaded.engine, model, { quant: 'q4_0', referenceThread: 'main' });
      expect(inThread.reference_thread).toBe('main');
      // The same JS arithmetic in either thread: the same float64 sums, the same KLD at every position.
      expect(byDefault.kld_per_position).toEqual(inThread.kld_per_position);
      expect(byDefault.kld_mean).toBeGreaterThan(0);
    } finally {
      await loaded.engine.destroy();
    }
  });

  // Every decode linear forced onto linear_q8dot (as linear-q8dot.test.ts does): X rounded to int8 per 32-block.
  it.each(['q8_0', 'q4_0'] as const)('%s with 8-bit activations: a small positive KLD, and the section says int8 ran', async (quant) => {
    const forced: LinearShape = ctx.caps.subgroups
      ? { kernel: 'matvec', subgroups: true, wide: true, q8dot: true, lanes: 64, rowBlock: 2, rowsPerWorkgroup: 8 }
      : { kernel: 'rows', lanes: 8, rowBlock: 8, tokens: 1, q8dot: true };
    const a = await measure(await quantizedStories(quant), { autotune: { cache: new MemoryTuneCache(), onCpu: true, candidates: () => [forced] } });
    console.info(
      `stories260K ${quant}, int8 activations: KLD mean ${a.kld_mean.toExponential(2)}, p99 ${a.kld_p99.toExponential(2)}, top-1 ${a.top1_agreement}, first disagreement ${a.first_disagreement}; ${JSON.stringify(a.arithmetic)}`,
    );
    expect(a.arithmetic.linears).toContainEqual(expect.objectContaining({ format: quant, precision: 'int8' }));
    expect(a.kld_mean).toBeGreaterThan(0);
    // The rounding of X adds error of the order of the weights' own rounding: far from a different model.
    expect(a.kld_mean).toBeLessThan(1e-2);
    expect(a.top1_agreement).toBeGreaterThan(0.9);
  });

  it('an F32 file quantized on load is compared against the reference on the same rounded weights', async () => {
    const model = await openStories();
    const loaded = await loadModel(ctx, { kind: 'gguf', model, quant: 'q4_0', id: 'stories260k' }, { shape: SHAPE, warmShapes: [[1, 1]] });
    try {
      const same = await measureAccuracy(loaded.engine, model, { quant: 'q4_0' });
      // Against the unrounded f32 weights the Q4_0 rounding itself would read as the kernels' error.
      const unrounded = await measureAccuracy(loaded.engine, model);
      console.info(
        `stories260K F32 → q4_0 on load: KLD mean ${same.kld_mean.toExponential(2)} (against the unrounded weights ${unrounded.kld_mean.toExponential(2)})`,
      );
      expect(same.arithmetic.linears.some((l) => l.format === 'q4_0')).toBe(true);
      expect(same.kld_mean).toBeLessThan(1e-2);
      expect(unrounded.kld_mean).toBeGreaterThan(2 * same.kld_mean);
    } finally {
      await loaded.engine.destroy();
    }
  });

  it('a generation job carries the section (schema-valid), and accuracy: off says it was turned off', async () => {
    const bytes = await readTestFile('stories260K.gguf');
    const job = { probe: false, model: {}, generate: { prompt: 'Once upon a time', gen: 4 } };
    const result = await runJob(ctx, job, new Set(), { modelSource: bytesSource(bytes, 'stories260K.gguf') });
    const checked = validateResult(JSON.parse(JSON.stringify(result)));
    expect(checked.accuracy).toMatchObject({
      reference: 'cpu-f32',
      top1_agreement: 1,
      first_disagreement: null,
      reference_thread: inBrowser ? 'worker' : 'main',
    });
    const off = await runJob(ctx, { ...job, accuracy: 'off' }, new Set(), { modelSource: bytesSource(bytes, 'stories260K.gguf') });
    expect(off.accuracy).toEqual({ skipped: expect.stringMatching(/turned off/) });
  });
});

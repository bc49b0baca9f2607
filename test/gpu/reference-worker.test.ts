/**
 * The accuracy pass's CPU reference in a page's worker (src/measure/reference-thread.ts) when the
 * worker goes wrong: one that cannot load, one that runs out of memory, one that reports a typed
 * error, one that never answers while the run is cancelled, and a model file whose bytes cannot be
 * read. Each ends the pass with its own error (a RangeError stays one: the job turns it into a
 * skipped section), and none hangs. The worker's good path is in accuracy.test.ts. Node runs the
 * reference in process, so in the gpu-node project this file is skipped, saying so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTokenscopeError, TokenscopeError } from '../../src/errors.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { measureAccuracy } from '../../src/measure/accuracy-run.ts';
import { canRunReferenceOffThread } from '../../src/measure/reference-thread.ts';
import { loadModel, type LoadedModel } from '../../src/model/load.ts';
import type { OpenModel } from '../../src/model/open.ts';
import { testGpu } from './context.ts';
import { HAVE_MODEL, MISSING, openStories } from './models.ts';

const PAGE = canRunReferenceOffThread();

/** A classic worker running `source`. */
const workerOf = (source: string) => () => new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const skip = !PAGE || !HAVE_MODEL;
const why = !PAGE ? ' — SKIPPED: pages only (Node runs the reference in process)' : HAVE_MODEL ? '' : ` — ${MISSING}`;

describe.skipIf(skip)(`the CPU reference's worker, when it fails${why}`, () => {
  let ctx: GpuContext;
  let model: OpenModel;
  let loaded: LoadedModel;
  beforeAll(async () => {
    ctx = await testGpu();
    model = await openStories();
    loaded = await loadModel(ctx, { kind: 'gguf', model, id: 'stories260k' }, { shape: { maxSeq: 64, slots: 1, maxRows: 16 }, warmShapes: [[1, 1]] });
  });
  afterAll(async () => {
    await loaded?.engine.destroy();
    ctx?.destroy();
  });

  it('a worker that cannot load ends the pass with an io error that says so', async () => {
    const e = await rejection(measureAccuracy(loaded.engine, model, { createWorker: workerOf('throw new Error("no such script")') }));
    expect(isTokenscopeError(e) && e.code).toBe('io');
    expect((e as Error).message).toMatch(/CPU reference's worker failed: .*no such script/);
  });

  it('a worker out of memory ends it with a RangeError (the job reports a skipped section)', async () => {
    const e = await rejection(measureAccuracy(loaded.engine, model, { createWorker: workerOf('throw new RangeError("Array buffer allocation failed")') }));
    expect(e).toBeInstanceOf(RangeError);
    expect((e as Error).message).toMatch(/allocation failed/);
  });

  it('a typed error from the worker arrives as itself, with its hint', async () => {
    const posted = {
      type: 'error',
      error: { name: 'TokenscopeError', code: 'model-format', message: 'tensor blk.0.attn_q.weight is short', hint: 'Re-download it.' },
    };
    const e = await rejection(measureAccuracy(loaded.engine, model, { createWorker: workerOf(`onmessage = () => postMessage(${JSON.stringify(posted)})`) }));
    expect(e).toBeInstanceOf(TokenscopeError);
    expect(e).toMatchObject({ code: 'model-format', message: 'tensor blk.0.attn_q.weight is short', hint: 'Re-download it.' });
  });

  it('a worker that never answers does not hang a cancelled run', async () => {
    const controller = new AbortController();
    const pass = measureAccuracy(loaded.engine, model, { signal: controller.signal, createWorker: workerOf('onmessage = () => {}') });
    setTimeout(() => controller.abort(), 200);
    const e = await rejection(pass);
    expect(isTokenscopeError(e) && e.code).toBe('cancelled');
  });

  it("a model file that fails to read stops the real worker with the file's error", async () => {
    const failing = Object.create(model.gguf) as OpenModel['gguf'];
    failing.tensorBytes = () => Promise.reject(new TokenscopeError('io', 'could not read stories260K.gguf at byte 1024', 'Pick the file again.'));
    const e = await rejection(measureAccuracy(loaded.engine, { ...model, gguf: failing }));
    expect(e).toMatchObject({ code: 'io', message: 'could not read stories260K.gguf at byte 1024' });
  });
});

/**
 * A model whose numbers are not numbers (a NaN or infinite weight) must fail the run with "the
 * model produced non-finite values", in generation and in a latency sweep, never answer with a
 * token id of 4294967295 or finish with timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { TokenscopeError } from '../../src/errors.ts';
import { runLatency } from '../../src/measure/latency.ts';
import { generate } from '../../src/model/generate.ts';
import { bytesSource } from '../../src/model/gguf/source.ts';
import { testModelParts } from '../../src/model/gguf/synthetic.ts';
import { encodeGGUF } from '../../src/model/gguf/writer.ts';
import { loadModel, type LoadedModel } from '../../src/model/load.ts';
import { openModel } from '../../src/model/open.ts';
import { testGpu } from './context.ts';

const SHAPE = { architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 300 } as const;

/** The tiny model with every value of `tensor` set to `value`. */
async function poisoned(ctx: GpuContext, tensor: string, value: number): Promise<LoadedModel> {
  const parts = testModelParts(SHAPE);
  const t = parts.tensors.find((x) => x.name === tensor)!;
  new Float32Array(t.data.buffer, t.data.byteOffset, t.data.byteLength / 4).fill(value);
  const model = await openModel(bytesSource(encodeGGUF(parts.metadata, parts.tensors), `${tensor}-${value}.gguf`));
  return loadModel(ctx, { kind: 'gguf', model, id: 'poisoned' }, { shape: { maxSeq: 64, slots: 1, maxRows: 16 } });
}

async function failure(action: () => Promise<unknown>): Promise<TokenscopeError> {
  const error = await action().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TokenscopeError);
  return error as TokenscopeError;
}

describe('non-finite values in a model', () => {
  let ctx: GpuContext;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  beforeAll(async () => {
    ctx = await testGpu();
    if (typeof process !== 'undefined') process.on('unhandledRejection', onUnhandled);
  });
  afterAll(() => {
    if (typeof process !== 'undefined') process.off('unhandledRejection', onUnhandled);
    ctx?.destroy();
  });

  it('NaN weights: generation fails with "non-finite values", not "token id 4294967295"', async () => {
    const loaded = await poisoned(ctx, 'output_norm.weight', NaN);
    try {
      const error = await failure(() => generate(loaded.engine, [1, 5, 9], 6));
      expect(error.message).toMatch(/The model produced non-finite values .*output token 0/);
      expect(error.message).not.toMatch(/4294967295/);
      const checked = await failure(() => generate(loaded.engine, [1, 5, 9], 6, { checkLogits: true }));
      expect(checked.message).toMatch(/non-finite values .*first step's logits \(token 0 is NaN\)/);
    } finally {
      await loaded.engine.destroy();
    }
  });

  it('infinite weights: the first-step logits check catches what the argmax alone would not', async () => {
    const loaded = await poisoned(ctx, 'output.weight', Infinity);
    try {
      const error = await failure(() => generate(loaded.engine, [1, 5, 9], 6, { checkLogits: true }));
      expect(error.message).toMatch(/non-finite values .*first step's logits/);
    } finally {
      await loaded.engine.destroy();
    }
  });

  it('a latency sweep on NaN weights fails instead of finishing with timings, with nothing rejected unhandled', async () => {
    const loaded = await poisoned(ctx, 'blk.1.ffn_down.weight', NaN);
    try {
      const settings = { prompt_lengths: [4, 8], output_tokens: 4, reps: 2, warmup: 0, cooldown_ms: 0, seed: 1, chunk: 16, profile: false };
      const roofs = { read_bandwidth_gbps: 100, f32_gflops: 1000, matmul_f32_gflops: 1000 };
      const error = await failure(() => runLatency(loaded.engine, loaded.cold, roofs, settings));
      expect(error.message).toMatch(/The model produced non-finite values/);
      await new Promise((r) => setTimeout(r, 200));
      expect(unhandled).toEqual([]);
    } finally {
      await loaded.engine.destroy();
    }
  });
});

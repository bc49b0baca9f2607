/**
 * Llama 3.x (rope_freqs), Qwen3 and Gemma 3 on the GPU: the engine against the CPU reference on
 * tiny seeded files (small synthetic vocabularies, so they build in the browser too), and the
 * Gemma 3 file against llama.cpp's own numbers recorded by test/unit/oracle/gpu-fixture.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { generate } from '../../src/model/generate.ts';
import type { GGMLTypeName } from '../../src/model/gguf/types.ts';
import { bytesSource } from '../../src/model/gguf/source.ts';
import { loadModel } from '../../src/model/load.ts';
import { openModel, type OpenModel } from '../../src/model/open.ts';
import { argmax, loadReferenceWeights, ReferenceModel } from '../../src/model/reference.ts';
import { logSoftmax, nmse } from '../oracle/compare.ts';
import { logitsTolerance } from './harness.ts';
import { FIXTURE_ARCH, FIXTURE_PROMPT, FIXTURE_STEPS, type LlamaCppFixture } from '../oracle/gpu-fixture.ts';
import { smallVocab, tinyModel, type TinyArch } from '../oracle/tiny-models.ts';
import { testGpu } from './context.ts';
import fixtureJson from './fixtures/gemma3-llama-cpp.json';

const SHAPE = { maxSeq: 64, slots: 1, maxRows: 16 };
const STEPS = 12;

async function open(arch: TinyArch, type: GGMLTypeName): Promise<OpenModel> {
  return openModel(bytesSource(tinyModel(arch, { type, vocab: smallVocab(arch) }), `tiny-${arch}-${type}.gguf`));
}

/** The reference's logits after `prompt` (copied) and its `steps` greedy tokens. */
async function referenceRun(m: OpenModel, prompt: readonly number[], steps: number) {
  const model = new ReferenceModel(m.config, await loadReferenceWeights(m.gguf, m.config, m.tensors), { seqLen: SHAPE.maxSeq });
  let logits: Float32Array = new Float32Array(0);
  prompt.forEach((id, pos) => {
    logits = model.forward(id, pos);
  });
  const last = Float32Array.from(logits);
  const tokens: number[] = [];
  for (let pos = prompt.length; tokens.length < steps; pos++) {
    tokens.push(argmax(logits));
    logits = model.forward(tokens.at(-1)!, pos);
  }
  return { logits: last, tokens };
}

/** The engine's logits after `prompt` (prefilled in chunks of 6) and its `steps` greedy tokens. */
async function gpuRun(ctx: GpuContext, m: OpenModel, prompt: readonly number[], steps: number) {
  const loaded = await loadModel(ctx, { kind: 'gguf', model: m, id: m.config.name }, { shape: SHAPE });
  try {
    return await withErrorScopes(ctx.device, 'generate', async () => {
      await generate(loaded.engine, prompt, 1, { chunk: 6 });
      const logits = await loaded.engine.readLogits(0);
      const g = await generate(loaded.engine, prompt, steps, { chunk: 6 });
      return { logits, tokens: g.outputTokens, kvCache: loaded.info.kv_cache ?? 'f32' };
    });
  } finally {
    await loaded.engine.destroy();
  }
}

const PROMPT = [5, 300, 41, 260, 77, 290, 35, 270, 100, 310, 7, 288, 150, 299];

describe('new architectures on the GPU', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  const cases: [TinyArch, GGMLTypeName][] = [
    ['llama3', 'F32'],
    ['qwen3', 'F32'],
    ['gemma3', 'F32'],
    ['llama3', 'F16'],
    ['qwen3', 'F16'],
    ['gemma3', 'F16'],
  ];
  it.each(cases)('%s %s: logits and greedy tokens agree with the CPU reference', async (arch, type) => {
    const m = await open(arch, type);
    const want = await referenceRun(m, PROMPT, STEPS);
    const got = await gpuRun(ctx, m, PROMPT, STEPS);
    expect(nmse(got.logits, want.logits)).toBeLessThan(logitsTolerance(got.kvCache, m.config.nLayers, type === 'F16'));
    expect(got.tokens).toEqual(want.tokens);
  });

  it(`${FIXTURE_ARCH} F32: logits and greedy tokens agree with llama.cpp's (recorded in Node)`, async () => {
    const fixture = fixtureJson as LlamaCppFixture;
    expect(fixture.prompt).toEqual(FIXTURE_PROMPT);
    const got = await gpuRun(ctx, await open(FIXTURE_ARCH, 'F32'), FIXTURE_PROMPT, FIXTURE_STEPS);
    // llama.cpp's GELU reads a f16 table (GGML_GELU_FP16) and the fixture keeps 7 digits:
    // NMSE ~1e-7 against llama.cpp, far below what a wrong op gives (> 1e-2).
    expect(nmse(logSoftmax(got.logits), fixture.logProbs)).toBeLessThan(1e-5);
    expect(got.tokens).toEqual(fixture.tokens);
  });
});

import { describe, expect, it } from 'vitest';
import { llama3RopeFactors, readModelConfig } from '../../../src/model/config.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { buildTestModel, testModelParts, type TestModelOptions } from '../../../src/model/gguf/synthetic.ts';
import { GGMLType, meta, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';
import { openModel } from '../../../src/model/open.ts';
import { runContext } from '../../../src/jobs/job-spec.ts';
import type { TokenscopeError } from '../../../src/errors.ts';
import { expectTokenscopeError } from './helpers.ts';
import { ropeInvFreq, slidingWindow } from '../../../src/model/variants.ts';

const QWEN: TestModelOptions = { architecture: 'qwen2', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 300, tiedEmbeddings: true };

async function open(options: TestModelOptions, edit: (m: Map<string, GGUFValue>) => void = () => {}) {
  const { metadata, tensors } = testModelParts(options);
  edit(metadata);
  return openModel(bytesSource(encodeGGUF(metadata, tensors), 'test.gguf'));
}

describe('model config', () => {
  it('reads a Qwen2 model: neox RoPE, Q/K/V bias, tied embeddings, BPE special ids', async () => {
    const { config } = await open(QWEN);
    expect(config).toEqual({
      architecture: 'qwen2',
      name: 'synthetic-qwen2-64x2',
      dim: 64,
      hiddenDim: 128,
      nLayers: 2,
      nHeads: 4,
      nKvHeads: 2,
      headDim: 16,
      vocabSize: 300,
      contextLength: 256,
      ropeTheta: 10000,
      ropeDim: 16,
      ropeStyle: 'neox',
      rmsEps: Math.fround(1e-6),
      qkvBias: true,
      tiedEmbeddings: true,
      bosId: 299,
      eosId: 299,
      ropeFreqFactors: [],
      ropeFreqScale: 1,
      ropeThetaSliding: 10000,
      qkNorm: false,
      embedScale: 1,
      activation: 'silu',
      postNorms: false,
      slidingWindow: 0,
      slidingPattern: 0,
    });
  });

  it('defaults the optional keys as llama.cpp does', async () => {
    const { config } = await open({ ...QWEN, architecture: 'llama', nKvHeads: 4, tiedEmbeddings: false }, (m) => {
      for (const k of ['head_count_kv', 'rope.freq_base', 'rope.dimension_count']) m.delete(`llama.${k.startsWith('rope') ? k : `attention.${k}`}`);
      m.delete('general.name');
    });
    expect(config).toMatchObject({
      name: 'test.gguf',
      nKvHeads: 4,
      ropeTheta: 10000,
      ropeDim: 16,
      ropeStyle: 'adjacent',
      qkvBias: false,
      tiedEmbeddings: false,
    });
  });

  it('takes the head size from attention.key_length and a partial rotary dimension', async () => {
    const parts = testModelParts({ ...QWEN, dim: 64, nHeads: 4 });
    // Heads of 32 instead of 16: q/k/v/o shapes follow nHeads·keyLength.
    parts.metadata.set('qwen2.attention.key_length', meta.u32(32)).set('qwen2.rope.dimension_count', meta.u32(8));
    for (const t of parts.tensors) {
      const resize = (dims: number[]) => Object.assign(t, { dims, data: new Uint8Array(dims.reduce((a, b) => a * b) * 4) });
      if (/attn_q.weight/.test(t.name)) resize([64, 128]);
      if (/attn_[kv].weight/.test(t.name)) resize([64, 64]);
      if (/attn_q.bias/.test(t.name)) resize([128]);
      if (/attn_[kv].bias/.test(t.name)) resize([64]);
      if (/attn_output/.test(t.name)) resize([128, 64]);
    }
    const { config, tensors } = await openModel(bytesSource(encodeGGUF(parts.metadata, parts.tensors)));
    expect([config.headDim, config.ropeDim]).toEqual([32, 8]);
    expect(tensors.layers[1].wo.dims).toEqual([128, 64]);
  });

  it('refuses a rotary dimension larger than the head', async () => {
    await expect(open(QWEN, (m) => m.set('qwen2.rope.dimension_count', meta.u32(18)))).rejects.toThrow(
      /dimension_count 18 must be even and at most the head size 16/,
    );
  });
});

describe('model tensors', () => {
  it('finds the biases of Qwen2 and falls back to token_embd for a tied LM head', async () => {
    const { tensors } = await open(QWEN);
    expect(tensors.output).toBe(tensors.tokenEmbd);
    expect(tensors.layers[1].bk).toMatchObject({ name: 'blk.1.attn_k.bias', dims: [32], type: GGMLType.F32 });
    expect(tensors.layers.map((l) => l.wq.name)).toEqual(['blk.0.attn_q.weight', 'blk.1.attn_q.weight']);
  });

  it('builds the tensor types a test model asks for, keeping 1-D tensors in F32', async () => {
    const bytes = buildTestModel({ ...QWEN, types: { default: 'Q4_0', tokenEmbd: 'F16', wDown: 'Q8_0' } });
    const gguf = await readGGUF(bytesSource(bytes));
    const type = (name: string) => gguf.tensor(name)!.type;
    expect([
      type('token_embd.weight'),
      type('blk.0.attn_q.weight'),
      type('blk.0.ffn_down.weight'),
      type('blk.0.attn_norm.weight'),
      type('blk.0.attn_q.bias'),
    ]).toEqual([GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0, GGMLType.F32, GGMLType.F32]);
    expect(readModelConfig(gguf).tiedEmbeddings).toBe(true);
    expect(() => buildTestModel({ ...QWEN, hiddenDim: 100, types: { default: 'Q8_0' } })).toThrow(/blk.0.ffn_down.weight cannot be Q8_0: row length 100/);
  });

  it('builds the same bytes from the same seed and different ones from another', () => {
    const a = buildTestModel(QWEN);
    expect(Buffer.from(buildTestModel(QWEN)).equals(Buffer.from(a))).toBe(true);
    expect(Buffer.from(buildTestModel({ ...QWEN, seed: 2 })).equals(Buffer.from(a))).toBe(false);
  });
});

describe('implausible hyperparameters are refused before anything is allocated, naming the file', () => {
  const LLAMA: TestModelOptions = { ...QWEN, architecture: 'llama', tiedEmbeddings: false };
  const cases: [string, (m: Map<string, GGUFValue>) => void, RegExp][] = [
    ['rms epsilon +Inf', (m) => m.set('llama.attention.layer_norm_rms_epsilon', meta.f32(Infinity)), /layer_norm_rms_epsilon is Infinity/],
    ['rms epsilon NaN', (m) => m.set('llama.attention.layer_norm_rms_epsilon', meta.f32(NaN)), /layer_norm_rms_epsilon is NaN/],
    ['rope.freq_base +Inf', (m) => m.set('llama.rope.freq_base', meta.f32(Infinity)), /rope.freq_base is Infinity/],
    ['rope.freq_base 1e-30', (m) => m.set('llama.rope.freq_base', meta.f32(1e-30)), /rope.freq_base is 1\.0\d*e-30/],
    ['context 2^30', (m) => m.set('llama.context_length', meta.u32(2 ** 30)), /context_length is 1073741824/],
    [
      '5000 heads',
      (m) =>
        m
          .set('llama.attention.head_count', meta.u32(5000))
          .set('llama.attention.head_count_kv', meta.u32(5000))
          .set('llama.embedding_length', meta.u32(5000 * 16)),
      /embedding_length is 80000|head_count is 5000/,
    ],
  ];
  it.each(cases)('%s', async (_name, edit, message) => {
    const error = await expectTokenscopeError(() => open(LLAMA, edit), 'model-format', message);
    expect(error.message).toMatch(/^test\.gguf: implausible hyperparameter/);
  });

  it('a missing token list is reported as that, not as a missing vocab_size', async () => {
    await expectTokenscopeError(
      () => open(LLAMA, (m) => m.delete('tokenizer.ggml.tokens')),
      'model-format',
      /^test\.gguf: required metadata key 'tokenizer\.ggml\.tokens' is missing/,
    );
  });

  it('config-level errors name the file', async () => {
    await expectTokenscopeError(
      () => open(LLAMA, (m) => m.delete('llama.block_count')),
      'model-format',
      /^test\.gguf: required metadata key 'llama\.block_count'/,
    );
    await expectTokenscopeError(() => open(LLAMA, (m) => m.set('llama.attention.head_count_kv', meta.u32(3))), 'model-format', /^test\.gguf: inconsistent/);
  });
});

describe('the context a run uses', () => {
  const latency = { promptLengths: [8], gen: 4, reps: 1 };
  it('context_length 1 without a context asked for: the run does not fit, said in its own terms', () => {
    expect(() => runContext({ probe: false, latency }, { name: 'tiny', contextLength: 1 })).toThrow(/needs 11 positions .* tiny holds 1/);
    try {
      runContext({ probe: false, latency }, { name: 'tiny', contextLength: 1 });
    } catch (e) {
      expect((e as TokenscopeError).hint).not.toMatch(/context/);
    }
  });
  it('rounds up to 64 within the model, and keeps an asked-for context', () => {
    expect(runContext({ probe: false, latency }, { name: 'm', contextLength: 2048 })).toBe(64);
    expect(runContext({ probe: false, latency }, { name: 'm', contextLength: 32 })).toBe(32);
    expect(runContext({ probe: false, latency, context: 100 }, { name: 'm', contextLength: 32 })).toBe(100);
  });
});

describe('architecture variants', () => {
  it("Llama 3.2's rope_freqs: short wavelengths kept, long ones slowed 32×, blended between (as the converter computes them)", () => {
    const f = llama3RopeFactors({ ropeTheta: 500000, ropeDim: 64, factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalContext: 8192 });
    expect(f).toHaveLength(32);
    expect([f[0], f[31]]).toEqual([1, 32]);
    // wavelength 2π·θ^(2i/64) crosses 8192/4 = 2048 and 8192 between pairs 13 and 18: only those blend.
    const blended = [...f].flatMap((v, i) => (v > 1 && v < 32 ? [i] : []));
    expect(blended.length).toBeGreaterThan(0);
    expect(blended.every((i) => i > 10 && i < 20)).toBe(true);
    expect([...f].every((v, i) => i === 0 || v >= f[i - 1])).toBe(true);
  });

  it('ropeInvFreq divides by the factors; Gemma 3 layers slide five in six with their own RoPE base', () => {
    const gemma = { ropeDim: 4, ropeTheta: 1e6, ropeThetaSliding: 1e4, ropeFreqScale: 1, ropeFreqFactors: [], slidingWindow: 512, slidingPattern: 6 };
    expect([0, 1, 4, 5, 6, 11].map((l) => slidingWindow(gemma, l))).toEqual([512, 512, 512, 0, 512, 0]);
    const close = (a: Float32Array, b: number[]) => expect([...a].map((v, i) => v / b[i])).toEqual(b.map(() => expect.closeTo(1, 6)));
    close(ropeInvFreq(gemma, 0), [1, 1e-2]);
    close(ropeInvFreq(gemma, 5), [1, 1e-3]);
    const llama = { ...gemma, slidingWindow: 0, slidingPattern: 0, ropeFreqFactors: [1, 8], ropeFreqScale: 0.5 };
    close(ropeInvFreq(llama, 3), [0.5, (0.5 * 1e-3) / 8]);
  });
});

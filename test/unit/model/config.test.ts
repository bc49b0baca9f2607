import { describe, expect, it } from 'vitest';
import { readModelConfig } from '../../../src/model/config.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { buildTestModel, testModelParts, type TestModelOptions } from '../../../src/model/gguf/synthetic.ts';
import { GGMLType, meta, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';
import { openModel } from '../../../src/model/open.ts';

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
      architecture: 'qwen2', name: 'synthetic-qwen2-64x2', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2,
      headDim: 16, vocabSize: 300, contextLength: 256, ropeTheta: 10000, ropeDim: 16, ropeStyle: 'neox',
      rmsEps: Math.fround(1e-6), qkvBias: true, tiedEmbeddings: true, bosId: 299, eosId: 299, ropeFreqFactors: [], ropeFreqScale: 1, ropeThetaSliding: 10000, qkNorm: false, embedScale: 1, activation: 'silu',
      postNorms: false, slidingWindow: 0, slidingPattern: 0,
    });
  });

  it('defaults the optional keys as llama.cpp does', async () => {
    const { config } = await open({ ...QWEN, architecture: 'llama', nKvHeads: 4, tiedEmbeddings: false }, (m) => {
      for (const k of ['head_count_kv', 'rope.freq_base', 'rope.dimension_count']) m.delete(`llama.${k.startsWith('rope') ? k : `attention.${k}`}`);
      m.delete('general.name');
    });
    expect(config).toMatchObject({ name: 'test.gguf', nKvHeads: 4, ropeTheta: 10000, ropeDim: 16, ropeStyle: 'adjacent', qkvBias: false, tiedEmbeddings: false });
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
    await expect(open(QWEN, (m) => m.set('qwen2.rope.dimension_count', meta.u32(18)))).rejects.toThrow(/dimension_count 18 must be even and at most the head size 16/);
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
    expect([type('token_embd.weight'), type('blk.0.attn_q.weight'), type('blk.0.ffn_down.weight'), type('blk.0.attn_norm.weight'), type('blk.0.attn_q.bias')])
      .toEqual([GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0, GGMLType.F32, GGMLType.F32]);
    expect(readModelConfig(gguf).tiedEmbeddings).toBe(true);
    expect(() => buildTestModel({ ...QWEN, hiddenDim: 100, types: { default: 'Q8_0' } })).toThrow(/blk.0.ffn_down.weight cannot be Q8_0: row length 100/);
  });

  it('builds the same bytes from the same seed and different ones from another', () => {
    const a = buildTestModel(QWEN);
    expect(Buffer.from(buildTestModel(QWEN)).equals(Buffer.from(a))).toBe(true);
    expect(Buffer.from(buildTestModel({ ...QWEN, seed: 2 })).equals(Buffer.from(a))).toBe(false);
  });
});

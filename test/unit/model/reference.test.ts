import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/model/config.ts';
import { roundF16 } from '../../../src/f16.ts';
import { fileSource } from '../../../src/model/gguf/node-source.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { buildTestModel, type TestModelOptions } from '../../../src/model/gguf/synthetic.ts';
import { openModel } from '../../../src/model/open.ts';
import {
  argmax,
  attention,
  generateGreedy,
  loadReferenceWeights,
  ReferenceModel,
  roundActivations,
  roundProductInput,
  rmsnorm,
  rope,
  softmax,
  swiglu,
  type ReferenceWeights,
} from '../../../src/model/reference.ts';
import { createTokenizer } from '../../../src/model/tokenizer/index.ts';
import { STORIES_EXPECTED, STORIES_GGUF, storiesTitle } from './paths.ts';

async function reference(bytes: Uint8Array<ArrayBuffer>) {
  const m = await openModel(bytesSource(bytes));
  return { ...m, weights: await loadReferenceWeights(m.gguf, m.config, m.tensors) };
}

describe.skipIf(!STORIES_GGUF || !STORIES_EXPECTED)(storiesTitle('reference forward pass on stories260K'), () => {
  it('reproduces the pinned greedy generation from BOS: all 200 tokens and the text', async () => {
    const expected = JSON.parse(readFileSync(STORIES_EXPECTED!, 'utf8')) as { token_ids: number[]; text: string; steps: number };
    const source = await fileSource(STORIES_GGUF!);
    try {
      const m = await openModel(source);
      const model = new ReferenceModel(m.config, await loadReferenceWeights(m.gguf, m.config, m.tensors));
      const generated = generateGreedy(model, [1], expected.steps);
      expect([1, ...generated]).toEqual(expected.token_ids);
      expect(createTokenizer(m.gguf.metadata).decode([1, ...generated])).toBe(expected.text);
    } finally {
      await source.close();
    }
  });
});

describe('reference ops', () => {
  it('rmsnorm divides by the root mean square (plus eps) and scales by the weight', () => {
    const o = new Float32Array(2);
    rmsnorm(o, Float32Array.of(3, 4), Float32Array.of(1, 2), 0);
    const rms = Math.sqrt((9 + 16) / 2);
    expect([...o]).toEqual([Math.fround(3 / rms), Math.fround((2 * 4) / rms)]);
  });

  it('rope rotates adjacent pairs or neox halves by pos·θ^(-2i/ropeDim), leaving dims past ropeDim alone', () => {
    const c = { headDim: 6, ropeDim: 4, ropeTheta: 10000 };
    // Pair 0 turns by pos·1 rad, pair 1 by pos·10000^(-1/2) = 0.01 rad; dims 4, 5 pass through.
    const adjacent = Float32Array.of(1, 0, 0, 1, 7, 8);
    rope(adjacent, 1, 1, { ...c, ropeStyle: 'adjacent' });
    expect([...adjacent]).toEqual([Math.cos(1), Math.sin(1), -Math.sin(0.01), Math.cos(0.01), 7, 8].map(Math.fround));
    const neox = Float32Array.of(1, 0, 0, 1, 7, 8); // pairs (0, 2) and (1, 3)
    rope(neox, 1, 1, { ...c, ropeStyle: 'neox' });
    expect([...neox]).toEqual([Math.cos(1), -Math.sin(0.01), Math.sin(1), Math.cos(0.01), 7, 8].map(Math.fround));
    const second = Float32Array.of(1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0); // head 2 starts at 6
    rope(second, 2, 2, { ...c, ropeStyle: 'adjacent' });
    expect([second[6], second[7]]).toEqual([Math.cos(2), Math.sin(2)].map(Math.fround));
    const still = Float32Array.of(1, 2, 3, 4, 5, 6);
    rope(still, 0, 1, { ...c, ropeStyle: 'neox' });
    expect([...still]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('softmax, swiglu and argmax (ties to the lowest index)', () => {
    const s = Float32Array.of(0, Math.log(3), 1000);
    softmax(s.subarray(0, 2));
    expect([s[0], s[1], s[2]]).toEqual([expect.closeTo(0.25, 7), expect.closeTo(0.75, 7), 1000]);
    const o = new Float32Array(2);
    swiglu(o, Float32Array.of(0, 2), Float32Array.of(5, 3));
    expect([...o]).toEqual([0, Math.fround((2 / (1 + Math.exp(-2))) * 3)]);
    expect(argmax(Float32Array.of(1, 5, 5, -1))).toBe(1);
    expect(argmax(Float32Array.of(-Infinity, -Infinity))).toBe(0);
  });

  it("attention at position 0 returns each head its KV group's value; later positions mix by softmax(q·k/√d)", () => {
    const c = { nHeads: 4, nKvHeads: 2, headDim: 2 };
    const seqLen = 2;
    const keys = Float32Array.of(1, 0, 0, 1, /* pos 1 */ 0, 0, 0, 0); // (seqLen, kvDim = 4)
    const values = Float32Array.of(1, 2, 3, 4, /* pos 1 */ 5, 6, 7, 8);
    const out = new Float32Array(8);
    attention(out, new Float32Array(8).fill(1), keys, values, new Float32Array(seqLen), 0, 0, seqLen, c);
    expect([...out]).toEqual([1, 2, 1, 2, 3, 4, 3, 4]); // heads 0, 1 read KV head 0; heads 2, 3 read KV head 1
    const q = Float32Array.of(Math.SQRT2 * Math.log(3), 0, 0, 0, 0, 0, 0, 0); // head 0 scores: ln 3 at pos 0, 0 at pos 1
    attention(out, q, keys, values, new Float32Array(seqLen), 0, 1, seqLen, c);
    expect(out[0]).toBeCloseTo(0.75 * 1 + 0.25 * 5, 6);
    expect(out[2]).toBeCloseTo(0.5 * 1 + 0.5 * 5, 6); // head 1: q = 0, uniform
  });
});

const GQA: TestModelOptions = { architecture: 'qwen2', dim: 64, hiddenDim: 96, nLayers: 2, nHeads: 8, nKvHeads: 2, vocabSize: 300, seed: 5 };

/** The same model as multi-head attention: each KV head's rows repeated for every query head of its group. */
function expandKvHeads(config: ModelConfig, w: ReferenceWeights): [ModelConfig, ReferenceWeights] {
  const group = config.nHeads / config.nKvHeads;
  const rowsOfHead = config.headDim * config.dim;
  const repeatHeads = (m: Float32Array, headSize: number) =>
    Float32Array.from({ length: m.length * group }, (_, i) => {
      const head = Math.floor(i / headSize);
      return m[Math.floor(head / group) * headSize + (i % headSize)];
    });
  const layers = w.layers.map((l) => ({
    ...l,
    wk: repeatHeads(l.wk, rowsOfHead),
    wv: repeatHeads(l.wv, rowsOfHead),
    bk: repeatHeads(l.bk, config.headDim),
    bv: repeatHeads(l.bv, config.headDim),
  }));
  return [
    { ...config, nKvHeads: config.nHeads },
    { ...w, layers },
  ];
}

describe('reference forward pass on synthetic models', () => {
  it('grouped-query attention equals multi-head attention with the KV heads repeated', async () => {
    const { config, weights } = await reference(buildTestModel(GQA));
    const gqa = new ReferenceModel(config, weights);
    const mha = new ReferenceModel(...expandKvHeads(config, weights));
    for (const [pos, token] of [5, 17, 42, 99].entries()) {
      const a = Float32Array.from(gqa.forward(token, pos));
      const b = mha.forward(token, pos);
      for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i], 5);
    }
  });

  it('uses the Q/K/V biases and shares one array for tied embeddings', async () => {
    const { config, weights } = await reference(buildTestModel({ ...GQA, tiedEmbeddings: true }));
    expect(weights.output).toBe(weights.tokenEmbd);
    const withBias = Float32Array.from(new ReferenceModel(config, weights).forward(3, 0));
    const layers = weights.layers.map((l) => ({ ...l, bv: new Float32Array(l.bv.length) }));
    const withoutBias = new ReferenceModel(config, { ...weights, layers }).forward(3, 0);
    expect(Math.max(...withBias.map((v, i) => Math.abs(v - withoutBias[i])))).toBeGreaterThan(1e-3);
  });

  it('runs Q8_0 and Q4_0 files within their quantization error of the F32 model', async () => {
    const logitsOf = async (types: TestModelOptions['types']) => {
      const { config, weights } = await reference(buildTestModel({ ...GQA, types }));
      const model = new ReferenceModel(config, weights);
      return [7, 8, 9].map((t, pos) => Float32Array.from(model.forward(t, pos)));
    };
    const f32 = await logitsOf(undefined);
    const relativeError = (q: Float32Array[]) => {
      let num = 0;
      let den = 0;
      q.forEach((l, p) => l.forEach((v, i) => ((num += (v - f32[p][i]) ** 2), (den += f32[p][i] ** 2))));
      return Math.sqrt(num / den);
    };
    // Q8_0 rounds each weight by ≤ amax/254, Q4_0 by ≤ amax/16 (amax/8 where it clamps). Measured: 0.8% and 11%.
    const q8 = relativeError(await logitsOf({ default: 'Q8_0' }));
    const q4 = relativeError(await logitsOf({ default: 'Q4_0' }));
    expect(q8).toBeLessThan(0.02);
    expect(q4).toBeLessThan(0.25);
    expect(q8).toBeLessThan(q4 / 4);
  });

  it('refuses positions past its KV cache and tokens outside the vocabulary', async () => {
    const { config, weights } = await reference(buildTestModel(GQA));
    const model = new ReferenceModel(config, weights, { seqLen: 4 });
    expect(() => model.forward(0, 4)).toThrow(/position 4 is outside vocab 300 \/ sequence 4/);
    expect(() => model.forward(300, 0)).toThrow(/token 300/);
  });
});

describe("roundActivations (llama.cpp's Q8_0 and Q8_K activation rounding)", () => {
  it('q8_0: per 32 inputs d = max|x|/127 rounded to f16, q = round(x·127/max) with ties to even, a zero block stays zero', () => {
    const x = new Float32Array(64);
    for (let i = 0; i < 32; i++) x[i] = (i - 16) / 10; // max |x| 1.6
    const out = new Float32Array(64);
    roundActivations(out, x, 'q8_0');
    const d = roundF16(1.6 / 127);
    expect(d).not.toBe(Math.fround(1.6 / 127)); // the f16 scale is not the f32 one
    for (let i = 0; i < 32; i++) expect(out[i]).toBeCloseTo(Math.round(x[i] / d) * d, 6);
    expect(Math.abs(out[0])).toBeCloseTo(127 * d, 6); // the largest input maps to ±127
    expect([...out.subarray(32)]).toEqual(new Array(32).fill(0));
    // Every output is within d/2 of its input.
    for (let i = 0; i < 32; i++) expect(Math.abs(out[i] - x[i])).toBeLessThanOrEqual(d / 2 + 1e-7);
  });

  it('q8_k: one f32 scale per 256 inputs, so a small block beside a large one loses its resolution', () => {
    const x = new Float32Array(256).fill(0.01);
    x[255] = 12.7; // d = 0.1: every 0.01 rounds to 0 under the group's scale
    const k = new Float32Array(256);
    roundActivations(k, x, 'q8_k');
    expect(Math.abs(k[0])).toBe(0); // −0: llama.cpp's scale 1/(−127/max) is negative for a positive max
    expect(k[255]).toBeCloseTo(12.7, 5);
    // Under q8_0 the first 32 inputs keep their own scale and survive exactly.
    const b = new Float32Array(256);
    roundActivations(b, x, 'q8_0');
    expect(b[0]).toBeCloseTo(0.01, 4);
  });

  it("a product's input that does not split into the groups: Q8_0 where it splits into 32 (K-quant fallbacks), else f16 (F16 rows)", () => {
    const x = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i) * 3);
    const [viaK, q8] = [new Float32Array(64), new Float32Array(64)];
    roundProductInput(viaK, x, 'q8_k');
    roundActivations(q8, x, 'q8_0');
    expect(viaK).toEqual(q8);
    const odd = Float32Array.from({ length: 172 }, (_, i) => Math.cos(i) / 7);
    const half = new Float32Array(172);
    roundProductInput(half, odd, 'q8_0');
    for (let i = 0; i < 172; i++) expect(half[i]).toBe(roundF16(odd[i]));
    expect(half[1]).not.toBe(odd[1]);
  });

  it('refuses a length that is not whole groups', () => {
    expect(() => roundActivations(new Float32Array(48), new Float32Array(48), 'q8_0')).toThrow(/groups of 32/);
    expect(() => roundActivations(new Float32Array(288), new Float32Array(288), 'q8_k')).toThrow(/groups of 256/);
  });
});

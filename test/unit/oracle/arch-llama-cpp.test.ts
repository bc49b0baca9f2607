/**
 * Llama 3.x (rope_freqs), Qwen3 and Gemma 3: our CPU reference against llama.cpp on tiny files
 * with the real vocabularies, for each weight format llama.cpp runs without quantizing
 * activations differently from us.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GGMLTypeName } from '../../../src/model/gguf/types.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { openModel } from '../../../src/model/open.ts';
import { generateGreedy, loadReferenceWeights, ReferenceModel } from '../../../src/model/reference.ts';
import { createTokenizer } from '../../../src/model/tokenizer/index.ts';
import { logSoftmax, nmse } from '../../oracle/compare.ts';
import { openLlamaCpp, type LlamaCppModel } from '../../oracle/llama-cpp.ts';
import { writeTinyModel, type TinyArch } from '../../oracle/tiny-models.ts';

const PROMPT = 'The quick brown fox jumps over the lazy dog. 12345 tokens, please!';
const STEPS = 24;

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-arch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CASES: [TinyArch, GGMLTypeName][] = process.env.ARCH_ONLY ? [[process.env.ARCH_ONLY as TinyArch, 'F32']] : [
  ['llama3', 'F32'], ['llama3', 'F16'],
  ['qwen3', 'F32'], ['qwen3', 'F16'],
  ['gemma3', 'F32'], ['gemma3', 'F16'],
];

describe.each(CASES)('%s %s against llama.cpp', (arch, type) => {
  let oracle: LlamaCppModel;
  let model: ReferenceModel;
  let ids: number[];
  beforeAll(async () => {
    const path = join(dir, `${arch}-${type}.gguf`);
    const bytes = writeTinyModel(path, arch, { type });
    const m = await openModel(bytesSource(bytes, path));
    model = new ReferenceModel(m.config, await loadReferenceWeights(m.gguf, m.config, m.tensors), { seqLen: 128 });
    ids = createTokenizer(m.gguf.metadata).encode(PROMPT);
    oracle = await openLlamaCpp(path, { contextSize: 128 });
  }, 60_000);
  afterAll(() => oracle?.dispose());

  it('last-position logits', async () => {
    let ours: Float32Array = new Float32Array(0);
    ids.forEach((id, pos) => { ours = model.forward(id, pos); });
    const e = nmse(logSoftmax(ours), await oracle.lastLogProbs(ids));
    console.log(arch, type, 'NMSE', e.toExponential(2), ids.length);
    expect(e).toBeLessThan(1e-4);
  });

  it('greedy tokens', async () => {
    const theirs = await oracle.greedy(ids, STEPS);
    const ours = generateGreedy(model, ids, STEPS);
    expect(ours).toEqual(theirs);
  });
});

/**
 * The oracle itself checked against a known answer: llama.cpp on stories260K reproduces the
 * recorded greedy run (stories260K.expected.json), tokenizes as our tokenizer does, and its
 * last-position logits agree with our CPU reference.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource } from '../../../src/model/gguf/node-source.ts';
import { openModel } from '../../../src/model/open.ts';
import { loadReferenceWeights, ReferenceModel } from '../../../src/model/reference.ts';
import { logSoftmax, nmse } from '../../oracle/compare.ts';
import { openLlamaCpp, type LlamaCppModel } from '../../oracle/llama-cpp.ts';
import { STORIES_EXPECTED, STORIES_GGUF, storiesTitle } from '../model/paths.ts';

describe.skipIf(!STORIES_GGUF || !STORIES_EXPECTED)(storiesTitle('llama.cpp oracle on stories260K'), () => {
  let oracle: LlamaCppModel;
  beforeAll(async () => {
    oracle = await openLlamaCpp(STORIES_GGUF!, { contextSize: 256 });
  });
  afterAll(() => oracle?.dispose());

  it('reproduces the recorded 200-step greedy run', async () => {
    const expected = JSON.parse(readFileSync(STORIES_EXPECTED!, 'utf8')) as { token_ids: number[] };
    const [bos, ...rest] = expected.token_ids;
    expect(oracle.bosId).toBe(bos);
    expect(await oracle.greedy([bos], rest.length)).toEqual(rest);
  });

  it('tokenizes as our SentencePiece tokenizer does', async () => {
    expect(oracle.tokenize('Once upon a time')).toEqual([403, 407, 261, 378]);
  });

  it('last-position logits agree with our CPU reference (NMSE < 1e-8 on an F32 file)', async () => {
    const ids = [1, ...oracle.tokenize('Once upon a time, there was a little')];
    const source = await fileSource(STORIES_GGUF!);
    try {
      const m = await openModel(source);
      const model = new ReferenceModel(m.config, await loadReferenceWeights(m.gguf, m.config, m.tensors), { seqLen: 64 });
      let ours: Float32Array = new Float32Array(0);
      ids.forEach((id, pos) => {
        ours = model.forward(id, pos);
      });
      const theirs = await oracle.lastLogProbs(ids);
      expect(theirs.length).toBe(m.config.vocabSize);
      // Both run F32 weights and an F32 KV cache; what is left is summation order and llama.cpp's
      // f32 math (fast expf/silu), about 1e-7 relative per value: NMSE ~1e-12, far below 1e-8.
      const e = nmse(logSoftmax(ours), theirs);
      expect(e).toBeLessThan(1e-8);
    } finally {
      await source.close();
    }
  });
});

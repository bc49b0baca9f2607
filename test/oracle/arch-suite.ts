/**
 * One architecture against llama.cpp, as a describe block: a tiny file per weight type with the
 * real vocabulary, whose token ids (for tricky strings), last-position logits and greedy tokens
 * must match llama.cpp's on the same file. Each file is written, loaded and run once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GGMLTypeName } from '../../src/model/gguf/types.ts';
import { bytesSource } from '../../src/model/gguf/source.ts';
import { openModel } from '../../src/model/open.ts';
import { argmax, loadReferenceWeights, ReferenceModel } from '../../src/model/reference.ts';
import { createTokenizer, type Tokenizer } from '../../src/model/tokenizer/index.ts';
import { logSoftmax, nmse } from './compare.ts';
import { openLlamaCpp, type LlamaCppModel } from './llama-cpp.ts';
import { hfVocab } from './hf-vocab.ts';
import { tinyModel, type TinyArch } from './tiny-models.ts';
import { TRICKY_STRINGS } from './tricky-strings.ts';

export const PROMPT = 'The quick brown fox jumps over the lazy dog, 12345 times!';

export interface SuiteOptions {
  types: GGMLTypeName[];
  /** Greedy steps that must match. */
  steps: number;
  /**
   * NMSE bound of the last position's log-softmax per type. F32 agrees to ~1e-12 (summation
   * order only); F16 files make llama.cpp round activations to f16 for the dot products (its
   * vec_dot_type for F16 is F16), ~5e-4 relative per value, NMSE ~1e-7. Gemma's GELU goes
   * through ggml's f16 lookup table (GGML_GELU_FP16), adding ~1e-7 even for F32.
   */
  maxNmse: Partial<Record<GGMLTypeName, number>>;
}

/** Runs `ids` through the reference, returns the last logits (copied) and `steps` greedy tokens after them. */
function referenceRun(model: ReferenceModel, ids: readonly number[], steps: number): { logits: Float32Array; tokens: number[] } {
  let logits: Float32Array = new Float32Array(0);
  ids.forEach((id, pos) => {
    logits = model.forward(id, pos);
  });
  const last = Float32Array.from(logits);
  const tokens: number[] = [];
  for (let pos = ids.length; tokens.length < steps; pos++) {
    tokens.push(argmax(logits));
    if (tokens.length < steps) logits = model.forward(tokens.at(-1)!, pos);
  }
  return { logits: last, tokens };
}

export function describeAgainstLlamaCpp(arch: TinyArch, options: SuiteOptions): void {
  const dir = mkdtempSync(join(tmpdir(), `tokenscope-${arch}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe.each(options.types)(`${arch} %s against llama.cpp`, (type) => {
    let oracle: LlamaCppModel;
    let model: ReferenceModel;
    let tokenizer: Tokenizer;
    beforeAll(async () => {
      const path = join(dir, `${arch}-${type}.gguf`);
      const bytes = tinyModel(arch, { type, vocab: hfVocab(arch) });
      writeFileSync(path, bytes);
      const m = await openModel(bytesSource(bytes, path));
      model = new ReferenceModel(m.config, await loadReferenceWeights(m.gguf, m.config, m.tensors), { seqLen: 64 });
      tokenizer = createTokenizer(m.gguf.metadata);
      oracle = await openLlamaCpp(path, { contextSize: 64 });
    }, 120_000);
    afterAll(() => oracle?.dispose());

    if (type === options.types[0]) {
      it("tokenizes tricky strings to llama.cpp's ids, with and without special-token parsing", { timeout: 60_000 }, () => {
        for (const text of TRICKY_STRINGS) {
          for (const special of [true, false]) {
            expect({ text, special, ids: tokenizer.encode(text, { bos: false, special }) }).toEqual({ text, special, ids: oracle.tokenize(text, { special }) });
          }
        }
        expect(tokenizer.encode('hi').at(0) === tokenizer.bosId).toBe(oracle.addsBos);
      });
    }

    it(`last-position logits within NMSE ${options.maxNmse[type]} and ${options.steps} greedy tokens identical`, { timeout: 180_000 }, async () => {
      const ids = tokenizer.encode(PROMPT);
      expect(ids).toEqual([...(oracle.addsBos ? [oracle.bosId] : []), ...oracle.tokenize(PROMPT)]);
      const ours = referenceRun(model, ids, options.steps);
      const theirs = await oracle.run(ids, options.steps);
      expect(nmse(logSoftmax(ours.logits), theirs.logProbs)).toBeLessThan(options.maxNmse[type]!);
      expect(ours.tokens).toEqual(theirs.tokens);
    });
  });
}

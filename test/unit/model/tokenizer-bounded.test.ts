/**
 * Tokenizers on long and hostile input (issue 25): 1 MB of adversarial text in both families
 * ends within a time bound and round-trips, longer prompts are refused before any work, and
 * vocabularies that would tokenize ambiguously are refused. Before: byte-level BPE threw
 * "Maximum call stack size exceeded" once one word made ~125K ids, SentencePiece was quadratic
 * (a 131 KB prompt took 12 s), and Gemma 3's 6,414 special tokens cost 3 s per MB to cut out.
 * That the ids stay llama.cpp's, long strings included, is checked by the oracle suites
 * (test/oracle/tricky-strings.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { metaFloats, metaStrings } from '../../../src/model/gguf/metadata.ts';
import { meta, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { createTokenizer, type Tokenizer } from '../../../src/model/tokenizer/index.ts';
import { MAX_PROMPT_CHARS } from '../../../src/model/tokenizer/vocab.ts';
import { mulberry32 } from '../../../src/random.ts';
import { hfVocab, type HfVocabName } from '../../oracle/hf-vocab.ts';
import { smallVocab } from '../../oracle/tiny-models.ts';
import { expectTokenscopeError } from './helpers.ts';

const MB = 1_000_000;
/** Seconds one 1 MB text may take: measured 1–3 s on a loaded 2-core machine, minutes or a crash before. */
const BOUND_MS = 10_000;

function adversarialTexts(): [string, string][] {
  const random = mulberry32(2025);
  const bytes = Uint8Array.from({ length: MB }, () => Math.floor(random() * 256));
  return [
    ['one word of one repeated letter', 'a'.repeat(MB)],
    ['random bytes (decoded as UTF-8)', new TextDecoder().decode(bytes).slice(0, MB)],
    ['spaces', ' '.repeat(MB)],
    ['newlines and tabs', '\n\t'.repeat(MB / 2)],
    ['random printable ASCII', Array.from({ length: MB }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join('')],
    ['special-token text over and over', '<start_of_turn><|im_start|><|begin_of_text|><unused7>'.repeat(MB / 50).slice(0, MB)],
  ];
}

describe.each(['llama3', 'gemma3'] as HfVocabName[])('the %s tokenizer on 1 MB of adversarial text', (name) => {
  let tokenizer: Tokenizer;
  beforeAll(() => {
    tokenizer = createTokenizer(new Map(hfVocab(name).metadata));
  }, 120_000);

  it.each(adversarialTexts())('%s: within the bound, and back to the same text', { timeout: 60_000 }, (_, text) => {
    const start = performance.now();
    const ids = tokenizer.encode(text, { bos: false, special: false });
    expect(performance.now() - start).toBeLessThan(BOUND_MS);
    expect(ids.length).toBeGreaterThan(0);
    expect(tokenizer.decode(ids)).toBe(text);
  });
});

describe('prompt size', () => {
  const tokenizers = (['llama3', 'gemma3'] as const).map((arch) => createTokenizer(new Map(smallVocab(arch).metadata)));

  it.each(tokenizers.map((t) => [t.kind, t] as const))('%s: past MAX_PROMPT_CHARS is refused before any work', async (_, tokenizer) => {
    const start = performance.now();
    await expectTokenscopeError(
      () => tokenizer.encode('x'.repeat(MAX_PROMPT_CHARS + 1)),
      'bad-input',
      /1,000,001 characters; tokenscope tokenizes at most 1,000,000/,
    );
    expect(performance.now() - start).toBeLessThan(200);
    expect(tokenizer.encode('x'.repeat(MAX_PROMPT_CHARS)).length).toBeGreaterThan(0);
  });
});

describe('vocabularies that would tokenize ambiguously', () => {
  const damaged = (arch: 'llama3' | 'gemma3', change: (metadata: Map<string, GGUFValue>, tokens: string[]) => void) => {
    const metadata = new Map(smallVocab(arch).metadata);
    const tokens = [...metaStrings(metadata, 'tokenizer.ggml.tokens')!];
    change(metadata, tokens);
    metadata.set('tokenizer.ggml.tokens', meta.strings(tokens));
    return metadata;
  };

  it('refuse a NaN SentencePiece score', async () => {
    const metadata = damaged('gemma3', (m) => {
      const scores = Float32Array.from(metaFloats(m, 'tokenizer.ggml.scores')!);
      scores[300] = NaN;
      m.set('tokenizer.ggml.scores', meta.f32s(scores));
    });
    await expectTokenscopeError(() => createTokenizer(metadata), 'model-format', /tokenizer\.ggml\.scores has NaN for token 300/);
  });

  it.each(['llama3', 'gemma3'] as const)('%s: refuse two tokens with one text', async (arch) => {
    const metadata = damaged(arch, (_, tokens) => {
      tokens[tokens.length - 2] = tokens[300];
    });
    await expectTokenscopeError(() => createTokenizer(metadata), 'model-format', /tokens 300 and \d+ are both/);
  });
});

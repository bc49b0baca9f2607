import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource, type FileSource } from '../../../src/model/gguf/node-source.ts';
import { metaFloats, metaStrings } from '../../../src/model/gguf/metadata.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { testModelParts } from '../../../src/model/gguf/synthetic.ts';
import { mulberry32 } from '../../../src/random.ts';
import { meta, type GGUFMetadata, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';
import { BYTE_TO_CHAR } from '../../../src/model/tokenizer/bpe.ts';
import { createTokenizer, TokenType, type Tokenizer } from '../../../src/model/tokenizer/index.ts';
import { preTokenizer } from '../../../src/model/tokenizer/pretokenize.ts';
import { STORIES_GGUF, storiesTitle } from './paths.ts';

/**
 * llama2.c's encode() transcribed as literally as TypeScript allows (rescan every pair after each
 * merge): the oracle for the optimised SentencePiece encoder.
 */
function llama2cEncode(tokens: string[], scores: Float32Array, text: string): number[] {
  const lookup = (s: string) => tokens.indexOf(s);
  const ids: number[] = [];
  if (text !== '') ids.push(lookup('\u2581'));
  for (const c of text.replaceAll(' ', '\u2581')) {
    const id = lookup(c);
    if (id !== -1) ids.push(id);
    else for (const b of new TextEncoder().encode(c)) ids.push(b + 3);
  }
  for (;;) {
    let bestScore = -1e10;
    let bestId = -1;
    let bestIdx = -1;
    for (let i = 0; i < ids.length - 1; i++) {
      const id = lookup(tokens[ids[i]] + tokens[ids[i + 1]]);
      if (id !== -1 && scores[id] > bestScore) {
        bestScore = scores[id];
        bestId = id;
        bestIdx = i;
      }
    }
    if (bestIdx === -1) break;
    ids.splice(bestIdx, 2, bestId);
  }
  return ids;
}

const SAMPLES = [
  'Once upon a time',
  'Hello world!',
  'Lily\'s mom said, "Lily, let\'s go to the park."',
  'a\nb',
  '  two  spaces ',
  'héllo wörld — ñandú',
  '日本語のテキスト',
  'emoji 😀👍🏽 and 🇫🇷',
  'tab\there',
  '',
  // Overlapping equal-score candidates: the leftmost pair must merge first ('lll' → 'll' + 'l').
  'balllll',
  'eeeee',
  'tttt',
];

function randomText(seed: number): string {
  const random = mulberry32(seed);
  const alphabet = [...'abcdefghijklmnopqrstuvwxyz      ,.!?\'"\nTheLily0123éü€😀'];
  return Array.from({ length: 1 + Math.floor(random() * 60) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
}

describe.skipIf(!STORIES_GGUF)(storiesTitle('SentencePiece tokenizer of stories260K'), () => {
  let tokenizer: Tokenizer;
  let tokens: string[];
  let scores: Float32Array;
  let source: FileSource;
  beforeAll(async () => {
    source = await fileSource(STORIES_GGUF!);
    const gguf = await readGGUF(source);
    tokenizer = createTokenizer(gguf.metadata);
    tokens = metaStrings(gguf.metadata, 'tokenizer.ggml.tokens')!;
    scores = metaFloats(gguf.metadata, 'tokenizer.ggml.scores')!;
  });
  afterAll(() => source.close());

  it('encodes hand-checked prompts into the pieces llama2.c picks', () => {
    const pieces = (text: string) => tokenizer.encode(text).map((id) => tokens[id]);
    expect(tokenizer.encode('Once upon a time')).toEqual([1, 403, 407, 261, 378]);
    expect(pieces('Once upon a time')).toEqual(['<s>', '▁Once', '▁upon', '▁a', '▁time']);
    // 'llo' and 'ello' are not pieces; '▁w' (score -4) merges before '▁H' (-61) and then '▁He' (-87).
    expect(pieces('Hello world!')).toEqual(['<s>', '▁He', 'll', 'o', '▁w', 'or', 'ld', '!']);
    // A newline has no piece: byte fallback to <0x0A>, id 0x0A + 3.
    expect(tokenizer.encode('a\nb')).toEqual([1, 261, 13, 430]);
    // No emoji piece: its four UTF-8 bytes F0 9F 98 80 fall back to byte tokens, after the dummy-prefix '▁'.
    expect(tokenizer.encode('😀', { bos: false })).toEqual([tokens.indexOf('▁'), 0xf0 + 3, 0x9f + 3, 0x98 + 3, 0x80 + 3]);
    expect(tokenizer.encode('')).toEqual([1]);
    expect(tokenizer.encode('', { bos: false })).toEqual([]);
  });

  it('matches a literal transcription of llama2.c encode() on samples and random text', () => {
    const texts = [...SAMPLES, ...Array.from({ length: 200 }, (_, i) => randomText(i))];
    for (const text of texts) expect(tokenizer.encode(text, { bos: false }), JSON.stringify(text)).toEqual(llama2cEncode(tokens, scores, text));
  });

  it('leaves no adjacent pair that still forms a piece', () => {
    const ids = tokenizer.encode(SAMPLES.join(' '), { bos: false });
    for (let i = 0; i + 1 < ids.length; i++) expect(tokens.includes(tokens[ids[i]] + tokens[ids[i + 1]])).toBe(false);
  });

  it('round-trips text through ids, assembling UTF-8 split across byte tokens', () => {
    for (const text of [...SAMPLES, ...Array.from({ length: 50 }, (_, i) => randomText(1000 + i))]) {
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    }
  });

  it('strips the dummy-prefix space only after BOS, and renders control tokens as nothing', () => {
    const ids = tokenizer.encode('Once upon', { bos: false });
    expect(tokenizer.decode(ids)).toBe(' Once upon');
    expect(tokenizer.decode([1, ...ids, 2])).toBe('Once upon');
    expect([...tokenizer.decodeToken(403, 1)]).toEqual([...new TextEncoder().encode('Once')]);
    expect([...tokenizer.decodeToken(403)]).toEqual([...new TextEncoder().encode(' Once')]);
    expect(() => tokenizer.decode([512])).toThrow(/outside the vocabulary/);
  });

  it('streams byte tokens through a TextDecoder one at a time', () => {
    const ids = tokenizer.encode('é😀!', { bos: false });
    const decoder = new TextDecoder();
    const pieces = ids.map((id) => decoder.decode(tokenizer.decodeToken(id), { stream: true }));
    expect(pieces.join('') + decoder.decode()).toBe(' é😀!');
    expect(pieces.filter((p) => p === '').length).toBeGreaterThanOrEqual(3); // the emoji's first three bytes wait
  });
});

describe('SentencePiece tokenizer of a synthetic vocabulary', () => {
  it('matches llama2.c encode() where pieces are long and scores are all distinct', () => {
    const { metadata } = testModelParts({ architecture: 'llama', dim: 32, hiddenDim: 32, nLayers: 1, nHeads: 2, vocabSize: 3000 });
    const tokenizer = createTokenizer(metadata);
    const tokens = metaStrings(metadata, 'tokenizer.ggml.tokens')!;
    const scores = metaFloats(metadata, 'tokenizer.ggml.scores')!;
    for (let i = 0; i < 100; i++) {
      const text = randomText(5000 + i);
      expect(tokenizer.encode(text, { bos: false })).toEqual(llama2cEncode(tokens, scores, text));
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    }
  });
});

describe('pre-tokenizers', () => {
  it.each([
    ['default', "I'm 12345 fine!!  ok\n", ['I', "'m", ' 12345', ' fine', '!!', ' ', ' ok', '\n']],
    ['llama-bpe', "I'M 12345 fine!!\n\nok", ['I', "'M", ' ', '123', '45', ' fine', '!!\n\n', 'ok']],
    ['qwen2', 'x=12 ab', ['x', '=', '1', '2', ' ab']],
    ['smollm', 'a12 b', ['a', '1', '2', ' b']],
  ])('%s', (name, text, pieces) => {
    expect(preTokenizer(name)(text)).toEqual(pieces);
    expect(pieces.join('')).toBe(text);
  });
});

/** A byte-level BPE vocabulary: the 256 byte characters, then merged pieces, then specials. */
function bpeMetadata(pre: string, extra: string[], merges: string[]): GGUFMetadata {
  const tokens = [...BYTE_TO_CHAR, ...extra, '<|endoftext|>', '<|user|>'];
  const types = tokens.map((_, id) => (id === tokens.length - 2 ? TokenType.CONTROL : id === tokens.length - 1 ? TokenType.USER_DEFINED : TokenType.NORMAL));
  const metadata = new Map<string, GGUFValue>([
    ['tokenizer.ggml.model', meta.str('gpt2')],
    ['tokenizer.ggml.pre', meta.str(pre)],
    ['tokenizer.ggml.tokens', meta.strings(tokens)],
    ['tokenizer.ggml.token_type', meta.i32s(Int32Array.from(types))],
    ['tokenizer.ggml.merges', meta.strings(merges)],
    ['tokenizer.ggml.bos_token_id', meta.u32(tokens.length - 2)],
    ['tokenizer.ggml.eos_token_id', meta.u32(tokens.length - 2)],
  ]);
  return metadata;
}

describe('GPT-2 byte-level BPE tokenizer', () => {
  // Ranks: 'h e' 0, 'Ġ t' 1, 'Ġt he' 2, 'l l' 3, 'll o' 4. 'hello' is a token no merge makes.
  const extra = ['he', 'Ġt', 'Ġthe', 'll', 'llo', 'hello'];
  const merges = ['h e', 'Ġ t', 'Ġt he', 'l l', 'll o'];
  const id = (t: string) => 256 + extra.indexOf(t);
  const byte = (c: string) => BYTE_TO_CHAR.indexOf(c);
  let gpt2: Tokenizer;
  beforeAll(async () => {
    // Through the writer and the reader, as a real file would come.
    const file = encodeGGUF(bpeMetadata('gpt2', extra, merges), []);
    gpt2 = createTokenizer((await readGGUF(bytesSource(file))).metadata);
  });

  it('maps bytes to printable characters as GPT-2 does', () => {
    expect([BYTE_TO_CHAR[0x20], BYTE_TO_CHAR[0x0a], BYTE_TO_CHAR[0x41], BYTE_TO_CHAR[0xad], BYTE_TO_CHAR[0xff]]).toEqual(['Ġ', 'Ċ', 'A', 'Ń', 'ÿ']);
    expect(new Set(BYTE_TO_CHAR).size).toBe(256);
  });

  it('merges by rank, lowest first', () => {
    // 'hello': h e (0) → [he l l o]; l l (3) → [he ll o]; ll o (4) → [he llo]. ' the': h e (0), Ġ t (1), Ġt he (2).
    expect(gpt2.encode('hello the')).toEqual([id('he'), id('llo'), id('Ġthe')]);
    expect(gpt2.encode('hhe')).toEqual([byte('h'), id('he')]);
    expect(gpt2.encode('tell')).toEqual([byte('t'), byte('e'), id('ll')]);
    expect(gpt2.encode('the')).toEqual([byte('t'), id('he')]);
  });

  it('matches special tokens whole, before pre-tokenizing', () => {
    const eot = 256 + extra.length;
    expect(gpt2.encode('hi<|endoftext|>the<|user|>')).toEqual([byte('h'), byte('i'), eot, byte('t'), id('he'), eot + 1]);
    expect(gpt2.encode('<|endoftext|')).toHaveLength(new TextEncoder().encode('<|endoftext|').length);
    expect(gpt2.encode('x', { bos: true })).toEqual([eot, byte('x')]);
  });

  it('round-trips any text through bytes, rendering control tokens as nothing', () => {
    for (const text of [...SAMPLES, ...Array.from({ length: 50 }, (_, i) => randomText(2000 + i))]) {
      expect(gpt2.decode(gpt2.encode(text))).toBe(text);
    }
    expect(gpt2.decode(gpt2.encode('a<|endoftext|>b<|user|>'))).toBe('ab<|user|>');
    expect(gpt2.decode([byte('Ġ'), id('Ġthe')])).toBe('  the');
  });

  it('takes a word that is a whole token without merging only for llama-bpe (ignore_merges)', () => {
    const llama3 = createTokenizer(bpeMetadata('llama-bpe', extra, merges));
    expect(llama3.encode('hello')).toEqual([id('hello')]);
    expect(gpt2.encode('hello')).toEqual([id('he'), id('llo')]);
  });

  it('defaults to not adding BOS, and reads add_bos_token', () => {
    expect(gpt2.encode('x')).toEqual([byte('x')]);
    const m = new Map(bpeMetadata('gpt2', extra, merges)).set('tokenizer.ggml.add_bos_token', meta.bool(true));
    expect(createTokenizer(m).encode('x')[0]).toBe(256 + extra.length);
  });
});

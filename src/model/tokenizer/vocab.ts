/**
 * The vocabulary as stored in GGUF metadata, checked once for both tokenizer kinds.
 */
import { TokenscopeError } from '../../errors.ts';
import { metaBool, metaFloats, metaInts, metaString, metaStrings, metaUint, required } from '../gguf/metadata.ts';
import { concatBytes } from '../gguf/source.ts';
import type { GGUFMetadata } from '../gguf/types.ts';
import { TokenType, type Tokenizer } from './types.ts';

export interface Vocabulary {
  model: string;
  tokens: string[];
  /** SentencePiece merge priorities (higher merges first); zeros when absent. */
  scores: Float32Array;
  /** TokenType per token; NORMAL when absent. */
  types: Int32Array;
  bosId: number;
  eosId: number;
  unkId: number | undefined;
  addBos: boolean;
  /** SentencePiece: a space in front of text that starts the prompt or follows a special token (`tokenizer.ggml.add_space_prefix`, default true). */
  addSpacePrefix: boolean;
}

/** SentencePiece vocabularies fix BOS = 1 and EOS = 2 unless told otherwise; byte-level BPE ones must say. */
export function specialTokenIds(meta: GGUFMetadata, vocabSize: number): { bosId: number; eosId: number } {
  const spm = metaString(meta, 'tokenizer.ggml.model') === 'llama';
  const id = (key: string, spmDefault: number) => {
    const value = required(metaUint(meta, key) ?? (spm ? spmDefault : undefined), key);
    if (value >= vocabSize) {
      throw new TokenscopeError(
        'model-format',
        `${key} ${value} is outside the vocabulary of ${vocabSize} tokens`,
        'The tokenizer metadata is damaged; re-convert the model.',
      );
    }
    return value;
  };
  return { bosId: id('tokenizer.ggml.bos_token_id', 1), eosId: id('tokenizer.ggml.eos_token_id', 2) };
}

export function readVocabulary(meta: GGUFMetadata): Vocabulary {
  const model = required(metaString(meta, 'tokenizer.ggml.model'), 'tokenizer.ggml.model');
  const tokens = required(metaStrings(meta, 'tokenizer.ggml.tokens'), 'tokenizer.ggml.tokens');
  const sized = <A extends { length: number }>(key: string, a: A | undefined, fill: () => A): A => {
    if (a !== undefined && a.length !== tokens.length) {
      throw new TokenscopeError(
        'model-format',
        `${key} has ${a.length} entries for ${tokens.length} tokens`,
        'The tokenizer metadata is damaged; re-convert the model.',
      );
    }
    return a ?? fill();
  };
  const unkId = metaUint(meta, 'tokenizer.ggml.unknown_token_id');
  return {
    model,
    tokens,
    scores: sized('tokenizer.ggml.scores', metaFloats(meta, 'tokenizer.ggml.scores'), () => new Float32Array(tokens.length)),
    types: sized('tokenizer.ggml.token_type', metaInts(meta, 'tokenizer.ggml.token_type'), () => new Int32Array(tokens.length).fill(TokenType.NORMAL)),
    ...specialTokenIds(meta, tokens.length),
    unkId: unkId !== undefined && unkId < tokens.length ? unkId : undefined,
    addBos: metaBool(meta, 'tokenizer.ggml.add_bos_token') ?? model === 'llama',
    addSpacePrefix: metaBool(meta, 'tokenizer.ggml.add_space_prefix') ?? model === 'llama',
  };
}

/** Token text → id; the last id wins when a text repeats, as in llama.cpp's token_to_id. */
export function tokenIds(tokens: readonly string[]): Map<string, number> {
  const ids = new Map<string, number>();
  tokens.forEach((t, id) => ids.set(t, id));
  return ids;
}

export function checkId(id: number, vocabSize: number): void {
  if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
    throw new TokenscopeError('bad-input', `token id ${id} is outside the vocabulary (0 to ${vocabSize - 1})`, 'Decode only ids this model produced.');
  }
}

export const utf8Encoder = new TextEncoder();

/** Joins the bytes of every token, then decodes once, so characters split across byte tokens come out whole. */
export function decodeAll(tokenizer: Tokenizer, ids: readonly number[]): string {
  return new TextDecoder().decode(concatBytes(ids.map((id, i) => tokenizer.decodeToken(id, i > 0 ? ids[i - 1] : undefined))));
}

/** Text still to be tokenized, or the id of a special token found whole. */
export type Fragment = string | number;

/**
 * Cuts text at special tokens as llama.cpp's tokenizer_st_partition does: control, unknown and
 * user-defined tokens, longest text first, each splitting every remaining text fragment at all
 * its occurrences. Without `parseSpecial` (a prompt's literal text) control and unknown tokens are
 * left as text, but user-defined ones are still cut out.
 */
export class SpecialTokens {
  /** [text, id, always (user-defined)], longest text first. */
  private readonly tokens: [string, number, boolean][];

  constructor(vocab: Pick<Vocabulary, 'tokens' | 'types'>) {
    const special = new Set<number>([TokenType.CONTROL, TokenType.USER_DEFINED, TokenType.UNKNOWN]);
    this.tokens = [];
    vocab.tokens.forEach((text, id) => {
      if (text !== '' && special.has(vocab.types[id])) this.tokens.push([text, id, vocab.types[id] === TokenType.USER_DEFINED]);
    });
    this.tokens.sort((a, b) => utf8Encoder.encode(b[0]).length - utf8Encoder.encode(a[0]).length);
  }

  partition(text: string, parseSpecial: boolean): Fragment[] {
    let fragments: Fragment[] = text === '' ? [] : [text];
    for (const [token, id, always] of this.tokens) {
      if (!always && !parseSpecial) continue;
      if (!fragments.some((f) => typeof f === 'string' && f.includes(token))) continue;
      fragments = fragments.flatMap((f) => {
        if (typeof f !== 'string') return [f];
        const out: Fragment[] = [];
        let start = 0;
        for (let at = f.indexOf(token); at >= 0; at = f.indexOf(token, start)) {
          if (at > start) out.push(f.slice(start, at));
          out.push(id);
          start = at + token.length;
        }
        if (start < f.length) out.push(f.slice(start));
        return out;
      });
    }
    return fragments;
  }
}

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
  const scores = sized('tokenizer.ggml.scores', metaFloats(meta, 'tokenizer.ggml.scores'), () => new Float32Array(tokens.length));
  checkDistinct(tokens);
  // SentencePiece merges by score: a NaN compares false both ways and would change which pair merges.
  const nan = model === 'llama' ? scores.findIndex((s) => Number.isNaN(s)) : -1;
  if (nan >= 0) formatError(`tokenizer.ggml.scores has NaN for token ${nan} ('${tokens[nan]}')`);
  return {
    model,
    tokens,
    scores,
    types: sized('tokenizer.ggml.token_type', metaInts(meta, 'tokenizer.ggml.token_type'), () => new Int32Array(tokens.length).fill(TokenType.NORMAL)),
    ...specialTokenIds(meta, tokens.length),
    unkId: unkId !== undefined && unkId < tokens.length ? unkId : undefined,
    addBos: metaBool(meta, 'tokenizer.ggml.add_bos_token') ?? model === 'llama',
    addSpacePrefix: metaBool(meta, 'tokenizer.ggml.add_space_prefix') ?? model === 'llama',
  };
}

/** Two tokens with one text: which id a text becomes would depend on the order of a lookup. */
function checkDistinct(tokens: readonly string[]): void {
  const first = new Map<string, number>();
  tokens.forEach((text, id) => {
    const other = first.get(text);
    if (other !== undefined) formatError(`tokens ${other} and ${id} are both '${text}'`);
    first.set(text, id);
  });
}

function formatError(what: string): never {
  throw new TokenscopeError('model-format', `the vocabulary is damaged: ${what}`, 'The tokenizer metadata is damaged; re-convert the model.');
}

/** Longest text the tokenizers take, in characters (UTF-16 code units): hundreds of thousands of tokens, past any context we run. */
export const MAX_PROMPT_CHARS = 1_000_000;

/** Refuses text past MAX_PROMPT_CHARS before any work on it. */
export function checkPromptLength(text: string): void {
  if (text.length > MAX_PROMPT_CHARS) {
    throw new TokenscopeError(
      'bad-input',
      `the prompt has ${text.length.toLocaleString('en-US')} characters; tokenscope tokenizes at most ${MAX_PROMPT_CHARS.toLocaleString('en-US')}`,
      "Shorten the prompt: a model's context holds far fewer tokens than that.",
    );
  }
}

/** Token text → id (texts are distinct: readVocabulary checks). */
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
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(concatBytes(ids.map((id, i) => tokenizer.decodeToken(id, i > 0 ? ids[i - 1] : undefined))));
}

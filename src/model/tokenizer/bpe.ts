/**
 * Byte-level BPE tokenizer (`tokenizer.ggml.model = "gpt2"`): GPT-2, Llama 3, Qwen2, SmolLM.
 * Text is cut at special tokens (matched whole), then into words by the pre-tokenizer; each word's
 * UTF-8 bytes become printable characters through GPT-2's byte↔unicode map and are merged by
 * `tokenizer.ggml.merges` rank (lowest first), as GPT-2's `bpe()`.
 */
import { TokenscopeError } from '../../errors.ts';
import { mergeSymbols } from './merge.ts';
import { preTokenizer } from './pretokenize.ts';
import { TokenType, type EncodeOptions, type Tokenizer } from './types.ts';
import { SpecialTokens } from './specials.ts';
import { checkId, checkPromptLength, decodeAll, tokenIds, utf8Encoder, type Vocabulary } from './vocab.ts';

/** GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the rest to U+0100 onwards. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let next = 256;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable(b) ? b : next++));
})();
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** Words up to this long are remembered (up to CACHED_WORDS of them), as prompts repeat words. */
const CACHED_WORD_CHARS = 256;
const CACHED_WORDS = 65536;

export interface BpeOptions {
  merges: readonly string[];
  /** `tokenizer.ggml.pre` */
  pre?: string;
}

export class BytePairTokenizer implements Tokenizer {
  readonly kind = 'gpt2';
  readonly vocabSize: number;
  readonly bosId: number;
  readonly eosId: number;
  private readonly ids: Map<string, number>;
  /** left → right → merge rank (nested, so a lookup makes no string). */
  private readonly ranks = new Map<string, Map<string, number>>();
  private readonly preTokenize: (text: string) => string[];
  private readonly specials: SpecialTokens;
  /** Llama 3 takes a word that is itself a token without merging (HF's `ignore_merges`). */
  private readonly ignoreMerges: boolean;
  private readonly pieces: Uint8Array[];
  private readonly cache = new Map<string, number[]>();

  constructor(
    private readonly vocab: Vocabulary,
    options: BpeOptions,
  ) {
    this.vocabSize = vocab.tokens.length;
    this.bosId = vocab.bosId;
    this.eosId = vocab.eosId;
    this.ids = tokenIds(vocab.tokens);
    this.preTokenize = preTokenizer(options.pre);
    this.ignoreMerges = options.pre === 'llama-bpe' || options.pre === 'llama3';
    BYTE_TO_CHAR.forEach((c, b) => {
      if (!this.ids.has(c)) formatError(`the vocabulary has no token for byte 0x${b.toString(16)} ('${c}')`);
    });
    options.merges.forEach((merge, rank) => {
      const space = merge.indexOf(' ', 1);
      if (space < 0) formatError(`merge #${rank} '${merge}' is not two tokens separated by a space`);
      const [left, right] = [merge.slice(0, space), merge.slice(space + 1)];
      if (!this.ids.has(left + right)) formatError(`merge #${rank} '${merge}' makes '${left + right}', which is not in the vocabulary`);
      let rights = this.ranks.get(left);
      if (!rights) this.ranks.set(left, (rights = new Map()));
      if (!rights.has(right)) rights.set(right, rank);
    });
    this.specials = new SpecialTokens(vocab);
    this.pieces = vocab.tokens.map((text, id) => {
      if (vocab.types[id] === TokenType.CONTROL) return new Uint8Array(0);
      if (vocab.types[id] === TokenType.USER_DEFINED) return utf8Encoder.encode(text);
      return Uint8Array.from(
        [...text].flatMap((c) => {
          const b = CHAR_TO_BYTE.get(c);
          return b === undefined ? [...utf8Encoder.encode(c)] : [b];
        }),
      );
    });
  }

  encode(text: string, { bos = this.vocab.addBos, special = true }: EncodeOptions = {}): number[] {
    checkPromptLength(text);
    const ids = bos ? [this.bosId] : [];
    for (const fragment of this.specials.partition(text, special)) {
      if (typeof fragment === 'number') ids.push(fragment);
      else this.encodeOrdinary(fragment, ids);
    }
    return ids;
  }

  private encodeOrdinary(text: string, out: number[]): void {
    for (const word of text === '' ? [] : this.preTokenize(text)) {
      let ids = this.cache.get(word);
      if (!ids) {
        ids = this.encodeWord(word);
        if (word.length <= CACHED_WORD_CHARS) {
          if (this.cache.size >= CACHED_WORDS) this.cache.clear();
          this.cache.set(word, ids);
        }
      }
      for (const id of ids) out.push(id);
    }
  }

  /**
   * Lowest rank first, leftmost on ties, as llama.cpp's queue of pairs does. GPT-2's bpe() merges
   * every occurrence of the best pair left to right before looking again; with merges in training
   * order (a pair's parts are made by earlier merges) the two pick the same pieces.
   */
  private encodeWord(word: string): number[] {
    const symbols = Array.from(utf8Encoder.encode(word), (b) => BYTE_TO_CHAR[b]);
    const whole = this.ids.get(symbols.join(''));
    if (this.ignoreMerges && whole !== undefined) return [whole];
    return mergeSymbols(symbols, (left, right) => this.ranks.get(left)?.get(right)).map((s) => this.ids.get(s)!);
  }

  decodeToken(id: number): Uint8Array {
    checkId(id, this.vocabSize);
    return this.pieces[id];
  }

  decode(ids: readonly number[]): string {
    return decodeAll(this, ids);
  }
}

function formatError(what: string): never {
  throw new TokenscopeError('model-format', `byte-level BPE tokenizer: ${what}`, 'The tokenizer metadata is damaged; re-convert the model.');
}

/**
 * Byte-level BPE tokenizer (`tokenizer.ggml.model = "gpt2"`): GPT-2, Llama 3, Qwen2, SmolLM.
 * Text is cut at special tokens (matched whole), then into words by the pre-tokenizer; each word's
 * UTF-8 bytes become printable characters through GPT-2's byte↔unicode map and are merged by
 * `tokenizer.ggml.merges` rank (lowest first), as GPT-2's `bpe()`.
 */
import { TokenscopeError } from '../../errors.ts';
import { preTokenizer } from './pretokenize.ts';
import { TokenType, type EncodeOptions, type Tokenizer } from './types.ts';
import { checkId, decodeAll, SpecialTokens, tokenIds, utf8Encoder, type Vocabulary } from './vocab.ts';

/** GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the rest to U+0100 onwards. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let next = 256;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable(b) ? b : next++));
})();
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

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
  /** "left right" → merge rank. */
  private readonly ranks = new Map<string, number>();
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
      const merged = merge.slice(0, space) + merge.slice(space + 1);
      if (!this.ids.has(merged)) formatError(`merge #${rank} '${merge}' makes '${merged}', which is not in the vocabulary`);
      if (!this.ranks.has(merge)) this.ranks.set(merge, rank);
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
        this.cache.set(word, ids);
      }
      out.push(...ids);
    }
  }

  private encodeWord(word: string): number[] {
    let symbols = [...utf8Encoder.encode(word)].map((b) => BYTE_TO_CHAR[b]);
    const whole = this.ids.get(symbols.join(''));
    if (this.ignoreMerges && whole !== undefined) return [whole];
    while (symbols.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const rank = this.ranks.get(`${symbols[i]} ${symbols[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          best = i;
          bestRank = rank;
        }
      }
      if (best < 0) break;
      // Merge every occurrence of the best pair, left to right, as GPT-2 does.
      const [left, right] = [symbols[best], symbols[best + 1]];
      const merged: string[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) merged.push(left + symbols[++i]);
        else merged.push(symbols[i]);
      }
      symbols = merged;
    }
    return symbols.map((s) => this.ids.get(s)!);
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

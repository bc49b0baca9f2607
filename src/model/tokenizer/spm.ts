/**
 * SentencePiece-style tokenizer (`tokenizer.ggml.model = "llama"`: Llama 2, Gemma), encoding as
 * llama.cpp's llm_tokenizer_spm: special tokens are cut out first (vocab.ts), each remaining text
 * gets a space in front when it starts the prompt or follows a special token (if the file's
 * add_space_prefix says so; Gemma's does not), spaces become `▁` (U+2581), and the text is split
 * into code points that are merged pairwise — always the adjacent pair whose concatenation is the
 * vocabulary piece with the highest score (leftmost on ties). A code point no piece covers becomes
 * its UTF-8 byte tokens `<0xXX>` (byte fallback).
 */
import { TokenType, type EncodeOptions, type Tokenizer } from './types.ts';
import { checkId, decodeAll, SpecialTokens, tokenIds, utf8Encoder, type Vocabulary } from './vocab.ts';

const SPACE = '\u2581';
const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

export class SentencePieceTokenizer implements Tokenizer {
  readonly kind = 'llama';
  readonly vocabSize: number;
  readonly bosId: number;
  readonly eosId: number;
  private readonly ids: Map<string, number>;
  /** The id of `<0xXX>` for each byte (the unknown token where the vocabulary has none). */
  private readonly byteIds: number[];
  /** What each token decodes to. */
  private readonly pieces: Uint8Array[];
  private readonly specials: SpecialTokens;

  constructor(private readonly vocab: Vocabulary) {
    this.vocabSize = vocab.tokens.length;
    this.bosId = vocab.bosId;
    this.eosId = vocab.eosId;
    this.ids = tokenIds(vocab.tokens);
    this.specials = new SpecialTokens(vocab);
    const hex = (b: number) => b.toString(16).toUpperCase().padStart(2, '0');
    this.byteIds = Array.from({ length: 256 }, (_, b) => this.ids.get(`<0x${hex(b)}>`) ?? vocab.unkId ?? 0);
    this.pieces = vocab.tokens.map((text, id) => {
      if (vocab.types[id] === TokenType.CONTROL) return new Uint8Array(0);
      const byte = BYTE_PIECE.exec(text);
      return byte ? Uint8Array.of(parseInt(byte[1], 16)) : utf8Encoder.encode(text.replaceAll(SPACE, ' '));
    });
  }

  encode(text: string, { bos = this.vocab.addBos, special = true }: EncodeOptions = {}): number[] {
    const out = bos ? [this.bosId] : [];
    let afterSpecial = true;
    for (const fragment of this.specials.partition(text, special)) {
      if (typeof fragment === 'number') {
        out.push(fragment);
        afterSpecial = true;
        continue;
      }
      const prefixed = this.vocab.addSpacePrefix && afterSpecial ? ` ${fragment}` : fragment;
      this.segment(prefixed.replaceAll(' ', SPACE), out);
      afterSpecial = false;
    }
    return out;
  }

  /**
   * llama.cpp keeps a queue of candidate pairs; rescanning the pairs after each merge, with each
   * pair's merge cached and only the two pairs next to a merge recomputed, picks the same pair in
   * the same order.
   */
  private segment(text: string, out: number[]): void {
    const symbols = [...text];
    const pairs = symbols.slice(0, -1).map((sym, i) => this.pair(sym, symbols[i + 1]));
    for (;;) {
      let best = -1;
      let bestScore = -Infinity;
      for (let i = 0; i < pairs.length; i++) {
        const score = pairs[i];
        if (score !== undefined && score > bestScore) {
          best = i;
          bestScore = score;
        }
      }
      if (best < 0) break;
      symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
      pairs.splice(best, 1);
      if (best > 0) pairs[best - 1] = this.pair(symbols[best - 1], symbols[best]);
      if (best < pairs.length) pairs[best] = this.pair(symbols[best], symbols[best + 1]);
    }
    for (const sym of symbols) {
      const id = this.ids.get(sym);
      if (id !== undefined) out.push(id);
      else for (const b of utf8Encoder.encode(sym)) out.push(this.byteIds[b]);
    }
  }

  /** The score of the piece two symbols make together, if the vocabulary has it. */
  private pair(left: string, right: string): number | undefined {
    const id = this.ids.get(left + right);
    return id === undefined ? undefined : this.vocab.scores[id];
  }

  decodeToken(id: number, prevId?: number): Uint8Array {
    checkId(id, this.vocabSize);
    const piece = this.pieces[id];
    // As llama2.c: after BOS, SentencePiece drops the dummy-prefix space it added.
    return this.vocab.addSpacePrefix && prevId === this.bosId && piece[0] === 0x20 ? piece.subarray(1) : piece;
  }

  decode(ids: readonly number[]): string {
    return decodeAll(this, ids);
  }
}

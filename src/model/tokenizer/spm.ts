/**
 * SentencePiece-style tokenizer (`tokenizer.ggml.model = "llama"`), encoding exactly as
 * llama2.c's `encode()`: a dummy-prefix space, one token per code point (UTF-8 byte tokens
 * `<0xXX>` when the code point is not in the vocabulary), then repeatedly merge the adjacent pair
 * whose concatenation is the vocabulary piece with the highest score (leftmost on ties).
 * `▁` (U+2581) stands for a space in the vocabulary.
 */
import { TokenType, type Tokenizer } from './types.ts';
import { checkId, decodeAll, tokenIds, utf8Encoder, type Vocabulary } from './vocab.ts';

const SPACE = '\u2581';
/** llama2.c starts its best score here, so pieces scored at or below it never merge. */
const NO_MERGE = -1e10;
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

  constructor(private readonly vocab: Vocabulary) {
    this.vocabSize = vocab.tokens.length;
    this.bosId = vocab.bosId;
    this.eosId = vocab.eosId;
    this.ids = tokenIds(vocab.tokens);
    const hex = (b: number) => b.toString(16).toUpperCase().padStart(2, '0');
    this.byteIds = Array.from({ length: 256 }, (_, b) => this.ids.get(`<0x${hex(b)}>`) ?? vocab.unkId ?? 0);
    this.pieces = vocab.tokens.map((text, id) => {
      if (vocab.types[id] === TokenType.CONTROL) return new Uint8Array(0);
      const byte = BYTE_PIECE.exec(text);
      return byte ? Uint8Array.of(parseInt(byte[1], 16)) : utf8Encoder.encode(text.replaceAll(SPACE, ' '));
    });
  }

  encode(text: string, { bos = this.vocab.addBos }: { bos?: boolean } = {}): number[] {
    const prefix = bos ? [this.bosId] : [];
    if (text === '') return prefix;
    const symbols: number[] = [];
    for (const codePoint of SPACE + text.replaceAll(' ', SPACE)) {
      const id = this.ids.get(codePoint);
      if (id !== undefined) symbols.push(id);
      else for (const b of utf8Encoder.encode(codePoint)) symbols.push(this.byteIds[b]);
    }
    return [...prefix, ...this.merge(symbols)];
  }

  /**
   * llama2.c rescans every pair after each merge; here each pair's merge is cached and only the
   * two pairs next to a merge are recomputed, which picks the same pair in the same order.
   */
  private merge(symbols: number[]): number[] {
    const pairs = symbols.slice(0, -1).map((id, i) => this.pair(id, symbols[i + 1]));
    for (;;) {
      let best = -1;
      let bestScore = NO_MERGE;
      for (let i = 0; i < pairs.length; i++) {
        const p = pairs[i];
        if (p && p.score > bestScore) {
          best = i;
          bestScore = p.score;
        }
      }
      if (best < 0) return symbols;
      symbols.splice(best, 2, pairs[best]!.id);
      pairs.splice(best, 1);
      if (best > 0) pairs[best - 1] = this.pair(symbols[best - 1], symbols[best]);
      if (best < pairs.length) pairs[best] = this.pair(symbols[best], symbols[best + 1]);
    }
  }

  private pair(left: number, right: number): { id: number; score: number } | undefined {
    const id = this.ids.get(this.vocab.tokens[left] + this.vocab.tokens[right]);
    return id === undefined ? undefined : { id, score: this.vocab.scores[id] };
  }

  decodeToken(id: number, prevId?: number): Uint8Array {
    checkId(id, this.vocabSize);
    const piece = this.pieces[id];
    // As llama2.c: after BOS, SentencePiece drops the dummy-prefix space.
    return prevId === this.bosId && piece[0] === 0x20 ? piece.subarray(1) : piece;
  }

  decode(ids: readonly number[]): string {
    return decodeAll(this, ids);
  }
}

/**
 * SentencePiece-style tokenizer (`tokenizer.ggml.model = "llama"`: Llama 2, Gemma), encoding as
 * llama.cpp's llm_tokenizer_spm: special tokens are cut out first (vocab.ts), each remaining text
 * gets a space in front when it starts the prompt or follows a special token (if the file's
 * add_space_prefix says so; Gemma's does not), spaces become `▁` (U+2581), and the text is split
 * into code points that are merged pairwise — always the adjacent pair whose concatenation is the
 * vocabulary piece with the highest score (leftmost on ties). A code point no piece covers becomes
 * its UTF-8 byte tokens `<0xXX>` (byte fallback).
 */
import { mergeSymbols } from './merge.ts';
import { TokenType, type EncodeOptions, type Tokenizer } from './types.ts';
import { SpecialTokens } from './specials.ts';
import { checkId, checkPromptLength, decodeAll, tokenIds, utf8Encoder, type Vocabulary } from './vocab.ts';

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
    checkPromptLength(text);
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

  /** Highest score first (its negation is the heap's key), leftmost on ties, as llama.cpp's queue of pairs. */
  private segment(text: string, out: number[]): void {
    const symbols = mergeSymbols([...text], (left, right) => {
      const id = this.ids.get(left + right);
      return id === undefined ? undefined : -this.vocab.scores[id];
    });
    for (const sym of symbols) {
      const id = this.ids.get(sym);
      if (id !== undefined) out.push(id);
      else for (const b of utf8Encoder.encode(sym)) out.push(this.byteIds[b]);
    }
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

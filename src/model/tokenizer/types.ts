export interface EncodeOptions {
  bos?: boolean;
  special?: boolean;
}

/** The one tokenizer interface both vocabularies implement. */
export interface Tokenizer {
  /** `tokenizer.ggml.model`: SentencePiece-style ('llama') or byte-level BPE ('gpt2'). */
  readonly kind: 'llama' | 'gpt2';
  readonly vocabSize: number;
  readonly bosId: number;
  readonly eosId: number;
  /**
   * Token ids for `text`; `bos` defaults to the file's `tokenizer.ggml.add_bos_token` (SentencePiece:
   * true). `special` (default true) reads control-token text such as `<|im_start|>` as that token,
   * as llama.cpp does for prompts; false tokenizes it as plain text. Text past MAX_PROMPT_CHARS
   * (vocab.ts) is refused before any work on it.
   */
  encode(text: string, options?: EncodeOptions): number[];
  /** The text of a whole sequence; control tokens (BOS, EOS, …) render as nothing. */
  decode(ids: readonly number[]): string;
  /**
   * The bytes token `id` adds when it follows `prevId`. A byte token may carry part of a UTF-8
   * character: stream these through `new TextDecoder().decode(bytes, { stream: true })`.
   */
  decodeToken(id: number, prevId?: number): Uint8Array;
}

/** `tokenizer.ggml.token_type` values (llama.cpp's llama_token_type). */
export const TokenType = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

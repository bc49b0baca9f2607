/**
 * Builds the model's tokenizer from its GGUF metadata.
 */
import { TokenscopeError } from '../../errors.ts';
import { metaString, metaStrings, required } from '../gguf/metadata.ts';
import type { GGUFMetadata } from '../gguf/types.ts';
import { BytePairTokenizer } from './bpe.ts';
import { SentencePieceTokenizer } from './spm.ts';
import type { Tokenizer } from './types.ts';
import { readVocabulary } from './vocab.ts';

export type { Tokenizer } from './types.ts';
export { TokenType } from './types.ts';

export function createTokenizer(meta: GGUFMetadata): Tokenizer {
  const vocab = readVocabulary(meta);
  switch (vocab.model) {
    case 'llama':
      return new SentencePieceTokenizer(vocab);
    case 'gpt2':
      return new BytePairTokenizer(vocab, {
        merges: required(metaStrings(meta, 'tokenizer.ggml.merges'), 'tokenizer.ggml.merges'),
        pre: metaString(meta, 'tokenizer.ggml.pre'),
      });
    default:
      throw new TokenscopeError(
        'model-unsupported',
        `tokenizer.ggml.model is '${vocab.model}'; tokenscope reads 'llama' and 'gpt2'`,
        'Pick a model with a SentencePiece (Llama 2) or byte-level BPE (Llama 3, Qwen2, SmolLM) tokenizer.',
      );
  }
}

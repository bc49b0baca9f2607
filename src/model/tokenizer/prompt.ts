/**
 * A prompt's text → token ids, the one path for every caller: with the model's tokenizer (BOS
 * first), or as one user message through the file's chat template. Text past MAX_PROMPT_CHARS is
 * refused before the template or the tokenizer runs. In a page this runs in a worker
 * (off-thread.ts), so a long prompt or a slow template never freezes the tab; in Node it runs in
 * process (the chat budget and the linear tokenizers bound it there).
 */
import { TokenscopeError } from '../../errors.ts';
import type { GGUFMetadata } from '../gguf/types.ts';
import { chatTemplateOf, encodeChat } from './chat.ts';
import type { Tokenizer } from './types.ts';
import { checkPromptLength } from './vocab.ts';

export async function encodePromptWith(tokenizer: Tokenizer, meta: GGUFMetadata, prompt: string, chat: boolean): Promise<number[]> {
  checkPromptLength(prompt);
  if (!chat) return tokenizer.encode(prompt, { bos: true });
  const template = chatTemplateOf(meta, tokenizer);
  if (!template) throw noTemplate();
  return encodeChat(tokenizer, template, [{ role: 'user', content: prompt }]);
}

export function noTemplate(): TokenscopeError {
  return new TokenscopeError(
    'bad-input',
    'A chat prompt needs the chat template of a model file, and this model has none.',
    'Drop --chat, or load a GGUF that carries tokenizer.chat_template (an instruct model).',
  );
}

/**
 * Chat prompts: the model file's own template (`tokenizer.chat_template`, Jinja) rendered with
 * Hugging Face's Jinja interpreter, loaded only when a chat prompt is sent (about 23 kB gzipped,
 * kept out of the page's main bundle), within a budget of steps, depth, size and time
 * (chat-budget.ts), then tokenized with special tokens parsed, as llama.cpp's chat path does.
 */
import { TokenscopeError } from '../../errors.ts';
import { RENDER_BUDGET, renderWithBudget, type RenderBudget } from './chat-budget.ts';
import { metaString, metaStrings } from '../gguf/metadata.ts';
import type { GGUFMetadata } from '../gguf/types.ts';
import type { Tokenizer } from './types.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatTemplate {
  template: string;
  bosToken: string;
  eosToken: string;
}

/** The file's chat template and the texts of its BOS/EOS tokens, or undefined when it has none. */
export function chatTemplateOf(meta: GGUFMetadata, tokenizer: Pick<Tokenizer, 'bosId' | 'eosId'>): ChatTemplate | undefined {
  const template = metaString(meta, 'tokenizer.chat_template');
  if (template === undefined) return undefined;
  const tokens = metaStrings(meta, 'tokenizer.ggml.tokens') ?? [];
  const text = (id: number) => tokens[id] ?? '';
  return { template, bosToken: text(tokenizer.bosId), eosToken: text(tokenizer.eosId) };
}

/** The prompt text the template makes of `messages`, ending with the assistant's turn opened. */
export async function renderChat(chat: ChatTemplate, messages: readonly ChatMessage[], budget: RenderBudget = RENDER_BUDGET): Promise<string> {
  const jinja = await import('@huggingface/jinja');
  try {
    const items = { messages, add_generation_prompt: true, bos_token: chat.bosToken, eos_token: chat.eosToken };
    return renderWithBudget(jinja, chat.template, items, budget);
  } catch (e) {
    if (e instanceof TokenscopeError) throw e;
    throw new TokenscopeError(
      'model-format',
      `the file's chat template does not render: ${(e as Error).message}`,
      'Send the prompt as plain text (without --chat).',
    );
  }
}

/**
 * Token ids of a chat prompt: the rendered text with special tokens parsed. BOS is added only
 * when the file asks for it and the template did not already write it.
 */
export async function encodeChat(tokenizer: Tokenizer, chat: ChatTemplate, messages: readonly ChatMessage[]): Promise<number[]> {
  const text = await renderChat(chat, messages);
  const ids = tokenizer.encode(text, { special: true });
  return ids.length > 1 && ids[0] === tokenizer.bosId && ids[1] === tokenizer.bosId ? ids.slice(1) : ids;
}

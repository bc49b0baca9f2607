/**
 * The page's tokenizer worker: builds the tokenizer from the `tokenizer.*` metadata it is sent,
 * encodes one prompt (chat template included) and posts the ids, or the error as plain fields
 * (a TokenscopeError does not survive structured cloning as itself).
 */
import { TokenscopeError } from '../../errors.ts';
import type { GGUFMetadata } from '../gguf/types.ts';
import { createTokenizer } from './index.ts';
import { encodePromptWith } from './prompt.ts';

export interface EncodeRequest {
  meta: GGUFMetadata;
  prompt: string;
  chat: boolean;
}

export type EncodeReply = { ok: true; ids: Int32Array } | { ok: false; code: string; message: string; hint: string };

self.onmessage = async (e: MessageEvent<EncodeRequest>) => {
  let reply: EncodeReply;
  try {
    const { meta, prompt, chat } = e.data;
    const ids = Int32Array.from(await encodePromptWith(createTokenizer(meta), meta, prompt, chat));
    reply = { ok: true, ids };
  } catch (err) {
    reply =
      err instanceof TokenscopeError
        ? { ok: false, code: err.code, message: err.message, hint: err.hint }
        : { ok: false, code: 'model-format', message: `the prompt could not be tokenized: ${(err as Error)?.message ?? String(err)}`, hint: '' };
  }
  const transfer = reply.ok ? [reply.ids.buffer] : [];
  (self as unknown as { postMessage(m: EncodeReply, t: Transferable[]): void }).postMessage(reply, transfer);
};

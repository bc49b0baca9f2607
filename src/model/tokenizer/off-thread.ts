/**
 * Prompt tokenization in a module worker (worker.ts), for pages: the main thread only sends the
 * `tokenizer.*` metadata and the text, and waits. The worker is terminated when it answers, when
 * the run is cancelled, or after OFF_THREAD_LIMIT_MS — a hard stop beneath the chat budget's own
 * limits, for whatever a hostile vocabulary or template might still find.
 */
import { TokenscopeError, type ErrorCode } from '../../errors.ts';
import type { GGUFMetadata } from '../gguf/types.ts';
import { checkPromptLength } from './vocab.ts';
import type { EncodeReply, EncodeRequest } from './worker.ts';

/** Longest the worker may take for one prompt (1 MB of adversarial text takes a few seconds on a slow CPU). */
export const OFF_THREAD_LIMIT_MS = 30_000;

/** True where module workers exist and a page's main thread is worth keeping free. */
/** The metadata the tokenizer and the chat template read (every `tokenizer.*` key): what the worker is sent. */
export function tokenizerMetadata(meta: GGUFMetadata): GGUFMetadata {
  return new Map([...meta].filter(([key]) => key.startsWith('tokenizer.')));
}

export function canEncodeOffThread(): boolean {
  return typeof Worker === 'function' && typeof document !== 'undefined';
}

export async function encodeOffThread(
  meta: GGUFMetadata,
  prompt: string,
  chat: boolean,
  opts: { signal?: AbortSignal; limitMs?: number } = {},
): Promise<number[]> {
  // Refused before the text is copied to the worker.
  checkPromptLength(prompt);
  const limitMs = opts.limitMs ?? OFF_THREAD_LIMIT_MS;
  return new Promise((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'tokenscope-tokenizer' });
    } catch (e) {
      reject(
        new TokenscopeError('io', `the tokenizer worker could not start: ${(e as Error).message}`, 'Reload the page; a content blocker may refuse workers.'),
      );
      return;
    }
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      worker.terminate();
      settle();
    };
    const onAbort = () => finish(() => reject(new TokenscopeError('cancelled', 'The run was cancelled.', 'Start it again when ready.')));
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new TokenscopeError(
              'bad-input',
              `tokenizing the prompt took longer than ${limitMs / 1000} s and was stopped`,
              'Shorten the prompt, or send it without the chat template.',
            ),
          ),
        ),
      limitMs,
    );
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    worker.onmessage = (e: MessageEvent<EncodeReply>) => {
      const r = e.data;
      finish(() => (r.ok ? resolve(Array.from(r.ids)) : reject(new TokenscopeError(r.code as ErrorCode, r.message, r.hint))));
    };
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      finish(() =>
        reject(new TokenscopeError('io', `the tokenizer worker failed: ${e.message || 'it could not be loaded'}`, 'Reload the page and try again.')),
      );
    };
    const request: EncodeRequest = { meta: tokenizerMetadata(meta), prompt, chat };
    worker.postMessage(request);
  });
}

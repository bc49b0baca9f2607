/**
 * WebLLM as a second engine, measured with our clock. '@mlc-ai/web-llm' is imported only inside
 * functions (`await import(...)`), so the bundler gives it its own chunk and a visitor who never
 * picks a WebLLM model downloads none of it; the page imports this file lazily too.
 *
 * Two request paths, one protocol:
 *  - token ids (exact prompt length, like our engine): `forwardTokensAndSample(prompt, true)`,
 *    then one `forwardTokensAndSample([token], false)` per further token; each call returns the
 *    token id on the host, so every token gets its own timestamp. WebLLM's own report is
 *    `runtimeStatsText()`, reset by `resetChat()` before the request.
 *  - text: one streamed chat completion with `ignore_eos` and `max_tokens` (fixed output length)
 *    and temperature 0; a timestamp per content chunk, token counts and WebLLM's timing from the
 *    final usage chunk (`stream_options.include_usage`). The prompt length is what WebLLM's
 *    tokenizer and chat template make of the text: 0.2.86 exposes no tokenizer, so an exact
 *    length is only possible on the token path.
 * How chunks become token times: src/webllm/mapping.ts.
 */
import type { ChatCompletionChunk, ChatCompletionRequestStreaming, ChatOptions, CompletionUsage } from '@mlc-ai/web-llm';
import { throwIfCancelled } from '../measure/protocol.ts';
import { TokenscopeError } from '../errors.ts';
import { catalogEntry, webllmCatalog, type CatalogCapabilities, type CatalogOptions, type WebLLMModel } from './catalog.ts';
import { normalizeWebLLMError } from './errors.ts';
import type { WebLLMSample } from './mapping.ts';

type WebLLMModule = typeof import('@mlc-ai/web-llm');

async function importWebLLM(): Promise<WebLLMModule> {
  try {
    return await import('@mlc-ai/web-llm');
  } catch (e) {
    throw new TokenscopeError(
      'io',
      `Could not load the WebLLM runtime: ${String(e)}`,
      'Reload the page; tokenscope serves WebLLM’s code itself, so check your connection to this site.',
      { cause: e },
    );
  }
}

/** The part of WebLLM's MLCEngine the adapter drives (tests pass a fake). */
export interface WebLLMEngine {
  chat: { completions: { create(request: ChatCompletionRequestStreaming): Promise<AsyncIterable<ChatCompletionChunk>> } };
  resetChat(): Promise<void>;
  forwardTokensAndSample(inputIds: number[], isPrefill: boolean): Promise<number>;
  runtimeStatsText(): Promise<string>;
  interruptGenerate(): void | Promise<void>;
  unload(): Promise<void>;
}

export type WebLLMRequest = ({ promptTokenIds: readonly number[] } | { promptText: string }) & {
  /** Output tokens to generate; fixed (end-of-sequence tokens are ignored). */
  outputTokens: number;
  signal?: AbortSignal;
};

export interface WebLLMAdapter {
  readonly model: WebLLMModel;
  runRequest(request: WebLLMRequest): Promise<WebLLMSample>;
  unload(): Promise<void>;
}

export interface WebLlmLoadOptions extends CatalogOptions {
  /** WebLLM's progress: its text and the fraction done (0..1). */
  onProgress?: (text: string, fraction: number) => void;
  signal?: AbortSignal;
  /** Checked before anything is downloaded (shader-f16, buffer binding size, the VRAM budget). */
  capabilities?: CatalogCapabilities;
}

/** Greedy decoding with no penalties, set for the whole model so both paths sample alike. */
const GREEDY: ChatOptions = { temperature: 0, top_p: 1, repetition_penalty: 1, frequency_penalty: 0, presence_penalty: 0 };

const EXCLUSION_HINTS: Record<NonNullable<WebLLMModel['code']>, string> = {
  'feature-missing': 'Pick a q4f32_1 or q0f32 WebLLM model, or a browser and GPU that offer shader-f16.',
  'model-too-large': 'Pick a smaller WebLLM model or a -1k (short context) variant.',
  'model-unsupported': 'Pick a text-generation model from the WebLLM list.',
};

/** WebLLM 0.2.86's prebuilt models with why each one can or cannot run on this device. */
export async function listWebLLMModels(caps: CatalogCapabilities, options: CatalogOptions = {}): Promise<WebLLMModel[]> {
  const webllm = await importWebLLM();
  return webllmCatalog(webllm.prebuiltAppConfig.model_list, caps, options);
}

/**
 * Download (or read from the browser's cache) and load one prebuilt model. Every failure is a
 * TokenscopeError; `signal` cancels the download (WebLLM's `unload()` aborts its fetches).
 */
export async function loadWebLLM(modelId: string, options: WebLlmLoadOptions = {}): Promise<WebLLMAdapter> {
  const { signal } = options;
  throwIfCancelled(signal);
  const webllm = await importWebLLM();
  const record = webllm.prebuiltAppConfig.model_list.find((r) => r.model_id === modelId);
  if (!record) {
    throw new TokenscopeError('bad-input', `"${modelId}" is not one of WebLLM ${webllm.modelVersion}'s prebuilt models.`, 'Pick a model from the WebLLM list.');
  }
  const model = catalogEntry(record, options.capabilities ?? null, options);
  if (model.code) throw new TokenscopeError(model.code, `${modelId} cannot run here: it ${model.reason}.`, EXCLUSION_HINTS[model.code]);

  const engine = new webllm.MLCEngine({ initProgressCallback: (r) => options.onProgress?.(r.text, r.progress) });
  const cancel = () => void engine.unload().catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    // An abort during reload() resolves it (WebLLM swallows its AbortError) or rejects it with the
    // abort reason; either way the signal says what happened.
    await engine.reload(modelId, GREEDY);
  } catch (e) {
    throwIfCancelled(signal);
    await engine.unload().catch(() => undefined);
    throw normalizeWebLLMError(e, `Loading ${modelId}`);
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
  if (signal?.aborted) {
    await engine.unload();
    throwIfCancelled(signal);
  }
  return adapterFor(engine, model);
}

/** The adapter around an already loaded engine. */
export function adapterFor(engine: WebLLMEngine, model: WebLLMModel): WebLLMAdapter {
  return {
    model,
    async runRequest(request) {
      if (!Number.isInteger(request.outputTokens) || request.outputTokens < 1) {
        throw new TokenscopeError('bad-input', `outputTokens is ${request.outputTokens}.`, 'Generate at least one token.');
      }
      throwIfCancelled(request.signal);
      try {
        // A fresh conversation: empty KV cache and WebLLM's statistics reset.
        await engine.resetChat();
        return 'promptTokenIds' in request
          ? await runTokens(engine, model, request.promptTokenIds, request.outputTokens, request.signal)
          : await runChat(engine, model, request.promptText, request.outputTokens, request.signal);
      } catch (e) {
        throwIfCancelled(request.signal);
        throw normalizeWebLLMError(e, `A WebLLM request on ${model.id}`);
      }
    },
    async unload() {
      await engine.unload();
    },
  };
}

async function runTokens(engine: WebLLMEngine, model: WebLLMModel, prompt: readonly number[], n: number, signal?: AbortSignal): Promise<WebLLMSample> {
  if (prompt.length === 0 || prompt.some((id) => !Number.isInteger(id) || id < 0)) {
    throw new TokenscopeError('bad-input', 'The prompt must be one or more non-negative integer token ids.', 'Pass ids from the model’s vocabulary.');
  }
  // The last output token is never fed back, so the KV cache holds prompt + n − 1 positions.
  if (model.contextWindow !== null && prompt.length + n - 1 > model.contextWindow) {
    throw new TokenscopeError(
      'bad-input',
      `Prompt (${prompt.length}) + output (${n}) needs ${prompt.length + n - 1} positions; ${model.id} holds ${model.contextWindow}.`,
      'Shorten the prompt or the output.',
    );
  }
  const tSend = performance.now();
  let token = await engine.forwardTokensAndSample([...prompt], true);
  const tChunks = [performance.now()];
  for (let i = 1; i < n; i++) {
    throwIfCancelled(signal);
    token = await engine.forwardTokensAndSample([token], false);
    tChunks.push(performance.now());
  }
  return {
    model_id: model.id,
    path: 'tokens',
    t_send: tSend,
    t_chunks: tChunks,
    prompt_tokens: prompt.length,
    output_tokens: n,
    usage: null,
    runtime_stats: await engine.runtimeStatsText(),
  };
}

async function runChat(engine: WebLLMEngine, model: WebLLMModel, text: string, n: number, signal?: AbortSignal): Promise<WebLLMSample> {
  const interrupt = () => void engine.interruptGenerate();
  signal?.addEventListener('abort', interrupt, { once: true });
  try {
    const tSend = performance.now();
    const stream = await engine.chat.completions.create({
      messages: [{ role: 'user', content: text }],
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      max_tokens: n,
      ...GREEDY,
    });
    const tChunks: number[] = [];
    let usage: CompletionUsage | null = null;
    for await (const chunk of stream) {
      const t = performance.now();
      // A content chunk carries a token and no finish reason; the finishing chunk and the usage
      // chunk (empty choices) carry none.
      if (chunk.choices[0]?.finish_reason === null) tChunks.push(t);
      if (chunk.usage) usage = chunk.usage;
    }
    throwIfCancelled(signal);
    if (!usage) {
      throw new TokenscopeError(
        'model-unsupported',
        `WebLLM's stream on ${model.id} ended without its usage chunk.`,
        'Report this with the WebLLM version; the text path needs stream_options.include_usage.',
      );
    }
    if (usage.completion_tokens < n) {
      throw new TokenscopeError(
        'bad-input',
        `WebLLM stopped after ${usage.completion_tokens} of ${n} tokens: the prompt (${usage.prompt_tokens} tokens with the chat template) and output fill ${model.id}'s context window.`,
        'Shorten the prompt or the output.',
      );
    }
    return {
      model_id: model.id,
      path: 'chat',
      t_send: tSend,
      t_chunks: tChunks,
      prompt_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
      usage,
      runtime_stats: null,
    };
  } finally {
    signal?.removeEventListener('abort', interrupt);
  }
}

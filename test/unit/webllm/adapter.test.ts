/**
 * The adapter without a GPU: request paths against a scripted engine on a fake clock, and
 * loadWebLLM against the real WebLLM module with the browser's Cache API replaced — offline
 * (every download fails as Chrome's does) or hanging until cancelled. Nothing reaches the network.
 */
import type { ChatCompletionChunk, ChatCompletionFinishReason, ChatCompletionRequestStreaming } from '@mlc-ai/web-llm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenscopeError } from '../../../src/errors.ts';
import { adapterFor, loadWebLLM, type WebLLMEngine } from '../../../src/webllm/adapter.ts';
import type { WebLLMModel } from '../../../src/webllm/catalog.ts';
import { DOWNLOAD_HINT } from '../../../src/webllm/errors.ts';
import { toRequestRecord } from '../../../src/webllm/mapping.ts';

let now = 0;
beforeEach(() => {
  now = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

const MODEL: WebLLMModel = {
  id: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC',
  family: 'Qwen2.5-0.5B',
  quantization: 'q4f32_1',
  vramMB: 1060.2,
  lowResource: true,
  contextWindow: 4096,
};

function chunk(finish: ChatCompletionFinishReason | null, content: string): ChatCompletionChunk {
  return {
    id: 'c',
    created: 0,
    model: MODEL.id,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { content, role: 'assistant' }, finish_reason: finish }],
  };
}

function usageChunk(promptTokens: number, completionTokens: number): ChatCompletionChunk {
  const extra = { e2e_latency_s: 0.1, prefill_tokens_per_s: 800, decode_tokens_per_s: 100, time_to_first_token_s: 0.05, time_per_output_token_s: 0.01 };
  return {
    id: 'c',
    created: 0,
    model: MODEL.id,
    object: 'chat.completion.chunk',
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, extra },
  };
}

/** An engine that streams one content chunk per entry of `gaps` (ms after the previous one). */
class ScriptedEngine implements WebLLMEngine {
  requests: ChatCompletionRequestStreaming[] = [];
  forwards: [number[], boolean][] = [];
  calls: string[] = [];
  interrupted = false;
  constructor(
    private readonly gaps: number[],
    private readonly usage: ChatCompletionChunk | null,
    private readonly afterChunk: (i: number) => void = () => {},
  ) {}
  chat = {
    completions: {
      create: async (request: ChatCompletionRequestStreaming) => {
        this.requests.push(request);
        this.calls.push('create');
        return this.stream();
      },
    },
  };
  private async *stream(): AsyncGenerator<ChatCompletionChunk> {
    for (const [i, gap] of this.gaps.entries()) {
      if (this.interrupted) break;
      now += gap;
      yield chunk(null, `t${i}`);
      this.afterChunk(i);
    }
    now += 1;
    yield chunk(this.interrupted ? 'abort' : 'length', '');
    if (this.usage) yield this.usage;
  }
  async resetChat() {
    this.calls.push('resetChat');
  }
  async forwardTokensAndSample(inputIds: number[], isPrefill: boolean) {
    this.forwards.push([inputIds, isPrefill]);
    now += isPrefill ? 40 : 10;
    this.afterChunk(this.forwards.length - 1);
    return 1000 + this.forwards.length;
  }
  async runtimeStatsText() {
    return 'prefill: 100.0000 tokens/sec, decoding: 100.0000 tokens/sec';
  }
  interruptGenerate() {
    this.interrupted = true;
  }
  async unload() {
    this.calls.push('unload');
  }
}

describe('adapterFor: the text (chat) path', () => {
  it('times every content chunk on our clock and counts tokens from usage', async () => {
    const engine = new ScriptedEngine([50, 10, 12, 10], usageChunk(37, 4));
    const sample = await adapterFor(engine, MODEL).runRequest({ promptText: 'Hello', outputTokens: 4 });
    expect(engine.calls).toEqual(['resetChat', 'create']);
    expect(engine.requests[0]).toMatchObject({
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      max_tokens: 4,
      temperature: 0,
    });
    // The finishing chunk (finish_reason "length") and the usage chunk carry no token.
    expect(sample).toMatchObject({ path: 'chat', t_send: 0, t_chunks: [50, 60, 72, 82], prompt_tokens: 37, output_tokens: 4, runtime_stats: null });
    expect(sample.usage!.extra.time_to_first_token_s).toBe(0.05);
    expect(toRequestRecord(sample, 0, false).token_ms).toEqual([50, 60, 72, 82]);
  });

  it('records fewer chunks than tokens when a chunk carried two', async () => {
    const sample = await adapterFor(new ScriptedEngine([30, 10, 20], usageChunk(20, 4)), MODEL).runRequest({ promptText: 'é', outputTokens: 4 });
    expect(sample.t_chunks).toEqual([30, 40, 60]);
    expect(sample.output_tokens).toBe(4);
    expect(toRequestRecord(sample, 0, false)).toMatchObject({ chunks: 3, token_ms: [30, 40, 60, 60] });
  });

  it('refuses a run that stopped early (context window full)', async () => {
    const run = adapterFor(new ScriptedEngine([30, 10], usageChunk(4090, 2)), MODEL).runRequest({ promptText: 'long', outputTokens: 8 });
    await expect(run).rejects.toMatchObject({ code: 'bad-input', message: expect.stringMatching(/stopped after 2 of 8 tokens/) });
  });

  it('refuses a stream without its usage chunk', async () => {
    const run = adapterFor(new ScriptedEngine([30], null), MODEL).runRequest({ promptText: 'x', outputTokens: 1 });
    await expect(run).rejects.toMatchObject({ code: 'model-unsupported' });
  });

  it('cancels through interruptGenerate', async () => {
    const controller = new AbortController();
    const engine = new ScriptedEngine([30, 10, 10, 10, 10], usageChunk(10, 2), (i) => i === 1 && controller.abort());
    const run = adapterFor(engine, MODEL).runRequest({ promptText: 'x', outputTokens: 5, signal: controller.signal });
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
    expect(engine.interrupted).toBe(true);
  });

  it('normalises what the engine throws', async () => {
    const engine = new ScriptedEngine([], null);
    engine.chat.completions.create = () =>
      Promise.reject(Object.assign(new Error('The WebGPU device was lost while loading the model.'), { name: 'DeviceLostError' }));
    await expect(adapterFor(engine, MODEL).runRequest({ promptText: 'x', outputTokens: 2 })).rejects.toMatchObject({ code: 'model-too-large' });
  });
});

describe('adapterFor: the token-id path', () => {
  it('prefills the exact ids, then feeds each token back, one timestamp per token', async () => {
    const engine = new ScriptedEngine([], null);
    const sample = await adapterFor(engine, MODEL).runRequest({ promptTokenIds: [1, 5, 6, 7], outputTokens: 3 });
    expect(engine.calls).toEqual(['resetChat']);
    expect(engine.forwards).toEqual([
      [[1, 5, 6, 7], true],
      [[1001], false],
      [[1002], false],
    ]);
    expect(sample).toEqual({
      model_id: MODEL.id,
      path: 'tokens',
      t_send: 0,
      t_chunks: [40, 50, 60],
      prompt_tokens: 4,
      output_tokens: 3,
      usage: null,
      runtime_stats: 'prefill: 100.0000 tokens/sec, decoding: 100.0000 tokens/sec',
    });
  });

  it('checks the context window before running', async () => {
    const engine = new ScriptedEngine([], null);
    const run = adapterFor(engine, MODEL).runRequest({ promptTokenIds: new Array(4000).fill(9), outputTokens: 98 });
    await expect(run).rejects.toMatchObject({ code: 'bad-input', message: expect.stringMatching(/needs 4097 positions; .* holds 4096/) });
    expect(engine.forwards).toEqual([]);
    await expect(adapterFor(engine, MODEL).runRequest({ promptTokenIds: new Array(4000).fill(9), outputTokens: 97 })).resolves.toBeDefined();
  });

  it('cancels between tokens', async () => {
    const controller = new AbortController();
    const engine = new ScriptedEngine([], null, (i) => i === 1 && controller.abort());
    const run = adapterFor(engine, MODEL).runRequest({ promptTokenIds: [1, 2], outputTokens: 10, signal: controller.signal });
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
    expect(engine.forwards.length).toBe(2);
  });

  it.each<[string, readonly number[], number]>([
    ['no output tokens', [1], 0],
    ['a fractional output count', [1], 2.5],
    ['an empty prompt', [], 4],
    ['a negative id', [1, -2], 4],
    ['a fractional id', [1, 2.5], 4],
  ])('refuses %s', async (_label, ids, n) => {
    await expect(adapterFor(new ScriptedEngine([], null), MODEL).runRequest({ promptTokenIds: ids, outputTokens: n })).rejects.toMatchObject({
      code: 'bad-input',
    });
  });
});

/** The browser's Cache API as WebLLM uses it; `add` decides what a download does. */
function stubCacheApi(add: (request: Request) => Promise<void>): string[] {
  const requested: string[] = [];
  vi.stubGlobal('location', { origin: 'http://127.0.0.1:5173' });
  vi.stubGlobal('caches', {
    open: async () => ({
      match: async () => undefined,
      add: (request: Request) => {
        requested.push(request.url);
        return add(request);
      },
    }),
  });
  return requested;
}

describe('loadWebLLM with the real WebLLM module in Node', () => {
  const f32Model = 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC';

  it('refuses an unknown model id', async () => {
    await expect(loadWebLLM('Not-A-Model-q4f32_1-MLC')).rejects.toMatchObject({ code: 'bad-input' });
  });

  it('refuses an f16 model on a device without shader-f16 before downloading anything', async () => {
    const requested = stubCacheApi(() => Promise.reject(new Error('must not download')));
    const capabilities = { shaderF16: false, limits: { maxStorageBufferBindingSize: 128 * 2 ** 20 } };
    const load = loadWebLLM('Llama-3.2-1B-Instruct-q4f16_1-MLC', { capabilities });
    await expect(load).rejects.toMatchObject({ code: 'feature-missing', message: expect.stringMatching(/shader-f16/) });
    expect(requested).toEqual([]);
  });

  it('turns a failed download (no network) into an io error naming both hosts', async () => {
    const requested = stubCacheApi(() => Promise.reject(new TypeError('Failed to fetch')));
    const error: unknown = await loadWebLLM(f32Model).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenscopeError);
    expect(error).toMatchObject({ code: 'io', hint: DOWNLOAD_HINT, message: `Loading ${f32Model} failed: TypeError: Failed to fetch` });
    expect(requested).toEqual([`https://huggingface.co/mlc-ai/${f32Model}/resolve/main/mlc-chat-config.json`]);
  });

  it('cancels a download in flight', async () => {
    const controller = new AbortController();
    const requested = stubCacheApi(
      (request) =>
        new Promise((_ok, fail) => {
          request.signal.addEventListener('abort', () => fail(request.signal.reason));
          controller.abort();
        }),
    );
    await expect(loadWebLLM(f32Model, { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
    expect(requested.length).toBe(1);
  });

  it('does nothing once already cancelled', async () => {
    const requested = stubCacheApi(() => Promise.reject(new Error('must not download')));
    await expect(loadWebLLM(f32Model, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'cancelled' });
    expect(requested).toEqual([]);
  });
});

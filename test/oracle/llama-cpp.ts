/**
 * llama.cpp as an oracle for tests: node-llama-cpp's prebuilt linux-x64 CPU binary (never a GPU
 * build, never compiled at test time) loads a GGUF file and answers the three questions our tests
 * ask of the same file — token ids of a text, the last position's logits, and greedy tokens.
 *
 * Node only (a native addon). The CUDA/Vulkan prebuilt packages are mapped to an empty package in
 * package.json "overrides", so `npm ci` stays lean; `gpu: false` never asks for them.
 */
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';

let llamaPromise: Promise<Llama> | undefined;

/** One llama.cpp instance per process (loading the addon takes about a second). */
async function llama(): Promise<Llama> {
  llamaPromise ??= import('node-llama-cpp').then(({ getLlama, LlamaLogLevel }) =>
    getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, maxThreads: 1 }),
  );
  return llamaPromise;
}

/**
 * A chat template rendered by llama.cpp's own Jinja engine (node-llama-cpp's AddonJinjaRenderer,
 * reached through its internal bindings: the public API only wraps it in chat sessions).
 */
export async function renderChatTemplate(template: string, items: Record<string, unknown>): Promise<string> {
  const bindings = (await llama()) as unknown as { _bindings: { AddonJinjaRenderer: new (t: string) => { render(items: Record<string, unknown>): string } } };
  return new bindings._bindings.AddonJinjaRenderer(template).render(items);
}

export interface LlamaCppModel {
  /** Token ids of `text` as llama.cpp's `common_tokenize(text, add_special = false, parse_special)`: no BOS. */
  tokenize(text: string, options?: { special?: boolean }): number[];
  /** Text of ids as llama.cpp detokenizes them (special tokens rendered). */
  detokenize(ids: readonly number[]): string;
  /** The BOS id llama.cpp uses (undefined when the vocabulary has none). */
  readonly bosId: number | undefined;
  /** Whether llama.cpp would put BOS in front of a prompt (`tokenizer.ggml.add_bos_token`). */
  readonly addsBos: boolean;
  /**
   * Log-softmax of the logits after the last of `ids` (run from position 0 with a fresh KV cache).
   * node-llama-cpp hands out softmax probabilities of the raw logits (greedy sampler, no
   * temperature), so this is the logits minus their log-sum-exp: compare it with our logits'
   * log-softmax, which removes the same constant.
   */
  lastLogProbs(ids: readonly number[]): Promise<Float32Array>;
  /** Runs `ids` from position 0, then `steps` argmax tokens (EOS included, never stopping early). */
  greedy(ids: readonly number[], steps: number): Promise<number[]>;
  /** Both in one pass: the log-softmax after `ids`, then `steps` greedy tokens. */
  run(ids: readonly number[], steps: number): Promise<{ logProbs: Float32Array; tokens: number[] }>;
  dispose(): Promise<void>;
}

export interface OpenOptions {
  /** KV cache positions (default 256). */
  contextSize?: number;
}

/**
 * Loads `path` into llama.cpp on the CPU. The KV cache is F32 (llama.cpp's default is F16, which
 * would round every cached key and value) and flash attention is off, so for an F32 file the only
 * differences from our reference are summation order and llama.cpp's fast exp/tanh/silu.
 */
export async function openLlamaCpp(path: string, options: OpenOptions = {}): Promise<LlamaCppModel> {
  const model: LlamaModel = await (await llama()).loadModel({ modelPath: path });
  const context: LlamaContext = await model.createContext({
    contextSize: options.contextSize ?? 256,
    batchSize: options.contextSize ?? 256,
    threads: 1,
    flashAttention: false,
    experimentalKvCacheKeyType: 'F32',
    experimentalKvCacheValueType: 'F32',
  });
  const sequence: LlamaContextSequence = context.getSequence();

  const next = async (ids: readonly number[], probabilities: boolean) => {
    const input = ids.map((id, i) =>
      i === ids.length - 1 ? ([id as Token, { generateNext: { token: true, probabilities, options: { temperature: 0 } } }] as const) : (id as Token),
    );
    const result = await sequence.controlledEvaluate(input as Parameters<LlamaContextSequence['controlledEvaluate']>[0]);
    const out = result.at(-1)?.next;
    if (out?.token == null) throw new Error('llama.cpp returned no next token');
    return { token: out.token as number, probabilities: out.probabilities };
  };

  const oracle: LlamaCppModel = {
    tokenize: (text, { special = false } = {}) => Array.from(model.tokenize(text, special)),
    detokenize: (ids) => model.detokenize(ids as Token[], true),
    bosId: model.tokens.bos ?? undefined,
    addsBos: model.tokens.shouldPrependBosToken,
    async lastLogProbs(ids) {
      return (await oracle.run(ids, 0)).logProbs;
    },
    async greedy(ids, steps) {
      return (await oracle.run(ids, steps)).tokens;
    },
    async run(ids, steps) {
      await sequence.clearHistory();
      const first = await next(ids, true);
      // The greedy sampler keeps every token, so the map covers the whole vocabulary.
      const logProbs = new Float32Array(first.probabilities!.size).fill(NaN);
      for (const [token, p] of first.probabilities!) logProbs[token] = Math.log(p);
      const tokens = [first.token];
      while (tokens.length < steps) tokens.push((await next([tokens.at(-1)!], false)).token);
      return { logProbs, tokens: tokens.slice(0, steps) };
    },
    async dispose() {
      await context.dispose();
      await model.dispose();
    },
  };
  return oracle;
}

/**
 * The typed model configuration every layer codes against, read from GGUF metadata.
 * `llama` (incl. Llama 3.x RoPE scaling), `qwen2`, `qwen3` and `gemma3` are read; their
 * hyperparameters live under `<arch>.` keys. What differs between them is data here (flags and
 * numbers), so the forward passes have one path: llama.cpp's graphs for these architectures
 * (llm_build_llama, _qwen2, _qwen3, _gemma3_iswa) differ only in the steps these fields switch.
 */
import { TokenscopeError } from '../errors.ts';
import { metaFloat, metaString, metaStrings, metaUint, required } from './gguf/metadata.ts';
import type { GGUF } from './gguf/reader.ts';
import { specialTokenIds } from './tokenizer/vocab.ts';

export interface ModelConfig {
  architecture: 'llama' | 'qwen2' | 'qwen3' | 'gemma3';
  /** general.name, or the file name. */
  name: string;
  /** embedding_length */
  dim: number;
  /** feed_forward_length */
  hiddenDim: number;
  /** block_count */
  nLayers: number;
  /** attention.head_count */
  nHeads: number;
  /** attention.head_count_kv (default nHeads) */
  nKvHeads: number;
  /** dim / nHeads unless attention.key_length is given */
  headDim: number;
  vocabSize: number;
  /** context_length */
  contextLength: number;
  /** rope.freq_base (default 10000) */
  ropeTheta: number;
  /** rope.dimension_count (default headDim): the leading dims of each head that are rotated */
  ropeDim: number;
  /**
   * llama: adjacent pairs (x[2i], x[2i+1]), llama.cpp's LLAMA_ROPE_TYPE_NORM (its converter permutes
   * Q/K so this holds); qwen2: neox halves (x[i], x[i + ropeDim/2]).
   */
  ropeStyle: 'adjacent' | 'neox';
  /** attention.layer_norm_rms_epsilon */
  rmsEps: number;
  /** Q/K/V projections carry a bias (always for qwen2). */
  qkvBias: boolean;
  /** No output.weight: the LM head reuses token_embd.weight. */
  tiedEmbeddings: boolean;
  /**
   * Divisor of each rotated pair's RoPE frequency, (ropeDim/2) values: Llama 3.x's
   * rope_freqs.weight (the converter's llama3 scaling), empty when every divisor is 1.
   */
  ropeFreqFactors: number[];
  /** Multiplier of every global layer's RoPE frequency: 1 / rope.scaling.factor for `linear` scaling, else 1. */
  ropeFreqScale: number;
  /** rope.freq_base of sliding-window layers (Gemma 3: 10000, the global layers use ropeTheta). */
  ropeThetaSliding: number;
  /** Per-head RMSNorm of q and k before RoPE (attn_q_norm / attn_k_norm; Qwen3, Gemma 3). */
  qkNorm: boolean;
  /** Token embeddings are multiplied by this as they are read (Gemma: √dim, else 1). */
  embedScale: number;
  /** Activation of the FFN gate: SiLU (SwiGLU; Llama, Qwen) or tanh-approximated GELU (GeGLU; Gemma). */
  activation: 'silu' | 'gelu_tanh';
  /** RMSNorm of the attention and FFN outputs before each residual add (post_attention_norm, post_ffw_norm; Gemma 3). */
  postNorms: boolean;
  /** attention.sliding_window: keys a sliding layer sees, its own position included (0 = no layer slides). */
  slidingWindow: number;
  /** Layer l slides unless l % slidingPattern = slidingPattern − 1 (Gemma 3: 6, llama.cpp's set_swa_pattern). */
  slidingPattern: number;
  bosId: number;
  eosId: number;
}

const ARCHITECTURES = ['llama', 'qwen2', 'qwen3', 'gemma3'] as const;

/** Gemma 3's sliding layers: llama.cpp fixes their RoPE base and the one-global-in-six pattern in code. */
const GEMMA3_SLIDING = { ropeTheta: 10000, pattern: 6 };

/**
 * `ropeFreqs`: the values of rope_freqs.weight when the file has it. The header alone does not
 * carry them, so without them ropeFreqFactors stays empty: enough to inspect a file, not to run it —
 * openModel reads the tensor and passes them, and everything that runs a model opens it that way.
 */
export function readModelConfig(gguf: GGUF, ropeFreqs?: Float32Array): ModelConfig {
  // Every error names the file; the hyperparameters are checked for plausibility before anything is sized.
  const file = gguf.source.name;
  try {
    const config = readConfig(gguf, ropeFreqs);
    checkPlausible(config);
    return config;
  } catch (e) {
    if (e instanceof TokenscopeError && !e.message.startsWith(`${file}:`)) {
      throw new TokenscopeError(e.code, `${file}: ${e.message}`, e.hint, { cause: e });
    }
    throw e;
  }
}

function readConfig(gguf: GGUF, ropeFreqs?: Float32Array): ModelConfig {
  const meta = gguf.metadata;
  const arch = required(metaString(meta, 'general.architecture'), 'general.architecture');
  if (!isArchitecture(arch)) {
    throw new TokenscopeError(
      'model-unsupported',
      `${gguf.source.name}: general.architecture is '${arch}'; tokenscope runs ${ARCHITECTURES.join(' and ')}`,
      'Pick a Llama (2, 3.x), Qwen2, Qwen3 or Gemma 3 GGUF.',
    );
  }
  const uint = (key: string) => metaUint(meta, `${arch}.${key}`);
  const need = (key: string) => required(positive(uint(key), `${arch}.${key}`), `${arch}.${key}`);

  const dim = need('embedding_length');
  const nHeads = need('attention.head_count');
  const nKvHeads = positive(uint('attention.head_count_kv'), `${arch}.attention.head_count_kv`) ?? nHeads;
  const headDim = positive(uint('attention.key_length'), `${arch}.attention.key_length`) ?? dim / nHeads;
  const valueDim = uint('attention.value_length') ?? headDim;
  const ropeDim = uint('rope.dimension_count') ?? headDim;
  check(Number.isInteger(headDim), `${arch}.embedding_length ${dim} is not a multiple of the head count ${nHeads}`);
  check(nHeads % nKvHeads === 0, `${arch}.attention.head_count ${nHeads} is not a multiple of head_count_kv ${nKvHeads}`);
  check(ropeDim % 2 === 0 && ropeDim > 0 && ropeDim <= headDim, `${arch}.rope.dimension_count ${ropeDim} must be even and at most the head size ${headDim}`);
  if (valueDim !== headDim) unsupported(gguf, `${arch}.attention.value_length ${valueDim} differs from key_length ${headDim}`);
  const scaling = metaString(meta, `${arch}.rope.scaling.type`) ?? 'none';
  if (scaling !== 'none' && scaling !== 'linear') unsupported(gguf, `RoPE scaling (${scaling}); tokenscope runs none, linear and Llama 3's rope_freqs.weight`);
  const scalingFactor = scaling === 'linear' ? (metaFloat(meta, `${arch}.rope.scaling.factor`) ?? 1) : 1;
  check(scalingFactor > 0, `${arch}.rope.scaling.factor ${scalingFactor} must be positive`);
  const ropeFreqFactors = readRopeFreqs(gguf, ropeDim, ropeFreqs);
  const gemma = arch === 'gemma3';
  const slidingWindow = gemma ? required(metaUint(meta, 'gemma3.attention.sliding_window'), 'gemma3.attention.sliding_window') : 0;

  // The vocabulary is the tokenizer's token list; vocab_size only stands in for it when a file has no tokenizer
  // but says so, and a file with neither is missing its tokens (that is what a reader of the message must fix).
  const tokens = metaStrings(meta, 'tokenizer.ggml.tokens');
  const vocabSize = tokens?.length ?? positive(uint('vocab_size'), `${arch}.vocab_size`) ?? required(tokens, 'tokenizer.ggml.tokens').length;
  const { bosId, eosId } = specialTokenIds(meta, vocabSize);

  const rmsEps = required(metaFloat(meta, `${arch}.attention.layer_norm_rms_epsilon`), `${arch}.attention.layer_norm_rms_epsilon`);
  const ropeTheta = metaFloat(meta, `${arch}.rope.freq_base`) ?? 10000;

  return {
    architecture: arch,
    name: metaString(meta, 'general.name') ?? gguf.source.name,
    dim,
    hiddenDim: need('feed_forward_length'),
    nLayers: need('block_count'),
    nHeads,
    nKvHeads,
    headDim,
    vocabSize,
    contextLength: need('context_length'),
    ropeTheta,
    ropeDim,
    ropeStyle: arch === 'llama' ? 'adjacent' : 'neox',
    rmsEps,
    qkvBias: arch === 'qwen2' || gguf.tensor('blk.0.attn_q.bias') !== undefined,
    tiedEmbeddings: gguf.tensor('output.weight') === undefined,
    ropeFreqFactors,
    ropeFreqScale: 1 / scalingFactor,
    ropeThetaSliding: gemma ? GEMMA3_SLIDING.ropeTheta : ropeTheta,
    qkNorm: arch === 'qwen3' || gemma,
    embedScale: gemma ? Math.sqrt(dim) : 1,
    activation: gemma ? 'gelu_tanh' : 'silu',
    postNorms: gemma,
    slidingWindow,
    slidingPattern: slidingWindow > 0 ? GEMMA3_SLIDING.pattern : 0,
    bosId,
    eosId,
  };
}

/**
 * Every hyperparameter finite and within what real models use, before anything is sized from it:
 * an epsilon of +Inf or a RoPE base of 1e-30 passes `> 0` yet turns every logit into NaN on the GPU,
 * and a dimension of 2^40 would be a buffer size. The ranges are wide (an order of magnitude or
 * more past the largest known model) so only damaged or hostile files fail.
 */
function checkPlausible(c: ModelConfig): void {
  const arch = c.architecture;
  const within = (value: number, key: string, lo: number, hi: number) => {
    if (Number.isFinite(value) && value >= lo && value <= hi) return;
    throw new TokenscopeError(
      'model-format',
      `implausible hyperparameter: ${key} is ${value}; real models use ${lo} to ${hi}`,
      'The file is damaged or was written by a buggy converter; nothing was allocated for it.',
    );
  };
  within(c.rmsEps, `${arch}.attention.layer_norm_rms_epsilon`, 1e-12, 0.1);
  within(c.ropeTheta, `${arch}.rope.freq_base`, 1, 1e10);
  within(c.contextLength, `${arch}.context_length`, 1, 1 << 24);
  within(c.dim, `${arch}.embedding_length`, 1, 1 << 16);
  within(c.hiddenDim, `${arch}.feed_forward_length`, 1, 1 << 18);
  within(c.nLayers, `${arch}.block_count`, 1, 1024);
  within(c.nHeads, `${arch}.attention.head_count`, 1, 1024);
  within(c.headDim, 'the head size', 2, 1024);
  within(c.vocabSize, 'the vocabulary size', 1, 1 << 22);
}

/** rope_freqs.weight: one positive divisor per rotated pair, as llama.cpp's ggml_rope_ext reads it. */
function readRopeFreqs(gguf: GGUF, ropeDim: number, values: Float32Array | undefined): number[] {
  const tensor = gguf.tensor('rope_freqs.weight');
  if (!tensor) return [];
  check(tensor.dims.length === 1 && tensor.dims[0] === ropeDim / 2, `rope_freqs.weight has dims [${tensor.dims.join(', ')}], expected [${ropeDim / 2}]`);
  if (!values) return [];
  check(values.length === ropeDim / 2 && values.every((v) => v > 0 && Number.isFinite(v)), 'rope_freqs.weight must hold positive finite values');
  return Array.from(values);
}

/**
 * The rope_freqs.weight values of Llama 3.x, as convert_hf_to_gguf.py derives them from config.json's
 * `rope_scaling` (rope_type llama3): wavelengths shorter than originalContext / highFreqFactor keep
 * their frequency, longer than originalContext / lowFreqFactor are slowed by `factor`, and those in
 * between are blended.
 */
export function llama3RopeFactors(p: {
  ropeTheta: number;
  ropeDim: number;
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalContext: number;
}): Float32Array {
  const lowWavelen = p.originalContext / p.lowFreqFactor;
  const highWavelen = p.originalContext / p.highFreqFactor;
  return Float32Array.from({ length: p.ropeDim / 2 }, (_, i) => {
    const wavelen = 2 * Math.PI * p.ropeTheta ** ((2 * i) / p.ropeDim);
    if (wavelen < highWavelen) return 1;
    if (wavelen > lowWavelen) return p.factor;
    const smooth = (p.originalContext / wavelen - p.lowFreqFactor) / (p.highFreqFactor - p.lowFreqFactor);
    return 1 / ((1 - smooth) / p.factor + smooth);
  });
}

function isArchitecture(arch: string): arch is ModelConfig['architecture'] {
  return (ARCHITECTURES as readonly string[]).includes(arch);
}

function positive(n: number | undefined, key: string): number | undefined {
  check(n !== 0, `metadata key '${key}' is 0`);
  return n;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new TokenscopeError('model-format', `inconsistent hyperparameters: ${what}`, 'The file is damaged or was written by a buggy converter.');
}

function unsupported(gguf: GGUF, what: string): never {
  throw new TokenscopeError(
    'model-unsupported',
    `${gguf.source.name} uses ${what}, which tokenscope does not implement`,
    'Pick a model without it (Llama 2/3.x, SmolLM, Qwen2/3 or Gemma 3 style).',
  );
}

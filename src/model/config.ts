/**
 * The typed model configuration every layer codes against, read from GGUF metadata.
 * Only `llama` and `qwen2` are read; their hyperparameters live under `<arch>.` keys.
 */
import { TokenscopeError } from '../errors.ts';
import { metaFloat, metaString, metaStrings, metaUint, required } from './gguf/metadata.ts';
import type { GGUF } from './gguf/reader.ts';
import { specialTokenIds } from './tokenizer/vocab.ts';

export interface ModelConfig {
  architecture: 'llama' | 'qwen2';
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
  bosId: number;
  eosId: number;
}

const ARCHITECTURES = ['llama', 'qwen2'] as const;

/** The configuration of a GGUF file; every error names the file. */
export function readModelConfig(gguf: GGUF): ModelConfig {
  const file = gguf.source.name;
  try {
    const config = readConfig(gguf);
    checkPlausible(config);
    return config;
  } catch (e) {
    if (e instanceof TokenscopeError && !e.message.startsWith(`${file}:`)) {
      throw new TokenscopeError(e.code, `${file}: ${e.message}`, e.hint, { cause: e });
    }
    throw e;
  }
}

function readConfig(gguf: GGUF): ModelConfig {
  const meta = gguf.metadata;
  const arch = required(metaString(meta, 'general.architecture'), 'general.architecture');
  if (!isArchitecture(arch)) {
    throw new TokenscopeError('model-unsupported',
      `${gguf.source.name}: general.architecture is '${arch}'; tokenscope runs ${ARCHITECTURES.join(' and ')}`,
      'Pick a Llama- or Qwen2-architecture GGUF (e.g. TinyLlama, SmolLM, Qwen2.5).');
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
  const scaling = metaString(meta, `${arch}.rope.scaling.type`);
  if ((scaling !== undefined && scaling !== 'none') || gguf.tensor('rope_freqs.weight')) {
    unsupported(gguf, `RoPE scaling (${scaling ?? 'rope_freqs.weight'})`);
  }

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
    throw new TokenscopeError('model-format', `implausible hyperparameter: ${key} is ${value}; real models use ${lo} to ${hi}`,
      'The file is damaged or was written by a buggy converter; nothing was allocated for it.');
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
  throw new TokenscopeError('model-unsupported', `${gguf.source.name} uses ${what}, which tokenscope does not implement`,
    'Pick a model without it (Llama 2 / TinyLlama / SmolLM / Qwen2 style).');
}

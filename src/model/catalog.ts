/**
 * The model catalog: presets with the exact shapes of real models (run with synthetic weights —
 * speed only), and known public GGUF files. No weights are committed.
 *
 * Shapes are copied from each model's published config.json (hidden_size, intermediate_size,
 * num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, vocab_size,
 * rope_theta, rms_norm_eps, tie_word_embeddings).
 */
import { TokenscopeError } from '../errors.ts';
import { llama3RopeFactors, type ModelConfig } from './config.ts';

export interface ModelPreset {
  /** Stable id used by --model and the page, e.g. "llama-3.2-1b". */
  id: string;
  /** The model whose shape this is. */
  title: string;
  config: ModelConfig;
}

/** What a preset states; the rest follows from the architecture as readModelConfig derives it. */
type Shape = Pick<
  ModelConfig,
  | 'architecture'
  | 'dim'
  | 'hiddenDim'
  | 'nLayers'
  | 'nHeads'
  | 'nKvHeads'
  | 'headDim'
  | 'vocabSize'
  | 'contextLength'
  | 'ropeTheta'
  | 'rmsEps'
  | 'tiedEmbeddings'
> &
  Partial<Pick<ModelConfig, 'ropeDim' | 'slidingWindow'>> & {
    /** config.json rope_scaling of rope_type llama3 (the converter writes it as rope_freqs.weight). */
    llama3Scaling?: { factor: number; lowFreqFactor: number; highFreqFactor: number; originalContext: number };
  };

function preset(id: string, title: string, { llama3Scaling, ...s }: Shape): ModelPreset {
  const ropeDim = s.ropeDim ?? s.headDim;
  const gemma = s.architecture === 'gemma3';
  const slidingWindow = s.slidingWindow ?? 0;
  return {
    id,
    title,
    config: {
      ...s,
      name: `${title} (synthetic weights)`,
      ropeDim,
      ropeStyle: s.architecture === 'llama' ? 'adjacent' : 'neox',
      qkvBias: s.architecture === 'qwen2',
      bosId: 1,
      eosId: 2,
      ropeFreqFactors: llama3Scaling ? Array.from(llama3RopeFactors({ ropeTheta: s.ropeTheta, ropeDim, ...llama3Scaling })) : [],
      ropeFreqScale: 1,
      ropeThetaSliding: gemma ? 10000 : s.ropeTheta,
      qkNorm: s.architecture === 'qwen3' || gemma,
      embedScale: gemma ? Math.sqrt(s.dim) : 1,
      activation: gemma ? 'gelu_tanh' : 'silu',
      postNorms: gemma,
      slidingWindow,
      slidingPattern: slidingWindow > 0 ? 6 : 0,
    },
  };
}

/** Llama 3.2's rope_scaling (Llama 3.1 uses factor 8). */
const LLAMA32_SCALING = { factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalContext: 8192 };

export const PRESETS: readonly ModelPreset[] = [
  preset('stories260k', 'TinyStories stories260K', {
    architecture: 'llama',
    dim: 64,
    hiddenDim: 172,
    nLayers: 5,
    nHeads: 8,
    nKvHeads: 4,
    headDim: 8,
    vocabSize: 512,
    contextLength: 512,
    ropeTheta: 10000,
    rmsEps: 1e-5,
    tiedEmbeddings: false,
  }),
  preset('stories15m', 'TinyStories stories15M', {
    architecture: 'llama',
    dim: 288,
    hiddenDim: 768,
    nLayers: 6,
    nHeads: 6,
    nKvHeads: 6,
    headDim: 48,
    vocabSize: 32000,
    contextLength: 256,
    ropeTheta: 10000,
    rmsEps: 1e-5,
    tiedEmbeddings: false,
  }),
  preset('smollm2-135m', 'SmolLM2-135M', {
    architecture: 'llama',
    dim: 576,
    hiddenDim: 1536,
    nLayers: 30,
    nHeads: 9,
    nKvHeads: 3,
    headDim: 64,
    vocabSize: 49152,
    contextLength: 8192,
    ropeTheta: 100000,
    rmsEps: 1e-5,
    tiedEmbeddings: true,
  }),
  preset('smollm2-360m', 'SmolLM2-360M', {
    architecture: 'llama',
    dim: 960,
    hiddenDim: 2560,
    nLayers: 32,
    nHeads: 15,
    nKvHeads: 5,
    headDim: 64,
    vocabSize: 49152,
    contextLength: 8192,
    ropeTheta: 100000,
    rmsEps: 1e-5,
    tiedEmbeddings: true,
  }),
  preset('qwen2.5-0.5b', 'Qwen2.5-0.5B', {
    architecture: 'qwen2',
    dim: 896,
    hiddenDim: 4864,
    nLayers: 24,
    nHeads: 14,
    nKvHeads: 2,
    headDim: 64,
    vocabSize: 151936,
    contextLength: 32768,
    ropeTheta: 1000000,
    rmsEps: 1e-6,
    tiedEmbeddings: true,
  }),
  preset('llama-3.2-1b', 'Llama-3.2-1B', {
    architecture: 'llama',
    dim: 2048,
    hiddenDim: 8192,
    nLayers: 16,
    nHeads: 32,
    nKvHeads: 8,
    headDim: 64,
    vocabSize: 128256,
    contextLength: 131072,
    ropeTheta: 500000,
    rmsEps: 1e-5,
    tiedEmbeddings: true,
    llama3Scaling: LLAMA32_SCALING,
  }),
  preset('llama-3.2-3b', 'Llama-3.2-3B', {
    architecture: 'llama',
    dim: 3072,
    hiddenDim: 8192,
    nLayers: 28,
    nHeads: 24,
    nKvHeads: 8,
    headDim: 128,
    vocabSize: 128256,
    contextLength: 131072,
    ropeTheta: 500000,
    rmsEps: 1e-5,
    tiedEmbeddings: true,
    llama3Scaling: LLAMA32_SCALING,
  }),
  preset('llama-3.1-8b', 'Llama-3.1-8B', {
    architecture: 'llama',
    dim: 4096,
    hiddenDim: 14336,
    nLayers: 32,
    nHeads: 32,
    nKvHeads: 8,
    headDim: 128,
    vocabSize: 128256,
    contextLength: 131072,
    ropeTheta: 500000,
    rmsEps: 1e-5,
    tiedEmbeddings: false,
    llama3Scaling: { ...LLAMA32_SCALING, factor: 8 },
  }),
  preset('qwen3-0.6b', 'Qwen3-0.6B', {
    architecture: 'qwen3',
    dim: 1024,
    hiddenDim: 3072,
    nLayers: 28,
    nHeads: 16,
    nKvHeads: 8,
    headDim: 128,
    vocabSize: 151936,
    contextLength: 40960,
    ropeTheta: 1000000,
    rmsEps: 1e-6,
    tiedEmbeddings: true,
  }),
  preset('qwen3-1.7b', 'Qwen3-1.7B', {
    architecture: 'qwen3',
    dim: 2048,
    hiddenDim: 6144,
    nLayers: 28,
    nHeads: 16,
    nKvHeads: 8,
    headDim: 128,
    vocabSize: 151936,
    contextLength: 40960,
    ropeTheta: 1000000,
    rmsEps: 1e-6,
    tiedEmbeddings: true,
  }),
  preset('gemma-3-1b', 'Gemma-3-1B', {
    architecture: 'gemma3',
    dim: 1152,
    hiddenDim: 6912,
    nLayers: 26,
    nHeads: 4,
    nKvHeads: 1,
    headDim: 256,
    vocabSize: 262144,
    contextLength: 32768,
    ropeTheta: 1000000,
    rmsEps: 1e-6,
    tiedEmbeddings: true,
    slidingWindow: 512,
  }),
];

/** A public GGUF file a visitor's browser may fetch (tests never do; they use ../shared/models). */
export interface KnownModelFile {
  id: string;
  title: string;
  url: string;
  /**
   * Bytes, where established from more than one public source for this exact URL (a revision-pinned
   * URL where the repo has one); null: unknown until the header is read (the inspection then says it).
   */
  size: number | null;
  /** Hex sha256, established the same way; null when unknown. For checking a download (`sha256sum`). */
  sha256: string | null;
  /** Where tests and the CLI look for a local copy (relative to the project root). */
  localPaths: string[];
}

export const KNOWN_FILES: readonly KnownModelFile[] = [
  {
    id: 'stories260k-gguf',
    title: 'TinyStories stories260K (F32, real weights)',
    url: 'https://huggingface.co/ggml-org/models/resolve/main/tinyllamas/stories260K.gguf',
    size: 1_185_376,
    sha256: '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d',
    localPaths: ['../shared/models/stories260K.gguf', 'models/cache/stories260K.gguf'],
  },
  {
    id: 'smollm2-135m-instruct-q8_0',
    title: 'SmolLM2-135M-Instruct Q8_0 (real weights)',
    url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/resolve/main/smollm2-135m-instruct-q8_0.gguf',
    size: null,
    sha256: null,
    localPaths: ['models/cache/smollm2-135m-instruct-q8_0.gguf'],
  },
  {
    id: 'qwen2.5-0.5b-instruct-q4_0',
    title: 'Qwen2.5-0.5B-Instruct Q4_0 (real weights)',
    url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_0.gguf',
    size: null,
    sha256: null,
    localPaths: ['models/cache/qwen2.5-0.5b-instruct-q4_0.gguf'],
  },
  // The files people run in llama.cpp, Ollama and LM Studio (K-quants and Q8_0). Whether tokenscope
  // runs one yet depends on its weight formats and architecture: inspecting the header says so.
  {
    id: 'llama-3.2-1b-instruct-q4_k_m',
    title: 'Llama-3.2-1B-Instruct Q4_K_M (real weights)',
    url: 'https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    size: null,
    sha256: null,
    localPaths: ['models/cache/Llama-3.2-1B-Instruct-Q4_K_M.gguf'],
  },
  {
    id: 'qwen2.5-0.5b-instruct-q4_k_m',
    title: 'Qwen2.5-0.5B-Instruct Q4_K_M (real weights)',
    url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf',
    size: null,
    sha256: null,
    localPaths: ['models/cache/qwen2.5-0.5b-instruct-q4_k_m.gguf'],
  },
  {
    id: 'qwen3-0.6b-q8_0',
    title: 'Qwen3-0.6B Q8_0 (real weights)',
    // Pinned to the revision whose size and sha256 several projects publish.
    url: 'https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/23749fefcc72300e3a2ad315e1317431b06b590a/Qwen3-0.6B-Q8_0.gguf',
    size: 639_446_688,
    sha256: '9465e63a22add5354d9bb4b99e90117043c7124007664907259bd16d043bb031',
    localPaths: ['models/cache/Qwen3-0.6B-Q8_0.gguf'],
  },
  {
    id: 'smollm2-360m-instruct-q8_0',
    title: 'SmolLM2-360M-Instruct Q8_0 (real weights)',
    url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/main/smollm2-360m-instruct-q8_0.gguf',
    size: null,
    sha256: null,
    localPaths: ['models/cache/smollm2-360m-instruct-q8_0.gguf'],
  },
  {
    id: 'gemma-3-1b-it-q4_k_m',
    title: 'gemma-3-1b-it Q4_K_M (real weights)',
    url: 'https://huggingface.co/ggml-org/gemma-3-1b-it-GGUF/resolve/main/gemma-3-1b-it-Q4_K_M.gguf',
    size: 806_058_240,
    sha256: '8ccc5cd1f1b3602548715ae25a66ed73fd5dc68a210412eea643eb20eb75a135',
    localPaths: ['models/cache/gemma-3-1b-it-Q4_K_M.gguf'],
  },
];

export function findPreset(id: string): ModelPreset | undefined {
  return PRESETS.find((p) => p.id === id.toLowerCase());
}

export function findKnownFile(id: string): KnownModelFile | undefined {
  return KNOWN_FILES.find((f) => f.id === id.toLowerCase());
}

/** Parameters of a config (weights only), for labels like "1.24 B". */
export function parameterCount(c: ModelConfig): number {
  const qDim = c.nHeads * c.headDim;
  const kvDim = c.nKvHeads * c.headDim;
  const perLayer =
    2 * c.dim +
    c.dim * qDim +
    2 * c.dim * kvDim +
    qDim * c.dim +
    3 * c.dim * c.hiddenDim +
    (c.qkvBias ? qDim + 2 * kvDim : 0) +
    (c.qkNorm ? 2 * c.headDim : 0) +
    (c.postNorms ? 2 * c.dim : 0);
  const embeddings = c.vocabSize * c.dim * (c.tiedEmbeddings ? 1 : 2);
  return embeddings + c.nLayers * perLayer + c.dim;
}

/** Where Hugging Face serves files. */
export const HF_BASE = 'https://huggingface.co';

/**
 * `hf://ORG/REPO/PATH.gguf` (llama.cpp's form for a file of a Hugging Face repository) → the file's
 * URL on the main branch; a typed error for any other form, or a path that climbs out of the repo.
 */
export function hfFileUrl(ref: string, base = HF_BASE): string {
  const m = /^hf:\/\/([\w.-]+)\/([\w.-]+)\/(.+\.gguf)$/i.exec(ref.trim());
  if (!m || m[3].split('/').some((seg) => seg === '..' || seg === '.' || seg === '')) {
    throw new TokenscopeError(
      'bad-input',
      `${ref}: a Hugging Face file reads hf://ORG/REPO/FILE.gguf, e.g. hf://bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q4_K_M.gguf.`,
      'Copy the organisation, repository and file name from the model page on huggingface.co.',
    );
  }
  const path = m[3].split('/').map(encodeURIComponent).join('/');
  return `${base.replace(/\/$/, '')}/${m[1]}/${m[2]}/resolve/main/${path}`;
}

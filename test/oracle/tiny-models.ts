/**
 * Tiny GGUF files of the new architectures with real vocabularies, for comparing our engine with
 * llama.cpp: a few layers of dim 64, seeded weights scaled by 1/sqrt(fan-in), the tensor names and
 * metadata llama.cpp's loader expects for `llama` (Llama 3.x with rope_freqs.weight), `qwen3` and
 * `gemma3`. Norm weights are stored as llama.cpp reads them (Gemma's converter already added 1).
 */
import { llama3RopeFactors } from '../../src/model/config.ts';
import { bytePairVocab, FILE_TYPE_OF_TENSOR_TYPE, sentencePieceVocab } from '../../src/model/gguf/synthetic.ts';
import { GGMLType, elementCount, meta, type GGMLTypeName, type GGUFValue } from '../../src/model/gguf/types.ts';
import { encodeGGUF, type TensorToWrite } from '../../src/model/gguf/writer.ts';
import { encodeTensor } from '../../src/model/quantize.ts';
import { mulberry32 } from '../../src/random.ts';

export type TinyArch = 'llama3' | 'qwen3' | 'gemma3';

export interface TinyShape {
  dim: number;
  hiddenDim: number;
  nLayers: number;
  nHeads: number;
  nKvHeads: number;
  headDim: number;
}

/**
 * Gemma 3 needs six layers: llama.cpp makes every sixth layer global (set_swa_pattern(6)) and the
 * rest sliding. Qwen3 and Gemma have headDim·nHeads ≠ dim, as the real models do.
 */
export const TINY_SHAPES: Record<TinyArch, TinyShape> = {
  llama3: { dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, headDim: 16 },
  qwen3: { dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, headDim: 32 },
  gemma3: { dim: 64, hiddenDim: 128, nLayers: 6, nHeads: 2, nKvHeads: 1, headDim: 32 },
};

/** Llama 3.2's rope scaling (config.json rope_scaling), which the converter turns into rope_freqs.weight. */
export const LLAMA32_ROPE_SCALING = { factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalContext: 8192 };

/** A window short enough that a prompt of tens of tokens slides past it. */
export const TINY_SLIDING_WINDOW = 5;

/** A vocabulary as GGUF metadata: a real one (hf-vocab.ts, Node only) or smallVocab's. */
export interface TinyVocab {
  vocabSize: number;
  metadata: [string, GGUFValue][];
}

/** A few hundred synthetic tokens of the architecture's tokenizer kind (runs in the browser too). */
export function smallVocab(arch: TinyArch): TinyVocab {
  const vocabSize = 320;
  return {
    vocabSize,
    metadata:
      arch === 'gemma3'
        ? [...sentencePieceVocab(vocabSize), ['tokenizer.ggml.add_space_prefix', meta.bool(false)]]
        : bytePairVocab(vocabSize, arch === 'qwen3' ? 'qwen2' : 'llama-bpe'),
  };
}

export interface TinyModelOptions {
  vocab: TinyVocab;
  /** Type of every matrix (token_embd included); norms and rope_freqs stay F32. Default F32. */
  type?: GGMLTypeName;
  seed?: number;
}

export function tinyModel(arch: TinyArch, options: TinyModelOptions): Uint8Array<ArrayBuffer> {
  const s = TINY_SHAPES[arch];
  const vocab = options.vocab;
  const type = options.type ?? 'F32';
  const random = mulberry32(options.seed ?? 7);
  const tensors: TensorToWrite[] = [];
  const add = (name: string, dims: number[], kind: 'matrix' | 'norm' | 'embedding') => {
    // Embeddings as small as a layer's output, so the tied LM head does not just echo the input token.
    const scale = kind === 'matrix' || kind === 'embedding' ? 1 / Math.sqrt(dims[0]) : 0.2;
    const center = kind === 'norm' ? 1 : 0;
    const values = new Float32Array(elementCount(dims));
    for (let i = 0; i < values.length; i++) values[i] = center + scale * (2 * random() - 1);
    const t = kind === 'norm' ? GGMLType.F32 : GGMLType[type];
    tensors.push({ name, type: t, dims, data: encodeTensor(values, t) });
  };
  const qDim = s.nHeads * s.headDim;
  const kvDim = s.nKvHeads * s.headDim;
  add('token_embd.weight', [s.dim, vocab.vocabSize], 'embedding');
  add('output_norm.weight', [s.dim], 'norm');
  if (arch === 'llama3') {
    const factors = llama3RopeFactors({ ropeTheta: 500000, ropeDim: s.headDim, ...LLAMA32_ROPE_SCALING });
    tensors.push({ name: 'rope_freqs.weight', type: GGMLType.F32, dims: [s.headDim / 2], data: encodeTensor(factors, GGMLType.F32) });
  }
  for (let l = 0; l < s.nLayers; l++) {
    const blk = (name: string) => `blk.${l}.${name}.weight`;
    add(blk('attn_norm'), [s.dim], 'norm');
    add(blk('attn_q'), [s.dim, qDim], 'matrix');
    add(blk('attn_k'), [s.dim, kvDim], 'matrix');
    add(blk('attn_v'), [s.dim, kvDim], 'matrix');
    if (arch !== 'llama3') {
      add(blk('attn_q_norm'), [s.headDim], 'norm');
      add(blk('attn_k_norm'), [s.headDim], 'norm');
    }
    add(blk('attn_output'), [qDim, s.dim], 'matrix');
    if (arch === 'gemma3') add(blk('post_attention_norm'), [s.dim], 'norm');
    add(blk('ffn_norm'), [s.dim], 'norm');
    add(blk('ffn_gate'), [s.dim, s.hiddenDim], 'matrix');
    add(blk('ffn_up'), [s.dim, s.hiddenDim], 'matrix');
    add(blk('ffn_down'), [s.hiddenDim, s.dim], 'matrix');
    if (arch === 'gemma3') add(blk('post_ffw_norm'), [s.dim], 'norm');
  }

  const a = arch === 'llama3' ? 'llama' : arch;
  const hyper: [string, GGUFValue][] = {
    llama3: [
      [`llama.context_length`, meta.u32(131072)],
      [`llama.rope.freq_base`, meta.f32(500000)],
      [`llama.attention.layer_norm_rms_epsilon`, meta.f32(1e-5)],
      [`llama.rope.dimension_count`, meta.u32(s.headDim)],
      [`llama.vocab_size`, meta.u32(vocab.vocabSize)],
    ] as [string, GGUFValue][],
    qwen3: [
      [`qwen3.context_length`, meta.u32(40960)],
      [`qwen3.rope.freq_base`, meta.f32(1000000)],
      [`qwen3.attention.layer_norm_rms_epsilon`, meta.f32(1e-6)],
      [`qwen3.attention.key_length`, meta.u32(s.headDim)],
      [`qwen3.attention.value_length`, meta.u32(s.headDim)],
    ] as [string, GGUFValue][],
    gemma3: [
      [`gemma3.context_length`, meta.u32(32768)],
      [`gemma3.rope.freq_base`, meta.f32(1000000)],
      [`gemma3.attention.layer_norm_rms_epsilon`, meta.f32(1e-6)],
      [`gemma3.attention.key_length`, meta.u32(s.headDim)],
      [`gemma3.attention.value_length`, meta.u32(s.headDim)],
      [`gemma3.attention.sliding_window`, meta.u32(TINY_SLIDING_WINDOW)],
    ] as [string, GGUFValue][],
  }[arch];
  const metadata = new Map<string, GGUFValue>([
    ['general.architecture', meta.str(a)],
    ['general.name', meta.str(`tiny-${arch}-${type.toLowerCase()}`)],
    ['general.file_type', meta.u32(FILE_TYPE_OF_TENSOR_TYPE[type] ?? 0)],
    [`${a}.embedding_length`, meta.u32(s.dim)],
    [`${a}.feed_forward_length`, meta.u32(s.hiddenDim)],
    [`${a}.block_count`, meta.u32(s.nLayers)],
    [`${a}.attention.head_count`, meta.u32(s.nHeads)],
    [`${a}.attention.head_count_kv`, meta.u32(s.nKvHeads)],
    ...hyper,
    ...vocab.metadata,
  ]);
  return encodeGGUF(metadata, tensors);
}

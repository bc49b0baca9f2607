/**
 * Which tensor type each weight gets when a model is quantized: a plain type ("pure": every
 * matrix that type), or one of llama-quantize's mixes (Q4_K_M, Q4_K_S, Q5_K_M, Q6_K, Q8_0), which
 * follow llama.cpp's llama_tensor_get_type (src/llama-quant.cpp) for dense models: the output
 * head (or the tied embedding) in Q6_K, and in the _M mixes attn_v and ffn_down of the layers
 * use_more_bits picks in Q6_K; Q4_K_S gives the first attn_v and ffn_down layers Q5_K. Rows that
 * do not split into a K-quant's 256-weight super-blocks fall back as llama.cpp does
 * (Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0), and rows that fit no block at all to F16. A plain
 * type is `llama-quantize --pure` of its ftype: test/unit/oracle/quantize-ggml.test.ts checks
 * every tensor's type and bytes against llama.cpp's own quantizer.
 */
import { TokenscopeError } from '../errors.ts';
import { GGMLType, GGML_BLOCK } from './gguf/types.ts';

/** A plain type, or a llama-quantize mix. */
export const QUANTIZATIONS = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q4_k', 'q5_k', 'q6_k', 'q4_k_m', 'q4_k_s', 'q5_k_m'] as const;
export type Quantization = (typeof QUANTIZATIONS)[number];

const PLAIN: Record<Exclude<Quantization, 'q4_k_m' | 'q4_k_s' | 'q5_k_m'>, GGMLType> = {
  f32: GGMLType.F32,
  f16: GGMLType.F16,
  bf16: GGMLType.BF16,
  q8_0: GGMLType.Q8_0,
  q4_0: GGMLType.Q4_0,
  q4_1: GGMLType.Q4_1,
  q5_0: GGMLType.Q5_0,
  q5_1: GGMLType.Q5_1,
  q4_k: GGMLType.Q4_K,
  q5_k: GGMLType.Q5_K,
  q6_k: GGMLType.Q6_K,
};

/** llama.cpp's llama_ftype of each (general.file_type); a pure K type counts as its _M mix. */
export const FILE_TYPE: Record<Quantization, number> = {
  f32: 0,
  f16: 1,
  q4_0: 2,
  q4_1: 3,
  q8_0: 7,
  q5_0: 8,
  q5_1: 9,
  q4_k_s: 14,
  q4_k_m: 15,
  q4_k: 15,
  q5_k_m: 17,
  q5_k: 17,
  q6_k: 18,
  bf16: 32,
};

export function isQuantization(s: string): s is Quantization {
  return (QUANTIZATIONS as readonly string[]).includes(s);
}

export function parseQuantization(s: string): Quantization {
  const q = s.toLowerCase();
  if (!isQuantization(q)) {
    throw new TokenscopeError('bad-input', `Unknown quantization "${s}".`, `Use one of ${QUANTIZATIONS.join(', ')}.`);
  }
  return q;
}

/** The base type of a quantization (the type most matrices get). */
export function baseType(q: Quantization): GGMLType {
  return q === 'q4_k_m' || q === 'q4_k_s' ? GGMLType.Q4_K : q === 'q5_k_m' ? GGMLType.Q5_K : PLAIN[q];
}

/** llama.cpp's use_more_bits: the first and last eighth of the layers and every third one between. */
export function useMoreBits(layer: number, nLayers: number): boolean {
  const eighth = Math.trunc(nLayers / 8);
  return layer < eighth || layer >= Math.trunc((7 * nLayers) / 8) || (layer - eighth) % 3 === 2;
}

/** The facts about a model that the mixes depend on. */
export interface RecipeModel {
  nLayers: number;
  /** output.weight exists (else the token embedding doubles as the LM head and gets its type). */
  hasOutput: boolean;
}

/** Whether llama-quantize quantizes this tensor at all: 2-D+ weights that are not norms. */
export function isQuantizable(name: string, dims: readonly number[]): boolean {
  return name.endsWith('weight') && dims.length >= 2 && !name.includes('_norm.weight');
}

/**
 * The type a tensor (currently `type`) gets under `q`. Tensors llama-quantize leaves alone keep
 * their type; one whose rows fit neither the type's blocks nor its fallback's becomes F16, as
 * llama-quantize makes it (tensor_type_fallback; the 172-wide ffn_down of stories260K).
 */
export function tensorTypeFor(q: Quantization, tensor: { name: string; dims: readonly number[]; type: GGMLType }, model: RecipeModel): GGMLType {
  if (!isQuantizable(tensor.name, tensor.dims)) return tensor.type;
  const base = baseType(q);
  if (GGML_BLOCK[base].elements === 1) return base;
  const nx = tensor.dims[0];
  const fits = (t: GGMLType) => nx % GGML_BLOCK[t].elements === 0;
  let type = base;
  const mix = q === 'q4_k_m' || q === 'q4_k_s' || q === 'q5_k_m' || q === 'q6_k' || q === 'q8_0';
  const layer = Number(/^blk\.(\d+)\./.exec(tensor.name)?.[1] ?? -1);
  const { nLayers } = model;
  if (mix) {
    if (tensor.name === 'output.weight' || (!model.hasOutput && tensor.name === 'token_embd.weight')) {
      type = !fits(base) ? GGMLType.Q8_0 : base !== GGMLType.Q8_0 ? GGMLType.Q6_K : base;
    } else if (tensor.name.includes('attn_v.weight')) {
      if ((q === 'q4_k_m' || q === 'q5_k_m') && useMoreBits(layer, nLayers)) type = GGMLType.Q6_K;
      else if (q === 'q4_k_s' && layer < 4) type = GGMLType.Q5_K;
    } else if (tensor.name.includes('ffn_down')) {
      if ((q === 'q4_k_m' || q === 'q5_k_m') && useMoreBits(layer, nLayers)) type = GGMLType.Q6_K;
      else if (q === 'q4_k_s' && layer < Math.trunc(nLayers / 8)) type = GGMLType.Q5_K;
    }
  }
  if (fits(type)) return type;
  const fallback = type === GGMLType.Q4_K ? GGMLType.Q5_0 : type === GGMLType.Q5_K ? GGMLType.Q5_1 : type === GGMLType.Q6_K ? GGMLType.Q8_0 : type;
  return fits(fallback) ? fallback : GGMLType.F16;
}

/**
 * The GGUF type a file's tensor is uploaded as (and the CPU reference rounds it to): its own, or
 * re-encoded from F32/F16 under `quant`.
 */
export function uploadType(
  info: { name: string; dims: readonly number[]; type: GGMLType },
  config: { nLayers: number; tiedEmbeddings: boolean },
  quant?: Quantization,
): GGMLType {
  if (!quant || (info.type !== GGMLType.F32 && info.type !== GGMLType.F16)) return info.type;
  return tensorTypeFor(quant, info, { nLayers: config.nLayers, hasOutput: !config.tiedEmbeddings });
}

/**
 * Small random Llama / Qwen2 models of any shape, written as real GGUF files, for tests here and
 * on the GPU. Values come from a seeded PRNG, so a shape and seed always give the same bytes.
 * Weights are scaled by 1/sqrt(fan-in) so activations stay O(1) through the layers.
 */
import { TokenscopeError } from '../../errors.ts';
import { mulberry32 } from '../../random.ts';
import { encodeTensor } from '../quantize.ts';
import { globalTensorSpecs, hasLayerRole, layerTensorSpecs, type LayerTensors, type ShapeConfig, type TensorRole } from '../tensors.ts';
import { BYTE_TO_CHAR } from '../tokenizer/bpe.ts';
import { TokenType } from '../tokenizer/types.ts';
import { GGMLType, elementCount, meta, shapeProblem, type GGMLTypeName, type GGUFValue } from './types.ts';
import { encodeGGUF, type TensorToWrite } from './writer.ts';

export interface TestModelOptions {
  architecture: 'llama' | 'qwen2';
  dim: number;
  hiddenDim: number;
  nLayers: number;
  nHeads: number;
  /** Default nHeads. */
  nKvHeads?: number;
  /** At least 260 for the 'llama' tokenizer (3 control + 256 byte tokens + '▁'), 257 for 'gpt2'. */
  vocabSize: number;
  /** Default 256. */
  contextLength?: number;
  /** Default 10000. */
  ropeTheta?: number;
  /** Default the head size. */
  ropeDim?: number;
  /** No output.weight. Default false. */
  tiedEmbeddings?: boolean;
  /** Tensor type per role; `default` applies to matrices. Everything else is F32. */
  types?: Partial<Record<TensorRole | 'default', GGMLTypeName>>;
  /** Default 1. */
  seed?: number;
  /** Default 'llama' for llama, 'gpt2' for qwen2. */
  tokenizer?: 'llama' | 'gpt2';
  /** general.alignment; default unset (32). */
  alignment?: number;
}

/** The metadata and tensors of a test model, for tests that alter them before writing. */
export function testModelParts(o: TestModelOptions): { metadata: Map<string, GGUFValue>; tensors: TensorToWrite[] } {
  const arch = o.architecture;
  const config: ShapeConfig = {
    dim: o.dim,
    hiddenDim: o.hiddenDim,
    nHeads: o.nHeads,
    nKvHeads: o.nKvHeads ?? o.nHeads,
    headDim: o.dim / o.nHeads,
    vocabSize: o.vocabSize,
  };
  const random = mulberry32(o.seed ?? 1);
  const tensors: TensorToWrite[] = [];
  /** Uniform values: embeddings ±1, matrices ±1/sqrt(fan-in), norm weights 1 ± 0.1, biases ±0.1. */
  const add = (role: TensorRole, spec: { name: string; dims: number[] }) => {
    const matrix = spec.dims.length > 1;
    const typeName = o.types?.[role] ?? (matrix ? o.types?.default : undefined) ?? 'F32';
    const type = GGMLType[typeName];
    const problem = shapeProblem(type, spec.dims);
    if (problem) throw badInput(`${spec.name} cannot be ${typeName}: ${problem}`);
    const scale = role === 'tokenEmbd' ? 1 : matrix ? 1 / Math.sqrt(spec.dims[0]) : 0.1;
    const center = role.endsWith('Norm') ? 1 : 0;
    const values = Float32Array.from({ length: elementCount(spec.dims) }, () => center + scale * (2 * random() - 1));
    tensors.push({ name: spec.name, type, dims: spec.dims, data: encodeTensor(values, type) });
  };
  const global = globalTensorSpecs(config);
  add('tokenEmbd', global.tokenEmbd);
  add('outputNorm', global.outputNorm);
  if (!o.tiedEmbeddings) add('output', global.output);
  for (let l = 0; l < o.nLayers; l++) {
    for (const [role, spec] of Object.entries(layerTensorSpecs(config, l)) as [TensorRole, { name: string; dims: number[] }][]) {
      if (hasLayerRole({ qkvBias: arch === 'qwen2', qkNorm: false, postNorms: false }, role as keyof LayerTensors)) add(role, spec);
    }
  }

  const metadata = new Map<string, GGUFValue>([
    ['general.architecture', meta.str(arch)],
    ['general.name', meta.str(`synthetic-${arch}-${o.dim}x${o.nLayers}`)],
    ['general.file_type', meta.u32(FILE_TYPE_OF_TENSOR_TYPE[o.types?.default ?? 'F32'])],
    ...(o.alignment === undefined ? [] : [['general.alignment', meta.u32(o.alignment)] as const]),
    [`${arch}.context_length`, meta.u32(o.contextLength ?? 256)],
    [`${arch}.embedding_length`, meta.u32(o.dim)],
    [`${arch}.feed_forward_length`, meta.u32(o.hiddenDim)],
    [`${arch}.block_count`, meta.u32(o.nLayers)],
    [`${arch}.attention.head_count`, meta.u32(o.nHeads)],
    [`${arch}.attention.head_count_kv`, meta.u32(config.nKvHeads)],
    [`${arch}.rope.dimension_count`, meta.u32(o.ropeDim ?? config.headDim)],
    [`${arch}.rope.freq_base`, meta.f32(o.ropeTheta ?? 10000)],
    [`${arch}.attention.layer_norm_rms_epsilon`, meta.f32(arch === 'qwen2' ? 1e-6 : 1e-5)],
    ...((o.tokenizer ?? (arch === 'llama' ? 'llama' : 'gpt2')) === 'llama'
      ? sentencePieceVocab(o.vocabSize)
      : bytePairVocab(o.vocabSize, arch === 'qwen2' ? 'qwen2' : 'llama-bpe')),
  ]);
  return { metadata, tensors };
}

export function buildTestModel(options: TestModelOptions): Uint8Array<ArrayBuffer> {
  const { metadata, tensors } = testModelParts(options);
  return encodeGGUF(metadata, tensors);
}

/** llama.cpp's llama_ftype for a model mostly of one type (a K-quant counts as its _M recipe). */
export const FILE_TYPE_OF_TENSOR_TYPE: Record<GGMLTypeName, number> = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q8_0: 7,
  Q5_0: 8,
  Q5_1: 9,
  Q4_K: 15,
  Q5_K: 17,
  Q6_K: 18,
  BF16: 32,
};

/**
 * <unk>, <s>, </s>, the 256 byte tokens, then pieces in order of length: '▁', letters, then every
 * ('▁' | letter) followed by letters. Shorter pieces score higher, so they merge first.
 */
export function sentencePieceVocab(size: number): [string, GGUFValue][] {
  const fixed = ['<unk>', '<s>', '</s>', ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)];
  if (size < fixed.length + 1) throw badInput(`a 'llama' vocabulary needs at least ${fixed.length + 1} tokens, not ${size}`);
  const pieces = piecesByLength(['\u2581'], size - fixed.length);
  const tokens = [...fixed, ...pieces];
  const types = tokens.map((_, id) => (id === 0 ? TokenType.UNKNOWN : id < 3 ? TokenType.CONTROL : id < fixed.length ? TokenType.BYTE : TokenType.NORMAL));
  return [
    ['tokenizer.ggml.model', meta.str('llama')],
    ['tokenizer.ggml.tokens', meta.strings(tokens)],
    ['tokenizer.ggml.scores', meta.f32s(Float32Array.from(tokens, (_, id) => (id < fixed.length ? 0 : -(id - fixed.length))))],
    ['tokenizer.ggml.token_type', meta.i32s(Int32Array.from(types))],
    ['tokenizer.ggml.bos_token_id', meta.u32(1)],
    ['tokenizer.ggml.eos_token_id', meta.u32(2)],
    ['tokenizer.ggml.unknown_token_id', meta.u32(0)],
  ];
}

/** The 256 byte characters, then merged pieces ('Ġ' is a space), each made by one merge, and <|endoftext|> last. */
export function bytePairVocab(size: number, pre: string): [string, GGUFValue][] {
  if (size < 257) throw badInput(`a 'gpt2' vocabulary needs at least 257 tokens, not ${size}`);
  const starters = ['\u0120'];
  const merged = piecesByLength(starters, size - 257 + starters.length + LETTERS.length).filter((p) => p.length > 1);
  const tokens = [...BYTE_TO_CHAR, ...merged, '<|endoftext|>'];
  const eos = tokens.length - 1;
  return [
    ['tokenizer.ggml.model', meta.str('gpt2')],
    ['tokenizer.ggml.pre', meta.str(pre)],
    ['tokenizer.ggml.tokens', meta.strings(tokens)],
    ['tokenizer.ggml.token_type', meta.i32s(Int32Array.from(tokens, (_, id) => (id === eos ? TokenType.CONTROL : TokenType.NORMAL)))],
    ['tokenizer.ggml.merges', meta.strings(merged.map((p) => `${p.slice(0, -1)} ${p.slice(-1)}`))],
    ['tokenizer.ggml.bos_token_id', meta.u32(eos)],
    ['tokenizer.ggml.eos_token_id', meta.u32(eos)],
    ['tokenizer.ggml.add_bos_token', meta.bool(false)],
  ];
}

const LETTERS = [...'etaoinshrdlucmfwypvbgkjqxz'];

/** `count` strings: the starters and lowercase letters, then each earlier piece followed by a letter, shortest first. */
function piecesByLength(starters: string[], count: number): string[] {
  const out = [...starters, ...LETTERS].slice(0, count);
  for (let i = 0; out.length < count; i++) {
    for (const letter of LETTERS) {
      if (out.length === count) break;
      out.push(out[i] + letter);
    }
  }
  return out;
}

function badInput(what: string): TokenscopeError {
  return new TokenscopeError('bad-input', `cannot build the test model: ${what}`, 'Choose a shape that fits the tensor types and tokenizer.');
}

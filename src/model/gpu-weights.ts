/**
 * A model's weights on the GPU, uploaded once: from a GGUF file (tensor by tensor, optionally
 * quantized on load), or generated on the GPU from a seed for the synthetic-weight presets.
 */
import { TokenscopeError } from '../errors.ts';
import { storageBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { destroyWeight, syntheticWeight, uploadWeight, type WeightFormat, type WeightTensor } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';
import type { GGUFTensorInfo } from './gguf/reader.ts';
import { GGMLType } from './gguf/types.ts';
import { formatOfType } from './weight-types.ts';
import type { OpenModel } from './open.ts';
import { dequantize } from './quant.ts';
import { encodeTensor } from './quantize.ts';
import { tensorTypeFor, type Quantization } from './recipes.ts';

export interface LayerWeights {
  attnNorm: GPUBuffer; // (dim) f32
  wq: WeightTensor; // (nHeads·headDim, dim)
  wk: WeightTensor; // (nKvHeads·headDim, dim)
  wv: WeightTensor; // (nKvHeads·headDim, dim)
  bq?: GPUBuffer; // (nHeads·headDim) f32, qwen2
  bk?: GPUBuffer; // (nKvHeads·headDim) f32
  bv?: GPUBuffer; // (nKvHeads·headDim) f32
  wo: WeightTensor; // (dim, nHeads·headDim)
  ffnNorm: GPUBuffer; // (dim) f32
  wGate: WeightTensor; // (hiddenDim, dim)
  wUp: WeightTensor; // (hiddenDim, dim)
  wDown: WeightTensor; // (dim, hiddenDim)
}

export interface GpuWeights {
  tokenEmbd: WeightTensor; // (vocab, dim)
  layers: LayerWeights[];
  outputNorm: GPUBuffer; // (dim) f32
  /** The LM head; the same object as tokenEmbd when the embeddings are tied. */
  output: WeightTensor; // (vocab, dim)
  /** Bytes of all matrices as the kernels read them. */
  matrixBytes: number;
  /** e.g. "q4_0", or "mixed (q8_0, f32)". */
  quantization: string;
  synthetic: boolean;
}

export type { Quantization } from './recipes.ts';

/**
 * The GPU format a synthetic matrix (GGUF name `label`.weight, rows of `cols`) gets under a
 * quantization, as llama-quantize would give it from an F16 file (recipes.ts): so a preset's
 * bytes are the real file's. Rows that fit no block format stay f16.
 */
export function syntheticFormat(quant: Quantization, label: string, cols: number, config: Pick<ModelConfig, 'nLayers' | 'tiedEmbeddings'>): WeightFormat {
  const type = tensorTypeFor(quant, { name: `${label}.weight`, dims: [cols, 1], type: GGMLType.F16 }, { nLayers: config.nLayers, hasOutput: !config.tiedEmbeddings });
  return formatOfType(type);
}

/** The GGUF type a file's matrix is uploaded as: its own, or re-encoded from F32/F16 under `quant`. */
export function uploadType(info: GGUFTensorInfo, config: Pick<ModelConfig, 'nLayers' | 'tiedEmbeddings'>, quant?: Quantization): GGMLType {
  if (!quant || (info.type !== GGMLType.F32 && info.type !== GGMLType.F16)) return info.type;
  return tensorTypeFor(quant, info, { nLayers: config.nLayers, hasOutput: !config.tiedEmbeddings });
}

function summarizeFormats(tensors: WeightTensor[]): string {
  const formats = [...new Set(tensors.map((t) => t.format))];
  return formats.length === 1 ? formats[0] : `mixed (${formats.join(', ')})`;
}

function collect(layers: LayerWeights[], tokenEmbd: WeightTensor, output: WeightTensor): WeightTensor[] {
  const all = [tokenEmbd, ...layers.flatMap((l) => [l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown])];
  if (output !== tokenEmbd) all.push(output);
  return all;
}

function finish(layers: LayerWeights[], tokenEmbd: WeightTensor, outputNorm: GPUBuffer, output: WeightTensor, synthetic: boolean): GpuWeights {
  const matrices = collect(layers, tokenEmbd, output);
  return {
    tokenEmbd,
    layers,
    outputNorm,
    output,
    matrixBytes: matrices.reduce((n, t) => n + t.bytes, 0),
    quantization: summarizeFormats(matrices),
    synthetic,
  };
}

/** Upload a GGUF model; `quant` re-encodes F32/F16 matrices on load with ggml's rounding. */
export async function loadGgufWeights(
  ctx: GpuContext,
  model: OpenModel,
  opts: { quant?: Quantization; onProgress?: (fraction: number) => void } = {},
): Promise<GpuWeights> {
  const { gguf, config, tensors } = model;
  const total = gguf.tensors.length;
  let done = 0;
  const tick = () => opts.onProgress?.(++done / total);

  const vector = async (info: GGUFTensorInfo): Promise<GPUBuffer> => {
    const values = dequantize(info.type, await gguf.tensorBytes(info.name), info.dims.reduce((a, b) => a * b, 1));
    tick();
    return storageBufferWith(ctx.device, info.name, values);
  };
  const matrix = async (info: GGUFTensorInfo): Promise<WeightTensor> => {
    const [cols, rows] = info.dims;
    const type = uploadType(info, config, opts.quant);
    let bytes = await gguf.tensorBytes(info.name);
    if (type !== info.type) bytes = encodeTensor(dequantize(info.type, bytes, rows * cols), type);
    tick();
    return uploadWeight(ctx, info.name, formatOfType(type), rows, cols, bytes);
  };

  const tokenEmbd = await matrix(tensors.tokenEmbd);
  const layers: LayerWeights[] = [];
  for (const t of tensors.layers) {
    layers.push({
      attnNorm: await vector(t.attnNorm),
      wq: await matrix(t.wq),
      wk: await matrix(t.wk),
      wv: await matrix(t.wv),
      bq: t.bq && (await vector(t.bq)),
      bk: t.bk && (await vector(t.bk)),
      bv: t.bv && (await vector(t.bv)),
      wo: await matrix(t.wo),
      ffnNorm: await vector(t.ffnNorm),
      wGate: await matrix(t.wGate),
      wUp: await matrix(t.wUp),
      wDown: await matrix(t.wDown),
    });
  }
  const outputNorm = await vector(tensors.outputNorm);
  const output = config.tiedEmbeddings ? tokenEmbd : await matrix(tensors.output);
  return finish(layers, tokenEmbd, outputNorm, output, false);
}

/**
 * Synthetic weights generated on the GPU from a seed: the exact shapes of a real model, values
 * uniform in ±√(3/cols) (unit-variance activations), norms 1. They time like the real thing but
 * generate nonsense — every result made with them says "synthetic weights — speed only".
 */
export async function syntheticWeights(
  ctx: GpuContext,
  config: ModelConfig,
  quant: Quantization,
  seed: number,
  onProgress?: (fraction: number) => void,
): Promise<GpuWeights> {
  const qDim = config.nHeads * config.headDim;
  const kvDim = config.nKvHeads * config.headDim;
  const total = config.nLayers * 7 + (config.tiedEmbeddings ? 1 : 2);
  let done = 0;
  let nextSeed = seed >>> 0;
  const matrix = async (label: string, rows: number, cols: number) => {
    const w = await syntheticWeight(ctx, label, syntheticFormat(quant, label, cols, config), rows, cols, nextSeed++, Math.sqrt(3 / cols));
    onProgress?.(++done / total);
    return w;
  };
  const ones = (label: string, n: number) => storageBufferWith(ctx.device, label, new Float32Array(n).fill(1));
  const zeros = (label: string, n: number) => storageBufferWith(ctx.device, label, new Float32Array(n));

  const tokenEmbd = await matrix('token_embd', config.vocabSize, config.dim);
  const layers: LayerWeights[] = [];
  for (let l = 0; l < config.nLayers; l++) {
    const p = `blk.${l}`;
    layers.push({
      attnNorm: ones(`${p}.attn_norm`, config.dim),
      wq: await matrix(`${p}.attn_q`, qDim, config.dim),
      wk: await matrix(`${p}.attn_k`, kvDim, config.dim),
      wv: await matrix(`${p}.attn_v`, kvDim, config.dim),
      bq: config.qkvBias ? zeros(`${p}.attn_q.bias`, qDim) : undefined,
      bk: config.qkvBias ? zeros(`${p}.attn_k.bias`, kvDim) : undefined,
      bv: config.qkvBias ? zeros(`${p}.attn_v.bias`, kvDim) : undefined,
      wo: await matrix(`${p}.attn_output`, config.dim, qDim),
      ffnNorm: ones(`${p}.ffn_norm`, config.dim),
      wGate: await matrix(`${p}.ffn_gate`, config.hiddenDim, config.dim),
      wUp: await matrix(`${p}.ffn_up`, config.hiddenDim, config.dim),
      wDown: await matrix(`${p}.ffn_down`, config.dim, config.hiddenDim),
    });
  }
  const outputNorm = ones('output_norm', config.dim);
  const output = config.tiedEmbeddings ? tokenEmbd : await matrix('output', config.vocabSize, config.dim);
  return finish(layers, tokenEmbd, outputNorm, output, true);
}

export function destroyWeights(w: GpuWeights): void {
  for (const t of collect(w.layers, w.tokenEmbd, w.output)) destroyWeight(t);
  for (const l of w.layers) for (const b of [l.attnNorm, l.ffnNorm, l.bq, l.bk, l.bv]) b?.destroy();
  w.outputNorm.destroy();
}

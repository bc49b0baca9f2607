/**
 * One call from a byte source to a checked model: header, config and tensor roles.
 */
import { readModelConfig, type ModelConfig } from './config.ts';
import { readGGUF, type GGUF, type ReadOptions } from './gguf/reader.ts';
import { elementCount } from './gguf/types.ts';
import { dequantize } from './quant.ts';
import type { ByteSource } from './gguf/source.ts';
import { modelTensors, type ModelTensors } from './tensors.ts';

export interface OpenModel {
  gguf: GGUF;
  config: ModelConfig;
  tensors: ModelTensors;
}

export async function openModel(source: ByteSource, options?: ReadOptions): Promise<OpenModel> {
  const gguf = await readGGUF(source, options);
  const config = readModelConfig(gguf, await ropeFreqValues(gguf));
  return { gguf, config, tensors: modelTensors(gguf, config) };
}

/** A rope_freqs divisor per rotated pair: at most half the largest head size config.ts accepts. */
const MAX_ROPE_FREQS = 512;

/**
 * The values of rope_freqs.weight, which readModelConfig checks (finite, positive, one per pair);
 * undefined without the tensor, or when its size is implausible (then readModelConfig refuses its
 * dims without a byte of it being read). The header inspection reads it too, so it refuses what a run would.
 */
export async function ropeFreqValues(gguf: GGUF): Promise<Float32Array | undefined> {
  const t = gguf.tensor('rope_freqs.weight');
  if (!t || elementCount(t.dims) > MAX_ROPE_FREQS) return undefined;
  return dequantize(t.type, await gguf.tensorBytes(t), elementCount(t.dims));
}

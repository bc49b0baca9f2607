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
  const ropeFreqs = gguf.tensor('rope_freqs.weight');
  const config = readModelConfig(gguf, ropeFreqs && dequantize(ropeFreqs.type, await gguf.tensorBytes(ropeFreqs), elementCount(ropeFreqs.dims)));
  return { gguf, config, tensors: modelTensors(gguf, config) };
}

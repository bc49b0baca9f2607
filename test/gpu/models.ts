/**
 * The real test model for GPU tests, in Node (read from disk) and in Chromium (fetched from the
 * Vite server). `__TEST_MODEL_DIR__` is set by vitest.config.ts; empty when the model is absent,
 * and tests that need it are then skipped with a message saying where it was looked for.
 */
import { bytesSource } from '../../src/model/gguf/source.ts';
import { openModel, type OpenModel } from '../../src/model/open.ts';
import { elementCount, meta } from '../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../src/model/gguf/writer.ts';
import { dequantize } from '../../src/model/quant.ts';
import { encodeTensor } from '../../src/model/quantize.ts';
import { FILE_TYPE, tensorTypeFor, type Quantization } from '../../src/model/recipes.ts';
import { buildTestModel } from '../../src/model/gguf/synthetic.ts';
import { inBrowser } from './context.ts';

declare const __TEST_MODEL_DIR__: string;

export const MODEL_DIR = __TEST_MODEL_DIR__;
export const HAVE_MODEL = MODEL_DIR !== '';
export const MISSING = 'SKIPPED: stories260K.gguf not found in ../shared/models or models/cache';

export async function readTestFile(name: string): Promise<Uint8Array<ArrayBuffer>> {
  if (inBrowser) {
    const response = await fetch(`/@fs${MODEL_DIR}/${name}`);
    if (!response.ok) throw new Error(`fetching ${name}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  const fs = 'node:fs/promises';
  const { readFile } = (await import(/* @vite-ignore */ fs)) as typeof import('node:fs/promises');
  return new Uint8Array(await readFile(`${MODEL_DIR}/${name}`));
}

export async function openStories(): Promise<OpenModel> {
  return openModel(bytesSource(await readTestFile('stories260K.gguf'), 'stories260K.gguf'));
}

export async function storiesExpected(): Promise<{ token_ids: number[]; text: string }> {
  return JSON.parse(new TextDecoder().decode(await readTestFile('stories260K.expected.json')));
}

/** The model re-encoded to Q8_0/Q4_0 in memory (matrices that split into blocks), as `npm run quantize` does. */
export async function quantizedStories(target: Quantization): Promise<OpenModel> {
  return quantizeModel(await openStories(), target);
}

/** A model re-encoded in memory under a plain type or llama-quantize mix, as `npm run quantize` writes it. */
export async function quantizeModel(source: OpenModel, target: Quantization): Promise<OpenModel> {
  const model = { nLayers: source.config.nLayers, hasOutput: source.gguf.tensor('output.weight') !== undefined };
  const tensors = [];
  for (const t of source.gguf.tensors) {
    const to = tensorTypeFor(target, t, model);
    const bytes = await source.gguf.tensorBytes(t);
    tensors.push({ name: t.name, dims: t.dims, type: to, data: to === t.type ? bytes : encodeTensor(dequantize(t.type, bytes, elementCount(t.dims)), to) });
  }
  const metadata = new Map(source.gguf.metadata);
  metadata.set('general.file_type', meta.u32(FILE_TYPE[target]));
  const bytes = encodeGGUF(metadata, tensors);
  return openModel(bytesSource(bytes, `${source.gguf.source.name.replace(/\.gguf$/, '')}-${target}.gguf`));
}

/**
 * A small F32 Llama whose every matrix row splits into 256-weight super-blocks (dim 256,
 * hidden 512), so the K-quant mixes keep real K-quant tensors (stories260K's dim 64 makes them
 * fall back to Q5_0/Q5_1/Q8_0). 8 layers: use_more_bits picks layers 0, 3, 6 and 7.
 */
export async function kQuantTestModel(tied = false): Promise<OpenModel> {
  const bytes = buildTestModel({
    architecture: 'llama',
    dim: 256,
    hiddenDim: 512,
    nLayers: 8,
    nHeads: 4,
    nKvHeads: 2,
    vocabSize: 320,
    tiedEmbeddings: tied,
    seed: 5,
  });
  return openModel(bytesSource(bytes, `llama-256x8${tied ? '-tied' : ''}.gguf`));
}

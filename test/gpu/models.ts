/**
 * The real test model for GPU tests, in Node (read from disk) and in Chromium (fetched from the
 * Vite server). `__TEST_MODEL_DIR__` is set by vitest.config.ts; empty when the model is absent,
 * and tests that need it are then skipped with a message saying where it was looked for.
 */
import { bytesSource } from '../../src/model/gguf/source.ts';
import { openModel, type OpenModel } from '../../src/model/open.ts';
import { GGMLType, elementCount, meta } from '../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../src/model/gguf/writer.ts';
import { dequantize } from '../../src/model/quant.ts';
import { encodeTensor, quantizedType } from '../../src/model/quantize.ts';
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
export async function quantizedStories(target: 'q8_0' | 'q4_0'): Promise<OpenModel> {
  const source = await openStories();
  const type = target === 'q8_0' ? GGMLType.Q8_0 : GGMLType.Q4_0;
  const tensors = [];
  for (const t of source.gguf.tensors) {
    const to = quantizedType(t, type);
    const bytes = await source.gguf.tensorBytes(t);
    tensors.push({ name: t.name, dims: t.dims, type: to, data: to === t.type ? bytes : encodeTensor(dequantize(t.type, bytes, elementCount(t.dims)), to) });
  }
  const metadata = new Map(source.gguf.metadata);
  metadata.set('general.file_type', meta.u32(target === 'q8_0' ? 7 : 2));
  const bytes = encodeGGUF(metadata, tensors);
  return openModel(bytesSource(bytes, `stories260K-${target}.gguf`));
}

/**
 * Inspecting a GGUF by URL reads only its header: a local server (cli/static-server.ts, with Range
 * support) counts every request and byte it serves. Two files: the real stories260K, and a
 * Llama-3.1-8B-shaped Q4_0 file (128k-token vocabulary, ~4.5 GB) whose tensor data exists only as
 * a range the server generates on demand — nothing big is on disk, and nothing is downloaded.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveStatic, type Served, type StaticServer, type VirtualFile } from '../../../cli/static-server.ts';
import { readModelConfig } from '../../../src/model/config.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { testModelParts } from '../../../src/model/gguf/synthetic.ts';
import { GGMLType, meta, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { urlSource } from '../../../src/model/gguf/url-source.ts';
import { ggufLayout, type TensorSpec } from '../../../src/model/gguf/writer.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { inspectSource } from '../../../src/measure/inspect.ts';
import { globalTensorSpecs, layerTensorSpecs, type ShapeConfig } from '../../../src/model/tensors.ts';
import { STORIES_GGUF } from '../model/paths.ts';
import { expectTokenscopeError } from '../model/helpers.ts';
import { hostileServer, type HostileServer } from '../model/hostile-server.ts';

/** The reader's first read: 1 MiB (src/model/gguf/reader.ts); later reads grow from there. */
const READER_FIRST_WINDOW = 1 << 20;

/** A Llama-3.1-8B-shaped Q4_0 header (norms F32): the real shapes, a generated 128,256-token vocabulary. */
function bigHeader(): { header: Uint8Array; fileSize: number } {
  const vocabSize = 128256;
  const { metadata } = testModelParts({ architecture: 'llama', dim: 32, hiddenDim: 32, nLayers: 1, nHeads: 4, vocabSize, contextLength: 8192 });
  const shape: ShapeConfig = { dim: 4096, hiddenDim: 14336, nHeads: 32, nKvHeads: 8, headDim: 128, vocabSize };
  const set = (key: string, value: GGUFValue) => metadata.set(`llama.${key}`, value);
  set('embedding_length', meta.u32(shape.dim));
  set('feed_forward_length', meta.u32(shape.hiddenDim));
  set('block_count', meta.u32(32));
  set('attention.head_count', meta.u32(shape.nHeads));
  set('attention.head_count_kv', meta.u32(shape.nKvHeads));
  set('rope.dimension_count', meta.u32(shape.headDim));
  const tensors: TensorSpec[] = [];
  const add = (spec: { name: string; dims: number[] }) =>
    tensors.push({ name: spec.name, dims: spec.dims, type: spec.dims.length > 1 ? GGMLType.Q4_0 : GGMLType.F32 });
  const g = globalTensorSpecs(shape);
  [g.tokenEmbd, g.outputNorm, g.output].forEach(add);
  for (let l = 0; l < 32; l++) {
    for (const [role, spec] of Object.entries(layerTensorSpecs(shape, l))) if (!['bq', 'bk', 'bv'].includes(role)) add(spec);
  }
  const { header, fileSize } = ggufLayout(metadata, tensors);
  return { header, fileSize };
}

/** The header's bytes, then zeros: any range of the file, made when asked. */
function virtualFile(header: Uint8Array, size: number): VirtualFile {
  return {
    size,
    bytes(start, end) {
      const out = new Uint8Array(end - start + 1);
      if (start < header.length) out.set(header.subarray(start, Math.min(end + 1, header.length)));
      return out;
    },
  };
}

describe('inspecting a GGUF by URL reads the header only', () => {
  let server: StaticServer;
  const served: Served[] = [];
  const big = bigHeader();
  const servedFor = (path: string) => served.filter((s) => s.path === path);

  beforeAll(async () => {
    server = await serveStatic(resolve(__dirname), {
      extra: { '/models/': STORIES_GGUF ? dirname(STORIES_GGUF) : resolve(__dirname) },
      virtual: { '/big/llama-8b-q4_0.gguf': virtualFile(big.header, big.fileSize) },
      onServe: (s) => served.push(s),
    });
  });
  afterAll(() => server?.close());

  it('a 4.5 GB Llama-3.1-8B-shaped Q4_0 file: a few MB of Range requests, all before the tensor data', async () => {
    const url = `${server.url}big/llama-8b-q4_0.gguf`;
    const ins = await inspectSource(await urlSource(url), {
      limits: { maxBufferSize: 2 ** 32, maxStorageBufferBindingSize: 2 ** 31 },
      readRoofGBs: 1000,
    });
    const requests = servedFor('/big/llama-8b-q4_0.gguf');
    const bytes = requests.reduce((n, s) => n + s.bytes, 0);
    // The header really is bigger than the reader's first window, so the reader had to grow it.
    expect(ins.headerBytes).toBe(big.header.length);
    expect(ins.headerBytes).toBeGreaterThan(READER_FIRST_WINDOW);
    expect(requests.every((s) => s.status === 206 && s.range !== null)).toBe(true);
    for (const s of requests) expect(Number(/^bytes=(\d+)-/.exec(s.range!)![1])).toBeLessThan(ins.headerBytes);
    expect(bytes).toBeLessThanOrEqual(2 * ins.headerBytes + READER_FIRST_WINDOW);
    expect(bytes / big.fileSize).toBeLessThan(0.005);

    expect(ins.fileBytes).toBe(big.fileSize);
    expect(ins.architecture).toBe('llama');
    expect(ins.unsupported).toBeNull();
    expect(ins.parameters).toBeGreaterThan(8.0e9);
    expect(ins.parameters).toBeLessThan(8.1e9);
    expect(ins.types.map((t) => t.type)).toEqual(['Q4_0', 'F32']);
    expect(ins.types[0].share).toBeGreaterThan(0.99);
    expect(ins.memory!.problem).toBeNull();
    // 1000 GB/s over ~4.2 GB per token (the untied embedding table gathered, not read).
    expect(ins.decode!.tokensPerS!).toBeGreaterThan(200);
    expect(ins.decode!.tokensPerS!).toBeLessThan(300);
  });

  it.skipIf(!STORIES_GGUF || !existsSync(STORIES_GGUF))('stories260K: the header inspected over HTTP equals the one read from disk', async () => {
    const before = servedFor('/models/stories260K.gguf').length;
    const ins = await inspectSource(await urlSource(`${server.url}models/stories260K.gguf`));
    const requests = servedFor('/models/stories260K.gguf').slice(before);
    const bytes = requests.reduce((n, s) => n + s.bytes, 0);
    const { readFile } = await import('node:fs/promises');
    const file = new Uint8Array(await readFile(STORIES_GGUF!));
    const local = await readGGUF(bytesSource(file));
    expect(ins.headerBytes).toBe(local.dataOffset);
    expect(ins.parameters).toBe(local.tensors.reduce((n, t) => n + t.dims.reduce((a, b) => a * b, 1), 0));
    expect(ins.contextLength).toBe(readModelConfig(local).contextLength);
    // A probe byte, then the reader's first window: never the rest of the file.
    expect(requests.every((s) => s.status === 206)).toBe(true);
    expect(requests.length).toBe(2);
    expect(bytes).toBe(1 + Math.min(READER_FIRST_WINDOW, file.length));
    expect(bytes).toBeLessThan(file.length);
  });
});

describe('inspecting by URL against hostile servers reads no more than the header budget, in seconds', () => {
  let server: HostileServer;
  beforeAll(async () => {
    server = await hostileServer();
  });
  afterAll(() => server?.close());
  /** `--inspect URL`'s source with short limits (the defaults are 8 s). */
  const inspectUrl = async (path: string) => inspectSource(await urlSource(server.url(path), { rangesOnly: true, headerTimeoutMs: 1500, idleTimeoutMs: 300 }));

  it.each([
    ['/silent', /did not answer within 1\.5 s/],
    ['/stall-206', /stalled sending the range of 1048576 bytes at byte 0: 0 bytes in the last 0\.3 s/],
    ['/drip-206', /stalled sending the range of 1048576 bytes at byte 0: \d+ bytes in the last 0\.3 s/],
    ['/endless-206', /sent more than the range of 1048576 bytes at byte 0 holds/],
    ['/endless', /does not serve byte ranges/],
    ['/huge', /does not serve byte ranges/],
    ['/gzip-bomb', /compressed \(Content-Encoding: gzip\)/],
    ['/loop', /redirects in a loop/],
  ])('%s ends with a clear error', async (path, message) => {
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    await expectTokenscopeError(() => inspectUrl(path), 'io', message);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(256 << 20);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readModelConfig } from '../../../src/model/config.ts';
import { fileSource, type FileSource } from '../../../src/model/gguf/node-source.ts';
import { readGGUF, type GGUF } from '../../../src/model/gguf/reader.ts';
import { blobSource, bytesSource, type ByteSource } from '../../../src/model/gguf/source.ts';
import { buildTestModel } from '../../../src/model/gguf/synthetic.ts';
import { GGMLType, GGUFValueType as T, meta, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';
import { modelTensors } from '../../../src/model/tensors.ts';
import { expectLlamaCppLayout, expectTokenscopeError } from './helpers.ts';
import { STORIES_GGUF, storiesTitle } from './paths.ts';

describe.skipIf(!STORIES_GGUF)(storiesTitle('stories260K.gguf'), () => {
  let source: FileSource;
  let gguf: GGUF;
  beforeAll(async () => {
    source = await fileSource(STORIES_GGUF!);
    gguf = await readGGUF(source);
  });
  afterAll(() => source.close());

  it('has the header its README describes', () => {
    expect(source.size).toBe(1_185_376);
    expect({ version: gguf.version, alignment: gguf.alignment, tensors: gguf.tensors.length }).toEqual({ version: 3, alignment: 32, tensors: 48 });
    expect(gguf.tensors.every((t) => t.type === GGMLType.F32)).toBe(true);
    expect(gguf.dataOffset % 32).toBe(0);
  });

  it('reads into the config of its README', () => {
    expect(readModelConfig(gguf)).toEqual({
      architecture: 'llama',
      name: 'llama',
      dim: 64,
      hiddenDim: 172,
      nLayers: 5,
      nHeads: 8,
      nKvHeads: 4,
      headDim: 8,
      vocabSize: 512,
      contextLength: 2048,
      ropeTheta: 10000,
      ropeDim: 8,
      ropeStyle: 'adjacent',
      rmsEps: Math.fround(1e-5),
      qkvBias: false,
      tiedEmbeddings: false,
      bosId: 1,
      eosId: 2,
      ropeFreqFactors: [],
      ropeFreqScale: 1,
      ropeThetaSliding: 10000,
      qkNorm: false,
      embedScale: 1,
      activation: 'silu',
      postNorms: false,
      slidingWindow: 0,
      slidingPattern: 0,
    });
  });

  it('lays the tensors out as llama.cpp requires, the last ending at the file end', () => {
    expectLlamaCppLayout(gguf);
    const last = gguf.tensors[gguf.tensors.length - 1];
    expect(last.offset + last.byteSize).toBe(source.size);
  });

  it('collects the tensors by role with GGUF dims', () => {
    const config = readModelConfig(gguf);
    const t = modelTensors(gguf, config);
    expect(t.layers).toHaveLength(5);
    expect(t.tokenEmbd).toMatchObject({ name: 'token_embd.weight', dims: [64, 512], byteSize: 64 * 512 * 4 });
    expect(t.output.name).toBe('output.weight');
    expect(t.layers[4].wk).toMatchObject({ name: 'blk.4.attn_k.weight', dims: [64, 32] });
    expect(t.layers[0].wDown.dims).toEqual([172, 64]);
    expect(t.layers[0].bq).toBeUndefined();
  });

  it('reads one tensor on demand: output.weight is a copy of token_embd.weight', async () => {
    const embd = await gguf.tensorBytes('token_embd.weight');
    const output = await gguf.tensorBytes('output.weight');
    expect(embd.length).toBe(131072);
    expect(Buffer.from(output).equals(Buffer.from(embd))).toBe(true);
    const f = new Float32Array(embd.slice().buffer);
    expect(f.some((v) => v !== 0)).toBe(true);
  });
});

describe('metadata values', () => {
  const values: [string, GGUFValue][] = [
    ['u8', meta.u8(255)],
    ['i8', meta.i8(-128)],
    ['u16', meta.u16(65535)],
    ['i16', meta.i16(-32768)],
    ['u32', meta.u32(4294967295)],
    ['i32', meta.i32(-2147483648)],
    ['u64', meta.u64(2n ** 64n - 1n)],
    ['i64', meta.i64(-(2n ** 63n))],
    ['f32', meta.f32(Math.fround(0.1))],
    ['f64', meta.f64(Math.PI)],
    ['bool.true', meta.bool(true)],
    ['bool.false', meta.bool(false)],
    ['string.empty', meta.str('')],
    ['string.unicode', meta.str('héllo ▁ 😀 日本')],
    ['array.u8', { type: T.ARRAY, itemType: T.UINT8, items: Uint8Array.of(0, 1, 255) }],
    ['array.i16', { type: T.ARRAY, itemType: T.INT16, items: Int16Array.of(-1, 2) }],
    ['array.u64', { type: T.ARRAY, itemType: T.UINT64, items: BigUint64Array.of(0n, 2n ** 63n) }],
    ['array.f64', { type: T.ARRAY, itemType: T.FLOAT64, items: Float64Array.of(-0.5, 1e300) }],
    ['array.bool', { type: T.ARRAY, itemType: T.BOOL, items: [true, false, true] }],
    ['array.string', meta.strings(['a', '', '<0x0A>'])],
    ['array.empty', meta.f32s(new Float32Array(0))],
    [
      'array.nested',
      {
        type: T.ARRAY,
        itemType: T.ARRAY,
        items: [meta.i32s(Int32Array.of(1, -2)), { type: T.ARRAY, itemType: T.ARRAY, items: [meta.strings(['deep'])] }, meta.strings([])],
      },
    ],
  ];

  it('round-trip through the writer and the reader with their types', async () => {
    const bytes = encodeGGUF(new Map(values), [{ name: 't', type: GGMLType.F32, dims: [2], data: new Uint8Array(8) }]);
    const gguf = await readGGUF(bytesSource(bytes));
    expect([...gguf.metadata.keys()]).toEqual(values.map(([k]) => k));
    expect(Object.fromEntries(gguf.metadata)).toEqual(Object.fromEntries(values));
  });

  it('refuses values that do not fit their type, duplicate tensors and short data', () => {
    const tensor = { name: 't', type: GGMLType.F32, dims: [2], data: new Uint8Array(8) };
    expect(() => encodeGGUF(new Map([['k', meta.u8(256)]]), [])).toThrow(/does not fit/);
    expect(() => encodeGGUF(new Map([['k', meta.i32(1.5)]]), [])).toThrow(/does not fit/);
    expect(() => encodeGGUF(new Map(), [tensor, tensor])).toThrow(/listed twice/);
    expect(() => encodeGGUF(new Map(), [{ ...tensor, data: new Uint8Array(7) }])).toThrow(/needs 8 bytes, got 7/);
    expect(() => encodeGGUF(new Map(), [{ ...tensor, type: GGMLType.Q8_0 }])).toThrow(/not a multiple of the Q8_0 block size/);
    expect(() => encodeGGUF(new Map([['general.alignment', meta.u32(48)]]), [])).toThrow(/power of two/);
  });

  it('pads each tensor to general.alignment', async () => {
    const data = new Uint8Array(12).fill(7);
    const bytes = encodeGGUF(new Map([['general.alignment', meta.u32(64)]]), [
      { name: 'a', type: GGMLType.F32, dims: [3], data },
      { name: 'b', type: GGMLType.F32, dims: [3], data },
    ]);
    const gguf = await readGGUF(bytesSource(bytes));
    expect(gguf.alignment).toBe(64);
    expect(gguf.tensors.map((t) => t.offset - gguf.dataOffset)).toEqual([0, 64]);
    expect(gguf.dataOffset % 64).toBe(0);
    expectLlamaCppLayout(gguf);
    expect(bytes.length).toBe(gguf.dataOffset + 128);
  });
});

/** A source that records every read, to see what the reader fetches. */
function countingSource(inner: ByteSource): ByteSource & { reads: [number, number][] } {
  const reads: [number, number][] = [];
  return {
    size: inner.size,
    name: inner.name,
    reads,
    read(offset, length) {
      reads.push([offset, length]);
      return inner.read(offset, length);
    },
  };
}

describe('incremental reading', () => {
  it('reads only the header up front, then exactly one tensor per tensorBytes', async () => {
    const model = buildTestModel({ architecture: 'llama', dim: 256, hiddenDim: 512, nLayers: 2, nHeads: 4, vocabSize: 2048 });
    const source = countingSource(bytesSource(model));
    const gguf = await readGGUF(source);
    expect(source.reads).toEqual([[0, 1 << 20]]);
    expect(model.length).toBeGreaterThan(4 << 20);
    const t = gguf.tensor('blk.1.ffn_up.weight')!;
    await gguf.tensorBytes(t);
    expect(source.reads[1]).toEqual([t.offset, 256 * 512 * 4]);
  });

  it('grows the window for a header larger than the first read, without reading it twice', async () => {
    const big = meta.strings(Array.from({ length: 40_000 }, (_, i) => `token-${i}-${'x'.repeat(40)}`)); // ~2.3 MB
    const model = encodeGGUF(
      new Map([
        ['tokenizer.ggml.tokens', big],
        ['big', big],
      ]),
      [{ name: 't', type: GGMLType.F32, dims: [4], data: new Uint8Array(16) }],
    );
    const source = countingSource(bytesSource(model));
    const gguf = await readGGUF(source);
    expect(gguf.metadata.get('tokenizer.ggml.tokens')).toEqual(big);
    // A long array nothing reads is counted, not kept.
    expect(gguf.metadata.get('big')).toEqual({ type: T.ARRAY, itemType: T.STRING, count: 40_000 });
    // Each read starts where the previous one ended: no byte is read twice.
    expect(source.reads.slice(1).map(([o]) => o)).toEqual(source.reads.slice(0, -1).map(([o, l]) => o + l));
    expect(source.reads.length).toBeLessThanOrEqual(4);
    expect(source.reads.reduce((n, [, l]) => n + l, 0)).toBe(model.length);
    await expectTokenscopeError(() => readGGUF(bytesSource(model), { maxHeaderBytes: 1 << 20 }), 'model-format', /header needs more than 1048576 bytes/);
  });

  it('refuses tensorBytes of a tensor the file does not have', async () => {
    const gguf = await readGGUF(bytesSource(buildTestModel({ architecture: 'llama', dim: 32, hiddenDim: 32, nLayers: 1, nHeads: 2, vocabSize: 260 })));
    await expectTokenscopeError(() => gguf.tensorBytes('nope.weight'), 'bad-input', /no tensor 'nope.weight'/);
  });
});

describe('byte sources', () => {
  const data = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);

  it('serve the same ranges from memory, a Blob and a file', async () => {
    const sources = [bytesSource(data), bytesSource(data.slice().buffer), blobSource(new Blob([data])), blobSource(new File([data], 'm.gguf'))];
    expect(sources.map((s) => [s.size, s.name])).toEqual([
      [1000, 'memory'],
      [1000, 'memory'],
      [1000, 'blob'],
      [1000, 'm.gguf'],
    ]);
    for (const s of sources) {
      expect([...(await s.read(250, 5))]).toEqual([250, 0, 1, 2, 3]);
      expect((await s.read(1000, 0)).length).toBe(0);
      await expectTokenscopeError(() => s.read(999, 2), 'io', /outside/);
    }
  });

  it('reads a file on disk by ranges', async () => {
    const path = STORIES_GGUF ?? new URL(import.meta.url).pathname;
    const whole = readFileSync(path);
    const s = await fileSource(path);
    try {
      expect(s.size).toBe(whole.length);
      expect(Buffer.from(await s.read(100, 300)).equals(whole.subarray(100, 400))).toBe(true);
      await expectTokenscopeError(() => s.read(whole.length - 1, 2), 'io', /outside/);
    } finally {
      await s.close();
    }
    await expectTokenscopeError(() => fileSource('/nonexistent/model.gguf'), 'io', /cannot open/);
  });
});

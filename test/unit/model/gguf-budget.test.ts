/**
 * Hostile headers of hundreds of MB, synthesized on demand (nothing on disk): each is refused by
 * the metadata budget after reading a bounded prefix, in bounded time and memory, with a message
 * that says which limit it hit. Before the budget, 263 MB of empty arrays took 413 s and aborted
 * V8 out of memory.
 */
import { describe, expect, it } from 'vitest';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import type { ByteSource } from '../../../src/model/gguf/source.ts';
import { GGUF_MAGIC, GGUFValueType as T } from '../../../src/model/gguf/types.ts';
import { expectTokenscopeError } from './helpers.ts';

const MB = 1 << 20;

/** GGUF v3 preamble: magic, version, tensor count, metadata count. */
function preamble(kvCount: bigint, rest: (view: DataView, at: number) => number = () => 0): Uint8Array {
  const bytes = new Uint8Array(128);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, GGUF_MAGIC, true);
  view.setUint32(4, 3, true);
  view.setBigUint64(8, 0n, true);
  view.setBigUint64(16, kvCount, true);
  return bytes.subarray(0, 24 + rest(view, 24));
}

function putKey(view: DataView, at: number, key: string): number {
  view.setBigUint64(at, BigInt(key.length), true);
  for (let i = 0; i < key.length; i++) view.setUint8(at + 8 + i, key.charCodeAt(i));
  return 8 + key.length;
}

/**
 * A file of `size` bytes: `head`, then unit 0, unit 1, … each `unitSize` bytes written by
 * `unit(view, at, index)`. Bytes are made when read; the source also tracks how many were read.
 */
function synthesized(size: number, head: Uint8Array, unitSize: number, unit: (view: DataView, at: number, index: number) => void) {
  const scratch = new Uint8Array(unitSize);
  const scratchView = new DataView(scratch.buffer);
  const source: ByteSource & { bytesRead: number; peakMemory: number } = {
    size,
    name: `hostile-${size / MB}MB.gguf`,
    bytesRead: 0,
    peakMemory: 0,
    read(offset, length) {
      source.bytesRead += length;
      const out = new Uint8Array(length);
      const headPart = head.subarray(Math.min(offset, head.length), Math.min(offset + length, head.length));
      out.set(headPart, 0);
      for (let pos = Math.max(offset, head.length); pos < offset + length;) {
        const index = Math.floor((pos - head.length) / unitSize);
        const unitStart = head.length + index * unitSize;
        scratch.fill(0);
        unit(scratchView, 0, index);
        const from = pos - unitStart;
        const n = Math.min(unitSize - from, offset + length - pos);
        out.set(scratch.subarray(from, from + n), pos - offset);
        pos += n;
      }
      const m = process.memoryUsage();
      source.peakMemory = Math.max(source.peakMemory, m.heapUsed + m.arrayBuffers);
      return Promise.resolve(out);
    },
  };
  return source;
}

const hex8 = (i: number) => i.toString(16).padStart(8, '0');

const headers = {
  /** The case: one key holding millions of empty nested arrays (12 bytes each). */
  emptyArrays: (size: number) => {
    const head = preamble(1n, (v, at) => {
      const n = putKey(v, at, 'x');
      v.setUint32(at + n, T.ARRAY, true);
      v.setUint32(at + n + 4, T.ARRAY, true);
      v.setBigUint64(at + n + 8, BigInt(Math.floor((size - 64) / 12)), true);
      return n + 16;
    });
    return synthesized(size, head, 12, (v, at) => v.setUint32(at, T.UINT8, true));
  },
  /** Millions of tiny keys with a one-byte value each. */
  manyKeys: (size: number) =>
    synthesized(size, preamble(BigInt(Math.floor((size - 24) / 21))), 21, (v, at, i) => {
      const n = putKey(v, at, hex8(i));
      v.setUint32(at + n, T.UINT8, true);
    }),
  /** Many keys (under the key limit), each an array of 255 empty strings: the item count adds up. */
  stringArrays: (size: number) =>
    synthesized(size, preamble(60_000n), 8 + 8 + 16 + 255 * 8, (v, at, i) => {
      const n = putKey(v, at, hex8(i));
      v.setUint32(at + n, T.ARRAY, true);
      v.setUint32(at + n + 4, T.STRING, true);
      v.setBigUint64(at + n + 8, 255n, true);
    }),
  /** A tokenizer array (kept: the engine reads it) of more strings than the item budget. */
  hugeVocabulary: (size: number) =>
    synthesized(
      size,
      preamble(1n, (v, at) => {
        const n = putKey(v, at, 'tokenizer.ggml.tokens');
        v.setUint32(at + n, T.ARRAY, true);
        v.setUint32(at + n + 4, T.STRING, true);
        v.setBigUint64(at + n + 8, BigInt(Math.floor((size - 64) / 16)), true);
        return n + 16;
      }),
      16,
      (v, at, i) => {
        v.setBigUint64(at, 8n, true);
        for (let b = 0; b < 8; b++) v.setUint8(at + 8 + b, 0x61 + ((i >> (3 * b)) & 7));
      },
    ),
  /** Many string values of 2000 bytes: the bytes budget. */
  longStrings: (size: number) =>
    synthesized(size, preamble(60_000n), 2020, (v, at, i) => {
      const n = putKey(v, at, hex8(i));
      v.setUint32(at + n, T.STRING, true);
      v.setBigUint64(at + n + 4, BigInt(2020 - n - 12), true);
      new Uint8Array(v.buffer, at + n + 12, 2020 - n - 12).fill(0x61);
    }),
  /** One string that claims most of the file. */
  oneHugeString: (size: number) =>
    synthesized(
      size,
      preamble(1n, (v, at) => {
        const n = putKey(v, at, 's');
        v.setUint32(at + n, T.STRING, true);
        v.setBigUint64(at + n + 4, BigInt(size - 64), true);
        return n + 12;
      }),
      4096,
      () => {},
    ),
};

describe('metadata budget', () => {
  const cases: [keyof typeof headers, RegExp][] = [
    ['emptyArrays', /more than 2097152 items .*reached at 'x'/],
    ['manyKeys', /declares \d+ keys, more than 65536/],
    ['stringArrays', /more than 2097152 items .*reached at '0[0-9a-f]+'/],
    ['hugeVocabulary', /more than 2097152 items .*reached at 'tokenizer.ggml.tokens'/],
    ['longStrings', /more than 67108864 bytes of keys, strings and arrays/],
    ['oneHugeString', /more than 67108864 bytes .*reached at 's'/],
  ];
  for (const [pattern, message] of cases) {
    for (const size of [300 * MB, 600 * MB]) {
      it(`refuses ${pattern} (${size / MB} MB) after a bounded read, in bounded time and memory`, async () => {
        const source = headers[pattern](size);
        const before = process.memoryUsage();
        const started = performance.now();
        const error = await expectTokenscopeError(() => readGGUF(source), 'model-format', message);
        const ms = performance.now() - started;
        expect(error.message).toContain(source.name);
        expect(error.hint).toMatch(/raise maxMetadata(Items|Bytes)|damaged/);
        // What is read and held is bounded by the budget (64 MiB of bytes), not by the file.
        expect(source.bytesRead).toBeLessThan(80 * MB);
        expect(source.peakMemory - (before.heapUsed + before.arrayBuffers)).toBeLessThan(256 * MB);
        // A hang guard, far above the measured times (tens to hundreds of ms), not a speed test.
        expect(ms).toBeLessThan(20_000);
        console.info(`${pattern} ${size / MB} MB: refused in ${ms.toFixed(0)} ms after reading ${(source.bytesRead / MB).toFixed(1)} MB`);
      });
    }
  }

  it('the budget is an option: a tighter limit refuses smaller headers by name', async () => {
    const source = headers.stringArrays(2 * MB);
    await expectTokenscopeError(() => readGGUF(source, { maxMetadataItems: 1000 }), 'model-format', /more than 1000 items/);
    await expectTokenscopeError(() => readGGUF(headers.longStrings(2 * MB), { maxMetadataBytes: 1000 }), 'model-format', /more than 1000 bytes/);
  });
});

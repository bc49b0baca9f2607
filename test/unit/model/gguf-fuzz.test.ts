/**
 * Property-based fuzzing of the GGUF reader and the config on top of it: random byte mutations,
 * and structure-aware ones (every count, length, type and offset field of the header set to edge
 * values, truncations, splices) of a tiny model written by our writer and of stories260K. Each
 * input must give a valid model or a TokenscopeError — never another exception, a hang or a
 * runaway allocation. Runs are seeded and bounded, so a failure replays.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenscopeError } from '../../../src/errors.ts';
import { readModelConfig } from '../../../src/model/config.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { buildTestModel } from '../../../src/model/gguf/synthetic.ts';
import { GGUFValueType as T, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';
import { STORIES_GGUF } from './paths.ts';

const tiny = buildTestModel({ architecture: 'llama', dim: 32, hiddenDim: 64, nLayers: 1, nHeads: 4, nKvHeads: 2, vocabSize: 260 });
// The real file where it is present (paths.ts); the tiny model written by our writer always.
const stories = STORIES_GGUF ? new Uint8Array(readFileSync(STORIES_GGUF)) : undefined;

/** Read, then take the config: the outcome must be a model or a typed error, within the time bound. */
async function readOrRefuse(bytes: Uint8Array<ArrayBuffer>): Promise<'read' | 'refused'> {
  const started = performance.now();
  try {
    const gguf = await readGGUF(bytesSource(bytes, 'fuzz.gguf'));
    readModelConfig(gguf);
    return 'read';
  } catch (e) {
    if (!(e instanceof TokenscopeError)) throw new Error(`not a TokenscopeError: ${String(e)}`, { cause: e });
    expect(e.message).toMatch(/fuzz\.gguf/);
    return 'refused';
  } finally {
    // A hang guard far above the few ms one read takes, not a speed test.
    expect(performance.now() - started).toBeLessThan(5_000);
  }
}

/** Offsets and widths of every structural field of a GGUF header (counts, lengths, types, dims, offsets). */
function headerFields(bytes: Uint8Array): { at: number; width: 4 | 8 }[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fields: { at: number; width: 4 | 8 }[] = [
    { at: 4, width: 4 },
    { at: 8, width: 8 },
    { at: 16, width: 8 },
  ];
  let pos = 24;
  const u32 = () => {
    fields.push({ at: pos, width: 4 });
    pos += 4;
    return view.getUint32(pos - 4, true);
  };
  const u64 = () => {
    fields.push({ at: pos, width: 8 });
    pos += 8;
    return Number(view.getBigUint64(pos - 8, true));
  };
  const string = () => {
    const length = u64();
    pos += length;
  };
  const SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const value = (type: number): void => {
    if (type === T.STRING) return string();
    if (type === T.ARRAY) {
      const itemType = u32();
      const n = u64();
      if (itemType === T.STRING || itemType === T.ARRAY) for (let i = 0; i < n; i++) value(itemType);
      else pos += n * SIZE[itemType];
      return;
    }
    pos += SIZE[type];
  };
  const tensors = Number(view.getBigUint64(8, true));
  const kvs = Number(view.getBigUint64(16, true));
  for (let i = 0; i < kvs; i++) {
    string();
    value(u32());
  }
  for (let i = 0; i < tensors; i++) {
    string();
    const nDims = u32();
    for (let d = 0; d < nDims; d++) u64();
    u32();
    u64();
  }
  return fields;
}

const EDGE_U64 = [0n, 1n, 2n, 3n, 255n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n];
const EDGE_U32 = [0, 1, 2, 4, 8, 9, 12, 13, 99, 2 ** 31, 2 ** 32 - 1];

function fieldMutation(bytes: Uint8Array<ArrayBuffer>) {
  const fields = headerFields(bytes);
  return fc
    .array(
      fc.record({
        field: fc.constantFrom(...fields),
        u64: fc.oneof(fc.constantFrom(...EDGE_U64), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })),
        u32: fc.oneof(fc.constantFrom(...EDGE_U32), fc.nat({ max: 2 ** 32 - 1 })),
      }),
      { minLength: 1, maxLength: 3 },
    )
    .map((edits) => {
      const copy = bytes.slice();
      const view = new DataView(copy.buffer);
      for (const { field, u64, u32 } of edits) {
        if (field.width === 8) view.setBigUint64(field.at, u64, true);
        else view.setUint32(field.at, u32, true);
      }
      return copy;
    });
}

function byteMutation(bytes: Uint8Array<ArrayBuffer>, headerEnd: number) {
  return fc.array(fc.tuple(fc.nat({ max: headerEnd - 1 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 16 }).map((edits) => {
    const copy = bytes.slice();
    for (const [at, b] of edits) copy[at] = b;
    return copy;
  });
}

/** Cut at a point, or splice a random run of bytes into the header. */
function spliceMutation(bytes: Uint8Array<ArrayBuffer>, headerEnd: number) {
  return fc.oneof(
    fc.nat({ max: bytes.length }).map((n) => bytes.slice(0, n)),
    fc.tuple(fc.nat({ max: headerEnd }), fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat({ max: 64 })).map(([at, insert, drop]) => {
      const out = new Uint8Array(bytes.length + insert.length);
      out.set(bytes.subarray(0, at), 0);
      out.set(insert, at);
      out.set(bytes.subarray(Math.min(bytes.length, at + drop)), at + insert.length);
      return out.subarray(0, bytes.length + insert.length - Math.min(drop, bytes.length - at)).slice();
    }),
  );
}

async function headerEnd(bytes: Uint8Array<ArrayBuffer>): Promise<number> {
  return (await readGGUF(bytesSource(bytes))).dataOffset;
}

describe.each([['a tiny model written by our writer', tiny] as const, ...(stories ? [['stories260K', stories] as const] : [])])(
  'fuzzing the reader on %s',
  (_name, base) => {
    const runs = { numRuns: 150, seed: 15, endOnFailure: true } as const;
    const heapBefore = process.memoryUsage().heapUsed;

    it('random bytes in the header: a model or a TokenscopeError', async () => {
      const end = await headerEnd(base);
      await fc.assert(
        fc.asyncProperty(byteMutation(base, end), async (bytes) => {
          await readOrRefuse(bytes);
        }),
        runs,
      );
    });

    it('every count, length, type and offset field set to edge values: a model or a TokenscopeError', async () => {
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(fieldMutation(base), async (bytes) => {
          if ((await readOrRefuse(bytes)) === 'refused') refused++;
        }),
        runs,
      );
      expect(refused).toBeGreaterThan(runs.numRuns / 2);
    });

    it('truncations and splices: a model or a TokenscopeError, and memory stays flat', async () => {
      const end = await headerEnd(base);
      await fc.assert(
        fc.asyncProperty(spliceMutation(base, end), async (bytes) => {
          await readOrRefuse(bytes);
        }),
        runs,
      );
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(512 << 20);
    });
  },
);

/** Any metadata a writer can produce reads back as written (arrays nothing reads may be counted instead). */
describe('generated metadata round-trips', () => {
  const scalar: fc.Arbitrary<GGUFValue> = fc.oneof(
    fc.integer({ min: 0, max: 255 }).map((value) => ({ type: T.UINT8, value })),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((value) => ({ type: T.INT32, value })),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((value) => ({ type: T.UINT64, value })),
    fc.double({ noNaN: true }).map((value) => ({ type: T.FLOAT64, value })),
    fc.boolean().map((value) => ({ type: T.BOOL, value })),
    fc.string({ maxLength: 20 }).map((value) => ({ type: T.STRING, value })),
  );
  const array: fc.Arbitrary<GGUFValue> = fc.letrec<{ arr: GGUFValue }>((tie) => ({
    arr: fc.oneof(
      { depthSize: 'small' },
      fc.array(fc.string({ maxLength: 8 }), { maxLength: 8 }).map((items) => ({ type: T.ARRAY, itemType: T.STRING, items })),
      fc.array(fc.float({ noNaN: true }), { maxLength: 8 }).map((items) => ({ type: T.ARRAY, itemType: T.FLOAT32, items: Float32Array.from(items) })),
      fc.array(tie('arr'), { maxLength: 3 }).map((items) => ({ type: T.ARRAY, itemType: T.ARRAY, items: items as never })),
    ),
  })).arr;

  it('reads back exactly what was written', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), fc.oneof(scalar, array)), { selector: ([k]) => k, maxLength: 12 }),
        async (entries) => {
          const metadata = new Map(entries.filter(([k]) => k !== 'general.alignment'));
          let bytes: Uint8Array<ArrayBuffer>;
          try {
            bytes = encodeGGUF(metadata, []);
          } catch (e) {
            // The writer refuses what cannot be written (e.g. nesting past the reader's limit); typed.
            expect(e).toBeInstanceOf(TokenscopeError);
            return;
          }
          const gguf = await readGGUF(bytesSource(bytes));
          expect(Object.fromEntries(gguf.metadata)).toEqual(Object.fromEntries(metadata));
        },
      ),
      { numRuns: 100, seed: 15 },
    );
  });
});

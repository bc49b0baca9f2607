import { describe, expect, it } from 'vitest';
import { isTokenscopeError } from '../../../src/errors.ts';
import { checkWeightShape, packedLayout, packWeight, rowMultiple, shardRows, weightBytes, WEIGHT_FORMATS } from '../../../src/kernels/weights.ts';
import { randomTensor, unpackToGguf } from '../../gpu/weights-reference.ts';

describe('weight packing', () => {
  it.each([
    ['f32', 4096 * 4096 * 4],
    ['f16', 4096 * 4096 * 2],
    ['q8_0', (4096 * 4096 * 34) / 32],
    ['q4_0', (4096 * 4096 * 18) / 32],
  ] as const)('%s of 4096² is %i bytes (GGUF size: quants + scales)', (format, bytes) => {
    expect(weightBytes(format, 4096, 4096)).toBe(bytes);
  });

  it('lays out quants first, then f16 scales two per word', () => {
    expect(packedLayout('q4_0', 3, 64)).toEqual({ valueWords: 24, scaleBase: 24, scaleWords: 3, bytes: 112 });
    expect(packedLayout('q8_0', 1, 32)).toEqual({ valueWords: 8, scaleBase: 8, scaleWords: 1, bytes: 48 });
    expect(packedLayout('f16', 2, 4)).toEqual({ valueWords: 4, scaleBase: 4, scaleWords: 0, bytes: 16 });
  });

  it('moves each q4_0 block: its scale to the scale region, its 16 bytes to 16-byte slot b', () => {
    const gguf = new Uint8Array(2 * 18);
    for (let i = 0; i < gguf.length; i++) gguf[i] = i;
    const packed = packWeight('q4_0', 1, 64, gguf);
    expect(Array.from(packed.subarray(0, 16))).toEqual(Array.from({ length: 16 }, (_, j) => 2 + j));
    expect(Array.from(packed.subarray(16, 32))).toEqual(Array.from({ length: 16 }, (_, j) => 20 + j));
    expect(Array.from(packed.subarray(32, 36))).toEqual([0, 1, 18, 19]);
  });

  it.each(WEIGHT_FORMATS)('%s round-trips through the packed layout', (format) => {
    const cols = rowMultiple(format) === 256 ? 512 : 96;
    const { gguf } = randomTensor(format, 7, cols, 1);
    const packed = packWeight(format, 7, cols, gguf);
    expect(packed.byteLength).toBeLessThan(gguf.byteLength + 16 + 4); // same bytes, up to padding and a half-used scale word
    expect(unpackToGguf(format, 7, cols, packed)).toEqual(gguf);
  });

  it('rejects truncated data and unsupported widths with typed errors', () => {
    expect(() => packWeight('q8_0', 2, 32, new Uint8Array(67))).toThrow(expect.objectContaining({ code: 'model-format' }));
    for (const [format, cols] of [
      ['q4_0', 48],
      ['f16', 6],
      ['f32', 0],
    ] as const) {
      let error: unknown;
      try {
        checkWeightShape(format, 4, cols, 'w');
      } catch (e) {
        error = e;
      }
      expect(isTokenscopeError(error, 'model-unsupported')).toBe(true);
    }
    expect(() => checkWeightShape('f16', 3, 172, 'w')).not.toThrow();
  });

  it('shards rows so that each packed shard fits the limit', () => {
    const rows = 128256;
    const cols = 4096;
    const limit = 128 * 1024 * 1024;
    const shards = shardRows('q4_0', rows, cols, limit);
    expect(shards.length).toBe(3);
    expect(shards.reduce((n, s) => n + s.rows, 0)).toBe(rows);
    for (const [i, s] of shards.entries()) {
      expect(packedLayout('q4_0', s.rows, cols).bytes).toBeLessThanOrEqual(limit);
      expect(s.rowStart).toBe(i === 0 ? 0 : shards[i - 1].rowStart + shards[i - 1].rows);
    }
    expect(shardRows('f32', 10, 4, 1 << 20)).toEqual([{ rowStart: 0, rows: 10 }]);
    expect(() => shardRows('f32', 10, 4096, 1024)).toThrow(expect.objectContaining({ code: 'model-too-large' }));
  });
});

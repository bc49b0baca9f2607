import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBuffer, withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { dequantize } from '../../src/model/quant.ts';
import { destroyWeight, rowMultiple, syntheticWeight, WEIGHT_FORMATS, type WeightFormat, type WeightTensor } from '../../src/kernels/weights.ts';
import { testGpu } from './context.ts';
import { GGML_OF, unpackToGguf } from './weights-reference.ts';

/** Every value of a tensor, read back shard by shard and dequantized on the CPU. */
async function values(ctx: GpuContext, w: WeightTensor): Promise<Float32Array> {
  const out = new Float32Array(w.rows * w.cols);
  for (const s of w.shards) {
    const packed = new Uint8Array(await readBuffer(ctx.device, s.buffer));
    const gguf = unpackToGguf(w.format, s.rows, w.cols, packed);
    out.set(dequantize(GGML_OF[w.format], gguf, s.rows * w.cols), s.rowStart * w.cols);
  }
  return out;
}

describe('synthetic weights', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  const make = (format: WeightFormat, seed: number, maxShardBytes?: number) =>
    syntheticWeight(ctx, 'test.synthetic', format, 75, rowMultiple(format) === 256 ? 256 : 160, seed, 0.25, { maxShardBytes });

  it.each(WEIGHT_FORMATS)('%s: valid, bounded, centred, deterministic and independent of sharding', async (format) => {
    await withErrorScopes(ctx.device, `synthetic ${format}`, async () => {
      const tensors = [await make(format, 7), await make(format, 7, 4096), await make(format, 8)];
      try {
        const [a, sharded, other] = await Promise.all(tensors.map((t) => values(ctx, t)));
        expect(tensors[1].shards.length).toBeGreaterThan(1);
        expect(sharded).toEqual(a);
        expect(other).not.toEqual(a);
        let sum = 0;
        let squares = 0;
        let max = 0;
        for (const v of a) {
          expect(Number.isFinite(v)).toBe(true);
          sum += v;
          squares += v * v;
          max = Math.max(max, Math.abs(v));
        }
        const n = a.length;
        expect(max).toBeLessThanOrEqual(0.25);
        expect(max).toBeGreaterThan(0.2);
        // 12,000 values (19,200 for K-quants): the mean's standard error is ≤ 0.25/√3/√12000 ≈ 1.3e-3; 6e-3 is ~4.5σ.
        expect(Math.abs(sum / n)).toBeLessThan(6e-3);
        // Uniform values have rms scale/√3 ≈ 0.144; block formats with scales u ∈ [0.5, 1) less (≈ 0.11);
        // K-quants, whose sub-block scales also vary, ≈ 0.085–0.09 (see syntheticWeight).
        const rms = Math.sqrt(squares / n);
        expect(rms).toBeGreaterThan(0.08);
        expect(rms).toBeLessThan(0.16);
      } finally {
        tensors.forEach(destroyWeight);
      }
    });
  });

  it('reports the bytes a full read touches', async () => {
    const w = await make('q4_0', 1);
    try {
      expect(w.bytes).toBe((75 * 160 * 18) / 32);
    } finally {
      destroyWeight(w);
    }
  });
});

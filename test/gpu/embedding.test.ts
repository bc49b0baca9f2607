import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBufferWith, withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { embedding } from '../../src/kernels/embedding.ts';
import { destroyWeight, rowMultiple, uploadWeight, WEIGHT_FORMATS, type WeightTensor } from '../../src/kernels/weights.ts';
import { testGpu } from './context.ts';
import { randomTensor, rng, runAndRead } from './weights-reference.ts';

async function lookup(ctx: GpuContext, table: WeightTensor, ids: number[]): Promise<Float32Array> {
  const tokens = storageBufferWith(ctx.device, 'test.tokens', new Uint32Array(ids));
  // Filled with NaN so a row the kernel forgets to write shows up.
  const out = storageBufferWith(ctx.device, 'test.out', new Float32Array(ids.length * table.cols).fill(NaN));
  try {
    const dispatches = await embedding(ctx, 'test.embed', table, tokens, out, ids.length);
    // Two shards per dispatch (embedding_pair), the last alone where their count is odd.
    expect(dispatches).toHaveLength(Math.ceil(table.shards.length / 2));
    return await runAndRead(ctx, dispatches, out, ids.length * table.cols);
  } finally {
    tokens.destroy();
    out.destroy();
  }
}

describe('embedding', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  it.each(WEIGHT_FORMATS)('%s gathers dequantized rows exactly; ids ≥ vocab give zero rows', async (format) => {
    await withErrorScopes(ctx.device, `embedding ${format}`, async () => {
      const multiple = rowMultiple(format);
      const [vocab, dim] = multiple === 256 ? [61, 512] : multiple === 32 ? [211, 160] : [97, 172];
      const { gguf, values } = randomTensor(format, vocab, dim, 3);
      const next = rng(9);
      const ids = [0, vocab - 1, vocab, 0xffffffff, ...Array.from({ length: 29 }, () => Math.floor(next() * vocab))];
      const sharded = uploadWeight(ctx, 'test.table', format, vocab, dim, gguf, { maxShardBytes: 4096 });
      const whole = uploadWeight(ctx, 'test.table', format, vocab, dim, gguf);
      const halves = uploadWeight(ctx, 'test.table', format, vocab, dim, gguf, { maxShardBytes: Math.ceil(0.6 * whole.bytes) });
      try {
        expect(sharded.shards.length).toBeGreaterThan(2);
        expect(halves.shards).toHaveLength(2);
        for (const table of [whole, sharded, halves]) {
          const got = await lookup(ctx, table, ids);
          for (const [t, id] of ids.entries()) {
            // Dequantization is exact in f32 (q·d of an f16 d), so rows match the CPU bit for bit.
            const want = id < vocab ? values.subarray(id * dim, (id + 1) * dim) : new Float32Array(dim);
            expect(got.subarray(t * dim, (t + 1) * dim), `${format} token ${t} = ${id}, ${table.shards.length} shards`).toEqual(want);
          }
        }
      } finally {
        destroyWeight(whole);
        destroyWeight(sharded);
        destroyWeight(halves);
      }
    });
  });

  it('runs the fallback device too', async () => {
    const plain = await testGpu(new Set(['subgroups', 'shader-f16']));
    try {
      await withErrorScopes(plain.device, 'embedding fallback', async () => {
        const { gguf, values } = randomTensor('q4_0', 40, 64, 4);
        const table = uploadWeight(plain, 'test.table', 'q4_0', 40, 64, gguf);
        try {
          expect(await lookup(plain, table, [7, 39])).toEqual(Float32Array.from([...values.subarray(7 * 64, 8 * 64), ...values.subarray(39 * 64, 40 * 64)]));
        } finally {
          destroyWeight(table);
        }
      });
    } finally {
      plain.destroy();
    }
  });
});

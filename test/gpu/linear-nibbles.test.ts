/**
 * The q4_0 masked-nibble kernel (shaders/linear_rows_q4_0*.wgsl, the CPU adapters' decode matvec)
 * against the float64 CPU reference: X loaded by every invocation and X shared through subgroups of
 * 4 and 8 (a size the shader does not run at takes its own-loads path), odd and even blocks per row
 * (the scale-pair path), rows not a multiple of the rows per workgroup, 1–8 rows of X, and the fused
 * prologue and epilogues — with every feature and with the fallbacks forced, in Node and Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fallbacks } from '../../src/gpu/capabilities.ts';
import { storageBufferWith, withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { linear } from '../../src/kernels/linear.ts';
import { linearShape, type RowsShape } from '../../src/kernels/linear-shapes.ts';
import { destroyWeight, uploadWeight } from '../../src/kernels/weights.ts';
import { testGpu } from './context.ts';
import { checkLinear, FUSED_CASES } from './linear-check.ts';
import { randomTensor, rng, runAndRead, uniforms } from './weights-reference.ts';

const RUNTIMES: [string, Fallbacks | undefined][] = [
  ['every feature', undefined],
  ['fallbacks forced', new Set(['subgroups', 'shader-f16'])],
];

describe.each(RUNTIMES)('q4_0 masked-nibble linear (%s)', (_name, disable) => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu(disable);
  });
  afterAll(() => ctx?.destroy());

  /** X loaded by every invocation, and (with subgroups) shared through subgroups of 4 and of 8 (two per workgroup). */
  const shapes = (rowBlock: number, tokens: number): RowsShape[] => {
    const own: RowsShape = { kernel: 'rows', lanes: 4, rowBlock, tokens, nibbles: true };
    return ctx.caps.subgroups ? [own, { ...own, lanes: 8, shareX: 4 }, { ...own, lanes: 16, shareX: 8 }] : [own];
  };

  it('is the CPU adapters’ q4_0 decode shape without subgroups (but SwiftShader’s is dot4I8Packed; with subgroups the SWAR kernel), and only q4_0’s', () => {
    const decode = linearShape(ctx.caps, 1, 'q4_0');
    const q8dotFirst = (ctx.caps.kind === 'swiftshader' || ctx.caps.subgroups) && ctx.caps.packedDot;
    expect(decode.kernel === 'rows' && decode.nibbles === true).toBe(ctx.caps.cpuLike && !q8dotFirst);
    if (decode.kernel === 'rows' && decode.nibbles) expect(decode.shareX !== undefined).toBe(ctx.caps.subgroups && [4, 8].includes(ctx.caps.subgroupMinSize));
    // q8_0 takes the 8-bit-activation kernel where the language feature exists (linear-q8dot.test.ts), else the generic choice.
    if (!ctx.caps.packedDot) expect(linearShape(ctx.caps, 1, 'q8_0')).toEqual(linearShape(ctx.caps, 1));
    // From R = 2 the nibble kernel is no choice: the SWAR tile with subgroups and the language feature, else the generic one.
    const batched = linearShape(ctx.caps, 2, 'q4_0');
    if (ctx.caps.cpuLike && ctx.caps.subgroups && ctx.caps.packedDot)
      expect(batched).toMatchObject({ swar: true, tokens: ctx.caps.kind === 'swiftshader' ? 1 : 2 });
    else expect(batched).toEqual(linearShape(ctx.caps, 2));
  });

  it('odd and even blocks per row, awkward rows, 1–8 rows of X', async () => {
    await withErrorScopes(ctx.device, 'nibbles', async () => {
      const next = rng(7);
      // 3, 5 and 7 blocks per row take the one-scale-per-block path, 2, 4 and 8 the scale pairs.
      for (const [i, cols] of [96, 64, 160, 128, 224, 256].entries()) {
        const rows = 1 + Math.floor(next() * 120);
        for (const R of [1, 2, 3, 8]) {
          const tokens = Math.min(R, 2);
          for (const shape of shapes(R === 1 ? 3 : 8 / tokens, tokens)) await checkLinear(ctx, { format: 'q4_0', rows, cols, R, shape, seed: 10 * i + R });
        }
      }
      // The static default, and a tile of 5 tokens × 3 rows (a partial token tile in grid z) over 7 rows of X.
      await checkLinear(ctx, { format: 'q4_0', rows: 203, cols: 256, R: 1, shape: linearShape(ctx.caps, 1, 'q4_0'), seed: 1 });
      for (const shape of shapes(3, 5)) await checkLinear(ctx, { format: 'q4_0', rows: 37, cols: 128, R: 7, shape, seed: 2 });
    });
  });

  // Each fused combination is its own pipeline (~5 s to compile on lavapipe): each takes one of the X variants in turn.
  it('fused: RMSNorm prologue, gate|up SwiGLU and GELU-tanh, bias, accumulate, columns of a wider output', async () => {
    await withErrorScopes(ctx.device, 'nibbles fused', async () => {
      const cases = FUSED_CASES;
      for (const R of [1, 3]) {
        const variants = shapes(4, Math.min(R, 2));
        for (const [j, c] of cases.entries()) {
          await checkLinear(ctx, { ...c, format: 'q4_0', cols: j % 2 ? 128 : 96, R, shape: variants[(j + R) % variants.length], seed: 10 * j + R });
        }
      }
    });
  });

  it('sharded by rows gives the unsharded result exactly', async () => {
    await withErrorScopes(ctx.device, 'nibbles shards', async () => {
      const [rows, cols] = [203, 128];
      const { gguf } = randomTensor('q4_0', rows, cols, 5);
      const whole = uploadWeight(ctx, 'test.whole', 'q4_0', rows, cols, gguf);
      const sharded = uploadWeight(ctx, 'test.sharded', 'q4_0', rows, cols, gguf, { maxShardBytes: Math.ceil(whole.shards[0].buffer.size / 5) });
      const x = uniforms(cols, 9);
      const run = async (w: typeof whole) => {
        const X = storageBufferWith(ctx.device, 'test.x', x);
        const Y = storageBufferWith(ctx.device, 'test.y', new Float32Array(rows));
        try {
          return await runAndRead(ctx, await linear(ctx, 'test.shards', w, X, Y, 1, { shape: linearShape(ctx.caps, 1, 'q4_0') }), Y, rows);
        } finally {
          X.destroy();
          Y.destroy();
        }
      };
      try {
        expect(sharded.shards.length).toBeGreaterThanOrEqual(5);
        expect(await run(sharded)).toEqual(await run(whole));
      } finally {
        destroyWeight(whole);
        destroyWeight(sharded);
      }
    });
  });
});

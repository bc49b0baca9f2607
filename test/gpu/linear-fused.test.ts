/**
 * The linear kernels' fused prologue and epilogues against a float64 CPU reference: the RMSNorm
 * prologue, the gated (SwiGLU / GeGLU) gate|up epilogue, a part writing its columns of a wider
 * output, and all of them with bias and residual accumulate — on every matvec reduction and
 * matmul precision the runtime offers, with features on and with every fallback forced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fallbacks } from '../../src/gpu/capabilities.ts';
import { storageBufferWith, withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { linearShape, linearShapes, type LinearShape } from '../../src/kernels/linear-shapes.ts';
import { linear } from '../../src/kernels/linear.ts';
import { destroyWeight, interleaveRows, uploadWeight, type WeightFormat } from '../../src/kernels/weights.ts';
import { testGpu } from './context.ts';
import { checkLinear } from './linear-check.ts';
import { randomTensor, runAndRead, uniforms } from './weights-reference.ts';

/** The shapes to check for R rows: the default and the other reduction / precision, plus odd rows per workgroup. */
function variants(ctx: GpuContext, R: number): LinearShape[] {
  const base = linearShape(ctx.caps, R);
  if (base.kernel === 'matvec') {
    const odd = { ...base, rowBlock: 1, rowsPerWorkgroup: 3 };
    return base.subgroups ? [base, odd, { ...base, subgroups: false, lanes: 8 }] : [base, odd];
  }
  if (base.kernel === 'rows') {
    // CPU adapters: the register tile, plus the tiled matmul (the GPUs' prefill kernel) where R calls for it.
    const matmul = linearShapes(ctx.caps, R).find((s) => s.kernel === 'matmul');
    return matmul ? [base, matmul] : [base];
  }
  return ctx.caps.shaderF16 ? [base, { ...base, f16: !base.f16 }] : [base];
}

const RUNTIMES: [string, Fallbacks | undefined][] = [
  ['every feature', undefined],
  ['fallbacks forced', new Set(['subgroups', 'shader-f16'])],
];
const FORMATS: WeightFormat[] = ['f32', 'q4_0', 'q8_0'];

describe.each(RUNTIMES)('fused linear prologue and epilogues (%s)', (_name, disable) => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu(disable);
  });
  afterAll(() => ctx?.destroy());

  it.each(FORMATS)('%s: RMSNorm prologue, R ∈ {1, 3, 8, 33}', async (format) => {
    await withErrorScopes(ctx.device, `norm ${format}`, async () => {
      for (const R of [1, 3, 8, 33]) {
        for (const shape of variants(ctx, R)) await checkLinear(ctx, { format, rows: 75, cols: 160, R, shape, norm: true, seed: R });
      }
    });
  });

  // SiLU on every shape; GELU-tanh (the same epilogue, another override) on the default shape.
  it.each(FORMATS)('%s: gated gate|up epilogue (SiLU and GELU-tanh) after the norm, R ∈ {1, 3, 33}', async (format) => {
    await withErrorScopes(ctx.device, `gate ${format}`, async () => {
      for (const R of [1, 3, 33]) {
        for (const shape of variants(ctx, R)) await checkLinear(ctx, { format, rows: 2 * 37, cols: 96, R, shape, norm: true, gate: 'silu', seed: 10 + R });
        await checkLinear(ctx, { format, rows: 2 * 37, cols: 96, R, shape: linearShape(ctx.caps, R), norm: true, gate: 'gelu_tanh', seed: 20 + R });
      }
    });
  });

  it.each(FORMATS)('%s: a part writes its columns of a wider output, with bias and accumulate', async (format) => {
    await withErrorScopes(ctx.device, `columns ${format}`, async () => {
      for (const R of [2, 33]) {
        const shape = linearShape(ctx.caps, R);
        await checkLinear(ctx, { format, rows: 45, cols: 96, R, shape, bias: true, accumulate: true, columns: { offset: 19, stride: 83 }, seed: 20 + R });
        await checkLinear(ctx, { format, rows: 2 * 21, cols: 96, R, shape, bias: true, gate: 'silu', columns: { offset: 10, stride: 2 * 31 }, seed: 30 + R });
      }
    });
  });

  it('a gated tensor sharded in whole pairs gives the unsharded result exactly', async () => {
    await withErrorScopes(ctx.device, 'gated shards', async () => {
      const [rows, cols] = [2 * 101, 96];
      const gate = randomTensor('q8_0', rows / 2, cols, 3);
      const up = randomTensor('q8_0', rows / 2, cols, 4);
      const gguf = interleaveRows('q8_0', rows / 2, cols, gate.gguf, up.gguf);
      const whole = uploadWeight(ctx, 'test.whole', 'q8_0', rows, cols, gguf, { rowMultiple: 2 });
      const sharded = uploadWeight(ctx, 'test.sharded', 'q8_0', rows, cols, gguf, {
        rowMultiple: 2,
        maxShardBytes: Math.ceil(whole.shards[0].buffer.size / 5) + 7,
      });
      try {
        expect(sharded.shards.length).toBeGreaterThanOrEqual(5);
        expect(sharded.shards.every((s) => s.rowStart % 2 === 0)).toBe(true);
        for (const R of [1, 33]) {
          const x = uniforms(R * cols, R);
          const run = async (w: typeof whole) => {
            const X = storageBufferWith(ctx.device, 'test.x', x);
            const Y = storageBufferWith(ctx.device, 'test.y', new Float32Array((R * rows) / 2));
            try {
              return await runAndRead(ctx, await linear(ctx, 'test.gated', w, X, Y, R, { gate: 'silu' }), Y, (R * rows) / 2);
            } finally {
              X.destroy();
              Y.destroy();
            }
          };
          expect(await run(sharded)).toEqual(await run(whole));
        }
      } finally {
        destroyWeight(whole);
        destroyWeight(sharded);
      }
    });
  });
});

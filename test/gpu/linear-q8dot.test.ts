/**
 * The 8-bit-activation decode kernels (shaders/linear_q8dot*.wgsl: X quantized per 32-element block
 * in workgroup memory, dot4I8Packed per 4 weights) for q4_0 and q8_0, forced on, against the float64
 * CPU reference (linear-check.ts states the tolerance the activation rounding allows, and checks a
 * reference that rounds X the same way much tighter): the wide subgroup shape the GPUs take and the
 * one-invocation-per-rows shape, awkward rows and columns, 1–8 rows of X, every fused prologue and
 * epilogue, the fallback for columns too wide for workgroup memory, and the capability switch — with
 * every feature and with the fallbacks forced, in Node and Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fallbacks } from '../../src/gpu/capabilities.ts';
import { withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { linearShape, linearShapes, q8dotTokens, q8dotWorkgroupBytes, type LinearShape } from '../../src/kernels/select.ts';
import type { WeightFormat } from '../../src/kernels/weights.ts';
import { testGpu } from './context.ts';
import { checkLinear, type LinearCase } from './linear-check.ts';
import { rng } from './weights-reference.ts';

const RUNTIMES: [string, Fallbacks | undefined][] = [
  ['every feature', undefined],
  ['fallbacks forced', new Set(['subgroups', 'shader-f16'])],
];
const FORMATS: WeightFormat[] = ['q4_0', 'q8_0'];

describe.each(RUNTIMES)('8-bit-activation linear, dot4I8Packed (%s)', (_name, disable) => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu(disable);
    console.info(`packed_4x8_integer_dot_product on ${ctx.caps.adapter.vendor} ${ctx.caps.adapter.architecture}: ${ctx.caps.packedDot}`);
  });
  afterAll(() => ctx?.destroy());

  /**
   * The shapes to force for R rows of X: the wide one (subgroups; odd rows per workgroup so rows are
   * not a multiple of them) and the one-invocation-per-rows one (tokens ≤ 2 per workgroup, so R > 2 uses grid z).
   */
  const shapes = (R: number): LinearShape[] => {
    const rows: LinearShape = { kernel: 'rows', lanes: 4, rowBlock: R === 1 ? 3 : 4, tokens: Math.min(R, 2), q8dot: true };
    const wide: LinearShape = {
      kernel: 'matvec',
      subgroups: true,
      wide: true,
      q8dot: true,
      lanes: 64,
      rowBlock: R <= 2 ? 2 : 1,
      rowsPerWorkgroup: R <= 2 ? 6 : 5,
    };
    return ctx.caps.subgroups ? [wide, rows] : [rows];
  };

  it('is the GPUs’ q4_0/q8_0 decode choice where the language feature exists, never the CPU adapters’ default', () => {
    expect(ctx.caps.packedDot).toBe(true);
    const gpu = { ...ctx.caps, cpuLike: false };
    for (const format of FORMATS) {
      for (const R of [1, 8]) {
        const shape = linearShape(gpu, R, format, 2048);
        expect(q8dotTokens(shape, format, R) > 0).toBe(ctx.caps.subgroups);
        expect(q8dotTokens(linearShape({ ...gpu, packedDot: false }, R, format), format, R)).toBe(0);
        expect(q8dotTokens(linearShape(ctx.caps, R, format), format, R)).toBe(0);
        // The autotuner's candidates include it on CPU adapters too.
        expect(linearShapes(ctx.caps, R, format).some((s) => q8dotTokens(s, format, R) > 0)).toBe(true);
      }
      expect(linearShape(gpu, 16, format).kernel).toBe('matmul');
    }
    expect(linearShapes(gpu, 1, 'q4_k').some((s) => 'q8dot' in s)).toBe(false);
    // Columns whose staged X exceeds workgroup memory drop the kernel from the choice.
    const limit = ctx.caps.limits.maxComputeWorkgroupStorageSize;
    const tooWide = 32 * Math.ceil(limit / 44 + 1);
    expect(q8dotWorkgroupBytes(1, tooWide)).toBeGreaterThan(limit);
    expect(linearShapes(gpu, 1, 'q4_0', tooWide).some((s) => q8dotTokens(s, 'q4_0', 1) > 0)).toBe(false);
  });

  it.each(FORMATS)('%s: awkward rows and columns, 1, 2, 3 and 8 rows of X', async (format) => {
    await withErrorScopes(ctx.device, `q8dot ${format}`, async () => {
      const next = rng(format === 'q4_0' ? 3 : 4);
      // 3, 5, 7 and 9 blocks: not a multiple of the 64 lanes' span, nor of 2 (scale-word pairs).
      for (const [i, cols] of [96, 160, 224, 288].entries()) {
        const rows = 1 + Math.floor(next() * 90);
        const R = [1, 2, 3, 8][i];
        for (const shape of shapes(R)) await checkLinear(ctx, { format, rows, cols, R, shape, seed: 10 * i + R });
      }
    });
  });

  it.each(FORMATS)('%s: fused RMSNorm prologue, gate|up SiLU and GELU-tanh, bias, accumulate, columns of a wider output', async (format) => {
    await withErrorScopes(ctx.device, `q8dot fused ${format}`, async () => {
      const cases: Omit<LinearCase, 'R' | 'shape' | 'seed' | 'cols' | 'format'>[] = [
        { rows: 75, norm: true },
        { rows: 2 * 37, norm: true, gate: 'silu' },
        { rows: 2 * 21, norm: true, gate: 'gelu_tanh' },
        { rows: 45, bias: true, accumulate: true, columns: { offset: 19, stride: 83 } },
        { rows: 2 * 21, bias: true, gate: 'silu', columns: { offset: 10, stride: 2 * 31 } },
      ];
      for (const R of [1, 3]) {
        const variants = shapes(R);
        for (const [j, c] of cases.entries()) {
          await checkLinear(ctx, { ...c, format, cols: j % 2 ? 128 : 96, R, shape: variants[(j + R) % variants.length], seed: 10 * j + R });
        }
      }
    });
  });

  it('falls back to the f32 kernels where X does not fit workgroup memory', async () => {
    await withErrorScopes(ctx.device, 'q8dot fallback', async () => {
      const R = 8;
      const cols = 32 * Math.ceil(ctx.caps.limits.maxComputeWorkgroupStorageSize / (44 * R) + 1);
      // checkLinear holds the result to the f32 tolerance when the shape does not fit: the fallback ran.
      await checkLinear(ctx, { format: 'q8_0', rows: 9, cols, R, shape: shapes(R)[0], seed: 5 });
    });
  });
});

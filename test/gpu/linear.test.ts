import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundF16 } from '../../src/f16.ts';
import type { Fallbacks } from '../../src/gpu/capabilities.ts';
import { storageBuffer, storageBufferWith, withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { linear, type LinearOptions } from '../../src/kernels/linear.ts';
import { linearShape, linearShapes, type LinearShape } from '../../src/kernels/linear-shapes.ts';
import { destroyWeight, rowMultiple, uploadWeight, WEIGHT_FORMATS, type WeightFormat, type WeightTensor } from '../../src/kernels/weights.ts';
import { inBrowser, testGpu } from './context.ts';
import { nmse, randomTensor, referenceLinear, rng, runAndRead, uniforms } from './weights-reference.ts';

// f32 accumulation over K ≤ 352 terms: relative error per output ≈ √K·2⁻²⁴ ≈ 1e-6, so NMSE ≈ 1e-12;
// one wrong output among the ≥ 50 checked gives NMSE ≳ 1e-3, so 1e-9 separates the two widely.
const F32_TOLERANCE = 1e-9;
// f16 tiles: X and W rounded to f16 (2⁻¹¹ relative) and runs of 8 products summed in f16 give
// NMSE ≈ 1e-7..1e-6.
const F16_TOLERANCE = 1e-5;

/** Seeded awkward shapes: rows not multiples of any workgroup/tile size, cols not of 64. */
function shapesFor(format: WeightFormat, seed: number): [number, number][] {
  const next = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
  const multiple = rowMultiple(format);
  const quantized = multiple > 4;
  // K-quants (256-weight super-blocks): one to three super-blocks, so chunks split across lanes unevenly.
  const cols = multiple === 256 ? [256, 512, 768] : quantized ? [96, 160, 224, 288, 352] : [36, 100, 172, 268];
  const shapes: [number, number][] = [
    [1 + Math.floor(next() * 300), pick(cols)],
    [1 + Math.floor(next() * 80), pick(cols)],
  ];
  if (!quantized) shapes.push([64, 172], [172, 64]);
  return shapes;
}

/**
 * The shapes checked for R rows: every kernel this runtime can run, whichever select.ts would pick —
 * so the GPU defaults (the wide multi-subgroup matvec, f16 tiles) run on the CPU adapters too, and
 * the CPU-adapter register tiles run in Chromium. Workgroups are sized so rows are not a multiple
 * of the rows per workgroup (or of the subgroups in one).
 */
function variants(ctx: GpuContext, R: number, kernel: 'matvec' | 'matmul'): LinearShape[] {
  const { caps } = ctx;
  const shapes: LinearShape[] = [];
  if (kernel === 'matvec') {
    const rb = Math.max(1, Math.floor(8 / R));
    shapes.push({ kernel: 'matvec', subgroups: false, lanes: 8, rowBlock: rb, rowsPerWorkgroup: rb * 3 });
    if (caps.subgroups) {
      shapes.push(
        { kernel: 'matvec', subgroups: true, lanes: caps.subgroupMinSize, rowBlock: rb, rowsPerWorkgroup: rb * 3 },
        { kernel: 'matvec', subgroups: true, wide: true, lanes: R % 2 ? 128 : 64, rowBlock: R % 2 ? 2 : 1, rowsPerWorkgroup: R % 2 ? 6 : 16 },
      );
    }
    shapes.push({ kernel: 'rows', lanes: 4, rowBlock: 3, tokens: Math.min(R, 5) });
    return shapes;
  }
  shapes.push({ kernel: 'matmul', f16: false, tileM: 32, tileN: 32 });
  if (caps.shaderF16) shapes.push({ kernel: 'matmul', f16: true, tileM: 64, tileN: 64 });
  // GPUs' short prompts: the wide matvec over groups of 8 tokens (a partial last group at 33); its 8-bit form in linear-q8dot.test.ts.
  if (caps.subgroups && R <= 64) {
    const grouped: LinearShape = { kernel: 'matvec', subgroups: true, wide: true, lanes: 64, rowBlock: 2, rowsPerWorkgroup: 6 };
    shapes.push(grouped);
  }
  shapes.push({ kernel: 'rows', lanes: 2, rowBlock: 2, tokens: 7 });
  return shapes;
}

async function check(
  ctx: GpuContext,
  format: WeightFormat,
  rows: number,
  cols: number,
  R: number,
  shape: LinearShape,
  opts: { bias?: boolean; accumulate?: boolean; seed: number },
) {
  const { gguf, values } = randomTensor(format, rows, cols, opts.seed);
  const w = uploadWeight(ctx, 'test.w', format, rows, cols, gguf);
  const x = uniforms(R * cols, opts.seed + 1);
  const bias = opts.bias ? uniforms(rows, opts.seed + 2) : undefined;
  const y0 = opts.accumulate ? uniforms(R * rows, opts.seed + 3) : undefined;
  const X = storageBufferWith(ctx.device, 'test.x', x);
  const Y = y0 ? storageBufferWith(ctx.device, 'test.y', y0) : storageBuffer(ctx.device, 'test.y', R * rows * 4);
  const B = bias && storageBufferWith(ctx.device, 'test.bias', bias);
  try {
    const linearOpts: LinearOptions = { shape, bias: B, accumulate: opts.accumulate };
    const got = await runAndRead(ctx, await linear(ctx, 'test.linear', w, X, Y, R, linearOpts), Y, R * rows);
    // f16 weights multiply f16 inputs in every kernel (linear_io.wgsl's X_F16, llama.cpp's choice):
    // the reference takes X so rounded (missing the rounding is NMSE ≈ 4e-8, over F32_TOLERANCE).
    const xin = format === 'f16' ? x.map((v) => roundF16(v)) : x;
    const err = nmse(got, referenceLinear(values, rows, cols, xin, R, bias, y0));
    const tolerance = shape.kernel === 'matmul' && shape.f16 ? F16_TOLERANCE : F32_TOLERANCE;
    expect(err, `${format} ${rows}×${cols} R=${R} ${JSON.stringify(shape)}`).toBeLessThan(tolerance);
  } finally {
    destroyWeight(w);
    for (const b of [X, Y, B]) b?.destroy();
  }
}

async function outputs(ctx: GpuContext, w: WeightTensor, x: Float32Array, R: number, shape: LinearShape): Promise<Float32Array> {
  const X = storageBufferWith(ctx.device, 'test.x', x);
  const Y = storageBuffer(ctx.device, 'test.y', R * w.rows * 4);
  try {
    return await runAndRead(ctx, await linear(ctx, 'test.linear', w, X, Y, R, { shape }), Y, R * w.rows);
  } finally {
    X.destroy();
    Y.destroy();
  }
}

/**
 * Rows of X per kernel. Each R is its own pipeline (TOKENS is an override constant), and a cold
 * pipeline of a block format compiles in ~5–15 s on lavapipe; the formats added with the
 * K-quants run fewer R (still both sides of every lane/row-block edge: 1, and 7 rows) so the
 * file stays within minutes on a cold shader cache.
 */
const FIRST_FORMATS: readonly WeightFormat[] = ['f32', 'f16', 'q8_0', 'q4_0'];
const matvecRows = (format: WeightFormat) => (FIRST_FORMATS.includes(format) ? [1, 2, 3, 7, 8] : [1, 7]);
const matmulRows = (format: WeightFormat) => (FIRST_FORMATS.includes(format) ? [1, 7, 33, 100] : [33]);

const RUNTIMES: [string, Fallbacks | undefined][] = [
  ['every feature', undefined],
  ['fallbacks forced', new Set(['subgroups', 'shader-f16'])],
];

/**
 * The formats each runtime checks: all of them, but in Chromium with fallbacks forced only the
 * first four (SwiftShader has no shader-f16 anyway, so that runtime differs only in subgroups, and
 * its pipelines compile ~10x slower than lavapipe's; Node checks every format both ways).
 */
const formatsFor = (disable: Fallbacks | undefined): readonly WeightFormat[] => (inBrowser && disable ? FIRST_FORMATS : WEIGHT_FORMATS);

describe.each(RUNTIMES)('linear (%s)', (_name, disable) => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu(disable);
  });
  afterAll(() => ctx?.destroy());

  it.each(formatsFor(disable))('%s matvec, every variant', async (format) => {
    await withErrorScopes(ctx.device, `matvec ${format}`, async () => {
      for (const [i, [rows, cols]] of shapesFor(format, 11).entries()) {
        for (const R of matvecRows(format)) {
          for (const shape of variants(ctx, R, 'matvec')) await check(ctx, format, rows, cols, R, shape, { seed: 100 * i + R });
        }
      }
    });
  });

  it.each(formatsFor(disable))('%s tiled matmul, every precision', async (format) => {
    await withErrorScopes(ctx.device, `matmul ${format}`, async () => {
      for (const [i, [rows, cols]] of shapesFor(format, 23).entries()) {
        for (const R of matmulRows(format)) {
          for (const shape of variants(ctx, R, 'matmul')) await check(ctx, format, rows, cols, R, shape, { seed: 100 * i + R });
        }
      }
    });
  });

  it.each(formatsFor(disable))('%s with bias and accumulate', async (format) => {
    await withErrorScopes(ctx.device, `bias ${format}`, async () => {
      const [rows, cols] = shapesFor(format, 37)[0];
      for (const R of [matvecRows(format).at(-1)!, 33])
        await check(ctx, format, rows, cols, R, linearShape(ctx.caps, R), { bias: true, accumulate: true, seed: R });
    });
  });

  it('picks the matvec for decode and the matmul beyond 8 rows (CPU adapters: register tiles from 2 rows)', () => {
    expect(linearShape(ctx.caps, 1).kernel).toBe('matvec');
    expect(linearShape(ctx.caps, 8).kernel).toBe(ctx.caps.cpuLike ? 'rows' : 'matvec');
    expect(linearShape(ctx.caps, 9).kernel).toBe(ctx.caps.cpuLike ? 'rows' : 'matmul');
    if (disable) {
      expect(linearShape(ctx.caps, 1)).toMatchObject({ subgroups: false });
      expect(linearShapes(ctx.caps, 64).some((s) => s.kernel === 'matmul' && s.f16)).toBe(false);
    }
  });

  it.each(formatsFor(disable))('%s sharded by rows gives the unsharded result exactly', async (format) => {
    await withErrorScopes(ctx.device, `shards ${format}`, async () => {
      const rows = 203;
      const cols = rowMultiple(format) === 256 ? 256 : rowMultiple(format) === 32 ? 160 : 100;
      const { gguf } = randomTensor(format, rows, cols, 5);
      const whole = uploadWeight(ctx, 'test.whole', format, rows, cols, gguf);
      // ~1/5 of the tensor per shard: 5 shards with a short last one.
      const sharded = uploadWeight(ctx, 'test.sharded', format, rows, cols, gguf, { maxShardBytes: Math.ceil(whole.shards[0].buffer.size / 5) });
      try {
        expect(sharded.shards.length).toBeGreaterThanOrEqual(5);
        expect(sharded.shards.reduce((n, s) => n + s.rows, 0)).toBe(rows);
        for (const R of [2, 33]) {
          const x = uniforms(R * cols, R);
          const shape = linearShape(ctx.caps, R);
          expect(await outputs(ctx, sharded, x, R, shape)).toEqual(await outputs(ctx, whole, x, R, shape));
        }
      } finally {
        destroyWeight(whole);
        destroyWeight(sharded);
      }
    });
  });
});

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
import { linear, type GateActivation, type LinearOptions } from '../../src/kernels/linear.ts';
import { linearShape, linearShapes, type LinearShape } from '../../src/kernels/select.ts';
import { destroyWeight, interleaveRows, uploadWeight, type WeightFormat } from '../../src/kernels/weights.ts';
import { testGpu } from './context.ts';
import { nmse, randomTensor, referenceLinear, runAndRead, uniforms } from './weights-reference.ts';

// As in linear.test.ts: f32 accumulation gives NMSE ≈ 1e-12, one wrong output ≳ 1e-3. The norm's
// inverseSqrt and the activations' exp add ~1e-7 relative per output. f16 tiles: ≈ 1e-7..1e-6.
const F32_TOLERANCE = 1e-9;
const F16_TOLERANCE = 1e-5;

const ACT: Record<GateActivation, (g: number) => number> = {
  silu: (g) => g / (1 + Math.exp(-g)),
  gelu_tanh: (g) => 0.5 * g * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (g + 0.044715 * g ** 3))),
};

/** x / sqrt(mean(x²) + eps) · weight per row, in float64. */
function rmsnormRows(x: Float32Array, R: number, cols: number, weight: Float32Array, eps: number): Float32Array {
  const out = new Float64Array(R * cols);
  for (let t = 0; t < R; t++) {
    let ss = 0;
    for (let k = 0; k < cols; k++) ss += x[t * cols + k] ** 2;
    const scale = 1 / Math.sqrt(ss / cols + eps);
    for (let k = 0; k < cols; k++) out[t * cols + k] = x[t * cols + k] * scale * weight[k];
  }
  return out as unknown as Float32Array;
}

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

interface Case {
  format: WeightFormat;
  rows: number; // weight rows (pairs × 2 when gated)
  cols: number;
  R: number;
  shape: LinearShape;
  norm?: boolean;
  gate?: GateActivation;
  bias?: boolean;
  accumulate?: boolean;
  columns?: { offset: number; stride: number };
  seed: number;
}

async function check(ctx: GpuContext, c: Case): Promise<void> {
  const { gguf, values } = randomTensor(c.format, c.rows, c.cols, c.seed);
  const w = uploadWeight(ctx, 'test.w', c.format, c.rows, c.cols, gguf, { rowMultiple: c.gate ? 2 : 1 });
  const stride = c.columns?.stride ?? c.rows;
  const offset = c.columns?.offset ?? 0;
  const outCols = c.gate ? stride / 2 : stride;
  const x = uniforms(c.R * c.cols, c.seed + 1, 3);
  const normWeight = uniforms(c.cols, c.seed + 2);
  const bias = c.bias ? uniforms(stride, c.seed + 3) : undefined;
  const y0 = uniforms(c.R * outCols, c.seed + 4);
  const X = storageBufferWith(ctx.device, 'test.x', x);
  const Y = storageBufferWith(ctx.device, 'test.y', y0);
  const G = storageBufferWith(ctx.device, 'test.norm', normWeight);
  const B = bias && storageBufferWith(ctx.device, 'test.bias', bias);
  try {
    const opts: LinearOptions = {
      shape: c.shape,
      bias: B,
      accumulate: c.accumulate,
      gate: c.gate,
      columns: c.columns,
      norm: c.norm ? { weight: G, eps: 1e-5 } : undefined,
    };
    const got = await runAndRead(ctx, await linear(ctx, 'test.linear', w, X, Y, c.R, opts), Y, c.R * outCols);
    const xin = c.norm ? rmsnormRows(x, c.R, c.cols, normWeight, 1e-5) : x;
    const z = referenceLinear(values, c.rows, c.cols, xin, c.R, bias?.subarray(offset, offset + c.rows));
    const want = Float64Array.from(y0);
    for (let t = 0; t < c.R; t++) {
      for (let n = 0; n < c.rows; n += c.gate ? 2 : 1) {
        const v = c.gate ? ACT[c.gate](z[t * c.rows + n]) * z[t * c.rows + n + 1] : z[t * c.rows + n];
        const at = t * outCols + (c.gate ? (offset + n) / 2 : offset + n);
        want[at] = (c.accumulate ? want[at] : 0) + v;
      }
    }
    const tolerance = c.shape.kernel === 'matmul' && c.shape.f16 ? F16_TOLERANCE : F32_TOLERANCE;
    expect(nmse(got, want), `${JSON.stringify({ ...c, shape: undefined })} ${JSON.stringify(c.shape)}`).toBeLessThan(tolerance);
  } finally {
    destroyWeight(w);
    for (const b of [X, Y, G, B]) b?.destroy();
  }
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
        for (const shape of variants(ctx, R)) await check(ctx, { format, rows: 75, cols: 160, R, shape, norm: true, seed: R });
      }
    });
  });

  // SiLU on every shape; GELU-tanh (the same epilogue, another override) on the default shape.
  it.each(FORMATS)('%s: gated gate|up epilogue (SiLU and GELU-tanh) after the norm, R ∈ {1, 3, 33}', async (format) => {
    await withErrorScopes(ctx.device, `gate ${format}`, async () => {
      for (const R of [1, 3, 33]) {
        for (const shape of variants(ctx, R)) await check(ctx, { format, rows: 2 * 37, cols: 96, R, shape, norm: true, gate: 'silu', seed: 10 + R });
        await check(ctx, { format, rows: 2 * 37, cols: 96, R, shape: linearShape(ctx.caps, R), norm: true, gate: 'gelu_tanh', seed: 20 + R });
      }
    });
  });

  it.each(FORMATS)('%s: a part writes its columns of a wider output, with bias and accumulate', async (format) => {
    await withErrorScopes(ctx.device, `columns ${format}`, async () => {
      for (const R of [2, 33]) {
        const shape = linearShape(ctx.caps, R);
        await check(ctx, { format, rows: 45, cols: 96, R, shape, bias: true, accumulate: true, columns: { offset: 19, stride: 83 }, seed: 20 + R });
        await check(ctx, { format, rows: 2 * 21, cols: 96, R, shape, bias: true, gate: 'silu', columns: { offset: 10, stride: 2 * 31 }, seed: 30 + R });
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

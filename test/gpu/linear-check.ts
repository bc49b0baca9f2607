/**
 * One linear layer with its fused prologue and epilogues against a float64 CPU reference: the
 * RMSNorm prologue, the gated (SwiGLU / GeGLU) epilogue, a part writing its columns of a wider
 * output, bias and residual accumulate. Shared by linear-fused.test.ts and linear-nibbles.test.ts.
 */
import { expect } from 'vitest';
import { roundF16 } from '../../src/f16.ts';
import { storageBufferWith } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { linear, type GateActivation, type LinearOptions } from '../../src/kernels/linear.ts';
import { activationGroup, q8dotFits, q8dotTokens, type LinearShape } from '../../src/kernels/linear-shapes.ts';
import { destroyWeight, uploadWeight, type WeightFormat } from '../../src/kernels/weights.ts';
import { nmse, randomTensor, referenceLinear, runAndRead, uniforms } from './weights-reference.ts';

// As in linear.test.ts: f32 accumulation gives NMSE ≈ 1e-12, one wrong output ≳ 1e-3. The norm's
// inverseSqrt and the activations' exp add ~1e-7 relative per output. f16 tiles: ≈ 1e-7..1e-6.
const F32_TOLERANCE = 1e-9;
const F16_TOLERANCE = 1e-5;

// 8-bit activations (linear_q8dot*.wgsl): each block of 32 inputs v (x · norm gain) is rounded to
// d·round(v/d), d = max|v|/127, an error uniform in ±d/2 (variance d²/12) per input. For the
// independent random data here, an output's NMSE is E[d²/12]/E[v²] = (max²/E[v²]) / (12·127²):
// max²/E[v²] ≤ 3 for uniform x, ≤ 9 for x times a uniform gain (the norm), so ≤ 4.7e-5; the gate's
// product of two such outputs at most doubles it. Q8_TOLERANCE = 2e-4 against the exact result;
// a wrong nibble order, offset or scale gives ≳ 1e-2.
const Q8_TOLERANCE = 2e-4;
// Against a reference that rounds X the same way (emulate8BitX, in f32 as the shader), only
// f32 summation and a rare rounding tie decided the other way differ (a flipped quant moves one
// token's outputs by NMSE ≤ 9/(127²·cols) ≈ 6e-6 at 96 columns): 1e-5 catches a d off by 127/128 (6e-5).
const Q8_EMULATED_TOLERANCE = 1e-5;

/** Round to nearest, ties to even (WGSL's round). */
function roundEven(v: number): number {
  const r = Math.round(v);
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The factor a row's products take after the rounding: 1/rms of row t of X with NORM_INPUT (a gain), else 1. */
function inputScale(x: Float32Array, t: number, cols: number, gain: Float32Array | undefined, eps: number): number {
  if (!gain) return 1;
  let ss = 0;
  for (let k = 0; k < cols; k++) ss += x[t * cols + k] ** 2;
  return 1 / Math.sqrt(ss / cols + eps);
}

/**
 * X as linear_q8dot.wgsl's staging sees it, dequantized: per group of `group` inputs of each row
 * (32, Q8_0's, or 256, Q8_K's: activationGroup), v = x · gain in f32, q = round(v · f32(127/max|v|)),
 * d = f16(max/127) (Q8_0) or f32(1/f32(127/max)) (Q8_K); then (NORM_INPUT) × 1/rms.
 */
function emulate8BitX(x: Float32Array, R: number, cols: number, gain: Float32Array | undefined, eps: number, group: number): Float64Array {
  const out = new Float64Array(R * cols);
  const v = new Float32Array(group);
  for (let t = 0; t < R; t++) {
    const scale = inputScale(x, t, cols, gain, eps);
    for (let c = 0; c < cols; c += group) {
      let m = 0;
      for (let j = 0; j < group; j++) {
        v[j] = x[t * cols + c + j] * (gain ? gain[c + j] : 1);
        m = Math.max(m, Math.abs(v[j]));
      }
      const inv = m > 0 ? Math.fround(127 / m) : 0;
      const d = group > 32 ? (m > 0 ? Math.fround(1 / inv) : 0) : roundF16(Math.fround(m / 127));
      for (let j = 0; j < group; j++) out[t * cols + c + j] = roundEven(Math.fround(v[j] * inv)) * d * scale;
    }
  }
  return out;
}

/** X as the kernels on f16 weights multiply it (linear_io.wgsl's X_F16): f16(x · gain), then (NORM_INPUT) × 1/rms. */
function emulateF16X(x: Float32Array, R: number, cols: number, gain: Float32Array | undefined, eps: number): Float64Array {
  const out = new Float64Array(R * cols);
  for (let t = 0; t < R; t++) {
    const scale = inputScale(x, t, cols, gain, eps);
    for (let k = 0; k < cols; k++) out[t * cols + k] = roundF16(Math.fround(x[t * cols + k] * (gain ? gain[k] : 1))) * scale;
  }
  return out;
}

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

export interface LinearCase {
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

/** Every fused epilogue and prologue on awkward row counts: the cases each linear kernel's fused test runs. */
export const FUSED_CASES: Omit<LinearCase, 'R' | 'shape' | 'seed' | 'cols' | 'format'>[] = [
  { rows: 75, norm: true },
  { rows: 2 * 37, norm: true, gate: 'silu' },
  { rows: 2 * 21, norm: true, gate: 'gelu_tanh' },
  { rows: 45, bias: true, accumulate: true, columns: { offset: 19, stride: 83 } },
  { rows: 2 * 21, bias: true, gate: 'silu', columns: { offset: 10, stride: 2 * 31 } },
];

export async function checkLinear(ctx: GpuContext, c: LinearCase): Promise<void> {
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
    const expected = (xin: Float32Array) => {
      const z = referenceLinear(values, c.rows, c.cols, xin, c.R, bias?.subarray(offset, offset + c.rows));
      const want = Float64Array.from(y0);
      for (let t = 0; t < c.R; t++) {
        for (let n = 0; n < c.rows; n += c.gate ? 2 : 1) {
          const v = c.gate ? ACT[c.gate](z[t * c.rows + n]) * z[t * c.rows + n + 1] : z[t * c.rows + n];
          const at = t * outCols + (c.gate ? (offset + n) / 2 : offset + n);
          want[at] = (c.accumulate ? want[at] : 0) + v;
        }
      }
      return want;
    };
    const what = `${JSON.stringify({ ...c, shape: undefined })} ${JSON.stringify(c.shape)}`;
    const want = expected(c.norm ? rmsnormRows(x, c.R, c.cols, normWeight, 1e-5) : x);
    if (q8dotTokens(c.shape, c.format, c.R) > 0 && q8dotFits(ctx.caps, c.shape, c.format, c.R, c.cols)) {
      expect(nmse(got, want), what).toBeLessThan(Q8_TOLERANCE);
      const rounded = emulate8BitX(x, c.R, c.cols, c.norm ? normWeight : undefined, 1e-5, 32 * activationGroup(c.format)) as unknown as Float32Array;
      expect(nmse(got, expected(rounded)), `${what} (X rounded as the kernel does)`).toBeLessThan(Q8_EMULATED_TOLERANCE);
      return;
    }
    const tolerance = c.shape.kernel === 'matmul' && c.shape.f16 ? F16_TOLERANCE : F32_TOLERANCE;
    if (c.format === 'f16') {
      // f16 weights multiply f16 inputs: ≈ 4e-8 from the exact result, f32 summation from X so rounded.
      expect(nmse(got, want), what).toBeLessThan(F16_TOLERANCE);
      const rounded = emulateF16X(x, c.R, c.cols, c.norm ? normWeight : undefined, 1e-5) as unknown as Float32Array;
      expect(nmse(got, expected(rounded)), `${what} (X rounded to f16 as the kernel does)`).toBeLessThan(tolerance);
      return;
    }
    expect(nmse(got, want), what).toBeLessThan(tolerance);
  } finally {
    destroyWeight(w);
    for (const b of [X, Y, G, B]) b?.destroy();
  }
}

/**
 * CPU reference forward pass: the oracle the GPU engine is checked against. It reads like
 * llama2.c's run.c `forward()`: one op per line, in the order the math runs, f32 buffers whose
 * shapes are given where they are declared. Weights are dequantized to f32 once, at load, so a
 * Q8_0/Q4_0 file runs through the same code. Sums accumulate in doubles, which keeps the result
 * within f32 rounding of any f32 implementation.
 */
import { TokenscopeError } from '../errors.ts';
import { roundF16 } from '../f16.ts';
import type { ModelConfig } from './config.ts';
import type { GGUFTensorInfo } from './gguf/reader.ts';
import { elementCount } from './gguf/types.ts';
import { dequantize } from './quant.ts';
import { encodeTensor } from './quantize.ts';
import { nearestInt } from './quantize-k.ts';
import { uploadType, type Quantization } from './recipes.ts';
import type { LayerTensors, ModelTensors } from './tensors.ts';
import { ropeInvFreq, slidingWindow } from './variants.ts';

/** Matrices are (rows, columns) row-major: (out, in), the transpose of GGUF's [in, out] dims. */
export interface ReferenceLayer {
  attnNorm: Float32Array; // (dim)
  wq: Float32Array; // (qDim, dim)   qDim = nHeads * headDim
  wk: Float32Array; // (kvDim, dim)  kvDim = nKvHeads * headDim
  wv: Float32Array; // (kvDim, dim)
  bq: Float32Array; // (qDim), zeros when the model has no Q/K/V bias
  bk: Float32Array; // (kvDim)
  bv: Float32Array; // (kvDim)
  wo: Float32Array; // (dim, qDim)
  ffnNorm: Float32Array; // (dim)
  wGate: Float32Array; // (hiddenDim, dim)
  wUp: Float32Array; // (hiddenDim, dim)
  wDown: Float32Array; // (dim, hiddenDim)
  qNorm: Float32Array | undefined; // (headDim) when config.qkNorm
  kNorm: Float32Array | undefined; // (headDim)
  postAttnNorm: Float32Array | undefined; // (dim) when config.postNorms
  postFfnNorm: Float32Array | undefined; // (dim)
}

/** What loadReferenceWeights reads a file through: a GGUF, or a worker's stand-in that asks the page for the bytes. */
export interface TensorReader {
  tensorBytes(tensor: GGUFTensorInfo): Promise<Uint8Array>;
}

export interface ReferenceWeights {
  tokenEmbd: Float32Array; // (vocabSize, dim)
  layers: ReferenceLayer[];
  outputNorm: Float32Array; // (dim)
  output: Float32Array; // (vocabSize, dim), the same array as tokenEmbd when tied
}

/**
 * Reads and dequantizes every tensor (each once: tied embeddings share one array). With `quant`,
 * the weight matrices are first rounded as the engine re-encodes an F32/F16 file on load
 * (recipes.ts's uploadType), so the reference runs the weights the engine runs.
 */
export async function loadReferenceWeights(gguf: TensorReader, config: ModelConfig, tensors: ModelTensors, quant?: Quantization): Promise<ReferenceWeights> {
  const loaded = new Map<string, Float32Array>();
  const load = async (t: GGUFTensorInfo, matrix = false): Promise<Float32Array> => {
    let values = loaded.get(t.name);
    if (!values) {
      const n = elementCount(t.dims);
      values = dequantize(t.type, await gguf.tensorBytes(t), n);
      const type = matrix ? uploadType(t, config, quant) : t.type;
      if (type !== t.type) values = dequantize(type, encodeTensor(values, type), n);
      loaded.set(t.name, values);
    }
    return values;
  };
  const matrix = (t: GGUFTensorInfo) => load(t, true);
  // A model without Q/K/V bias gets zeros, so the forward pass has no branch for it.
  const bias = (t: GGUFTensorInfo | undefined, length: number) => (t ? load(t) : new Float32Array(length));
  const qDim = config.nHeads * config.headDim;
  const kvDim = config.nKvHeads * config.headDim;
  const layer = async (t: LayerTensors): Promise<ReferenceLayer> => ({
    attnNorm: await load(t.attnNorm),
    wq: await matrix(t.wq),
    wk: await matrix(t.wk),
    wv: await matrix(t.wv),
    bq: await bias(t.bq, qDim),
    bk: await bias(t.bk, kvDim),
    bv: await bias(t.bv, kvDim),
    wo: await matrix(t.wo),
    ffnNorm: await load(t.ffnNorm),
    wGate: await matrix(t.wGate),
    wUp: await matrix(t.wUp),
    wDown: await matrix(t.wDown),
    qNorm: t.qNorm && (await load(t.qNorm)),
    kNorm: t.kNorm && (await load(t.kNorm)),
    postAttnNorm: t.postAttnNorm && (await load(t.postAttnNorm)),
    postFfnNorm: t.postFfnNorm && (await load(t.postFfnNorm)),
  });
  const layers: ReferenceLayer[] = [];
  for (const t of tensors.layers) layers.push(await layer(t));
  return {
    tokenEmbd: await matrix(tensors.tokenEmbd),
    layers,
    outputNorm: await load(tensors.outputNorm),
    output: await matrix(tensors.output),
  };
}

export interface ReferenceOptions {
  /** Positions the KV cache holds. Default: the context length, at most 2048. */
  seqLen?: number;
  /**
   * Round every matrix product's input to int8 as llama.cpp's CPU backend does before it multiplies
   * quantized weights (roundActivations): 'q8_0' (blocks of 32, an f16 scale: its activations for
   * Q4_0 and Q8_0) or 'q8_k' (super-blocks of 256, an f32 scale: for the K-quants); inputs that do
   * not split into those groups as roundProductInput says. Default: none,
   * the f32 reference. What that rounding alone costs in KLD is the bar the engine's own 8-bit
   * activations are held to (test/gpu/activation-rounding.test.ts).
   */
  activations?: ActivationRounding;
}

/** llama.cpp's activation formats: Q8_0 (32 inputs per f16 scale) and Q8_K (256 per f32 scale). */
export type ActivationRounding = 'q8_0' | 'q8_k';

/**
 * out = x rounded as llama.cpp's CPU backend quantizes activations, bit for bit (checked against its
 * library: test/unit/oracle/quantize-ggml.test.ts). q8_0, per group of 32 (quantize_row_q8_0, the
 * x86 AVX build's): q = round-half-even(x · 127/max|x|), out = q · f16(max|x|/127). q8_k, per 256
 * (quantize_row_q8_K_ref): with m the input of largest magnitude (the first, on ties),
 * q = min(127, nearest_int(x · (−127/m))), out = q · 1/(−127/m). A zero group stays zero. `out`
 * may be `x`; x.length must be a multiple of the group.
 */
export function roundActivations(out: Float32Array, x: Float32Array, rounding: ActivationRounding): void {
  const group = rounding === 'q8_0' ? 32 : 256;
  if (x.length % group !== 0) throw new RangeError(`roundActivations: ${x.length} inputs are not groups of ${group}`);
  const fr = Math.fround;
  for (let g = 0; g < x.length; g += group) {
    let amax = 0;
    let max = 0;
    for (let i = g; i < g + group; i++) {
      if (Math.abs(x[i]) > amax) {
        amax = Math.abs(x[i]);
        max = x[i];
      }
    }
    if (rounding === 'q8_0') {
      const d = roundF16(fr(amax / 127));
      const id = amax !== 0 ? fr(127 / amax) : 0;
      for (let i = g; i < g + group; i++) out[i] = nearestInt(fr(x[i] * id)) * d;
    } else if (amax === 0) {
      out.fill(0, g, g + group);
    } else {
      const iscale = fr(-127 / max);
      const d = fr(1 / iscale);
      for (let i = g; i < g + group; i++) out[i] = Math.min(127, nearestInt(fr(iscale * x[i]))) * d;
    }
  }
}

/**
 * A product's input rounded as llama.cpp rounds it for the weights llama-quantize gives rows of its
 * length: `rounding` where the input splits into its groups; else Q8_0 where it splits into 32
 * (a K-quant's rows fall back to Q5_0/Q5_1/Q8_0, multiplied with Q8_0/Q8_1 inputs); else f16 (rows
 * no block fits are F16, whose inputs llama.cpp's CPU backend converts to f16).
 */
export function roundProductInput(out: Float32Array, x: Float32Array, rounding: ActivationRounding): void {
  if (x.length % (rounding === 'q8_k' ? 256 : 32) === 0) roundActivations(out, x, rounding);
  else if (x.length % 32 === 0) roundActivations(out, x, 'q8_0');
  else for (let i = 0; i < x.length; i++) out[i] = roundF16(x[i]);
}

export class ReferenceModel {
  readonly seqLen: number;
  private readonly x: Float32Array; // (dim) the residual stream at the current position
  private readonly xb: Float32Array; // (dim) normed input of a sub-layer, then its output
  private readonly q: Float32Array; // (qDim)
  private readonly attnOut: Float32Array; // (qDim) heads concatenated
  private readonly hb: Float32Array; // (hiddenDim)
  private readonly hb2: Float32Array; // (hiddenDim)
  private readonly att: Float32Array; // (seqLen) one head's attention scores
  private readonly keyCache: Float32Array; // (nLayers, seqLen, kvDim)
  private readonly valueCache: Float32Array; // (nLayers, seqLen, kvDim)
  private readonly logits: Float32Array; // (vocabSize)
  private readonly invFreq: Float32Array[]; // per layer (ropeDim/2): RoPE inverse frequencies
  private readonly rounding: ActivationRounding | undefined;
  private readonly rounded: Float32Array; // (max(dim, qDim, hiddenDim)) a product's input as llama.cpp rounds it

  constructor(
    readonly config: ModelConfig,
    readonly weights: ReferenceWeights,
    options: ReferenceOptions = {},
  ) {
    const c = config;
    const qDim = c.nHeads * c.headDim;
    const kvDim = c.nKvHeads * c.headDim;
    this.seqLen = options.seqLen ?? Math.min(c.contextLength, 2048);
    this.x = new Float32Array(c.dim);
    this.xb = new Float32Array(c.dim);
    this.q = new Float32Array(qDim);
    this.attnOut = new Float32Array(qDim);
    this.hb = new Float32Array(c.hiddenDim);
    this.hb2 = new Float32Array(c.hiddenDim);
    this.att = new Float32Array(this.seqLen);
    this.keyCache = new Float32Array(c.nLayers * this.seqLen * kvDim);
    this.valueCache = new Float32Array(c.nLayers * this.seqLen * kvDim);
    this.logits = new Float32Array(c.vocabSize);
    this.invFreq = Array.from({ length: c.nLayers }, (_, l) => ropeInvFreq(c, l));
    this.rounding = options.activations;
    this.rounded = new Float32Array(options.activations ? Math.max(c.dim, qDim, c.hiddenDim) : 0);
  }

  /** A product's input: `x` itself, or its rounding (options.activations, roundProductInput) in scratch. */
  private input(x: Float32Array): Float32Array {
    if (!this.rounding) return x;
    const out = this.rounded.subarray(0, x.length);
    roundProductInput(out, x, this.rounding);
    return out;
  }

  /** Logits for the token at `pos`, given that positions 0..pos-1 were run before. The array is reused by the next call. */
  forward(token: number, pos: number): Float32Array {
    const c = this.config;
    const w = this.weights;
    if (!(pos >= 0 && pos < this.seqLen) || !(token >= 0 && token < c.vocabSize)) {
      throw new TokenscopeError(
        'bad-input',
        `token ${token} at position ${pos} is outside vocab ${c.vocabSize} / sequence ${this.seqLen}`,
        'Pass a larger seqLen or a valid token id.',
      );
    }
    const qDim = c.nHeads * c.headDim;
    const kvDim = c.nKvHeads * c.headDim;
    const x = this.x;
    x.set(w.tokenEmbd.subarray(token * c.dim, (token + 1) * c.dim));
    scaleInPlace(x, c.embedScale);
    for (let l = 0; l < c.nLayers; l++) {
      const lw = w.layers[l];
      const cacheAt = (l * this.seqLen + pos) * kvDim;
      const k = this.keyCache.subarray(cacheAt, cacheAt + kvDim); // (kvDim) this position's key
      const v = this.valueCache.subarray(cacheAt, cacheAt + kvDim); // (kvDim)
      const window = slidingWindow(c, l);

      rmsnorm(this.xb, x, lw.attnNorm, c.rmsEps);
      const qkvIn = this.input(this.xb);
      matmul(this.q, qkvIn, lw.wq, c.dim, qDim);
      matmul(k, qkvIn, lw.wk, c.dim, kvDim);
      matmul(v, qkvIn, lw.wv, c.dim, kvDim);
      addInPlace(this.q, lw.bq);
      addInPlace(k, lw.bk);
      addInPlace(v, lw.bv);
      if (c.qkNorm) headRmsnorm(this.q, lw.qNorm!, c.headDim, c.rmsEps);
      if (c.qkNorm) headRmsnorm(k, lw.kNorm!, c.headDim, c.rmsEps);
      rope(this.q, pos, c.nHeads, c, this.invFreq[l]);
      rope(k, pos, c.nKvHeads, c, this.invFreq[l]);
      attention(this.attnOut, this.q, this.keyCache, this.valueCache, this.att, l, pos, this.seqLen, c, window);
      matmul(this.xb, this.input(this.attnOut), lw.wo, qDim, c.dim);
      if (c.postNorms) rmsnorm(this.xb, this.xb, lw.postAttnNorm!, c.rmsEps);
      addInPlace(x, this.xb);

      rmsnorm(this.xb, x, lw.ffnNorm, c.rmsEps);
      const ffnIn = this.input(this.xb);
      matmul(this.hb, ffnIn, lw.wGate, c.dim, c.hiddenDim);
      matmul(this.hb2, ffnIn, lw.wUp, c.dim, c.hiddenDim);
      if (c.activation === 'silu') swiglu(this.hb, this.hb, this.hb2);
      else geglu(this.hb, this.hb, this.hb2);
      matmul(this.xb, this.input(this.hb), lw.wDown, c.hiddenDim, c.dim);
      if (c.postNorms) rmsnorm(this.xb, this.xb, lw.postFfnNorm!, c.rmsEps);
      addInPlace(x, this.xb);
    }
    rmsnorm(x, x, w.outputNorm, c.rmsEps);
    matmul(this.logits, this.input(x), w.output, c.dim, c.vocabSize);
    return this.logits;
  }
}

/** Runs `promptIds` from position 0, then `steps` greedy (argmax) tokens; returns the generated ids only. */
export function generateGreedy(model: ReferenceModel, promptIds: readonly number[], steps: number): number[] {
  const generated: number[] = [];
  let token = promptIds[0];
  for (let pos = 0; generated.length < steps; pos++) {
    const logits = model.forward(token, pos);
    if (pos + 1 < promptIds.length) {
      token = promptIds[pos + 1];
    } else {
      token = argmax(logits);
      generated.push(token);
    }
  }
  return generated;
}

/** o = weight * x / rms(x), rms = sqrt(mean(x²) + eps). `o` may be `x`. */
export function rmsnorm(o: Float32Array, x: Float32Array, weight: Float32Array, eps: number): void {
  let ss = 0;
  for (let i = 0; i < x.length; i++) ss += x[i] * x[i];
  const scale = 1 / Math.sqrt(ss / x.length + eps);
  for (let i = 0; i < x.length; i++) o[i] = weight[i] * (scale * x[i]);
}

/** out (d) = W (d, n) · x (n). */
export function matmul(out: Float32Array, x: Float32Array, w: Float32Array, n: number, d: number): void {
  for (let i = 0; i < d; i++) {
    let sum = 0;
    const row = i * n;
    for (let j = 0; j < n; j++) sum += w[row + j] * x[j];
    out[i] = sum;
  }
}

export function addInPlace(x: Float32Array, y: Float32Array): void {
  for (let i = 0; i < x.length; i++) x[i] += y[i];
}

export function scaleInPlace(x: Float32Array, s: number): void {
  if (s !== 1) for (let i = 0; i < x.length; i++) x[i] *= s;
}

/** RMSNorm of each head of `vec` on its own, every head with the same (headDim) weight (Qwen3/Gemma 3 Q/K norm). */
export function headRmsnorm(vec: Float32Array, weight: Float32Array, headDim: number, eps: number): void {
  for (let h = 0; h < vec.length; h += headDim) {
    const head = vec.subarray(h, h + headDim);
    rmsnorm(head, head, weight, eps);
  }
}

/**
 * Rotates the first `ropeDim` dims of each head by position-dependent angles pos·invFreq[i]
 * (by default θ^(-2i/ropeDim); a layer's own from ropeInvFreq for scaled or per-layer RoPE).
 * adjacent: pairs (x[2i], x[2i+1]); neox: pairs (x[i], x[i + ropeDim/2]). Dims past ropeDim pass through.
 */
export function rope(
  vec: Float32Array,
  pos: number,
  nHeads: number,
  c: Pick<ModelConfig, 'headDim' | 'ropeDim' | 'ropeTheta' | 'ropeStyle'>,
  invFreq: ArrayLike<number> = Float64Array.from({ length: c.ropeDim / 2 }, (_, i) => c.ropeTheta ** (-(2 * i) / c.ropeDim)),
): void {
  const half = c.ropeDim / 2;
  for (let h = 0; h < nHeads; h++) {
    const head = h * c.headDim;
    for (let i = 0; i < half; i++) {
      const angle = pos * invFreq[i];
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const a = c.ropeStyle === 'adjacent' ? head + 2 * i : head + i;
      const b = c.ropeStyle === 'adjacent' ? a + 1 : a + half;
      const [v0, v1] = [vec[a], vec[b]];
      vec[a] = v0 * cos - v1 * sin;
      vec[b] = v0 * sin + v1 * cos;
    }
  }
}

/**
 * Causal grouped-query attention for one position: query head h reads KV head h / (nHeads / nKvHeads)
 * over positions 0..pos, scores scaled by 1/sqrt(headDim). With a sliding `window` > 0 only the
 * last `window` positions (pos itself included) are seen, as llama.cpp's LLAMA_SWA_TYPE_STANDARD.
 */
export function attention(
  out: Float32Array,
  q: Float32Array,
  keyCache: Float32Array,
  valueCache: Float32Array,
  att: Float32Array,
  layer: number,
  pos: number,
  seqLen: number,
  c: Pick<ModelConfig, 'nHeads' | 'nKvHeads' | 'headDim'>,
  window = 0,
): void {
  const first = window > 0 ? Math.max(0, pos - window + 1) : 0;
  const kvDim = c.nKvHeads * c.headDim;
  const group = c.nHeads / c.nKvHeads;
  const scale = 1 / Math.sqrt(c.headDim);
  for (let h = 0; h < c.nHeads; h++) {
    const qh = h * c.headDim;
    const kvh = Math.floor(h / group) * c.headDim;
    for (let t = first; t <= pos; t++) {
      const kt = (layer * seqLen + t) * kvDim + kvh;
      let score = 0;
      for (let i = 0; i < c.headDim; i++) score += q[qh + i] * keyCache[kt + i];
      att[t] = score * scale;
    }
    softmax(att.subarray(first, pos + 1));
    for (let i = 0; i < c.headDim; i++) {
      let sum = 0;
      for (let t = first; t <= pos; t++) sum += att[t] * valueCache[(layer * seqLen + t) * kvDim + kvh + i];
      out[qh + i] = sum;
    }
  }
}

export function softmax(x: Float32Array): void {
  const max = x.reduce((m, v) => Math.max(m, v), -Infinity);
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    x[i] = Math.exp(x[i] - max);
    sum += x[i];
  }
  for (let i = 0; i < x.length; i++) x[i] /= sum;
}

/** o = silu(gate) * up, silu(g) = g / (1 + e^-g). `o` may be `gate`. */
export function swiglu(o: Float32Array, gate: Float32Array, up: Float32Array): void {
  for (let i = 0; i < o.length; i++) o[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
}

/**
 * o = gelu(gate) * up with the tanh approximation ggml and Gemma use:
 * gelu(g) = g/2 · (1 + tanh(√(2/π) · (g + 0.044715 g³))). `o` may be `gate`.
 */
export function geglu(o: Float32Array, gate: Float32Array, up: Float32Array): void {
  const c = Math.sqrt(2 / Math.PI);
  for (let i = 0; i < o.length; i++) {
    const g = gate[i];
    o[i] = 0.5 * g * (1 + Math.tanh(c * (g + 0.044715 * g * g * g))) * up[i];
  }
}

/** Index of the largest value; ties go to the lowest index. */
export function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}

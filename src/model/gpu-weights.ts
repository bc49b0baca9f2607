/**
 * A model's weights on the GPU, uploaded once: from a GGUF file (tensor by tensor, optionally
 * quantized on load), or generated on the GPU from a seed for the synthetic-weight presets.
 * Matrices that read the same input are joined at upload so each is one dispatch: Q|K|V stacked
 * by rows (where a file mixes formats among them, each run of one format: Q4_K_M's [Q|K, V]), gate|up
 * interleaved by rows (pairs for the gated epilogue) when their formats match, else apart.
 */
import { storageBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { destroyWeight, interleaveRows, stackRows, syntheticWeight, uploadWeight, type WeightFormat, type WeightTensor } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';
import type { GGUFTensorInfo } from './gguf/reader.ts';
import { formatOfType } from './weight-types.ts';
import { matricesUnder } from './choice.ts';
import type { OpenModel } from './open.ts';
import { joinable, joinableRuns, stackedLabel, weightPlan, type StepMatrix } from './step.ts';
import { dequantize } from './quant.ts';
import { encodeTensor } from './quantize.ts';
import { uploadType, type Quantization } from './recipes.ts';

export interface LayerWeights {
  attnNorm: GPUBuffer; // (dim) f32
  /** [Q|K|V] (nHeads·headDim + 2·nKvHeads·headDim, dim) stacked by rows, or each run of one format stacked (step.ts's joinableRuns). */
  qkv: WeightTensor[];
  bqkv?: GPUBuffer; // (nHeads·headDim + 2·nKvHeads·headDim) f32: bq|bk|bv, qwen2
  /** Per-head RMSNorm of q and of k before RoPE (Qwen3, Gemma 3), (headDim) f32 each. */
  qNorm?: GPUBuffer;
  kNorm?: GPUBuffer;
  wo: WeightTensor; // (dim, nHeads·headDim)
  /** RMSNorm of the attention and FFN outputs before each residual add (Gemma 3), (dim) f32 each. */
  postAttnNorm?: GPUBuffer;
  postFfnNorm?: GPUBuffer;
  ffnNorm: GPUBuffer; // (dim) f32
  /** [gate|up] (2·hiddenDim, dim) with gate row j at 2j and up row j at 2j+1, or [wGate, wUp] when their formats differ. */
  gateUp: WeightTensor[];
  wDown: WeightTensor; // (dim, hiddenDim)
}

export interface GpuWeights {
  tokenEmbd: WeightTensor; // (vocab, dim)
  layers: LayerWeights[];
  outputNorm: GPUBuffer; // (dim) f32
  /** The LM head; the same object as tokenEmbd when the embeddings are tied. */
  output: WeightTensor; // (vocab, dim)
  /** Bytes of all matrices as the kernels read them. */
  matrixBytes: number;
  /** e.g. "q4_0", or "mixed (q8_0, f32)". */
  quantization: string;
  synthetic: boolean;
}

export type { Quantization } from './recipes.ts';

/** A matrix's GGUF-layout bytes in its GPU format, before upload. */
interface Encoded {
  label: string;
  format: WeightFormat;
  rows: number;
  cols: number;
  bytes: Uint8Array;
}

function concatF32(parts: readonly Float32Array[]): Float32Array<ArrayBuffer> {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function summarizeFormats(tensors: WeightTensor[]): string {
  const formats = [...new Set(tensors.map((t) => t.format))];
  return formats.length === 1 ? formats[0] : `mixed (${formats.join(', ')})`;
}

function collect(layers: LayerWeights[], tokenEmbd: WeightTensor, output: WeightTensor): WeightTensor[] {
  const all = [tokenEmbd, ...layers.flatMap((l) => [...l.qkv, l.wo, ...l.gateUp, l.wDown])];
  if (output !== tokenEmbd) all.push(output);
  return all;
}

function finish(layers: LayerWeights[], tokenEmbd: WeightTensor, outputNorm: GPUBuffer, output: WeightTensor, synthetic: boolean): GpuWeights {
  const matrices = collect(layers, tokenEmbd, output);
  return {
    tokenEmbd,
    layers,
    outputNorm,
    output,
    matrixBytes: matrices.reduce((n, t) => n + t.bytes, 0),
    quantization: summarizeFormats(matrices),
    synthetic,
  };
}

/** Upload a GGUF model; `quant` re-encodes F32/F16 matrices on load with ggml's rounding. */
export async function loadGgufWeights(
  ctx: GpuContext,
  model: OpenModel,
  opts: { quant?: Quantization; onProgress?: (fraction: number) => void } = {},
): Promise<GpuWeights> {
  const { gguf, config, tensors } = model;
  const total = gguf.tensors.length;
  let done = 0;
  const tick = () => opts.onProgress?.(++done / total);

  const values = async (info: GGUFTensorInfo): Promise<Float32Array> => {
    const v = dequantize(
      info.type,
      await gguf.tensorBytes(info.name),
      info.dims.reduce((a, b) => a * b, 1),
    );
    tick();
    return v;
  };
  const vector = async (info: GGUFTensorInfo): Promise<GPUBuffer> => storageBufferWith(ctx.device, info.name, await values(info));
  /** A matrix's bytes in the format it will have on the GPU. */
  const encoded = async (info: GGUFTensorInfo): Promise<Encoded> => {
    const [cols, rows] = info.dims;
    const type = uploadType(info, config, opts.quant);
    let bytes = await gguf.tensorBytes(info.name);
    if (type !== info.type) bytes = encodeTensor(dequantize(info.type, bytes, rows * cols), type);
    tick();
    return { label: info.name, format: formatOfType(type), rows, cols, bytes };
  };
  const upload = (m: Encoded) => uploadWeight(ctx, m.label, m.format, m.rows, m.cols, m.bytes);
  const matrix = async (info: GGUFTensorInfo): Promise<WeightTensor> => upload(await encoded(info));

  const tokenEmbd = await matrix(tensors.tokenEmbd);
  const layers: LayerWeights[] = [];
  for (const [l, t] of tensors.layers.entries()) {
    const attnNorm = await vector(t.attnNorm);
    const qkv = [await encoded(t.wq), await encoded(t.wk), await encoded(t.wv)];
    const biases = t.bq && t.bk && t.bv ? [await values(t.bq), await values(t.bk), await values(t.bv)] : undefined;
    const wo = await matrix(t.wo);
    const ffnNorm = await vector(t.ffnNorm);
    const [gate, up] = [await encoded(t.wGate), await encoded(t.wUp)];
    layers.push({
      attnNorm,
      qkv: joinableRuns(qkv).map((run) =>
        run.length === 1
          ? upload(run[0])
          : uploadWeight(
              ctx,
              stackedLabel(l, run),
              run[0].format,
              run.reduce((n, p) => n + p.rows, 0),
              run[0].cols,
              stackRows(run[0].format, run[0].cols, run),
            ),
      ),
      bqkv: biases && storageBufferWith(ctx.device, `blk.${l}.attn_qkv.bias`, concatF32(biases)),
      qNorm: t.qNorm && (await vector(t.qNorm)),
      kNorm: t.kNorm && (await vector(t.kNorm)),
      wo,
      postAttnNorm: t.postAttnNorm && (await vector(t.postAttnNorm)),
      postFfnNorm: t.postFfnNorm && (await vector(t.postFfnNorm)),
      ffnNorm,
      gateUp: joinable([gate, up])
        ? [
            uploadWeight(
              ctx,
              `blk.${l}.ffn_gate_up`,
              gate.format,
              2 * gate.rows,
              gate.cols,
              interleaveRows(gate.format, gate.rows, gate.cols, gate.bytes, up.bytes),
              { rowMultiple: 2 },
            ),
          ]
        : [upload(gate), upload(up)],
      wDown: await matrix(t.wDown),
    });
  }
  const outputNorm = await vector(tensors.outputNorm);
  const output = config.tiedEmbeddings ? tokenEmbd : await matrix(tensors.output);
  return finish(layers, tokenEmbd, outputNorm, output, false);
}

/**
 * Synthetic weights generated on the GPU from a seed: the exact shapes of a real model, values
 * uniform in ±√(3/cols) (unit-variance activations), norms 1. They time like the real thing but
 * generate nonsense — every result made with them says "synthetic weights — speed only".
 */
export async function syntheticWeights(
  ctx: GpuContext,
  config: ModelConfig,
  quant: Quantization,
  seed: number,
  onProgress?: (fraction: number) => void,
): Promise<GpuWeights> {
  const qDim = config.nHeads * config.headDim;
  const kvDim = config.nKvHeads * config.headDim;
  // The plan a real file under `quant` would upload: each matrix's own format, joined where they agree.
  const plan = weightPlan(config, matricesUnder(config, quant));
  const total = 1 + plan.layers.reduce((n, L) => n + L.qkv.length + L.gateUp.length + 2, 0) + (config.tiedEmbeddings ? 0 : 1);
  let done = 0;
  let nextSeed = seed >>> 0;
  const matrix = async (m: StepMatrix, rowMultiple = 1) => {
    const w = await syntheticWeight(ctx, m.label, m.format, m.rows, m.cols, nextSeed++, Math.sqrt(3 / m.cols), { rowMultiple });
    onProgress?.(++done / total);
    return w;
  };
  const each = async (list: readonly StepMatrix[], rowMultiple = 1) => {
    const out: WeightTensor[] = [];
    for (const m of list) out.push(await matrix(m, rowMultiple));
    return out;
  };
  const ones = (label: string, n: number) => storageBufferWith(ctx.device, label, new Float32Array(n).fill(1));
  const zeros = (label: string, n: number) => storageBufferWith(ctx.device, label, new Float32Array(n));

  const tokenEmbd = await matrix(plan.tokenEmbd);
  const layers: LayerWeights[] = [];
  for (const [l, L] of plan.layers.entries()) {
    const p = `blk.${l}`;
    layers.push({
      attnNorm: ones(`${p}.attn_norm`, config.dim),
      qkv: await each(L.qkv),
      bqkv: config.qkvBias ? zeros(`${p}.attn_qkv.bias`, qDim + 2 * kvDim) : undefined,
      qNorm: config.qkNorm ? ones(`${p}.attn_q_norm`, config.headDim) : undefined,
      kNorm: config.qkNorm ? ones(`${p}.attn_k_norm`, config.headDim) : undefined,
      wo: await matrix(L.wo),
      postAttnNorm: config.postNorms ? ones(`${p}.post_attention_norm`, config.dim) : undefined,
      postFfnNorm: config.postNorms ? ones(`${p}.post_ffw_norm`, config.dim) : undefined,
      ffnNorm: ones(`${p}.ffn_norm`, config.dim),
      // A joined gate|up holds (gate, up) row pairs; parts kept apart are plain matrices.
      gateUp: await each(L.gateUp, L.gateUp.length === 1 ? 2 : 1),
      wDown: await matrix(L.wDown),
    });
  }
  const outputNorm = ones('output_norm', config.dim);
  const output = config.tiedEmbeddings ? tokenEmbd : await matrix(plan.output);
  return finish(layers, tokenEmbd, outputNorm, output, true);
}

export function destroyWeights(w: GpuWeights): void {
  for (const t of collect(w.layers, w.tokenEmbd, w.output)) destroyWeight(t);
  for (const l of w.layers) for (const b of [l.attnNorm, l.ffnNorm, l.bqkv, l.qNorm, l.kNorm, l.postAttnNorm, l.postFfnNorm]) b?.destroy();
  w.outputNorm.destroy();
}

/**
 * How much device memory a model needs, computed before anything is allocated, and checked
 * against the device's limits — so a model that does not fit is refused with a clear error
 * instead of a crash halfway through an upload.
 */
import { TokenscopeError } from '../errors.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import { kvBytesPerElement, type KvElement } from '../kernels/select.ts';
import { weightBytes, type WeightFormat } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';

/** One matrix the engine will hold, with the format it will have on the GPU. */
export interface MatrixPlan {
  label: string;
  format: WeightFormat;
  rows: number;
  cols: number;
}

export interface EngineShape {
  /** KV-cache positions per sequence. */
  maxSeq: number;
  /** Sequences that can be in flight at once (KV-cache slots). */
  slots: number;
  /** Most rows (tokens) one step processes: the prefill chunk plus batched decodes. */
  maxRows: number;
}

export interface MemoryPlan {
  weightBytes: number;
  /** f32 vectors: norms and biases. */
  vectorBytes: number;
  /** The KV cache's element type (kvElement of the device's capabilities) and its bytes. */
  kvElement: KvElement;
  kvCacheBytes: number;
  activationBytes: number;
  /** Split decode attention's partials, for the largest step (decodeScratchSize; 0 where decode attention is one pass). */
  attentionScratch: { partAcc: number; partMl: number };
  totalBytes: number;
  /** The largest single buffer that cannot be split (a layer's K or V cache, the logits). */
  largestBufferBytes: number;
  /** The largest buffer bound whole to one binding. */
  largestBindingBytes: number;
}

/** The matrices of a model, labelled by GGUF tensor name (without ".weight"), with their GPU formats. */
export function matrixPlan(config: ModelConfig, formatOf: (label: string, cols: number) => WeightFormat): MatrixPlan[] {
  const qDim = config.nHeads * config.headDim;
  const kvDim = config.nKvHeads * config.headDim;
  const plans: MatrixPlan[] = [{ label: 'token_embd', format: formatOf('token_embd', config.dim), rows: config.vocabSize, cols: config.dim }];
  for (let l = 0; l < config.nLayers; l++) {
    const m = (role: string, rows: number, cols: number) => {
      const label = `blk.${l}.${role}`;
      plans.push({ label, format: formatOf(label, cols), rows, cols });
    };
    m('attn_q', qDim, config.dim);
    m('attn_k', kvDim, config.dim);
    m('attn_v', kvDim, config.dim);
    m('attn_output', config.dim, qDim);
    m('ffn_gate', config.hiddenDim, config.dim);
    m('ffn_up', config.hiddenDim, config.dim);
    m('ffn_down', config.dim, config.hiddenDim);
  }
  if (!config.tiedEmbeddings) plans.push({ label: 'output', format: formatOf('output', config.dim), rows: config.vocabSize, cols: config.dim });
  return plans;
}

/** Per-row 4-byte activations a step holds: token, row entry (2), x, q|k|v, q, att, two FFN buffers. */
export function activationFloatsPerRow(c: ModelConfig): number {
  const qDim = c.nHeads * c.headDim;
  const kvDim = c.nKvHeads * c.headDim;
  return 3 + c.dim + 3 * qDim + 2 * kvDim + 2 * c.hiddenDim + (c.postNorms ? 2 * c.dim : 0);
}

/**
 * Every byte the engine allocates for a model: weights, norm vectors, the KV cache, activations
 * and the attention scratch (`scratch`: kernels/attention.ts's decodeScratchSize on the device; it
 * depends on the device's kernel choices, so a plan made without one leaves it out).
 */
export function planMemory(
  config: ModelConfig,
  matrices: readonly MatrixPlan[],
  shape: EngineShape,
  kv: KvElement,
  scratch: { partAcc: number; partMl: number } = { partAcc: 0, partMl: 0 },
): MemoryPlan {
  const qDim = config.nHeads * config.headDim;
  const kvDim = config.nKvHeads * config.headDim;
  const weights = matrices.reduce((sum, m) => sum + weightBytes(m.format, m.rows, m.cols), 0);
  const vectors = 4 * (config.dim * (2 * config.nLayers + 1) + (config.qkvBias ? config.nLayers * (qDim + 2 * kvDim) : 0));
  const kvLayer = shape.slots * shape.maxSeq * kvDim * kvBytesPerElement(kv);
  const kvBytes = 2 * config.nLayers * kvLayer;
  // The LM head runs on the sampled rows only: one per sequence slot.
  const headRows = Math.min(shape.slots, shape.maxRows);
  const logits = headRows * (config.vocabSize + config.dim + 1) * 4;
  const activations = shape.maxRows * activationFloatsPerRow(config) * 4 + logits;
  const largestActivation = Math.max(shape.maxRows * Math.max(config.hiddenDim, qDim + 2 * kvDim) * 4, headRows * config.vocabSize * 4);
  return {
    weightBytes: weights,
    vectorBytes: vectors,
    kvElement: kv,
    kvCacheBytes: kvBytes,
    activationBytes: activations,
    attentionScratch: scratch,
    totalBytes: weights + vectors + kvBytes + activations + scratch.partAcc + scratch.partMl,
    largestBufferBytes: Math.max(kvLayer, largestActivation, scratch.partAcc),
    largestBindingBytes: Math.max(kvLayer, largestActivation, scratch.partAcc),
  };
}

const GiB = 2 ** 30;
export const fmtBytes = (n: number) => (n >= GiB ? `${(n / GiB).toFixed(2)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`);

/**
 * Refuse a plan that cannot work on this device: a buffer over maxBufferSize or a binding over
 * maxStorageBufferBindingSize, or a total over the caller's memory budget (WebGPU does not tell
 * how much memory a device has, so the budget comes from the user or the runtime).
 */
export function checkFits(
  plan: MemoryPlan,
  caps: { limits: Pick<Capabilities['limits'], 'maxBufferSize' | 'maxStorageBufferBindingSize'> },
  what: string,
  budgetBytes?: number,
): void {
  const { maxBufferSize, maxStorageBufferBindingSize } = caps.limits;
  const shrink = 'Choose a smaller model, a shorter context or fewer batch slots, or a more compact quantization.';
  if (plan.largestBufferBytes > maxBufferSize) {
    throw new TokenscopeError(
      'model-too-large',
      `${what} needs a ${fmtBytes(plan.largestBufferBytes)} buffer, but this device allows at most ${fmtBytes(maxBufferSize)} per buffer.`,
      shrink,
    );
  }
  if (plan.largestBindingBytes > maxStorageBufferBindingSize) {
    throw new TokenscopeError(
      'model-too-large',
      `${what} needs to bind ${fmtBytes(plan.largestBindingBytes)} at once, but this device binds at most ${fmtBytes(maxStorageBufferBindingSize)}.`,
      shrink,
    );
  }
  if (budgetBytes !== undefined && plan.totalBytes > budgetBytes) {
    throw new TokenscopeError(
      'model-too-large',
      `${what} needs ${fmtBytes(plan.totalBytes)} of GPU memory (weights ${fmtBytes(plan.weightBytes)}, KV cache ${fmtBytes(plan.kvCacheBytes)} of ${plan.kvElement}, activations ${fmtBytes(plan.activationBytes + plan.attentionScratch.partAcc + plan.attentionScratch.partMl)}), more than the ${fmtBytes(budgetBytes)} budget.`,
      shrink,
    );
  }
}

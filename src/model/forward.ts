/**
 * The forward pass, recorded once per step shape: R rows in, the dispatches of every op in the
 * order the math runs. Read it top to bottom like llama2.c's forward(); no timing, caching or
 * feature checks in here — those live in the engine and in kernels/select.ts.
 */
import type { GpuContext } from '../gpu/device.ts';
import { attention, type AttentionKernel, type RowLayout } from '../kernels/attention.ts';
import { add, swiglu } from '../kernels/elementwise.ts';
import { embedding } from '../kernels/embedding.ts';
import type { Dispatch } from '../kernels/kernel.ts';
import { kvStore } from '../kernels/kv-store.ts';
import { linear } from '../kernels/linear.ts';
import { rmsnorm } from '../kernels/rmsnorm.ts';
import { rope } from '../kernels/rope.ts';
import { argmax, sample, type SampleKernel } from '../kernels/sampling.ts';
import type { ModelConfig } from './config.ts';
import type { GpuWeights } from './gpu-weights.ts';

/** Buffers a step reads and writes, sized for the engine's largest step. */
export interface StepBuffers {
  tokensIn: GPUBuffer; // (maxRows) u32: the token of each row
  rows: GPUBuffer; // (maxRows) (slot, pos)
  x: GPUBuffer; // (maxRows, dim): the residual stream
  xb: GPUBuffer; // (maxRows, dim): normed input of a sub-layer
  q: GPUBuffer; // (maxRows, nHeads·headDim)
  k: GPUBuffer; // (maxRows, nKvHeads·headDim)
  v: GPUBuffer; // (maxRows, nKvHeads·headDim)
  att: GPUBuffer; // (maxRows, nHeads·headDim): attention output
  proj: GPUBuffer; // (maxRows, dim): a sub-layer's output before the residual add
  hb: GPUBuffer; // (maxRows, hiddenDim): gate, then silu(gate)·up
  hb2: GPUBuffer; // (maxRows, hiddenDim): up
  kCache: GPUBuffer[]; // per layer (slots, maxSeq, nKvHeads·headDim)
  vCache: GPUBuffer[]; // per layer (slots, maxSeq, nKvHeads·headDim)
  headIn: GPUBuffer; // (maxRows, dim): rows gathered for the LM head
  headNormed: GPUBuffer; // (maxRows, dim)
  logits: GPUBuffer; // (maxRows, vocab)
  tokensOut: GPUBuffer; // (maxRows) u32: the sampled token per LM-head row
}

export interface StepProgram {
  R: number;
  /** Embedding and every layer: pass one. */
  body: Dispatch[];
  /** Final norm, LM head and sampling over `headRows` gathered rows: pass two. */
  head: Dispatch[];
  headRows: number;
  /** Attention kernels, whose cost depends on the step's positions. */
  attention: AttentionKernel[];
  /** The sampler when the program draws tokens (temperature > 0); greedy programs use argmax. */
  sampler: SampleKernel | null;
}

/** How a program picks each row's next token. */
export type Sampler = 'greedy' | 'sample';

export interface CacheShape {
  slots: number;
  maxSeq: number;
}

/** Record the dispatches of one step of R rows (headRows of them feed the LM head). */
export async function buildStep(
  ctx: GpuContext,
  c: ModelConfig,
  w: GpuWeights,
  b: StepBuffers,
  cache: CacheShape,
  R: number,
  headRows: number,
  layout: RowLayout,
  sampler: Sampler = 'greedy',
): Promise<StepProgram> {
  const kvDim = c.nKvHeads * c.headDim;
  const heads = { nHeads: c.nHeads, nKvHeads: c.nKvHeads, headDim: c.headDim, maxSeq: cache.maxSeq };
  const body: Dispatch[] = [];
  const attentionKernels: AttentionKernel[] = [];
  const emit = (d: Dispatch | Dispatch[]) => body.push(...(Array.isArray(d) ? d : [d]));

  emit(await embedding(ctx, 'embed', w.tokenEmbd, b.tokensIn, b.x, R));
  for (let l = 0; l < c.nLayers; l++) {
    const L = w.layers[l];
    const at = `layer${l}`;
    // attention
    emit(await rmsnorm(ctx, `${at}.attn_norm`, b.x, L.attnNorm, b.xb, R, c.dim, c.rmsEps));
    emit(await linear(ctx, `${at}.wq`, L.wq, b.xb, b.q, R, { bias: L.bq }));
    emit(await linear(ctx, `${at}.wk`, L.wk, b.xb, b.k, R, { bias: L.bk }));
    emit(await linear(ctx, `${at}.wv`, L.wv, b.xb, b.v, R, { bias: L.bv }));
    emit(await rope(ctx, `${at}.rope_q`, b.q, b.rows, R, c.nHeads, c));
    emit(await rope(ctx, `${at}.rope_k`, b.k, b.rows, R, c.nKvHeads, c));
    emit(await kvStore(ctx, `${at}.kv_store`, { k: b.k, v: b.v, rows: b.rows, kCache: b.kCache[l], vCache: b.vCache[l] }, R, { ...cache, kvDim }));
    const attn = await attention(ctx, `${at}.attention`, { q: b.q, kCache: b.kCache[l], vCache: b.vCache[l], rows: b.rows, out: b.att }, R, heads, layout);
    attentionKernels.push(attn);
    emit(attn.dispatches);
    emit(await linear(ctx, `${at}.wo`, L.wo, b.att, b.proj, R));
    emit(await add(ctx, `${at}.attn_residual`, b.x, b.proj, R, c.dim));
    // feed-forward (SwiGLU)
    emit(await rmsnorm(ctx, `${at}.ffn_norm`, b.x, L.ffnNorm, b.xb, R, c.dim, c.rmsEps));
    emit(await linear(ctx, `${at}.w_gate`, L.wGate, b.xb, b.hb, R));
    emit(await linear(ctx, `${at}.w_up`, L.wUp, b.xb, b.hb2, R));
    emit(await swiglu(ctx, `${at}.swiglu`, b.hb, b.hb2, b.hb, R, c.hiddenDim));
    emit(await linear(ctx, `${at}.w_down`, L.wDown, b.hb, b.proj, R));
    emit(await add(ctx, `${at}.ffn_residual`, b.x, b.proj, R, c.dim));
  }

  const head: Dispatch[] = [];
  let drawer: SampleKernel | null = null;
  if (headRows > 0) {
    head.push(await rmsnorm(ctx, 'output_norm', b.headIn, w.outputNorm, b.headNormed, headRows, c.dim, c.rmsEps));
    head.push(...(await linear(ctx, 'lm_head', w.output, b.headNormed, b.logits, headRows)));
    if (sampler === 'greedy') {
      head.push(await argmax(ctx, 'argmax', b.logits, b.tokensOut, headRows, c.vocabSize));
    } else {
      drawer = await sample(ctx, 'sample', b.logits, b.tokensOut, headRows, c.vocabSize, { temperature: 1, topK: 0, topP: 1, seed: 0, step: 0 });
      head.push(drawer.dispatch);
    }
  }
  return { R, body, head, headRows, attention: attentionKernels, sampler: drawer };
}

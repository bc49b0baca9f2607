/**
 * The forward pass, recorded once per step shape (body per row count, head per sampled-row count): R rows in, the dispatches of every op in the
 * order the math runs. Read it top to bottom like llama2.c's forward(); no timing, caching or
 * feature checks in here — those live in the engine and in kernels/select.ts.
 *
 * Fused: each RMSNorm is the prologue of the matvec that reads its output, Q|K|V and gate|up are
 * one matvec each (joined at upload), SwiGLU is gate|up's epilogue, each residual add is the
 * epilogue of wo / down, RoPE and the KV-cache store are one pass. A decode layer is 7
 * dispatches (6 where attention is one), the head 2.
 */
import { TokenscopeError } from '../errors.ts';
import type { GpuContext } from '../gpu/device.ts';
import { attention, type AttentionKernel, type DecodeScratch, type RowLayout } from '../kernels/attention.ts';
import { add, swiglu } from '../kernels/elementwise.ts';
import { embedding } from '../kernels/embedding.ts';
import type { Dispatch } from '../kernels/kernel.ts';
import type { KvElement } from '../kernels/select.ts';
import { linear, type GateActivation, type LinearOptions } from '../kernels/linear.ts';
import { rmsnorm } from '../kernels/rmsnorm.ts';
import { ropeStore } from '../kernels/rope-store.ts';
import { argmax, sample, type SampleKernel } from '../kernels/sampling.ts';
import type { WeightTensor } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';
import type { GpuWeights } from './gpu-weights.ts';
import { embeddingScale, gateActivation, slidingWindow } from './variants.ts';

/** Buffers a step reads and writes, sized for the engine's largest step. */
export interface StepBuffers {
  tokensIn: GPUBuffer; // (maxRows) u32: the token of each row
  rows: GPUBuffer; // (maxRows) (slot, pos)
  x: GPUBuffer; // (maxRows, dim): the residual stream
  qkv: GPUBuffer; // (maxRows, (nHeads + 2·nKvHeads)·headDim): the Q|K|V projection
  q: GPUBuffer; // (maxRows, nHeads·headDim): rotated queries
  att: GPUBuffer; // (maxRows, nHeads·headDim): attention output
  hb: GPUBuffer; // (maxRows, hiddenDim): act(gate)·up
  hb2: GPUBuffer; // (maxRows, hiddenDim): up, where gate and up could not be joined
  /** Gemma's post norms: a sub-layer's output before and after its RMSNorm, added to x after. */
  proj?: GPUBuffer; // (maxRows, dim) when config.postNorms
  projNormed?: GPUBuffer; // (maxRows, dim)
  kCache: GPUBuffer[]; // per layer (slots, maxSeq, nKvHeads·headDim) of kvElement
  vCache: GPUBuffer[]; // per layer (slots, maxSeq, nKvHeads·headDim) of kvElement
  kvElement: KvElement; // the KV cache's element type (f16 where the device has shader-f16)
  invFreq: GPUBuffer[]; // per layer (ropeDim/2) f32: RoPE's inverse frequencies (variants.ts)
  headIn: GPUBuffer; // (maxRows, dim): rows gathered for the LM head
  logits: GPUBuffer; // (maxRows, vocab)
  tokensOut: GPUBuffer; // (maxRows) u32: the sampled token per LM-head row
  attnScratch: DecodeScratch; // decode attention's partials, for the largest step (every layer reuses them)
}

/** Embedding and every layer for R rows: pass one of a step. */
export interface BodyProgram {
  R: number;
  body: Dispatch[];
  /** Attention kernels, whose cost depends on the step's positions. */
  attention: AttentionKernel[];
}

/** Final norm, LM head and sampling over `headRows` gathered rows: pass two. */
export interface HeadProgram {
  headRows: number;
  head: Dispatch[];
  /** The sampler when the program draws tokens (temperature > 0); greedy programs use argmax. */
  sampler: SampleKernel | null;
}

/** A step: a body of R rows and a head of `headRows` rows, built and cached apart. */
export type StepProgram = BodyProgram & HeadProgram;

/** How a program picks each row's next token. */
export type Sampler = 'greedy' | 'sample';

export interface CacheShape {
  slots: number;
  maxSeq: number;
}

/** Dispatches of a recorded program: what one step costs in launches. */
export function dispatchCount(p: StepProgram): number {
  return p.body.length + p.head.length;
}

/** Record the embedding and every layer of a step of R rows. */
export async function buildBody(
  ctx: GpuContext,
  c: ModelConfig,
  w: GpuWeights,
  b: StepBuffers,
  cache: CacheShape,
  R: number,
  layout: RowLayout,
): Promise<BodyProgram> {
  const body: Dispatch[] = [];
  const attentionKernels: AttentionKernel[] = [];
  const emit = (d: Dispatch | Dispatch[]) => body.push(...(Array.isArray(d) ? d : [d]));
  const rope = { nHeads: c.nHeads, nKvHeads: c.nKvHeads, headDim: c.headDim, ropeDim: c.ropeDim, ropeStyle: c.ropeStyle, ...cache, kv: b.kvElement };

  emit(await embedding(ctx, 'embed', w.tokenEmbd, b.tokensIn, b.x, R, embeddingScale(c)));
  for (let l = 0; l < c.nLayers; l++) {
    const L = w.layers[l];
    const at = `layer${l}`;
    const heads = { nHeads: c.nHeads, nKvHeads: c.nKvHeads, headDim: c.headDim, maxSeq: cache.maxSeq, window: slidingWindow(c, l), kv: b.kvElement };
    const headNorm = L.qNorm && L.kNorm ? { q: L.qNorm, k: L.kNorm, eps: c.rmsEps } : undefined;
    // attention
    emit(await joinedLinear(ctx, `${at}.qkv`, L.qkv, b.x, b.qkv, R, { norm: { weight: L.attnNorm, eps: c.rmsEps }, bias: L.bqkv }));
    emit(
      await ropeStore(
        ctx,
        `${at}.rope_store`,
        { qkv: b.qkv, rows: b.rows, invFreq: b.invFreq[l], q: b.q, kCache: b.kCache[l], vCache: b.vCache[l], headNorm },
        R,
        rope,
      ),
    );
    const attn = await attention(
      ctx,
      `${at}.attention`,
      { q: b.q, kCache: b.kCache[l], vCache: b.vCache[l], rows: b.rows, out: b.att, scratch: b.attnScratch },
      R,
      heads,
      layout,
    );
    attentionKernels.push(attn);
    emit(attn.dispatches);
    emit(await residual(ctx, `${at}.wo`, L.wo, b.att, b, R, L.postAttnNorm, c));
    // feed-forward
    emit(await gatedFeedForward(ctx, `${at}.ffn_gate_up`, L.gateUp, b, R, { weight: L.ffnNorm, eps: c.rmsEps }, gateActivation(c)));
    emit(await residual(ctx, `${at}.w_down`, L.wDown, b.hb, b, R, L.postFfnNorm, c));
  }
  return { R, body, attention: attentionKernels };
}

/** Record the final norm, LM head and sampler over `headRows` rows gathered into headIn (none when 0). */
export async function buildHead(
  ctx: GpuContext,
  c: ModelConfig,
  w: GpuWeights,
  b: StepBuffers,
  headRows: number,
  sampler: Sampler = 'greedy',
): Promise<HeadProgram> {
  const head: Dispatch[] = [];
  let drawer: SampleKernel | null = null;
  if (headRows > 0) {
    head.push(...(await linear(ctx, 'lm_head', w.output, b.headIn, b.logits, headRows, { norm: { weight: w.outputNorm, eps: c.rmsEps } })));
    if (sampler === 'greedy') {
      head.push(...(await argmax(ctx, 'argmax', b.logits, b.tokensOut, headRows, c.vocabSize)));
    } else {
      drawer = await sample(ctx, 'sample', b.logits, b.tokensOut, headRows, c.vocabSize, { temperature: 1, topK: 0, topP: 1, seed: 0, step: 0 });
      head.push(drawer.dispatch);
    }
  }
  return { headRows, head, sampler: drawer };
}

/**
 * x += W·in: the residual add is the linear's epilogue, or — with a post norm (Gemma 3) — the
 * projection, its RMSNorm and the add are three dispatches.
 */
async function residual(
  ctx: GpuContext,
  owner: string,
  w: WeightTensor,
  input: GPUBuffer,
  b: StepBuffers,
  R: number,
  postNorm: GPUBuffer | undefined,
  c: ModelConfig,
): Promise<Dispatch[]> {
  if (!postNorm) return linear(ctx, owner, w, input, b.x, R, { accumulate: true });
  return [
    ...(await linear(ctx, owner, w, input, b.proj!, R)),
    await rmsnorm(ctx, `${owner}.post_norm`, b.proj!, postNorm, b.projNormed!, R, c.dim, c.rmsEps),
    await add(ctx, `${owner}.residual`, b.x, b.projNormed!, R, c.dim),
  ];
}

/** A linear layer whose weight was joined at upload (one dispatch), or its parts side by side in Y. */
async function joinedLinear(
  ctx: GpuContext,
  owner: string,
  parts: readonly WeightTensor[],
  x: GPUBuffer,
  y: GPUBuffer,
  R: number,
  opts: LinearOptions,
): Promise<Dispatch[]> {
  if (parts.length === 1) return linear(ctx, owner, parts[0], x, y, R, opts);
  const stride = parts.reduce((n, p) => n + p.rows, 0);
  const out: Dispatch[] = [];
  let offset = 0;
  for (const [i, p] of parts.entries()) {
    out.push(...(await linear(ctx, `${owner}.part${i}`, p, x, y, R, { ...opts, columns: { offset, stride } })));
    offset += p.rows;
  }
  return out;
}

/** hb = act(gate)·up of the normed x: one gated linear, or gate, up and a SwiGLU where they were kept apart. */
async function gatedFeedForward(
  ctx: GpuContext,
  owner: string,
  gateUp: readonly WeightTensor[],
  b: StepBuffers,
  R: number,
  norm: { weight: GPUBuffer; eps: number },
  act: GateActivation,
): Promise<Dispatch[]> {
  if (gateUp.length === 1) return linear(ctx, owner, gateUp[0], b.x, b.hb, R, { norm, gate: act });
  if (act !== 'silu') {
    throw new TokenscopeError(
      'model-unsupported',
      `${owner}: gate and up have different formats, and only SiLU runs apart from the gated matvec.`,
      'Use a file whose gate and up tensors share one format.',
    );
  }
  const [gate, up] = gateUp;
  return [
    ...(await linear(ctx, `${owner}.gate`, gate, b.x, b.hb, R, { norm })),
    ...(await linear(ctx, `${owner}.up`, up, b.x, b.hb2, R, { norm })),
    await swiglu(ctx, `${owner}.swiglu`, b.hb, b.hb2, b.hb, R, gate.rows),
  ];
}

/**
 * The forward pass on the GPU: step.ts's ops (read them there, top to bottom) turned into
 * dispatches, once per step shape (body per row count, head per sampled-row count). No timing,
 * caching or feature checks in here — those live in the engine and in kernels/select.ts.
 *
 * Fused: each RMSNorm is the prologue of the matvec that reads its output, Q|K|V and gate|up are
 * one matvec each (joined at upload), SwiGLU is gate|up's epilogue, each residual add is the
 * epilogue of wo / down; RoPE and the KV-cache store are one pass — inside decode attention
 * where a step's rows are distinct sequences. A decode layer is 5 dispatches (6 where a long
 * context splits attention and merges the splits), the head 2 (3 with a two-pass argmax).
 */
import { TokenscopeError } from '../errors.ts';
import type { GpuContext } from '../gpu/device.ts';
import { attention, ropeFusedInto, type DecodeScratch, type RowLayout } from '../kernels/attention.ts';
import { add, swiglu } from '../kernels/elementwise.ts';
import { embedding } from '../kernels/embedding.ts';
import type { Dispatch } from '../kernels/kernel.ts';
import type { KvElement } from '../kernels/select.ts';
import { linear, linearPair, type LinearOptions } from '../kernels/linear.ts';
import { linearProblemKey } from '../kernels/linear-plan.ts';
import type { LinearShape } from '../kernels/linear-shapes.ts';
import { rmsnorm } from '../kernels/rmsnorm.ts';
import { ropeStore } from '../kernels/rope-store.ts';
import { argmax, FIRST_DRAW, sample, type SampleKernel } from '../kernels/sampling.ts';
import type { WeightTensor } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';
import type { GpuWeights } from './gpu-weights.ts';
import { bodyOps, headOps, type MatrixRef, type Sampler, type StepBuffer, type StepOp, type VectorRef, type WeightPlan } from './step.ts';
import { gateActivation } from './variants.ts';

export type { Sampler } from './step.ts';

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
  /**
   * (maxRows) u32: the sampled token per LM-head row — the same buffer as tokensIn, so the token a
   * step samples for row 0 is the next step's input with no copy (the embedding reads it first).
   */
  tokensOut: GPUBuffer;
  attnScratch: DecodeScratch; // decode attention's partials, for the largest step (every layer reuses them)
}

/** Embedding and every layer for R rows: pass one of a step. */
export interface BodyProgram {
  R: number;
  body: Dispatch[];
}

/** What a body program is built for besides its row count: how its rows relate, and the most keys a row attends (select.ts's decodeAttentionClass). */
export interface BodyShape {
  R: number;
  layout: RowLayout;
  keys: number;
}

/** Final norm, LM head and sampling over `headRows` rows: gathered into headIn, or (direct) rows 0…headRows−1 of x. */
export interface HeadProgram {
  headRows: number;
  /** Reads x's first headRows rows in place (the step samples exactly those), so it records in the body's pass. */
  direct: boolean;
  head: Dispatch[];
  /** The sampler when the program draws tokens (temperature > 0); greedy programs use argmax. */
  sampler: SampleKernel | null;
}

/** A step: a body of R rows and a head of `headRows` rows, built and cached apart. */
export type StepProgram = BodyProgram & HeadProgram;

export interface CacheShape {
  slots: number;
  maxSeq: number;
}

/** Tuned linear shapes by linearProblemKey; problems not in it run the static choice. */
export type TunedShapes = Readonly<Record<string, LinearShape>>;

/** Dispatches of a recorded program: what one step costs in launches. */
export function dispatchCount(p: StepProgram): number {
  return p.body.length + p.head.length;
}

/** Record the embedding and every layer of a step (step.ts's bodyOps over `plan`, weightPlanOf(w)). */
export async function buildBody(
  ctx: GpuContext,
  c: ModelConfig,
  w: GpuWeights,
  plan: WeightPlan,
  b: StepBuffers,
  cache: CacheShape,
  shape: BodyShape,
  tuned: TunedShapes = {},
): Promise<BodyProgram> {
  const body: Dispatch[] = [];
  for (const op of bodyOps(c, plan)) {
    const made = await record(ctx, c, w, b, cache, shape, op, tuned);
    body.push(...made.dispatches);
  }
  return { R: shape.R, body };
}

/**
 * Record the final norm, LM head and sampler over `headRows` rows (none when 0; step.ts's headOps):
 * the rows gathered into headIn, or with `direct` rows 0…headRows−1 of x as they are.
 */
export async function buildHead(
  ctx: GpuContext,
  c: ModelConfig,
  w: GpuWeights,
  plan: WeightPlan,
  b: StepBuffers,
  headRows: number,
  sampler: Sampler = 'greedy',
  direct = false,
  tuned: TunedShapes = {},
): Promise<HeadProgram> {
  const head: Dispatch[] = [];
  let drawer: SampleKernel | null = null;
  const buffers = direct ? { ...b, headIn: b.x } : b;
  if (headRows > 0) {
    for (const op of headOps(plan, sampler)) {
      const made = await record(ctx, c, w, buffers, null, { R: headRows, layout: 'any', keys: Infinity }, op, tuned);
      head.push(...made.dispatches);
      drawer = made.sampler ?? drawer;
    }
  }
  return { headRows, direct, head, sampler: drawer };
}

/** The dispatches of one op over the step's rows. */
async function record(
  ctx: GpuContext,
  c: ModelConfig,
  w: GpuWeights,
  b: StepBuffers,
  cache: CacheShape | null,
  shape: BodyShape,
  op: StepOp,
  tuned: TunedShapes,
): Promise<{ dispatches: Dispatch[]; sampler?: SampleKernel }> {
  const { R, layout, keys } = shape;
  const kvCache = (): CacheShape => {
    if (!cache) throw new RangeError(`${op.name}: a head program has no KV cache.`);
    return cache;
  };
  const buffer = (name: StepBuffer): GPUBuffer => {
    const found = b[name];
    if (!found) throw new RangeError(`${op.name}: the step has no ${name} buffer.`);
    return found;
  };
  const heads = { nHeads: c.nHeads, nKvHeads: c.nKvHeads, headDim: c.headDim, kv: b.kvElement };
  const headNorm = (layer: number, wanted: boolean) => {
    const L = w.layers[layer];
    return wanted && L.qNorm && L.kNorm ? { q: L.qNorm, k: L.kNorm, eps: c.rmsEps } : undefined;
  };
  switch (op.op) {
    case 'embedding':
      return { dispatches: await embedding(ctx, op.name, matrixOf(w, op.table), b.tokensIn, b.x, R, op.scale) };
    case 'linear': {
      const norm = op.norm && { weight: vectorOf(w, op.norm), eps: c.rmsEps };
      const m = matrixOf(w, op.weight);
      const shape = tuned[linearProblemKey(m.format, m.rows, m.cols, R)];
      const opts: LinearOptions = { norm, bias: op.bias && vectorOf(w, op.bias), gate: op.gate, accumulate: op.accumulate, columns: op.columns, shape };
      if (op.second) {
        const m2 = matrixOf(w, op.second.weight);
        const pairShape = tuned[linearProblemKey(m2.format, m.rows + m2.rows, m2.cols, R)];
        const second = tuned[linearProblemKey(m2.format, m2.rows, m2.cols, R)];
        return { dispatches: await linearPair(ctx, op.name, m, m2, buffer(op.input), buffer(op.output), R, { ...opts, shape: pairShape }, [shape, second]) };
      }
      return { dispatches: await linear(ctx, op.name, m, buffer(op.input), buffer(op.output), R, opts) };
    }
    case 'rope_store': {
      // Decode attention rotates and stores itself where the rows are distinct sequences.
      if (ropeFusedInto(ctx.caps, heads, R, layout, keys)) return { dispatches: [] };
      const bufs = {
        qkv: b.qkv,
        rows: b.rows,
        invFreq: b.invFreq[op.layer],
        q: b.q,
        kCache: b.kCache[op.layer],
        vCache: b.vCache[op.layer],
        headNorm: headNorm(op.layer, op.headNorm),
      };
      return { dispatches: [await ropeStore(ctx, op.name, bufs, R, { ...heads, ropeDim: c.ropeDim, ropeStyle: c.ropeStyle, ...kvCache() })] };
    }
    case 'attention': {
      const bufs = { q: b.q, kCache: b.kCache[op.layer], vCache: b.vCache[op.layer], rows: b.rows, out: b.att, scratch: b.attnScratch };
      const rope = { qkv: b.qkv, invFreq: b.invFreq[op.layer], headNorm: headNorm(op.layer, c.qkNorm), ropeDim: c.ropeDim, ropeStyle: c.ropeStyle };
      return { dispatches: await attention(ctx, op.name, bufs, R, { ...heads, maxSeq: kvCache().maxSeq, window: op.window }, layout, keys, rope) };
    }
    case 'rmsnorm':
      return { dispatches: [await rmsnorm(ctx, op.name, buffer(op.input), vectorOf(w, op.weight), buffer(op.output), R, c.dim, c.rmsEps)] };
    case 'add':
      return { dispatches: [await add(ctx, op.name, buffer(op.into), buffer(op.from), R, c.dim)] };
    case 'swiglu': {
      if (gateActivation(c) !== 'silu') {
        throw new TokenscopeError(
          'model-unsupported',
          `${op.name}: gate and up have different formats, and only SiLU runs apart from the gated matvec.`,
          'Use a file whose gate and up tensors share one format.',
        );
      }
      return { dispatches: [await swiglu(ctx, op.name, buffer(op.gate), buffer(op.up), buffer(op.output), R, op.width)] };
    }
    case 'argmax':
      return { dispatches: await argmax(ctx, op.name, b.logits, b.tokensOut, R, c.vocabSize) };
    case 'sample': {
      const drawer = await sample(ctx, op.name, b.logits, b.tokensOut, R, c.vocabSize, FIRST_DRAW);
      return { dispatches: [drawer.dispatch], sampler: drawer };
    }
  }
}

function matrixOf(w: GpuWeights, ref: MatrixRef): WeightTensor {
  if (ref.layer === undefined) return w[ref.tensor];
  const L = w.layers[ref.layer];
  return ref.tensor === 'qkv' || ref.tensor === 'gateUp' ? L[ref.tensor][ref.part] : L[ref.tensor];
}

function vectorOf(w: GpuWeights, ref: VectorRef): GPUBuffer {
  const v = ref.layer === undefined ? w.outputNorm : w.layers[ref.layer][ref.vector];
  if (!v) throw new RangeError(`The weights have no ${ref.vector}${ref.layer === undefined ? '' : ` in layer ${ref.layer}`}.`);
  return v;
}

/** The GPU-free plan of uploaded weights: what step.ts's ops and costOfStep read. */
export function weightPlanOf(w: GpuWeights): WeightPlan {
  const m = (t: WeightTensor) => ({ label: t.label, format: t.format, rows: t.rows, cols: t.cols });
  return {
    tokenEmbd: m(w.tokenEmbd),
    layers: w.layers.map((L) => ({ qkv: L.qkv.map(m), wo: m(L.wo), gateUp: L.gateUp.map(m), wDown: m(L.wDown) })),
    output: m(w.output),
  };
}

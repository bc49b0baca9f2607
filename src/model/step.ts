/**
 * The forward pass as data: a step is a list of ops, read top to bottom like llama2.c's
 * forward(). Two things consume the list:
 *   - forward.ts turns each op into dispatches (the GPU program of a step), and
 *   - costOfStep turns each op into FLOPs and bytes with the kernels' own cost formulas — no GPU
 *     needed, so the engine's stepCost, the roofline, the what-if panel, the preflight estimate
 *     and --inspect all count a step the same way.
 *
 * Nothing here touches a device: ops name the weights and buffers they use, and the matrices'
 * formats and shapes come from a WeightPlan (planned before upload, or read off uploaded weights).
 */
import { attentionCost } from '../kernels/attention.ts';
import { residualAddCost, swigluCost } from '../kernels/elementwise.ts';
import { embeddingCost } from '../kernels/embedding.ts';
import { ZERO_COST, addCost, type Cost, type KernelClass } from '../kernels/kernel.ts';
import { linearCost, linearKind, type GateActivation } from '../kernels/linear.ts';
import { rmsnormCost } from '../kernels/rmsnorm.ts';
import { ropeStoreCost } from '../kernels/rope-store.ts';
import type { RowDesc } from '../kernels/rows.ts';
import { argmaxCost, FIRST_DRAW, sampleCost, type SamplingParams } from '../kernels/sampling.ts';
import type { KvElement } from '../kernels/select.ts';
import type { WeightFormat } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';
import type { MatrixPlan } from './memory.ts';
import { embeddingScale, gateActivation, slidingWindow } from './variants.ts';

/** A matrix as the kernels read it: one GGUF matrix, or several joined at upload (Q|K|V, gate|up). */
export interface StepMatrix {
  label: string;
  format: WeightFormat;
  rows: number;
  cols: number;
}

/** The matrices of a layer as the engine holds them: joined where their formats allow. */
export interface LayerPlan {
  /** [Q|K|V] stacked by rows; where their formats differ, each run of one format stacked (Q4_K_M: [Q|K, V]). */
  qkv: StepMatrix[];
  wo: StepMatrix;
  /** [gate|up] interleaved by rows, or [gate, up] when their formats differ. */
  gateUp: StepMatrix[];
  wDown: StepMatrix;
}

/** Every matrix a step reads, GPU-free. */
export interface WeightPlan {
  tokenEmbd: StepMatrix;
  layers: LayerPlan[];
  /** The LM head: tokenEmbd itself when the embeddings are tied. */
  output: StepMatrix;
}

/** Matrices that become one at upload: one format, one width (gpu-weights.ts joins by this rule). */
export function joinable(parts: readonly Pick<StepMatrix, 'format' | 'cols'>[]): boolean {
  return parts.every((p) => p.format === parts[0].format && p.cols === parts[0].cols);
}

/**
 * Stacked matrices in order, each run of consecutive parts that are joinable: Q|K|V whole, or
 * where Q4_K_M gives V more bits, [Q|K, V] — one dispatch fewer than three (gpu-weights.ts stacks by this rule).
 */
export function joinableRuns<T extends Pick<StepMatrix, 'format' | 'cols'>>(parts: readonly T[]): T[][] {
  const runs: T[][] = [];
  for (const p of parts) {
    const last = runs.at(-1);
    if (last && joinable([last[0], p])) last.push(p);
    else runs.push([p]);
  }
  return runs;
}

/** The label of stacked attention matrices: blk.N.attn_q + blk.N.attn_k → blk.N.attn_qk. */
export function stackedLabel(layer: number, parts: readonly Pick<StepMatrix, 'label'>[]): string {
  return parts.length === 1 ? parts[0].label : `blk.${layer}.attn_${parts.map((p) => p.label.slice(p.label.lastIndexOf('_') + 1)).join('')}`;
}

/** The weights a step reads, from the matrices planned before upload (memory.ts's matrixPlan). */
export function weightPlan(config: ModelConfig, matrices: readonly MatrixPlan[]): WeightPlan {
  const byLabel = new Map(matrices.map((m) => [m.label, m]));
  const get = (label: string): StepMatrix => {
    const m = byLabel.get(label);
    if (!m) throw new RangeError(`The plan has no matrix ${label}.`);
    return m;
  };
  const joined = (label: string, parts: StepMatrix[]): StepMatrix[] =>
    joinable(parts) ? [{ label, format: parts[0].format, rows: parts.reduce((n, p) => n + p.rows, 0), cols: parts[0].cols }] : parts;
  const layers = Array.from({ length: config.nLayers }, (_, l) => ({
    qkv: joinableRuns([get(`blk.${l}.attn_q`), get(`blk.${l}.attn_k`), get(`blk.${l}.attn_v`)]).flatMap((run) => joined(stackedLabel(l, run), run)),
    wo: get(`blk.${l}.attn_output`),
    gateUp: joined(`blk.${l}.ffn_gate_up`, [get(`blk.${l}.ffn_gate`), get(`blk.${l}.ffn_up`)]),
    wDown: get(`blk.${l}.ffn_down`),
  }));
  const tokenEmbd = get('token_embd');
  return { tokenEmbd, layers, output: config.tiedEmbeddings ? tokenEmbd : get('output') };
}

/** Activation buffers of a step (forward.ts's StepBuffers). */
export type StepBuffer = 'x' | 'qkv' | 'q' | 'att' | 'hb' | 'hb2' | 'proj' | 'projNormed' | 'headIn' | 'logits';

/** A weight matrix of the plan: a layer's (part of a joined list) or the model's. */
export type MatrixRef =
  { layer: number; tensor: 'qkv' | 'gateUp'; part: number } | { layer: number; tensor: 'wo' | 'wDown' } | { layer?: undefined; tensor: 'tokenEmbd' | 'output' };

/** An f32 vector: a layer's norm weights or bias, or the final norm. */
export type VectorRef =
  { layer: number; vector: 'attnNorm' | 'ffnNorm' | 'postAttnNorm' | 'postFfnNorm' | 'bqkv' } | { layer?: undefined; vector: 'outputNorm' };

/** One named op of a step, in the order the math runs. */
export type StepOp =
  | { op: 'embedding'; name: string; table: MatrixRef; matrix: StepMatrix; scale: number }
  | {
      op: 'linear';
      name: string;
      weight: MatrixRef;
      matrix: StepMatrix;
      input: StepBuffer;
      output: StepBuffer;
      /** RMSNorm of the input rows on the way in. */
      norm?: VectorRef;
      bias?: VectorRef;
      /** W's rows are (gate, up) pairs; the output is act(gate)·up. */
      gate?: GateActivation;
      /** output += result (the residual add as the epilogue). */
      accumulate?: boolean;
      /** W writes columns offset…offset+rows−1 of an output `stride` columns wide. */
      columns?: { offset: number; stride: number };
      /**
       * A second matrix in another format stacked after W (Q4_K_M's V after Q|K): it reads the same
       * input and writes the next `second.matrix.rows` columns — one dispatch where linearPair has a
       * variant for the two formats, else two.
       */
      second?: { weight: MatrixRef; matrix: StepMatrix };
    }
  | { op: 'rope_store'; name: string; layer: number; headNorm: boolean }
  | { op: 'attention'; name: string; layer: number; window: number }
  | { op: 'rmsnorm'; name: string; input: StepBuffer; weight: VectorRef; output: StepBuffer }
  | { op: 'add'; name: string; into: StepBuffer; from: StepBuffer }
  | { op: 'swiglu'; name: string; gate: StepBuffer; up: StepBuffer; output: StepBuffer; width: number }
  | { op: 'argmax'; name: string }
  | { op: 'sample'; name: string };

/** How a step picks each sampled row's next token. */
export type Sampler = 'greedy' | 'sample';

/**
 * Pass one of a step, for any number of rows: the embedding, then per layer attention and the
 * feed-forward. Each RMSNorm is the prologue of the linear that reads its output; the residual
 * adds are epilogues — except after Gemma's post norms, where projection, norm and add are three ops.
 */
export function bodyOps(c: ModelConfig, w: WeightPlan): StepOp[] {
  const ops: StepOp[] = [{ op: 'embedding', name: 'embed', table: { tensor: 'tokenEmbd' }, matrix: w.tokenEmbd, scale: embeddingScale(c) }];
  for (let l = 0; l < c.nLayers; l++) {
    const L = w.layers[l];
    const at = `layer${l}`;
    // attention
    ops.push(
      ...joinedLinear(`${at}.qkv`, l, 'qkv', L.qkv, {
        input: 'x',
        output: 'qkv',
        norm: { layer: l, vector: 'attnNorm' },
        ...(c.qkvBias ? { bias: { layer: l, vector: 'bqkv' } } : {}),
      }),
    );
    ops.push({ op: 'rope_store', name: `${at}.rope_store`, layer: l, headNorm: c.qkNorm });
    ops.push({ op: 'attention', name: `${at}.attention`, layer: l, window: slidingWindow(c, l) });
    ops.push(...residual(c, `${at}.wo`, { layer: l, tensor: 'wo' }, L.wo, 'att', { layer: l, vector: 'postAttnNorm' }));
    // feed-forward
    ops.push(...gatedFeedForward(c, `${at}.ffn_gate_up`, l, L.gateUp));
    ops.push(...residual(c, `${at}.w_down`, { layer: l, tensor: 'wDown' }, L.wDown, 'hb', { layer: l, vector: 'postFfnNorm' }));
  }
  return ops;
}

/** Pass two over the rows gathered into headIn: the final norm as the LM head's prologue, then the sampler. */
export function headOps(w: WeightPlan, sampler: Sampler): StepOp[] {
  return [
    { op: 'linear', name: 'lm_head', weight: { tensor: 'output' }, matrix: w.output, input: 'headIn', output: 'logits', norm: { vector: 'outputNorm' } },
    sampler === 'greedy' ? { op: 'argmax', name: 'argmax' } : { op: 'sample', name: 'sample' },
  ];
}

/** x += W·in: the add in W's epilogue, or (post norms) W, its RMSNorm and the add. */
function residual(c: ModelConfig, name: string, weight: MatrixRef, matrix: StepMatrix, input: StepBuffer, postNorm: VectorRef): StepOp[] {
  if (!c.postNorms) return [{ op: 'linear', name, weight, matrix, input, output: 'x', accumulate: true }];
  return [
    { op: 'linear', name, weight, matrix, input, output: 'proj' },
    { op: 'rmsnorm', name: `${name}.post_norm`, input: 'proj', weight: postNorm, output: 'projNormed' },
    { op: 'add', name: `${name}.residual`, into: 'x', from: 'projNormed' },
  ];
}

/** One linear over a joined matrix, or one per part side by side in the output's columns. */
function joinedLinear(
  name: string,
  layer: number,
  tensor: 'qkv' | 'gateUp',
  parts: readonly StepMatrix[],
  io: Pick<Extract<StepOp, { op: 'linear' }>, 'input' | 'output' | 'norm' | 'bias'>,
): StepOp[] {
  if (parts.length === 1) return [{ op: 'linear', name, weight: { layer, tensor, part: 0 }, matrix: parts[0], ...io }];
  const stride = parts.reduce((n, p) => n + p.rows, 0);
  if (parts.length === 2) {
    const second = { weight: { layer, tensor, part: 1 }, matrix: parts[1] };
    return [{ op: 'linear', name, weight: { layer, tensor, part: 0 }, matrix: parts[0], ...io, columns: { offset: 0, stride }, second }];
  }
  let offset = 0;
  return parts.map((p, part) => {
    const op: StepOp = { op: 'linear', name: `${name}.part${part}`, weight: { layer, tensor, part }, matrix: p, ...io, columns: { offset, stride } };
    offset += p.rows;
    return op;
  });
}

/** hb = act(gate)·up of the normed x: one gated linear, or gate, up and a SwiGLU where they stayed apart. */
function gatedFeedForward(c: ModelConfig, name: string, layer: number, gateUp: readonly StepMatrix[]): StepOp[] {
  const norm: VectorRef = { layer, vector: 'ffnNorm' };
  if (gateUp.length === 1) {
    return [{ op: 'linear', name, weight: { layer, tensor: 'gateUp', part: 0 }, matrix: gateUp[0], input: 'x', output: 'hb', norm, gate: gateActivation(c) }];
  }
  const [gate, up] = gateUp;
  return [
    { op: 'linear', name: `${name}.gate`, weight: { layer, tensor: 'gateUp', part: 0 }, matrix: gate, input: 'x', output: 'hb', norm },
    { op: 'linear', name: `${name}.up`, weight: { layer, tensor: 'gateUp', part: 1 }, matrix: up, input: 'x', output: 'hb2', norm },
    { op: 'swiglu', name: `${name}.swiglu`, gate: 'hb', up: 'hb2', output: 'hb', width: gate.rows },
  ];
}

/** A step as costOfStep sees it: its rows (positions set the attention's work) and its sampled rows. */
export interface StepShape {
  rows: readonly RowDesc[];
  /** Rows the LM head runs on (0: a prefill chunk that samples nothing). */
  headRows: number;
  sampler?: Sampler;
  /** The draw's parameters, when sampler is 'sample' (top-k and top-p add passes). */
  sampling?: SamplingParams;
  kv: KvElement;
}

export interface OpCost {
  name: string;
  kind: KernelClass;
  cost: Cost;
}

export interface StepCost {
  body: Cost;
  head: Cost;
  total: Cost;
  byKind: Partial<Record<KernelClass, Cost>>;
  ops: OpCost[];
}

/**
 * The FLOPs and bytes one op does for a step: the kernel's own cost formula (kernels/*.ts) on
 * the op's dimensions. Bytes are the floor the op must move (weights once, activations in and
 * out, the K/V it reads); a kernel's own scratch traffic (split attention's partials, a two-pass
 * argmax's) is not counted, so achieved bandwidth is never flattered by an implementation choice.
 */
function opCost(c: ModelConfig, op: StepOp, step: StepShape): OpCost {
  const R = step.rows.length;
  const H = step.headRows;
  const heads = { nHeads: c.nHeads, nKvHeads: c.nKvHeads, headDim: c.headDim, kv: step.kv };
  const n = (cost: Cost, kind: KernelClass): OpCost => ({ name: op.name, kind, cost });
  switch (op.op) {
    case 'embedding':
      return n(embeddingCost(op.matrix.format, op.matrix.cols, R), 'embedding');
    case 'linear': {
      const rows = op.input === 'headIn' ? H : R;
      const io = { bias: op.bias !== undefined, accumulate: op.accumulate, norm: op.norm !== undefined, gate: op.gate };
      const cost = linearCost(op.matrix.format, op.matrix.rows, op.matrix.cols, rows, io);
      if (!op.second) return n(cost, linearKind(rows));
      // The second matrix's weights, outputs and bias; X (and the norm weight) are read once for both.
      const { matrix: m } = op.second;
      const second = linearCost(m.format, m.rows, m.cols, rows, io);
      const input = linearCost(m.format, 0, m.cols, rows, io);
      return n(addCost(cost, { flops: second.flops - input.flops, bytes: second.bytes - input.bytes }), linearKind(rows));
    }
    case 'rope_store':
      return n(ropeStoreCost(R, { ...heads, ropeDim: c.ropeDim }, op.headNorm), 'rope');
    case 'attention':
      return n(attentionCost({ ...heads, window: op.window }, step.rows), 'attention');
    case 'rmsnorm':
      return n(rmsnormCost(R, c.dim), 'norm');
    case 'add':
      return n(residualAddCost(R * c.dim), 'elementwise');
    case 'swiglu':
      return n(swigluCost(R * op.width), 'elementwise');
    case 'argmax':
      return n(argmaxCost(H, c.vocabSize), 'sampling');
    case 'sample':
      return n(sampleCost(H, c.vocabSize, step.sampling ?? FIRST_DRAW), 'sampling');
  }
}

/**
 * FLOPs and bytes of one step — the body over every row, the head over the sampled rows — with
 * no GPU: the one count the engine, the roofline, the what-if panel, the preflight and --inspect use.
 */
export function costOfStep(c: ModelConfig, w: WeightPlan, step: StepShape): StepCost {
  const body = bodyOps(c, w).map((op) => opCost(c, op, step));
  const head = step.headRows > 0 ? headOps(w, step.sampler ?? 'greedy').map((op) => opCost(c, op, step)) : [];
  const sum = (list: OpCost[]) => list.reduce((acc, o) => addCost(acc, o.cost), ZERO_COST);
  const byKind: Partial<Record<KernelClass, Cost>> = {};
  for (const o of [...body, ...head]) byKind[o.kind] = addCost(byKind[o.kind] ?? ZERO_COST, o.cost);
  const [b, h] = [sum(body), sum(head)];
  return { body: b, head: h, total: addCost(b, h), byKind, ops: [...body, ...head] };
}

/** Rows of a decode step of `batch` sequences, each at position `context` in its own slot. */
export function decodeRows(batch: number, context: number): RowDesc[] {
  return Array.from({ length: batch }, (_, slot) => ({ slot, pos: Math.max(0, context) }));
}

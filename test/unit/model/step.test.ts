/**
 * The forward pass as data (src/model/step.ts): the op list for each architecture's variations,
 * and costOfStep — the one count of FLOPs and bytes the engine, the roofline, the what-if panel,
 * the preflight and --inspect share — checked against formulas written out independently here.
 */
import { describe, expect, it } from 'vitest';
import { prefillRows } from '../../../src/kernels/rows.ts';
import { weightBytes, type WeightFormat } from '../../../src/kernels/weights.ts';
import { findPreset } from '../../../src/model/catalog.ts';
import type { ModelConfig } from '../../../src/model/config.ts';
import { matricesUnder } from '../../../src/model/choice.ts';
import { matrixPlan } from '../../../src/model/memory.ts';
import { bodyOps, costOfStep, decodeRows, headOps, weightPlan, type StepOp } from '../../../src/model/step.ts';

const llama = findPreset('llama-3.2-1b')!.config;
const llama8b = findPreset('llama-3.1-8b')!.config;
const gemma = findPreset('gemma-3-1b')!.config;
const qwen3 = findPreset('qwen3-0.6b')!.config;

const uniform = (c: ModelConfig, format: WeightFormat) =>
  weightPlan(
    c,
    matrixPlan(c, () => format),
  );
const names = (ops: StepOp[]) => ops.map((o) => o.name);

describe('the op list', () => {
  it('Llama: the embedding, then per layer Q|K|V, RoPE+store, attention, wo (+x), gate|up, down (+x): 6 ops a layer', () => {
    const ops = bodyOps(llama, uniform(llama, 'q4_0'));
    expect(ops.length).toBe(1 + 6 * llama.nLayers);
    expect(names(ops.slice(0, 7))).toEqual([
      'embed',
      'layer0.qkv',
      'layer0.rope_store',
      'layer0.attention',
      'layer0.wo',
      'layer0.ffn_gate_up',
      'layer0.w_down',
    ]);
    const [qkv, , , wo, gateUp, down] = ops.slice(1, 7) as Extract<StepOp, { op: 'linear' }>[];
    expect(qkv).toMatchObject({ input: 'x', output: 'qkv', norm: { layer: 0, vector: 'attnNorm' } });
    expect(qkv.matrix.rows).toBe((llama.nHeads + 2 * llama.nKvHeads) * llama.headDim);
    expect(wo).toMatchObject({ input: 'att', output: 'x', accumulate: true });
    expect(gateUp).toMatchObject({ output: 'hb', gate: 'silu', norm: { layer: 0, vector: 'ffnNorm' } });
    expect(gateUp.matrix.rows).toBe(2 * llama.hiddenDim);
    expect(down).toMatchObject({ input: 'hb', output: 'x', accumulate: true });
    expect(names(headOps(uniform(llama, 'q4_0'), 'greedy'))).toEqual(['lm_head', 'argmax']);
    expect(names(headOps(uniform(llama, 'q4_0'), 'sample'))).toEqual(['lm_head', 'sample']);
  });

  it('Gemma 3: post norms make each residual three ops (projection, RMSNorm, add); GeGLU in the gate|up epilogue', () => {
    const ops = bodyOps(gemma, uniform(gemma, 'q8_0'));
    expect(ops.length).toBe(1 + 10 * gemma.nLayers);
    expect(names(ops.slice(4, 7))).toEqual(['layer0.wo', 'layer0.wo.post_norm', 'layer0.wo.residual']);
    expect(ops[4]).toMatchObject({ output: 'proj' });
    expect(ops.find((o) => o.name === 'layer0.ffn_gate_up')).toMatchObject({ gate: 'gelu_tanh' });
  });

  it('Qwen3 normalises q and k per head in the RoPE pass', () => {
    expect(bodyOps(qwen3, uniform(qwen3, 'f16')).find((o) => o.op === 'rope_store')).toMatchObject({ headNorm: true });
    expect(bodyOps(llama, uniform(llama, 'f16')).find((o) => o.op === 'rope_store')).toMatchObject({ headNorm: false });
  });

  it('matrices of different formats stay apart: each run of one format stacked (Q|K, V) side by side in the output columns; gate and up with a SwiGLU', () => {
    const plan = weightPlan(
      llama,
      matrixPlan(llama, (label) => (label.endsWith('attn_v') || label.endsWith('ffn_up') ? 'q8_0' : 'q4_0')),
    );
    const qDim = llama.nHeads * llama.headDim;
    const kvDim = llama.nKvHeads * llama.headDim;
    expect(plan.layers[0].qkv.map((m) => [m.label, m.format, m.rows])).toEqual([
      ['blk.0.attn_qk', 'q4_0', qDim + kvDim],
      ['blk.0.attn_v', 'q8_0', kvDim],
    ]);
    const ops = bodyOps(llama, plan).filter((o) => o.name.startsWith('layer0.')) as Extract<StepOp, { op: 'linear' }>[];
    // Two runs are one op: the second stacked after the first (linearPair: one dispatch where a pair variant exists).
    expect(ops[0].columns).toEqual({ offset: 0, stride: qDim + 2 * kvDim });
    expect(ops[0].second?.matrix.label).toBe('blk.0.attn_v');
    expect(names(ops).slice(0, 2)).toEqual(['layer0.qkv', 'layer0.rope_store']);
    expect(names(ops).slice(-4)).toEqual(['layer0.ffn_gate_up.gate', 'layer0.ffn_gate_up.up', 'layer0.ffn_gate_up.swiglu', 'layer0.w_down']);
    // Only consecutive parts stack: K in its own format leaves Q and V apart too.
    const k = weightPlan(
      llama,
      matrixPlan(llama, (label) => (label.endsWith('attn_k') ? 'q8_0' : 'q4_0')),
    );
    expect(k.layers[0].qkv.map((m) => m.label)).toEqual(['blk.0.attn_q', 'blk.0.attn_k', 'blk.0.attn_v']);
  });
});

describe('costOfStep', () => {
  it('a decode step reads every matrix once (a tied table whole as the LM head, plus one embedding row) and does 2 FLOPs per weight', () => {
    const plan = weightPlan(llama, matricesUnder(llama, 'q4_0'));
    const matrices = matricesUnder(llama, 'q4_0');
    const matrixBytes = matrices.reduce((n, m) => n + weightBytes(m.format, m.rows, m.cols), 0);
    const embedRow = weightBytes(plan.tokenEmbd.format, 1, llama.dim);
    const weightsPerStep = matrices.reduce((n, m) => n + m.rows * m.cols, 0);
    const cost = costOfStep(llama, plan, { rows: decodeRows(1, 0), headRows: 1, kv: 'f16' });
    // Linear ops: the weights plus each one's activations in and out.
    const linear = cost.byKind.matvec!;
    expect(linear.bytes).toBeGreaterThan(matrixBytes);
    expect(linear.bytes - matrixBytes).toBeLessThan(4 * 1024 * 1024);
    expect(cost.byKind.embedding!.bytes).toBe(embedRow + 4 + 4 * llama.dim);
    // 2 per weight, plus the norm prologues (3 per input) and the gates (6 per pair).
    const norms = 3 * llama.dim * (2 * llama.nLayers + 1);
    const gates = 6 * llama.hiddenDim * llama.nLayers;
    expect(linear.flops).toBe(2 * weightsPerStep + norms + gates);
    expect(cost.total.bytes).toBe(cost.body.bytes + cost.head.bytes);
    expect(cost.ops.map((o) => o.name)).toEqual([...names(bodyOps(llama, plan)), 'lm_head', 'argmax']);
  });

  it('each attended position adds 2 · layers · kv_heads · head_dim · element bytes (Llama-3.1-8B, f16, 1024 positions: 128 MiB)', () => {
    const plan = uniform(llama8b, 'q4_0');
    const at = (pos: number, kv: 'f16' | 'f32') => costOfStep(llama8b, plan, { rows: decodeRows(1, pos), headRows: 1, kv }).total.bytes;
    expect(at(1024, 'f16') - at(0, 'f16')).toBe(128 * 1024 ** 2);
    expect(at(1024, 'f32') - at(0, 'f32')).toBe(256 * 1024 ** 2);
  });

  it('a batch shares the weights: B sequences do B times the FLOPs and read each K/V cache of their own', () => {
    const plan = uniform(llama, 'q8_0');
    const one = costOfStep(llama, plan, { rows: decodeRows(1, 99), headRows: 1, kv: 'f32' });
    const four = costOfStep(llama, plan, { rows: decodeRows(4, 99), headRows: 4, kv: 'f32' });
    expect(four.total.flops).toBe(4 * one.total.flops);
    expect(four.byKind.attention!.bytes).toBe(4 * one.byKind.attention!.bytes);
    expect(four.byKind.matvec!.bytes).toBeLessThan(1.01 * one.byKind.matvec!.bytes);
  });

  it('prefill: linear ops are matmuls over every row; causal attention scores Σ(pos + 1) keys; a chunk that samples nothing has no head', () => {
    const plan = uniform(llama, 'q4_0');
    const P = 64;
    const chunk = costOfStep(llama, plan, { rows: prefillRows(0, 0, P), headRows: 0, kv: 'f32' });
    expect(chunk.byKind.matvec).toBeUndefined();
    expect(chunk.head).toEqual({ flops: 0, bytes: 0 });
    const one = costOfStep(llama, plan, { rows: prefillRows(0, 0, 1), headRows: 0, kv: 'f32' });
    expect(chunk.byKind.matmul!.flops).toBe(P * one.byKind.matvec!.flops);
    const scored = (P * (P + 1)) / 2;
    expect(chunk.byKind.attention!.flops).toBe(4 * scored * llama.headDim * llama.nHeads * llama.nLayers);
  });

  it('sampling with top-k and top-p costs more FLOPs than greedy, the same bytes', () => {
    const plan = uniform(llama, 'q4_0');
    const greedy = costOfStep(llama, plan, { rows: decodeRows(1, 0), headRows: 1, kv: 'f32' });
    const drawn = costOfStep(llama, plan, {
      rows: decodeRows(1, 0),
      headRows: 1,
      kv: 'f32',
      sampler: 'sample',
      sampling: { temperature: 0.8, topK: 40, topP: 0.9, seed: 1, step: 0 },
    });
    expect(drawn.byKind.sampling!.flops).toBeGreaterThan(100 * greedy.byKind.sampling!.flops);
    expect(drawn.byKind.sampling!.bytes).toBe(greedy.byKind.sampling!.bytes);
  });
});

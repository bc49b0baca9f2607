/**
 * Two matrices of different formats in one 8-bit-activation dispatch (linear.ts's linearPair, the
 * variants of variant-table.ts's LINEAR_PAIRS): Q4_K_M's Q|K in q4_k beside V in q6_k. The pair
 * must write what the two matrices write one dispatch each (the same staged X, the same per-block
 * sums), with the RMSNorm prologue and a bias, at decode and batched-decode rows, in this adapter's
 * static shape and with a GPU's wide shape forced where subgroups exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBufferWith, withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { linear, linearPair } from '../../src/kernels/linear.ts';
import { linearPairPlan } from '../../src/kernels/linear-plan.ts';
import type { LinearShape } from '../../src/kernels/linear-shapes.ts';
import { destroyWeight, uploadWeight } from '../../src/kernels/weights.ts';
import { MemoryTuneCache } from '../../src/kernels/autotune.ts';
import { measureAccuracy } from '../../src/measure/accuracy-run.ts';
import { loadModel } from '../../src/model/load.ts';
import { testGpu } from './context.ts';
import { kQuantTestModel, quantizeModel } from './models.ts';
import { nmse, randomTensor, referenceLinear, runAndRead, uniforms } from './weights-reference.ts';

const COLS = 512;
const [ROWS_A, ROWS_B] = [192, 64]; // Q|K then V of a model with 3 query heads per KV head of 64

describe('linearPair: q4_k rows and q6_k rows in one dispatch', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  const wide = (): LinearShape => ({ kernel: 'matvec', subgroups: true, wide: true, lanes: 128, rowBlock: 2, rowsPerWorkgroup: 8, q8dot: true });
  // The static shape at R = 4 is the f32 tile on CPU adapters (no 8-bit q6_k there from R = 2):
  // then linearPair runs the two dispatches, which must agree all the same.
  const cases: [string, number, boolean][] = [
    ['static shape, R = 1', 1, false],
    ['static shape, R = 4', 4, false],
    ['wide GPU shape forced, R = 1', 1, true],
    ['wide GPU shape forced, R = 3', 3, true],
  ];

  it.each(cases)('%s: one dispatch where the plan pairs them, the same outputs as one dispatch per matrix', async (what, R, forceWide) => {
    if (forceWide && !ctx.caps.subgroups) return; // the wide matvec needs subgroups (SwiftShader may lack them)
    if (!ctx.caps.packedDot) return; // no 8-bit activations on this device: linearPair runs two dispatches (checked below)
    await withErrorScopes(ctx.device, 'linearPair', async () => {
      const a = randomTensor('q4_k', ROWS_A, COLS, 11);
      const b = randomTensor('q6_k', ROWS_B, COLS, 12);
      const wa = uploadWeight(ctx, 'test.qk', 'q4_k', ROWS_A, COLS, a.gguf);
      const wb = uploadWeight(ctx, 'test.v', 'q6_k', ROWS_B, COLS, b.gguf);
      const x = uniforms(R * COLS, 13);
      const gain = uniforms(COLS, 14, 0.5).map((g) => 1 + g);
      const bias = uniforms(ROWS_A + ROWS_B, 15, 0.1);
      const X = storageBufferWith(ctx.device, 'test.x', x);
      const G = storageBufferWith(ctx.device, 'test.gain', gain);
      const B = storageBufferWith(ctx.device, 'test.bias', bias);
      const out = () => storageBufferWith(ctx.device, 'test.y', new Float32Array(R * (ROWS_A + ROWS_B)).fill(NaN));
      const [Y1, Y2] = [out(), out()];
      const opts = { norm: { weight: G, eps: 1e-5 }, bias: B, columns: { offset: 0, stride: ROWS_A + ROWS_B }, shape: forceWide ? wide() : undefined };
      try {
        const plan = linearPairPlan(ctx.caps, wa, wb, R, { norm: true, bias: true }, opts.shape);
        if (forceWide || (R === 1 && ctx.caps.cpuLike)) expect(plan, what).not.toBeNull();
        const pair = await linearPair(ctx, 'test.pair', wa, wb, X, Y1, R, opts);
        expect(pair).toHaveLength(plan ? 1 : 2);
        if (plan) expect(pair[0].label).toContain(`+q4_k+q6_k:`);
        const got = await runAndRead(ctx, pair, Y1, R * (ROWS_A + ROWS_B));
        const apart = [
          ...(await linear(ctx, 'test.a', wa, X, Y2, R, { ...opts, columns: { offset: 0, stride: ROWS_A + ROWS_B } })),
          ...(await linear(ctx, 'test.b', wb, X, Y2, R, { ...opts, columns: { offset: ROWS_A, stride: ROWS_A + ROWS_B } })),
        ];
        const want = await runAndRead(ctx, apart, Y2, R * (ROWS_A + ROWS_B));
        expect(got.every(Number.isFinite)).toBe(true);
        // The same 8-bit X and block sums; only the shape's summation order may differ.
        expect(nmse(got, want)).toBeLessThan(1e-10);
        // And against the exact product (f64, X unrounded): the 8-bit activations' error, no more.
        const normed = new Float32Array(R * COLS);
        for (let t = 0; t < R; t++) {
          let ss = 0;
          for (let k = 0; k < COLS; k++) ss += x[t * COLS + k] ** 2;
          const s = 1 / Math.sqrt(ss / COLS + 1e-5);
          for (let k = 0; k < COLS; k++) normed[t * COLS + k] = x[t * COLS + k] * s * gain[k];
        }
        const values = new Float32Array([...a.values, ...b.values]);
        expect(nmse(got, referenceLinear(values, ROWS_A + ROWS_B, COLS, normed, R, bias))).toBeLessThan(2e-4);
      } finally {
        destroyWeight(wa);
        destroyWeight(wb);
        for (const buf of [X, G, B, Y1, Y2]) buf.destroy();
      }
    });
  });

  it('falls back to one dispatch per matrix where no pair applies: a gated pair, formats with no pair variant, or no packed dot product', async () => {
    const a = randomTensor('q4_k', ROWS_A, COLS, 21);
    const b = randomTensor('q8_0', ROWS_B, COLS, 22);
    const wa = uploadWeight(ctx, 'test.qk', 'q4_k', ROWS_A, COLS, a.gguf);
    const wb = uploadWeight(ctx, 'test.v', 'q8_0', ROWS_B, COLS, b.gguf);
    const X = storageBufferWith(ctx.device, 'test.x', uniforms(COLS, 23));
    const Y = storageBufferWith(ctx.device, 'test.y', new Float32Array(ROWS_A + ROWS_B).fill(NaN));
    try {
      expect(linearPairPlan(ctx.caps, wa, wb, 1, {})).toBeNull();
      const ds = await linearPair(ctx, 'test.pair', wa, wb, X, Y, 1);
      expect(ds).toHaveLength(2);
      const got = await runAndRead(ctx, ds, Y, ROWS_A + ROWS_B);
      expect(got.every(Number.isFinite)).toBe(true);
      expect(
        linearPairPlan(ctx.caps, { format: 'q4_k', rows: ROWS_A, cols: COLS }, { format: 'q6_k', rows: ROWS_B, cols: COLS }, 1, { gate: 'silu' }),
      ).toBeNull();
    } finally {
      destroyWeight(wa);
      destroyWeight(wb);
      X.destroy();
      Y.destroy();
    }
  });

  it('in the engine: a Q4_K_M Llama decodes with Q|K + V as one dispatch in its mixed layers (tuned as one problem), its logits within the 8-bit rounding of the CPU reference', async () => {
    if (!ctx.caps.packedDot) return;
    const model = await quantizeModel(await kQuantTestModel(), 'q4_k_m');
    // The autotuner's only candidate: the GPUs' wide 8-bit shape where subgroups exist (else the static
    // one runs); a budget no loaded machine runs out of, so every problem, the pair's too, is tuned.
    const forced = ctx.caps.subgroups ? [{ ...wide(), rowsPerWorkgroup: 8 }] : undefined;
    const loaded = await withErrorScopes(ctx.device, 'load q4_k_m', () =>
      loadModel(
        ctx,
        { kind: 'gguf', model, id: 'llama-256x8-q4_k_m' },
        {
          shape: { maxSeq: 64, slots: 1, maxRows: 16 },
          warmShapes: [[1, 1]],
          ...(forced ? { autotune: { cache: new MemoryTuneCache(), onCpu: true, candidates: () => forced, budgetMs: 120_000 } } : {}),
        },
      ),
    );
    try {
      const program = await loaded.engine.program(1, 1, 'one-slot');
      const pairs = program.body.filter((d) => d.label.includes('+q4_k+q6_k:'));
      // use_more_bits gives V q6_k in layers 0, 3, 6 and 7 of 8.
      expect(pairs).toHaveLength(4);
      // Tuned as one problem: q6_k over Q|K's 384 rows and V's 128.
      if (forced) expect(Object.keys(loaded.kernelShapes.linear)).toContain('q6_k 512x256 R1');
      // Teacher-forced single-token steps (each through the pair) against the f32 reference: the
      // activation rounding's cost only (1.2e-5 measured; a wrong split, offset or binding is ≳ 1e-1).
      const a = await withErrorScopes(ctx.device, 'accuracy', () => measureAccuracy(loaded.engine, model, { positions: 32 }));
      expect(a.arithmetic.linears).toContainEqual(expect.objectContaining({ format: 'q6_k', precision: 'int8' }));
      console.info(`Q4_K_M through the pair: KLD ${a.kld_mean.toExponential(2)}, top-1 ${a.top1_agreement}, first disagreement ${a.first_disagreement}`);
      expect(a.kld_mean).toBeLessThan(1e-4);
      expect(a.top1_agreement).toBeGreaterThanOrEqual(0.9);
    } finally {
      await loaded.engine.destroy();
    }
  });
});

/**
 * The 8-bit-activation decode kernels (shaders/linear_q8dot*.wgsl: X quantized per 32-element block
 * in workgroup memory, dot4I8Packed per 4 weights) for q4_0, q8_0 and q4_k, forced on, against the float64
 * CPU reference (linear-check.ts states the tolerance the activation rounding allows, and checks a
 * reference that rounds X the same way much tighter): the wide subgroup shape the GPUs take and the
 * one-invocation-per-rows shape, awkward rows and columns, 1–8 rows of X, every fused prologue and
 * epilogue, the fallback for columns too wide for workgroup memory, and the capability switch — with
 * every feature and with the fallbacks forced, in Node and Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fallbacks } from '../../src/gpu/capabilities.ts';
import { withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { linearShape, linearShapes, q8dotTokens, q8dotWorkgroupBytes, type LinearShape } from '../../src/kernels/linear-shapes.ts';
import type { WeightFormat } from '../../src/kernels/weights.ts';
import { generate } from '../../src/model/generate.ts';
import { loadModel } from '../../src/model/load.ts';
import { generateGreedy, loadReferenceWeights, ReferenceModel } from '../../src/model/reference.ts';
import { MemoryTuneCache } from '../../src/kernels/autotune.ts';
import { linearSpec } from '../../src/kernels/linear-plan.ts';
import { testGpu } from './context.ts';
import { nmse, Q8_LOGITS_TOLERANCE } from './harness.ts';
import { HAVE_MODEL, MISSING, quantizedStories } from './models.ts';
import { checkLinear, FUSED_CASES } from './linear-check.ts';
import { rng } from './weights-reference.ts';

const RUNTIMES: [string, Fallbacks | undefined][] = [
  ['every feature', undefined],
  ['fallbacks forced', new Set(['subgroups', 'shader-f16'])],
];
const FORMATS: WeightFormat[] = ['q4_0', 'q8_0'];

describe.each(RUNTIMES)('8-bit-activation linear, dot4I8Packed (%s)', (_name, disable) => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu(disable);
    console.info(`packed_4x8_integer_dot_product on ${ctx.caps.adapter.vendor} ${ctx.caps.adapter.architecture}: ${ctx.caps.packedDot}`);
  });
  afterAll(() => ctx?.destroy());

  /**
   * The shapes to force for R rows of X: the wide one (subgroups; odd rows per workgroup so rows are
   * not a multiple of them) and the one-invocation-per-rows one (tokens ≤ 2 per workgroup, so R > 2 uses grid z).
   */
  const shapes = (R: number): LinearShape[] => {
    const rows: LinearShape = { kernel: 'rows', lanes: 4, rowBlock: R === 1 ? 3 : 4, tokens: Math.min(R, 2), q8dot: true };
    const wide: LinearShape = {
      kernel: 'matvec',
      subgroups: true,
      wide: true,
      q8dot: true,
      lanes: 64,
      rowBlock: R <= 2 ? 2 : 1,
      rowsPerWorkgroup: R <= 2 ? 6 : 5,
    };
    return ctx.caps.subgroups ? [wide, rows] : [rows];
  };

  it('is the GPUs’ q4_0/q8_0 decode choice where the language feature exists; CPU adapters’ at R = 1 for q8_0 and q4_0 (with subgroups in SWAR; without, lavapipe’s from 4096 columns), and for prefill', () => {
    expect(ctx.caps.packedDot).toBe(true);
    const gpu = { ...ctx.caps, cpuLike: false };
    const chosen = (caps: typeof gpu, R: number, format: WeightFormat, cols?: number) => q8dotTokens(linearShape(caps, R, format, cols), format, R) > 0;
    for (const format of FORMATS) {
      for (const R of [1, 8]) {
        expect(chosen(gpu, R, format, 2048)).toBe(ctx.caps.subgroups);
        expect(chosen({ ...gpu, packedDot: false }, R, format)).toBe(false);
        // The autotuner's candidates include it on CPU adapters at every R.
        expect(linearShapes(ctx.caps, R, format).some((s) => q8dotTokens(s, format, R) > 0)).toBe(true);
      }
      // Short prompts (up to 64 rows) run the grouped wide matvec where subgroups exist; longer ones the tiled matmul.
      expect(linearShape(gpu, 16, format, 2048)).toMatchObject(ctx.caps.subgroups ? { kernel: 'matvec', wide: true, q8dot: true } : { kernel: 'matmul' });
      expect(linearShape(gpu, 65, format).kernel).toBe('matmul');
      // CPU adapters' prefill: the 8-bit register tile where 4 tokens' X fits workgroup memory, else linear_rows in f32.
      for (const R of [9, 64, 512]) {
        const swar = ctx.caps.kind === 'swiftshader' ? { rowBlock: 8, tokens: 1 } : { rowBlock: 4, tokens: 4 };
        const tile = format === 'q4_0' && ctx.caps.subgroups ? { lanes: 16, swar: true, ...swar } : { lanes: 32, rowBlock: 4, tokens: 4 };
        expect(linearShape(ctx.caps, R, format, 2048)).toEqual({ kernel: 'rows', q8dot: true, ...tile });
        expect(q8dotTokens(linearShape({ ...ctx.caps, packedDot: false }, R, format, 2048), format, R)).toBe(0);
      }
      const wide = linearShape(ctx.caps, 16, format, 32 * Math.ceil(ctx.caps.limits.maxComputeWorkgroupStorageSize / (4 * 44) + 1));
      // (SwiftShader's Q4_0 SWAR shape stages one token's X, which still fits.)
      const oneToken = format === 'q4_0' && ctx.caps.subgroups && ctx.caps.kind === 'swiftshader';
      expect([wide.kernel, q8dotTokens(wide, format, 16)]).toEqual(['rows', oneToken ? 1 : 0]);
    }
    expect(chosen(ctx.caps, 1, 'q8_0', 2048)).toBe(true);
    expect(chosen(ctx.caps, 1, 'q4_k', 2048)).toBe(true);
    expect(chosen(ctx.caps, 1, 'q6_k', 2048)).toBe(true);
    expect(chosen(ctx.caps, 1, 'q4_0', 8192)).toBe(true);
    // Narrower q4_0: with subgroups the SWAR kernel (8-bit staging) on both; without, the nibble kernel
    // on lavapipe and the 8-bit tile on SwiftShader (select.ts, cpuQ8dotQ4_0).
    expect(chosen(ctx.caps, 1, 'q4_0', 2048)).toBe(ctx.caps.subgroups || ctx.caps.kind === 'swiftshader');
    expect(chosen(ctx.caps, 1, 'q4_0', 960)).toBe(ctx.caps.subgroups || ctx.caps.kind === 'swiftshader');
    expect(linearShape(ctx.caps, 1, 'q4_0', 960)).toMatchObject(
      ctx.caps.subgroups ? { swar: true } : ctx.caps.kind === 'swiftshader' ? { q8dot: true } : { nibbles: true },
    );
    expect(chosen(ctx.caps, 2, 'q8_0', 2048)).toBe(false);
    expect(chosen({ ...ctx.caps, packedDot: false }, 1, 'q8_0', 2048)).toBe(false);
    // q4_k and q6_k (the bulk of Q4_K_M files) run it on GPUs too, and never formats it cannot decode.
    expect(chosen(gpu, 1, 'q4_k', 2048)).toBe(ctx.caps.subgroups);
    expect(chosen(gpu, 1, 'q6_k', 2048)).toBe(ctx.caps.subgroups);
    expect(linearShapes(gpu, 1, 'q5_k').some((s) => 'q8dot' in s)).toBe(false);
    // Columns whose staged X exceeds workgroup memory drop the kernel from the choice.
    const limit = ctx.caps.limits.maxComputeWorkgroupStorageSize;
    const tooWide = 32 * Math.ceil(limit / 44 + 1);
    expect(q8dotWorkgroupBytes(1, tooWide)).toBeGreaterThan(limit);
    expect(linearShapes(gpu, 1, 'q4_0', tooWide).some((s) => q8dotTokens(s, 'q4_0', 1) > 0)).toBe(false);
  });

  it.each(FORMATS)('%s: awkward rows and columns, 1, 2, 3 and 8 rows of X', async (format) => {
    await withErrorScopes(ctx.device, `q8dot ${format}`, async () => {
      const next = rng(format === 'q4_0' ? 3 : 4);
      // 3, 5, 7 and 9 blocks: not a multiple of the 64 lanes' span, nor of 2 (scale-word pairs).
      for (const [i, cols] of [96, 160, 224, 288].entries()) {
        const rows = 1 + Math.floor(next() * 90);
        const R = [1, 2, 3, 8][i];
        for (const shape of shapes(R)) await checkLinear(ctx, { format, rows, cols, R, shape, seed: 10 * i + R });
      }
    });
  });

  it.each(FORMATS)('%s: fused RMSNorm prologue, gate|up SiLU and GELU-tanh, bias, accumulate, columns of a wider output', async (format) => {
    await withErrorScopes(ctx.device, `q8dot fused ${format}`, async () => {
      const cases = FUSED_CASES;
      for (const R of [1, 3]) {
        const variants = shapes(R);
        for (const [j, c] of cases.entries()) {
          await checkLinear(ctx, { ...c, format, cols: j % 2 ? 128 : 96, R, shape: variants[(j + R) % variants.length], seed: 10 * j + R });
        }
      }
    });
  });

  /**
   * Prefill (R > 8) register tiles, which only the rows shape runs: ROW_BLOCK rows × TOKENS tokens per
   * invocation, grid z over groups of TOKENS tokens; 4 lanes so the rows are not a multiple of a
   * workgroup's, and TOKENS 4 and 3 so R = 9, 16 and 33 leave a partial last group in one of them.
   */
  const prefillShapes: LinearShape[] = [
    { kernel: 'rows', lanes: 4, rowBlock: 4, tokens: 4, q8dot: true },
    { kernel: 'rows', lanes: 4, rowBlock: 5, tokens: 3, q8dot: true },
    { kernel: 'rows', lanes: 8, rowBlock: 8, tokens: 2, q8dot: true },
  ];

  it.each(FORMATS)('%s: prefill tiles, awkward rows and columns, R = 9, 16 and 33', async (format) => {
    await withErrorScopes(ctx.device, `q8dot prefill ${format}`, async () => {
      const next = rng(format === 'q4_0' ? 13 : 14);
      for (const [i, R] of [9, 16, 33].entries()) {
        const cols = [96, 160, 288][i];
        const rows = 1 + Math.floor(next() * 90);
        // Two tiles per R (each pipeline of an unrolled 16-accumulator tile takes lavapipe seconds to compile).
        for (const k of [0, 1]) {
          const shape = prefillShapes[(i + k) % prefillShapes.length];
          await checkLinear(ctx, { format, rows, cols, R, shape, seed: 100 + 10 * i + k });
        }
      }
    });
  });

  // GPUs' short prompts: the wide matvec over groups of 8 tokens (grid z; 33 leaves a partial group),
  // plain and with the norm prologue and the gated epilogue (each its own pipeline, seconds to compile here).
  it.each(FORMATS)(
    '%s: GPUs’ short prompts, the wide matvec over groups of 8 tokens (R = 9, 33), plain, normed and gated',
    { timeout: 300_000 },
    async (format) => {
      if (!ctx.caps.subgroups) return;
      await withErrorScopes(ctx.device, `q8dot grouped ${format}`, async () => {
        const grouped: LinearShape = { kernel: 'matvec', subgroups: true, wide: true, q8dot: true, lanes: 64, rowBlock: 2, rowsPerWorkgroup: 6 };
        for (const [i, R] of [9, 33].entries()) await checkLinear(ctx, { format, rows: 37 + 11 * i, cols: [96, 288][i], R, shape: grouped, seed: 300 + i });
        for (const [j, c] of FUSED_CASES.slice(0, 2).entries()) await checkLinear(ctx, { ...c, format, cols: 128, R: 33, shape: grouped, seed: 320 + j });
      });
    },
  );

  it.each(FORMATS)('%s: prefill tiles with every fused prologue and epilogue', async (format) => {
    await withErrorScopes(ctx.device, `q8dot prefill fused ${format}`, async () => {
      for (const R of [9, 16, 33]) {
        for (const [j, c] of FUSED_CASES.entries()) {
          // One tile per case, the same pipeline for every R (all exceed its TOKENS).
          const shape = prefillShapes[j % prefillShapes.length];
          await checkLinear(ctx, { ...c, format, cols: j % 2 ? 128 : 96, R, shape, seed: 200 + 10 * j + R });
        }
      }
    });
  });

  /**
   * The K-quants (super-blocks of 256: columns a multiple of 256): the 8-bit decode and prefill shapes,
   * awkward rows, 1–3 super-blocks, every fused case. q4_k's sub-blocks' mins go through Σ q_x; q6_k
   * assembles its 6-bit quants into signed bytes and scales each 16-weight half of a block on its own:
   * a wrong min, scale, bit or sub-block shows against the f64 reference.
   */
  it.each(['q4_k', 'q6_k'] as const)('%s: awkward rows, 1 to 3 super-blocks, 1 to 33 rows of X, every fused prologue and epilogue', async (format) => {
    await withErrorScopes(ctx.device, `q8dot ${format}`, async () => {
      const next = rng(format === 'q4_k' ? 31 : 32);
      for (const [i, R] of [1, 2, 3, 8].entries()) {
        const rows = 1 + Math.floor(next() * 90);
        for (const shape of shapes(R)) await checkLinear(ctx, { format, rows, cols: 256 * (1 + (i % 3)), R, shape, seed: 500 + 10 * i + R });
      }
      for (const [i, R] of [9, 33].entries()) {
        const rows = 1 + Math.floor(next() * 90);
        await checkLinear(ctx, { format, rows, cols: 256 * (2 + i), R, shape: prefillShapes[i], seed: 550 + i });
      }
      for (const [j, c] of FUSED_CASES.entries()) {
        const R = j % 2 ? 3 : 1;
        const variants = R > 8 ? prefillShapes : shapes(R);
        await checkLinear(ctx, { ...c, format, cols: 256, R, shape: variants[j % variants.length], seed: 600 + j });
      }
    });
  });

  /**
   * Q4_0 decode in SWAR (shaders/linear_q8dot_swar.wgsl): register tiles of 3–16 rows × 1–3 tokens,
   * rows not a multiple of a workgroup's, columns whose blocks come in multiples of 8 (the vector
   * scale loads) and not (a scale per block), every fused case. Subgroups of 8 share X (lavapipe);
   * other sizes read it per lane (SwiftShader's 4). Needs subgroups: refused without them.
   */
  const swarShapes: LinearShape[] = [
    { kernel: 'rows', lanes: 8, rowBlock: 16, tokens: 1, q8dot: true, swar: true },
    { kernel: 'rows', lanes: 16, rowBlock: 3, tokens: 1, q8dot: true, swar: true },
    { kernel: 'rows', lanes: 16, rowBlock: 8, tokens: 2, q8dot: true, swar: true },
    { kernel: 'rows', lanes: 8, rowBlock: 5, tokens: 3, q8dot: true, swar: true },
    { kernel: 'rows', lanes: 16, rowBlock: 4, tokens: 4, q8dot: true, swar: true },
  ];

  it('q4_0 and q4_k SWAR: awkward rows, columns in and out of multiples of 8 blocks, 1 to 33 rows of X', async () => {
    if (!ctx.caps.subgroups) {
      await expect(checkLinear(ctx, { format: 'q4_0', rows: 9, cols: 256, R: 1, shape: swarShapes[0], seed: 1 })).rejects.toThrow(/swar needs/);
      return;
    }
    // The shape runs the SWAR variant for q4_0 (one row of X per workgroup), the plain 8-bit tile for q8_0.
    expect(linearSpec('q4_0', swarShapes[0], 1, {}, 256).name).toBe('linear_q8dot_swar+q4_0');
    expect(linearSpec('q4_0', swarShapes[0], 3, {}, 256).name).toBe('linear_q8dot_swar+q4_0');
    expect(linearSpec('q8_0', swarShapes[0], 1, {}, 256).name).toBe('linear_q8dot_rows+q8_0');
    expect(linearSpec('q4_k', swarShapes[0], 1, {}, 256).name).toBe('linear_q8dot_swar+q4_k');
    await withErrorScopes(ctx.device, 'q8dot swar', async () => {
      const next = rng(23);
      // Register tiles of 1, 2 and 3 tokens at R = 1, 3, 5 and 8, and the prefill tile of 4 at R = 9
      // and 33 (partial last token groups).
      for (const [i, cols] of [256, 96, 512, 288, 2048, 160, 256, 96].entries()) {
        const rows = 1 + Math.floor(next() * 300);
        const R = [1, 3, 5, 8, 1, 5, 9, 33][i];
        await checkLinear(ctx, { format: 'q4_0', rows, cols, R, shape: i >= 6 ? swarShapes[4] : swarShapes[i % 4], seed: 300 + i });
      }
      // q4_k: super-blocks of 256 (a row's sub-blocks always in groups of 8 under one header).
      for (const [i, cols] of [256, 768, 512, 256, 512].entries()) {
        const rows = 1 + Math.floor(next() * 300);
        const R = [1, 3, 5, 8, 33][i];
        await checkLinear(ctx, { format: 'q4_k', rows, cols, R, shape: swarShapes[i], seed: 350 + i });
      }
    });
  });

  // The one-token body with 8 named rows (one_token_rows8: SwiftShader's decode shape [L13]).
  const rows8: LinearShape = { kernel: 'rows', lanes: 16, rowBlock: 8, tokens: 1, q8dot: true, swar: true };

  it('q4_0 and q4_k SWAR, one token and 8 named rows: blocks in and out of groups of 8, one row of X per workgroup, every fused case', async () => {
    if (!ctx.caps.subgroups) return;
    await withErrorScopes(ctx.device, 'q8dot swar rows8', async () => {
      // Rows not a multiple of 8 (the last invocation's rows past the end), 3 blocks to 16, and R = 3 and 5 (grid z: the store goes to X's row t0).
      for (const [i, [rows, cols, R]] of [
        [75, 96, 1],
        [130, 512, 1],
        [9, 256, 3],
        [300, 160, 5],
      ].entries()) {
        await checkLinear(ctx, { format: 'q4_0', rows, cols, R, shape: rows8, seed: 700 + i });
      }
      for (const [i, [rows, cols, R]] of [
        [75, 256, 1],
        [33, 512, 3],
      ].entries()) {
        await checkLinear(ctx, { format: 'q4_k', rows, cols, R, shape: rows8, seed: 720 + i });
      }
      for (const [j, c] of FUSED_CASES.entries()) {
        await checkLinear(ctx, { ...c, format: 'q4_0', cols: j % 2 ? 256 : 96, R: 1, shape: rows8, seed: 740 + j });
        if (j % 2) await checkLinear(ctx, { ...c, format: 'q4_k', cols: 256, R: 1, shape: rows8, seed: 760 + j });
      }
    });
  });

  it('q4_0 and q4_k SWAR with every fused prologue and epilogue', async () => {
    if (!ctx.caps.subgroups) return;
    await withErrorScopes(ctx.device, 'q8dot swar fused', async () => {
      for (const [j, c] of FUSED_CASES.entries()) {
        for (const R of [1, 3]) {
          const shape = R === 1 ? { ...swarShapes[j % 2], rowBlock: j % 2 ? 4 : 16 } : swarShapes[2];
          await checkLinear(ctx, { ...c, format: 'q4_0', cols: j % 2 ? 256 : 96, R, shape, seed: (R === 1 ? 400 : 450) + j });
          // q4_k at one token (each fused case is a pipeline of its own: seconds to compile on lavapipe).
          if (R === 1) await checkLinear(ctx, { ...c, format: 'q4_k', cols: 256, R, shape, seed: 480 + j });
        }
      }
    });
  });

  it('falls back to the f32 kernels where X does not fit workgroup memory', async () => {
    await withErrorScopes(ctx.device, 'q8dot fallback', async () => {
      const R = 8;
      const cols = 32 * Math.ceil(ctx.caps.limits.maxComputeWorkgroupStorageSize / (44 * R) + 1);
      // checkLinear holds the result to the f32 tolerance when the shape does not fit: the fallback ran.
      await checkLinear(ctx, { format: 'q8_0', rows: 9, cols, R, shape: shapes(R)[0], seed: 5 });
    });
  });
});

describe.skipIf(!HAVE_MODEL)(
  HAVE_MODEL ? 'stories260K with 8-bit activations forced in every decode matvec' : `8-bit activations in the engine — ${MISSING}`,
  () => {
    let ctx: GpuContext;
    beforeAll(async () => {
      ctx = await testGpu();
    });
    afterAll(() => ctx?.destroy());

    // Q8_0 and Q4_0 re-encodings of stories260K (the matrices whose rows split into blocks; the
    // 172-wide down projection, which no block fits, is f16 and ignores the flag). Each decode linear is forced onto
    // linear_q8dot (through the autotuner's candidates: the wide shape where subgroups exist, else the
    // rows one); the 11-token prefill runs the f32 tiles.
    it.each(['q8_0', 'q4_0'] as const)('%s: greedy tokens as the CPU reference, logits within the activation rounding', async (quant) => {
      const model = await quantizedStories(quant);
      const reference = new ReferenceModel(model.config, await loadReferenceWeights(model.gguf, model.config, model.tensors));
      const prompt = [1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298];
      const forced: LinearShape = ctx.caps.subgroups
        ? { kernel: 'matvec', subgroups: true, wide: true, q8dot: true, lanes: 64, rowBlock: 2, rowsPerWorkgroup: 8 }
        : { kernel: 'rows', lanes: 8, rowBlock: 8, tokens: 1, q8dot: true };
      const loaded = await withErrorScopes(ctx.device, `load ${quant}`, () =>
        loadModel(
          ctx,
          { kind: 'gguf', model, id: `stories260k-${quant}` },
          {
            shape: { maxSeq: 64, slots: 1, maxRows: 16 },
            warmShapes: [[1, 1]],
            autotune: { cache: new MemoryTuneCache(), onCpu: true, candidates: () => [forced] },
          },
        ),
      );
      try {
        const program = await loaded.engine.program(1, 1, 'one-slot');
        const q8 = [...program.body, ...program.head].filter((d) => d.label?.includes('linear_q8dot'));
        expect(q8.length).toBeGreaterThanOrEqual(3 * model.config.nLayers); // Q|K|V, wo, gate|up per layer (and the LM head where quantized)
        // Greedy decoding (24 steps, each an R = 1 decode through linear_q8dot) picks the reference's tokens.
        const g = await withErrorScopes(ctx.device, 'generate', () => generate(loaded.engine, prompt, 24));
        expect(g.outputTokens).toEqual(generateGreedy(reference, prompt, 24));
        // The logits of one decode step after the prefill, within Q8_LOGITS_TOLERANCE (harness.ts; plus the f16 KV cache's 4e-6).
        const first = await generate(loaded.engine, prompt, 2);
        const decoded = await loaded.engine.readLogits(0);
        prompt.forEach((t, pos) => reference.forward(t, pos));
        const refDecoded = reference.forward(first.outputTokens[0], prompt.length);
        const error = nmse(decoded, refDecoded);
        console.info(`stories260K ${quant}, 8-bit activations: decode-step logits NMSE ${error.toExponential(2)}`);
        expect(error).toBeLessThan(Q8_LOGITS_TOLERANCE);
      } finally {
        await loaded.engine.destroy();
      }
    });

    // Prefill through linear_q8dot_rows's register tile: a 26-token prompt in chunks of at most 16
    // rows (16 + 10), every prefill-class linear (R > 8) forced onto 4 weight rows × 3 tokens per
    // invocation (neither 16 nor 10 is a multiple of 3: a partial last token group); decode keeps the static shapes.
    it.each(['q8_0', 'q4_0'] as const)('%s: chunked prefill through the 8-bit tile, greedy tokens as the CPU reference', async (quant) => {
      const model = await quantizedStories(quant);
      const reference = new ReferenceModel(model.config, await loadReferenceWeights(model.gguf, model.config, model.tensors));
      const prompt = [1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 261, 378, 432, 383, 286];
      const forced: LinearShape = { kernel: 'rows', lanes: 8, rowBlock: 4, tokens: 3, q8dot: true };
      const loaded = await withErrorScopes(ctx.device, `load ${quant}`, () =>
        loadModel(
          ctx,
          { kind: 'gguf', model, id: `stories260k-${quant}` },
          {
            shape: { maxSeq: 64, slots: 1, maxRows: 16 },
            // Only R = 16 is tuned: the prefill class (every R > 8, the 10-row chunk too); decode runs select.ts's shapes.
            warmShapes: [[16, 1]],
            autotune: { cache: new MemoryTuneCache(), onCpu: true, candidates: () => [forced] },
          },
        ),
      );
      try {
        const program = await loaded.engine.program(16, 1, 'one-slot');
        const q8 = [...program.body, ...program.head].filter((d) => d.label?.includes('linear_q8dot_rows'));
        expect(q8.length).toBeGreaterThanOrEqual(3 * model.config.nLayers);
        const g = await withErrorScopes(ctx.device, 'generate', () => generate(loaded.engine, prompt, 12, { chunk: 16 }));
        expect(g.outputTokens).toEqual(generateGreedy(reference, prompt, 12));
        // The logits of the prefill's last row: both chunks' linears ran the 8-bit tile.
        await generate(loaded.engine, prompt, 1, { chunk: 16 });
        const logits = await loaded.engine.readLogits(0);
        const refLogits = prompt.map((t, pos) => reference.forward(t, pos)).at(-1)!;
        const error = nmse(logits, refLogits);
        console.info(`stories260K ${quant}, 8-bit prefill tile: last prompt row's logits NMSE ${error.toExponential(2)}`);
        expect(error).toBeLessThan(Q8_LOGITS_TOLERANCE);
      } finally {
        await loaded.engine.destroy();
      }
    });
  },
);

/**
 * Issue 22 item 4, as a gate: per weight format, what the engine's 8-bit activations cost in
 * accuracy (KL divergence from the f32 CPU reference on the same weights) may not exceed what
 * llama.cpp's own arithmetic costs on the same file. A 256-wide, 8-layer Llama (every K-quant
 * super-block real) quantized by `npm run quantize` into each format; the engine's default kernels
 * on this adapter (int8 activations on lavapipe, checked), llama.cpp through node-llama-cpp's CPU
 * build. Our int8 activations are llama.cpp's own (linear_q8dot.wgsl: Q8_0 — 32 inputs per f16
 * scale — for q4_0 and q8_0, Q8_K — 256 per f32 scale — for the K-quants). Measured here: ours
 * 1.08e-5 (q4_0) and 2.31e-5 (q4_k_m), llama.cpp's 1.86e-4 (its f16 rounding inside attention,
 * besides the same 8-bit activations); llama.cpp's activation rounding alone (the CPU reference
 * with its Q8_0 / Q8_K applied to every product's input: the bar without the attention
 * term) 1.15e-5 and 2.32e-5. node-llama-cpp is a native addon: in Chromium this file is skipped,
 * saying so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withErrorScopes } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import type { SecondReference } from '../../src/measure/accuracy.ts';
import { comparePosition, summarizeAccuracy } from '../../src/measure/accuracy.ts';
import { measureAccuracy } from '../../src/measure/accuracy-run.ts';
import { generate } from '../../src/model/generate.ts';
import { buildTestModel } from '../../src/model/gguf/synthetic.ts';
import { bytesSource } from '../../src/model/gguf/source.ts';
import { ggmlTypeName } from '../../src/model/gguf/types.ts';
import { loadModel } from '../../src/model/load.ts';
import { openModel, type OpenModel } from '../../src/model/open.ts';
import { loadReferenceWeights, ReferenceModel, type ActivationRounding } from '../../src/model/reference.ts';
import type { Quantization } from '../../src/model/recipes.ts';
import { sharedPrefix } from '../oracle/compare.ts';
import { tinyModel } from '../oracle/tiny-models.ts';
import { inBrowser, testGpu } from './context.ts';
import { HAVE_MODEL, MISSING, readTestFile } from './models.ts';

/** Node-only modules, named at run time so the browser build never resolves them. */
const nodeImport = <T>(path: string): Promise<T> => import(/* @vite-ignore */ path) as Promise<T>;

/** A 256-wide, 8-layer Llama: every K-quant super-block real. */
const K256 = { architecture: 'llama', dim: 256, hiddenDim: 512, nLayers: 8, nHeads: 4, nKvHeads: 2, vocabSize: 320, seed: 5 } as const;

/**
 * Q4_0 stands for the Q8_0-rounded formats (q8_0 rounds its inputs the same way), Q4_K_M for the
 * K-quants (it holds Q4_K and Q6_K). With each, the activation format llama.cpp multiplies those
 * weights with (its vec_dot_type): Q8_0 for q4_0, Q8_K for the K-quants.
 */
const FORMATS: [Quantization, ActivationRounding, string[]][] = [
  ['q4_0', 'q8_0', ['q4_0']],
  ['q4_k_m', 'q8_k', ['q4_k', 'q6_k']],
];

/**
 * KL(f32 reference ‖ the reference with llama.cpp's activation rounding) over `ids`: what that
 * rounding alone costs, without llama.cpp's other arithmetic (its f16 attention).
 */
async function roundingCost(model: OpenModel, ids: readonly number[], rounding: ActivationRounding): Promise<number> {
  const weights = await loadReferenceWeights(model.gguf, model.config, model.tensors);
  const exact = new ReferenceModel(model.config, weights, { seqLen: ids.length });
  const rounded = new ReferenceModel(model.config, weights, { seqLen: ids.length, activations: rounding });
  return summarizeAccuracy(ids.map((id, pos) => comparePosition(exact.forward(id, pos), rounded.forward(id, pos)))).kld_mean;
}

describe.skipIf(inBrowser)(`8-bit activations against llama.cpp's arithmetic${inBrowser ? ' — SKIPPED: node-llama-cpp runs in Node only' : ''}`, () => {
  let ctx: GpuContext;
  let dir: string;
  let source: string;
  beforeAll(async () => {
    ctx = await testGpu();
    const fs = await nodeImport<typeof import('node:fs')>('node:fs');
    const os = await nodeImport<typeof import('node:os')>('node:os');
    dir = fs.mkdtempSync(`${os.tmpdir()}/tokenscope-rounding-`);
    source = `${dir}/llama-256x8.gguf`;
    fs.writeFileSync(source, buildTestModel(K256));
  });
  afterAll(async () => {
    ctx?.destroy();
    if (dir) (await nodeImport<typeof import('node:fs')>('node:fs')).rmSync(dir, { recursive: true, force: true });
  });

  it.each(FORMATS)(
    '%s: our int8 activations cost no more KLD than llama.cpp on the same file, nor than its activation rounding (%s) alone',
    { timeout: 180_000 },
    async (quant, rounding, formats) => {
      const fs = await nodeImport<typeof import('node:fs')>('node:fs');
      const { quantizeFile } = await nodeImport<typeof import('../../cli/quantize.ts')>('../../cli/quantize.ts');
      const { openLlamaCppReference } = await nodeImport<typeof import('../../cli/llama-cpp-reference.ts')>('../../cli/llama-cpp-reference.ts');
      const file = `${dir}/llama-256x8-${quant}.gguf`;
      await quantizeFile(source, file, quant);
      const model = await openModel(bytesSource(new Uint8Array(fs.readFileSync(file)), file));
      const loaded = await withErrorScopes(ctx.device, 'load', () =>
        loadModel(ctx, { kind: 'gguf', model, id: quant }, { shape: { maxSeq: 64, slots: 1, maxRows: 16 }, warmShapes: [[1, 1]] }),
      );
      let llama: SecondReference | undefined;
      try {
        llama = await openLlamaCppReference(file);
        const a = await measureAccuracy(loaded.engine, model, { second: llama });
        const g = a.agreement!;
        const theirRounding = await roundingCost(model, a.sequence.token_ids, rounding);
        console.info(
          `${quant}: ours ${a.kld_mean.toExponential(2)} (first disagreement ${a.first_disagreement}), llama.cpp ${g.against_reference.kld_mean.toExponential(2)} (${g.against_reference.first_disagreement}), ours vs llama.cpp ${g.engine_against_it.kld_mean.toExponential(2)}; llama.cpp's ${rounding} rounding alone ${theirRounding.toExponential(2)}; ${JSON.stringify(a.arithmetic.linears)}`,
        );
        for (const format of formats) expect(a.arithmetic.linears).toContainEqual(expect.objectContaining({ format, precision: 'int8' }));
        expect(a.kld_mean).toBeGreaterThan(0);
        expect(a.kld_mean).toBeLessThanOrEqual(g.against_reference.kld_mean);
        // Against llama.cpp's activation rounding alone, applied to the same f32 reference: the same
        // scheme, so the same cost within the f16 KV cache's and the summation order's share
        // (measured: q4_0 1.08e-5 against 1.15e-5, q4_k_m 2.31e-5 against 2.32e-5). A coarser
        // rounding (a scale per row) or a lost block costs several times more.
        expect(a.kld_mean).toBeLessThanOrEqual(1.25 * theirRounding);
        // Ours adds little to llama.cpp's own distance from the reference.
        expect(g.engine_against_it.kld_mean).toBeLessThan(1.5 * g.against_reference.kld_mean);
      } finally {
        await llama?.dispose();
        await loaded.engine.destroy();
      }
    },
  );
});

/**
 * The last bar: greedy tokens on files llama.cpp's own quantizer made follow llama.cpp at
 * least as far with the default kernels (8-bit activations) as with f32 activations (`--disable
 * packed_4x8_integer_dot_product`). The files are the kinds: Llama 3 with rope_freqs and a
 * real vocabulary in Q4_K_M, Qwen3 in Q6_K (dim 64: llama-quantize falls back to Q5_0/Q8_0 as it
 * does for such rows), a 256-wide Llama whose K-quant blocks are real, and the trained stories260K
 * (its 172-wide ffn_down F16). Measured (lavapipe): default / f32 activations 32/32, 32/32,
 * 32/32 (256×8 Q4_K_M), 7/7 (256×8 Q6_K: where the f32 reference parts too), 10/6 (stories Q4_K_M),
 * 32/32 (stories Q6_K). Before the kernels rounded as llama.cpp does, two parted early at near ties
 * (a top-2 gap of 0.016 and 0.048): 11 with activation scales per 32 inputs where llama.cpp's Q8_K
 * has one per 256, and 25 with f32 inputs to the F16 ffn_down where llama.cpp rounds them to f16 —
 * the CPU reference with llama.cpp's Q8_0 alone parts at the same 25, with its f16 inputs as well
 * it follows all 32. The log line still names the path's nearest tie: how far llama.cpp's own
 * rounding moves the reference's top-2 gap, and the first step closer than that.
 */
const GREEDY_STEPS = 32;

describe.skipIf(inBrowser)(`greedy tokens on llama.cpp-made files${inBrowser ? ' — SKIPPED: node-llama-cpp runs in Node only' : ''}`, () => {
  let dir: string;
  let fast: GpuContext;
  let plain: GpuContext;
  beforeAll(async () => {
    fast = await testGpu();
    plain = await testGpu(new Set(['packed_4x8_integer_dot_product']));
    const fs = await nodeImport<typeof import('node:fs')>('node:fs');
    const os = await nodeImport<typeof import('node:os')>('node:os');
    dir = fs.mkdtempSync(`${os.tmpdir()}/tokenscope-greedy-`);
  });
  afterAll(async () => {
    fast?.destroy();
    plain?.destroy();
    if (dir) (await nodeImport<typeof import('node:fs')>('node:fs')).rmSync(dir, { recursive: true, force: true });
  });

  /** The engine's greedy tokens on `model` (32 steps after `prompt`), on the adapter `ctx`. */
  async function engineGreedy(ctx: GpuContext, model: OpenModel, prompt: number[]): Promise<{ tokens: number[]; eightBit: boolean }> {
    const loaded = await withErrorScopes(ctx.device, 'load', () =>
      loadModel(ctx, { kind: 'gguf', model, id: model.gguf.source.name }, { shape: { maxSeq: 64, slots: 1, maxRows: 16 }, warmShapes: [[1, 1]] }),
    );
    try {
      const record = await withErrorScopes(ctx.device, 'generate', () => generate(loaded.engine, prompt, GREEDY_STEPS));
      const program = await loaded.engine.program(1, 1, 'one-slot');
      return { tokens: record.outputTokens, eightBit: program.body.some((d) => d.label.includes('linear_q8dot')) };
    } finally {
      await loaded.engine.destroy();
    }
  }

  /**
   * The f32 reference's greedy tokens; at each step the gap between its top two logits, and how far
   * llama.cpp's activation rounding (`rounding`, applied by the same reference on the same path) moves
   * that gap.
   */
  async function referenceGreedy(
    model: OpenModel,
    prompt: number[],
    rounding: ActivationRounding,
  ): Promise<{ tokens: number[]; margins: number[]; shifts: number[] }> {
    const weights = await loadReferenceWeights(model.gguf, model.config, model.tensors);
    const reference = new ReferenceModel(model.config, weights, { seqLen: 64 });
    const rounded = new ReferenceModel(model.config, weights, { seqLen: 64, activations: rounding });
    let logits: Float32Array = new Float32Array(0);
    let logits8: Float32Array = new Float32Array(0);
    prompt.forEach((id, pos) => {
      logits = reference.forward(id, pos);
      logits8 = rounded.forward(id, pos);
    });
    const tokens: number[] = [];
    const margins: number[] = [];
    const shifts: number[] = [];
    for (let pos = prompt.length; tokens.length < GREEDY_STEPS; pos++) {
      let best = 0;
      for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
      let second = best === 0 ? 1 : 0;
      for (let i = 0; i < logits.length; i++) if (i !== best && logits[i] > logits[second]) second = i;
      tokens.push(best);
      margins.push(logits[best] - logits[second]);
      shifts.push(Math.abs(logits8[best] - logits8[second] - (logits[best] - logits[second])));
      logits = reference.forward(best, pos);
      logits8 = rounded.forward(best, pos);
    }
    return { tokens, margins, shifts };
  }

  const PROMPT = [1, 270, 275, 261, 290, 300, 283, 286, 261, 276, 298];
  const hfVocab = async (name: 'llama3' | 'qwen3') => (await nodeImport<typeof import('../oracle/hf-vocab.ts')>('../oracle/hf-vocab.ts')).hfVocab(name);
  const storiesBytes = async () => (HAVE_MODEL ? readTestFile('stories260K.gguf') : undefined);
  const stories = HAVE_MODEL ? 'stories260K' : `stories260K — ${MISSING}`;
  const cases: [string, Quantization, () => Promise<Uint8Array | undefined>][] = [
    ['llama-3 (rope_freqs, real vocabulary)', 'q4_k_m', async () => tinyModel('llama3', { vocab: await hfVocab('llama3') })],
    ['qwen3 (real vocabulary)', 'q6_k', async () => tinyModel('qwen3', { vocab: await hfVocab('qwen3') })],
    ['llama 256×8', 'q4_k_m', async () => buildTestModel(K256)],
    ['llama 256×8', 'q6_k', async () => buildTestModel(K256)],
    [stories, 'q4_k_m', storiesBytes],
    [stories, 'q6_k', storiesBytes],
  ];

  it.for(cases)('%s %s: the default kernels follow llama.cpp as far as f32 activations', { timeout: 300_000 }, async ([name, quant, make], { skip }) => {
    const bytes = await make();
    if (!bytes) return skip(MISSING);
    const native = (await nodeImport<typeof import('../oracle/ggml-native.ts')>('../oracle/ggml-native.ts')).nativeQuantizer();
    if (typeof native === 'string') return skip(native);
    const fs = await nodeImport<typeof import('node:fs')>('node:fs');
    const { openLlamaCpp } = await nodeImport<typeof import('../oracle/llama-cpp.ts')>('../oracle/llama-cpp.ts');
    const source = `${dir}/${name.replace(/\W+/g, '-')}.gguf`;
    const file = `${dir}/${name.replace(/\W+/g, '-')}-${quant}.gguf`;
    fs.writeFileSync(source, bytes);
    native.quantizeFile(source, file, quant);
    const model = await openModel(bytesSource(new Uint8Array(fs.readFileSync(file)), file));

    const oracle = await openLlamaCpp(file, { contextSize: 64 });
    let theirs: number[];
    try {
      theirs = await oracle.greedy(PROMPT, GREEDY_STEPS);
    } finally {
      await oracle.dispose();
    }
    const ours = await engineGreedy(fast, model, PROMPT);
    const f32 = await engineGreedy(plain, model, PROMPT);
    const kQuants = model.gguf.tensors.some((t) => /^Q[456]_K$/.test(ggmlTypeName(t.type) ?? ''));
    const ref = await referenceGreedy(model, PROMPT, kQuants ? 'q8_k' : 'q8_0');
    const noise = Math.max(...ref.shifts);
    const firstTie = ref.margins.findIndex((m) => m < noise);
    const shared = sharedPrefix(ours.tokens, theirs);
    console.info(
      `${name} ${quant} (llama-quantize): llama.cpp's greedy tokens followed for ${shared} of ${GREEDY_STEPS} by the default kernels, ` +
        `${sharedPrefix(f32.tokens, theirs)} with f32 activations, ${sharedPrefix(ref.tokens, theirs)} by the f32 reference; ` +
        `llama.cpp's rounding moves the reference's top-2 gap by up to ${noise.toFixed(4)} on this path, the first gap closer than that at ${firstTie < 0 ? 'none' : firstTie}` +
        (shared < GREEDY_STEPS ? `; the reference's margin where the default kernels part: ${ref.margins[shared].toFixed(4)}` : ''),
    );
    expect(ours.eightBit).toBe(true);
    expect(f32.eightBit).toBe(false);
    expect(shared).toBeGreaterThanOrEqual(sharedPrefix(f32.tokens, theirs));
  });
});

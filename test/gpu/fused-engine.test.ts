/**
 * The fused forward pass end to end: its dispatch count (counted from the recorded programs),
 * and the shapes real GPUs take — split decode attention, tiled prefill attention, GPU matvec
 * shapes and f16 matmul tiles where shader-f16 exists — forced on this CPU adapter by presenting
 * it as a GPU, so CI runs the path a visitor's GPU runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { ropeFusedInto } from '../../src/kernels/attention.ts';
import { attentionShapes } from '../../src/kernels/select.ts';
import { generate } from '../../src/model/generate.ts';
import { configOf, plannedMatrices, presetChoice } from '../../src/model/choice.ts';
import { loadModel, type LoadedModel } from '../../src/model/load.ts';
import { bodyOps, headOps, weightPlan, type WeightPlan } from '../../src/model/step.ts';
import type { OpenModel } from '../../src/model/open.ts';
import { generateGreedy, loadReferenceWeights, ReferenceModel } from '../../src/model/reference.ts';
import { inBrowser, testGpu } from './context.ts';
import { HAVE_MODEL, kQuantTestModel, MISSING, openStories, quantizeModel, storiesExpected } from './models.ts';

const SHAPE = { maxSeq: 256, slots: 4, maxRows: 32 };

async function load(ctx: GpuContext, model: OpenModel): Promise<LoadedModel> {
  return loadModel(ctx, { kind: 'gguf', model, id: 'stories260k' }, { shape: SHAPE });
}

describe.skipIf(!HAVE_MODEL)(HAVE_MODEL ? 'the fused forward pass on stories260K' : `the fused forward pass — ${MISSING}`, () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  it('records ≤ 5 dispatches per decode layer + 4 (embedding, LM head, sampling), a combine where CPU threads split attention; prefill chunks add RoPE’s pass', async () => {
    const model = await openStories();
    const loaded = await load(ctx, model);
    try {
      const L = model.config.nLayers;
      const count = async (R: number, head: number, layout: 'one-slot' | 'distinct' | 'any') => {
        const p = await loaded.engine.program(R, head, layout, 'greedy', 8, true);
        return p.body.length + p.head.length;
      };
      const decode = await count(1, 1, 'distinct');
      // embedding + per layer Q|K|V, attention (RoPE and the KV store inside; + a combine where this
      // CPU adapter splits it across its threads), wo, gate|up, down + LM head, argmax
      const combine = attentionShapes(ctx.caps, model.config, 1).decode.splits > 1 ? 1 : 0;
      expect(decode).toBe(1 + (5 + combine) * L + 2);
      expect(await count(4, 4, 'distinct')).toBeLessThanOrEqual(6 * L + 4); // batched decode of 4 sequences
      expect(await count(4, 4, 'any')).toBeLessThanOrEqual(7 * L + 4); // rows of one sequence among others: RoPE apart
      expect(await count(32, 1, 'one-slot')).toBeLessThanOrEqual(6 * L + 4); // a prefill chunk
      expect(await loaded.engine.dispatchesPerStep(16)).toEqual({ prefill: await count(16, 1, 'one-slot'), decode });
    } finally {
      await loaded.engine.destroy();
    }
  });

  it("records step.ts's op list, in order, over the planned weights — so costOfStep counts what runs", async () => {
    const model = await openStories();
    const loaded = await load(ctx, model);
    try {
      const engine = loaded.engine;
      // Formats and shapes (labels are names: the upload keeps GGUF's ".weight").
      const unlabelled = (plan: WeightPlan) => JSON.parse(JSON.stringify(plan, (k, v: unknown) => (k === 'label' ? undefined : v))) as unknown;
      expect(unlabelled(engine.plan)).toEqual(unlabelled(weightPlan(model.config, plannedMatrices({ kind: 'gguf', model, id: 'stories260k' }))));
      const ops = [...bodyOps(model.config, engine.plan), ...headOps(engine.plan, 'greedy')].map((o) => o.name);
      for (const [R, head, layout] of [
        [1, 1, 'distinct'],
        [4, 4, 'any'],
        [32, 1, 'one-slot'],
      ] as const) {
        const program = await engine.program(R, head, layout);
        // A dispatch's owner is its op's name, or the name and a part (".shard0", ".partials").
        const opOf = [...program.body, ...program.head].map((d) => {
          const owner = d.label.split(':')[0];
          return ops.filter((n) => owner === n || owner.startsWith(`${n}.`)).sort((a, b) => b.length - a.length)[0];
        });
        // Where decode attention runs RoPE and the KV store itself, rope_store records nothing.
        const fused = ropeFusedInto(ctx.caps, model.config, R, layout);
        expect(opOf.filter((n, i) => n !== opOf[i - 1])).toEqual(ops.filter((n) => !(fused && n.endsWith('.rope_store'))));
      }
    } finally {
      await loaded.engine.destroy();
    }
  });

  describe('with the GPU-default shapes forced', () => {
    let gpuLike: GpuContext;
    beforeAll(() => {
      gpuLike = { ...ctx, caps: { ...ctx.caps, cpuLike: false } };
    });

    it('takes the GPU paths: decode attention split at long contexts only (with subgroups where they exist) and tiled prefill attention', () => {
      const shapes = attentionShapes(gpuLike.caps, { nHeads: 8, nKvHeads: 4, headDim: 8 }, 1);
      expect(shapes.decode.splits).toBeGreaterThan(1);
      expect(attentionShapes(gpuLike.caps, { nHeads: 8, nKvHeads: 4, headDim: 8 }, 1, 64).decode.splits).toBe(1);
      expect(shapes.decode.kernel).toBe(ctx.caps.subgroups ? 'subgroups' : 'workgroup');
      expect(attentionShapes(gpuLike.caps, { nHeads: 8, nKvHeads: 4, headDim: 8 }, 16).tiledPrefill).toBe(true);
    });

    it('greedy generation from BOS still reproduces the expected tokens (first 64)', async () => {
      const expected = await storiesExpected();
      const loaded = await load(gpuLike, await openStories());
      try {
        const g = await generate(loaded.engine, [1], 64);
        expect([1, ...g.outputTokens]).toEqual(expected.token_ids.slice(0, 65));
      } finally {
        await loaded.engine.destroy();
      }
    });

    it('chunked prefill (tiled attention, matmul tiles) matches the CPU reference token for token', async () => {
      const model = await openStories();
      const reference = new ReferenceModel(model.config, await loadReferenceWeights(model.gguf, model.config, model.tensors));
      const prompt = [1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292];
      const want = generateGreedy(reference, prompt, 12);
      const loaded = await load(gpuLike, model);
      try {
        const g = await generate(loaded.engine, prompt, 12, { chunk: 16 });
        expect(g.outputTokens).toEqual(want);
      } finally {
        await loaded.engine.destroy();
      }
    });
  });
});

describe('a synthetic preset under a llama-quantize mix', () => {
  it('uploads the formats a real Q4_K_M file has, each matrix its own, joined only where they agree — the plan costOfStep and the memory check read', async () => {
    const ctx = await testGpu();
    try {
      const choice = presetChoice('stories15m', 'q4_k_m');
      const config = configOf(choice);
      const loaded = await loadModel(ctx, choice, { shape: { maxSeq: 32, slots: 1, maxRows: 8 } });
      try {
        const planned = weightPlan(config, plannedMatrices(choice));
        expect(loaded.engine.plan).toEqual(planned);
        // Q4_K_M gives attn_v more bits in some layers than attn_q/attn_k: those layers stack Q|K and keep V apart.
        const mixed = planned.layers.filter((L) => L.qkv.length > 1);
        expect(mixed.length).toBeGreaterThan(0);
        // (stories15m's 288 columns are no multiple of 256: its q4_k falls back to q5_0, q6_k to q8_0.)
        for (const L of mixed) {
          expect(L.qkv.map((m) => m.label.replace(/^blk\.\d+\./, ''))).toEqual(['attn_qk', 'attn_v']);
          expect(L.qkv[0].format).not.toBe(L.qkv[1].format);
        }
        expect(planned.layers.some((L) => L.qkv.length === 1)).toBe(true);
        expect(loaded.info.weight_bytes).toBe(loaded.plan.weightBytes);
        const out = await loaded.engine.submit({ rows: [{ slot: 0, pos: 0 }], tokens: [1], sample: [0] });
        expect(out.tokens[0]).toBeLessThan(config.vocabSize);
      } finally {
        await loaded.engine.destroy();
      }
    } finally {
      ctx.destroy();
    }
  });
});

/**
 * Counting a program is the same on every adapter; building one compiles its pipelines, which
 * SwiftShader does ~10x slower than lavapipe, so Node counts for both (with shader-f16 and without,
 * as SwiftShader has it) and Chromium skips.
 */
describe.skipIf(inBrowser)(
  `dispatches per decode step with the GPU-default shapes forced, across formats (no model file needed)${inBrowser ? ' — SKIPPED in Chromium: Node counts them, with shader-f16 and without' : ''}`,
  () => {
    it.each([true, false])(
      'Q4_0, Q4_K_M and Q8_0 of one Llama each record ≤ 5 dispatches per decode layer + 4, Q4_K_M as many as Q4_0 (its Q|K + V pair); shader-f16 %s',
      async (shaderF16) => {
        const ctx = await testGpu(shaderF16 ? undefined : new Set(['shader-f16']));
        const gpuLike: GpuContext = { ...ctx, caps: { ...ctx.caps, cpuLike: false } };
        try {
          expect(gpuLike.caps.shaderF16).toBe(shaderF16);
          const source = await kQuantTestModel();
          const counts: Record<string, number> = {};
          for (const quant of ['q4_0', 'q4_k_m', 'q8_0'] as const) {
            const model = await quantizeModel(source, quant);
            const loaded = await loadModel(gpuLike, { kind: 'gguf', model, id: `llama-256x8-${quant}` }, { shape: SHAPE });
            try {
              const p = await loaded.engine.program(1, 1, 'distinct', 'greedy', 8, true);
              counts[quant] = p.body.length + p.head.length;
            } finally {
              await loaded.engine.destroy();
            }
          }
          const L = source.config.nLayers;
          console.info(`decode dispatches per step, GPU shapes, ${L} layers: ${JSON.stringify(counts)}`);
          for (const n of Object.values(counts)) expect(n).toBeLessThanOrEqual(5 * L + 4);
          expect(counts.q4_k_m).toBe(counts.q4_0);
        } finally {
          ctx.destroy();
        }
      },
    );
  },
);

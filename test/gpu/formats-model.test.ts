import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { withErrorScopes } from '../../src/gpu/buffers.ts';
import { generate } from '../../src/model/generate.ts';
import { tensorByteSize, ggmlTypeName } from '../../src/model/gguf/types.ts';
import { loadModel } from '../../src/model/load.ts';
import type { OpenModel } from '../../src/model/open.ts';
import { loadReferenceWeights, ReferenceModel } from '../../src/model/reference.ts';
import type { Quantization } from '../../src/model/recipes.ts';
import { testGpu } from './context.ts';
import { logitsTolerance, nmse, Q8_LOGITS_TOLERANCE } from './harness.ts';
import { HAVE_MODEL, MISSING, kQuantTestModel, quantizeModel, quantizedStories } from './models.ts';

const SHAPE = { maxSeq: 64, slots: 1, maxRows: 16 };
// 11 prompt tokens: the prefill runs the tiled matmul (> 8 rows), the embedding gathers every format.
const PROMPT = [1, 270, 275, 261, 290, 300, 283, 286, 261, 276, 298];

/** Our engine's last-position logits and the CPU reference's, on the same (quantized) file. */
async function bothLogits(ctx: GpuContext, model: OpenModel): Promise<{ gpu: Float32Array; ref: Float32Array; weightBytes: number; tolerance: number }> {
  const reference = new ReferenceModel(model.config, await loadReferenceWeights(model.gguf, model.config, model.tensors));
  let ref: Float32Array = new Float32Array();
  PROMPT.forEach((t, pos) => (ref = reference.forward(t, pos)));
  const loaded = await loadModel(ctx, { kind: 'gguf', model, id: model.gguf.source.name }, { shape: SHAPE, warmShapes: [[1, 1]] });
  try {
    await withErrorScopes(ctx.device, 'generate', () => generate(loaded.engine, PROMPT, 1));
    // The prompt's step: where a format runs its linears with 8-bit activations (q4_k, with
    // packed_4x8_integer_dot_product), the logits carry their rounding.
    const program = await loaded.engine.program(PROMPT.length, 1, 'one-slot');
    const eightBit = [...program.body, ...program.head].some((d) => d.label.includes('linear_q8dot'));
    return {
      gpu: await loaded.engine.readLogits(0),
      ref,
      weightBytes: loaded.info.weight_bytes,
      tolerance: Math.max(
        logitsTolerance(loaded.info.kv_cache ?? 'f32', model.config.nLayers, typesOf(model).includes('F16')),
        eightBit ? Q8_LOGITS_TOLERANCE : 0,
      ),
    };
  } finally {
    await loaded.engine.destroy();
  }
}

/** Bytes of the file's weight matrices: what the cost model must say the engine reads. */
function fileMatrixBytes(model: OpenModel): number {
  const infos = [model.tensors.tokenEmbd, ...model.tensors.layers.flatMap((l) => [l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown])];
  if (model.tensors.output !== model.tensors.tokenEmbd) infos.push(model.tensors.output);
  return infos.reduce((n, t) => n + tensorByteSize(t.type, t.dims), 0);
}

function typesOf(model: OpenModel): string[] {
  return [...new Set(model.gguf.tensors.filter((t) => t.dims.length > 1).map((t) => ggmlTypeName(t.type)!))].sort();
}

describe('every weight format through the whole engine, against the CPU reference', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  // Mixes whose formats are new to the engine (each format's pipelines compile cold in seconds on
  // lavapipe, so mixes that add none — Q4_K_S, Q6_K — are checked by the recipe unit tests).
  it.each([
    ['q4_k_m', ['Q4_K', 'Q6_K']],
    ['q5_k_m', ['Q5_K', 'Q6_K']],
    ['bf16', ['BF16']],
  ] as [Quantization, string[]][])('%s mix on a 256-wide Llama: logits agree, bytes read = file bytes', async (quant, types) => {
    const model = await quantizeModel(await kQuantTestModel(), quant);
    expect(typesOf(model)).toEqual(types);
    const { gpu, ref, weightBytes, tolerance } = await bothLogits(ctx, model);
    expect(nmse(gpu, ref)).toBeLessThan(tolerance);
    expect(weightBytes).toBe(fileMatrixBytes(model));
  });

  it('a tied-embedding Q4_K_M Llama gathers its embeddings from the Q6_K LM head', async () => {
    const model = await quantizeModel(await kQuantTestModel(true), 'q4_k_m');
    expect(ggmlTypeName(model.gguf.tensor('token_embd.weight')!.type)).toBe('Q6_K');
    const { gpu, ref, tolerance } = await bothLogits(ctx, model);
    expect(nmse(gpu, ref)).toBeLessThan(tolerance);
  });

  it.skipIf(!HAVE_MODEL).each([
    ['q4_1', ['F16', 'Q4_1']],
    ['q5_0', ['F16', 'Q5_0']],
    ['q5_1', ['F16', 'Q5_1']],
  ] as [Quantization, string[]][])(
    `stories260K quantized to %s (K-quants fall back: rows of 64; the 172-wide ffn_down, which no block fits, F16) ${HAVE_MODEL ? '' : MISSING}`,
    async (quant, types) => {
      const model = await quantizedStories(quant);
      expect(typesOf(model)).toEqual(types);
      const { gpu, ref, weightBytes, tolerance } = await bothLogits(ctx, model);
      expect(nmse(gpu, ref)).toBeLessThan(tolerance);
      expect(weightBytes).toBe(fileMatrixBytes(model));
    },
  );
});

/**
 * Sampling on the GPU: greedy `argmax` (shaders/argmax.wgsl, argmax_subgroups.wgsl; two passes
 * on GPUs for large vocabularies: argmax_partials.wgsl, argmax_merge.wgsl; all but the subgroup
 * one reduce with argmax_tree.wgsl, joined in their variants of variant-table.ts) and
 * `sample` with temperature, top-k, top-p and a counter-based RNG (shaders/sample.wgsl).
 * Both write one u32 token per row, so the engine can copy tokens into the next step's input on
 * the GPU and read back 4 bytes per token.
 */
import { storageBuffer, uniformBuffer } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { uniformBytes } from '../gpu/uniforms.ts';
import { makeDispatch, type Cost, type Dispatch } from './kernel.ts';
import { argmaxChunk, rowReductionShape, sampleWorkgroupSize } from './select.ts';
import { packParams, paramsBuffer, shader, UNIFORMS } from './shaders.ts';

export interface SamplingParams {
  /** 0: greedy (argmax, ties → lowest index). */
  temperature: number;
  /** Keep the k most likely tokens; 0 (or ≥ vocab): off. */
  topK: number;
  /** Keep the smallest most-likely set with this much probability (after top-k); ≥ 1: off. */
  topP: number;
  /** u32 seed; with `step` and the row it picks the draw: hash(seed, step, row). */
  seed: number;
  /** Per-step counter (u32). */
  step: number;
}

/** The parameters a sampling program is built with, until the engine writes a step's own. */
export const FIRST_DRAW: SamplingParams = { temperature: 1, topK: 0, topP: 1, seed: 0, step: 0 };

/** One compare per logit; logits read once, one token written per row. */
export function argmaxCost(R: number, vocab: number): Cost {
  return { flops: R * vocab, bytes: 4 * R * (vocab + 1) };
}

/**
 * FLOPs per logit over the passes the parameters turn on: the max (1); top-k, 8 digit passes of
 * 16 tallies (16 each); top-p, the top-k mass and 8 digit passes with the weight recomputed
 * (3 for sub, divide, exp, plus 16 tallies); the kept mass (3). Bytes: the logits once (the
 * repeated passes hit the cache) and one token per row.
 */
export function sampleCost(R: number, vocab: number, p: SamplingParams): Cost {
  const sampled = p.temperature > 0;
  const topK = sampled && p.topK > 0 && p.topK < vocab ? 8 * 16 : 0;
  const topP = sampled && p.topP < 1 ? 3 + 8 * (3 + 16) : 0;
  const perLogit = 1 + topK + topP + (sampled ? 3 : 0);
  return { flops: R * vocab * perLogit, bytes: 4 * R * (vocab + 1) };
}

/**
 * tokens (R) u32 = argmax of each row of logits (R, vocab); ties → lowest index. One workgroup per
 * row, or — where select.ts's argmaxChunk (or `chunk`) splits the vocabulary — two passes: chunk
 * winners (shaders/argmax_partials.wgsl), then one merge per row (argmax_merge.wgsl).
 */
export async function argmax(
  ctx: GpuContext,
  owner: string,
  logits: GPUBuffer,
  tokens: GPUBuffer,
  R: number,
  vocab: number,
  chunk: number | null = argmaxChunk(ctx.caps, vocab),
): Promise<Dispatch[]> {
  const shape = rowReductionShape(ctx.caps);
  if (chunk === null) {
    const variant = shader(shape.subgroups ? 'argmax_subgroups' : 'argmax+argmax_tree');
    const params = paramsBuffer(ctx.device, `${owner}.params`, variant.name, { vocab });
    return [
      await makeDispatch(
        ctx,
        { ...variant, constants: { WG_SIZE: shape.wgSize } },
        {
          owner,
          kind: 'sampling',
          bindings: [logits, tokens, params],
          workgroups: [R, 1, 1],
          owned: [params],
        },
      ),
    ];
  }
  if (!(Number.isInteger(chunk) && chunk >= 1)) throw new RangeError(`${owner}: chunk must be a positive integer, got ${chunk}`);
  const chunks = Math.ceil(vocab / chunk);
  // One uniform for both passes: their Params are the same struct.
  const params = paramsBuffer(ctx.device, `${owner}.params`, 'argmax_partials+argmax_tree', { vocab, chunk, chunks });
  const partials = storageBuffer(ctx.device, `${owner}.partials`, 8 * R * chunks);
  const mergeWg = 64;
  return [
    await makeDispatch(
      ctx,
      { ...shader('argmax_partials+argmax_tree'), constants: { WG_SIZE: shape.wgSize } },
      {
        owner: `${owner}.partials`,
        kind: 'sampling',
        bindings: [logits, partials, params],
        workgroups: [chunks, R, 1],
        owned: [params, partials],
      },
    ),
    await makeDispatch(
      ctx,
      { ...shader('argmax_merge+argmax_tree'), constants: { WG_SIZE: mergeWg } },
      {
        owner: `${owner}.merge`,
        kind: 'sampling',
        bindings: [partials, tokens, params],
        workgroups: [R, 1, 1],
        owned: [],
      },
    ),
  ];
}

export interface SampleKernel {
  dispatch: Dispatch;
  /** Rewrite the parameters (queue.writeBuffer, so it lands before the next submit). */
  write(p: SamplingParams): void;
}

/** Bytes of the sample kernel's uniform for `p` (shaders/sample.wgsl's Params). */
function sampleParamsData(vocab: number, p: SamplingParams): ArrayBuffer {
  return packParams('sample', { vocab, topK: p.topK >>> 0, seed: p.seed >>> 0, step: p.step >>> 0, temperature: p.temperature, topP: p.topP });
}

/** tokens (R) u32 drawn from each row of logits (R, vocab) under `params` (rewritten per step with `write`). */
export async function sample(
  ctx: GpuContext,
  owner: string,
  logits: GPUBuffer,
  tokens: GPUBuffer,
  R: number,
  vocab: number,
  params: SamplingParams,
): Promise<SampleKernel> {
  const uniform = uniformBuffer(ctx.device, `${owner}.params`, uniformBytes(UNIFORMS.sample));
  const dispatch = await makeDispatch(
    ctx,
    { ...shader('sample'), constants: { WG_SIZE: sampleWorkgroupSize(ctx.caps) } },
    {
      owner,
      kind: 'sampling',
      bindings: [logits, tokens, uniform],
      workgroups: [R, 1, 1],
      owned: [uniform],
    },
  );
  const write = (p: SamplingParams) => {
    ctx.device.queue.writeBuffer(uniform, 0, new Uint8Array(sampleParamsData(vocab, p)));
  };
  write(params);
  return { dispatch, write };
}

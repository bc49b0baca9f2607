/**
 * Runs a benchmark job (job-spec.ts says what one is) by the same code in the page, in Node, and
 * in the browser driven by the CLI (`window.tokenscope.runJob`). The page loads this module when
 * a run starts, not with the page.
 */
import { describeError, TokenscopeError } from '../errors.ts';
import type { Fallbacks } from '../gpu/capabilities.ts';
import type { GpuContext } from '../gpu/device.ts';
import { generate } from '../model/generate.ts';
import { configOf, type ModelChoice } from '../model/choice.ts';
import { checkModelFits, loadModel, type LoadedModel } from '../model/load.ts';
import type { EngineShape } from '../model/memory.ts';
import { canEncodeOffThread, encodeOffThread } from '../model/tokenizer/off-thread.ts';
import { checkPromptLength } from '../model/tokenizer/vocab.ts';
import { accuracySkipReason, type AccuracyMode } from '../measure/accuracy.ts';
import type { AccuracyResult } from '../measure/accuracy-run.ts';
import { isMeasured } from '../measure/sections/accuracy.ts';
import { besideSampler, measureCeilings, measureReadRoof, withReadDrift } from '../measure/ceilings.ts';
import { describeEnvironment } from '../measure/environment.ts';
import { lengthCosts, roofFigures, runLatency, type LatencySection } from '../measure/latency.ts';
import type { LengthCosts } from '../measure/latency-summary.ts';
import { runLlamaBench } from '../measure/llama-bench-run.ts';
import { resolveModel, type ResolvedModel } from './model-source.ts';
import type { RepeatProtocol } from '../measure/protocol.ts';
import { e2elMs, ttftMs } from '../measure/metrics.ts';
import { newResult, type BenchResult } from '../measure/schema.ts';
import { matchingPreset, parseModelId, sameFamily } from '../webllm/catalog.ts';
import { checkPresetFits, llamaBenchSettings, runContext, type BenchJob, type JobHooks, type LatencyJob } from './job-spec.ts';
import { sideBySide } from './side-by-side.ts';
import { runWebLLMLatency, type WebLLMCostModel, type WebLLMSection, type WebLLMSettings } from './webllm-run.ts';

/** The read roof's re-measurement after the model phases: fewer repetitions than the roofs' own (it is a check, not the roof). */
const DRIFT_PROTOCOL: RepeatProtocol = { warmup: 1, minReps: 3, maxReps: 10, minDurationMs: 200 };

/** The job's model opened and its header, prompt and context checked; nothing is measured or allocated yet. */
interface OpenedModel {
  resolved: ResolvedModel;
  promptIds: number[] | undefined;
  maxSeq: number;
}

async function openForJob(job: BenchJob, model: NonNullable<BenchJob['model']>, hooks: JobHooks): Promise<OpenedModel> {
  const resolved = await resolveModel(model, { source: hooks.modelSource, signal: hooks.signal, onProgress: progressSlice(hooks, 0, 0.05, 'model') });
  try {
    const promptIds = job.generate ? await encodePrompt(resolved, job.generate.prompt, job.generate.chat ?? false, hooks.signal) : undefined;
    const maxSeq = runContext(job, configOf(resolved.choice), promptIds);
    return { resolved, promptIds, maxSeq };
  } catch (e) {
    await resolved.release?.();
    throw e;
  }
}

/** The engine's sizes for a job: context, KV-cache slots (the largest batch it runs) and rows per step. */
function engineShape(job: BenchJob, maxSeq: number): EngineShape {
  const maxRows = Math.min(maxSeq, job.serve ? job.serve.max_tokens_per_step : (job.latency?.chunk ?? 512));
  const slots = job.serve ? Math.max(job.serve.max_batch, ...(job.serve.sweep_batch ?? [])) : 1;
  return { maxSeq, slots, maxRows };
}

/**
 * The prefix cache's pool holds as many positions as the KV cache (serve/gpu-engine.ts): the model
 * must fit with a second KV cache's bytes, refused before anything is allocated when it does not.
 */
function checkPrefixPoolFits(ctx: GpuContext, choice: ModelChoice, shape: EngineShape, budgetBytes: number | undefined): void {
  try {
    checkModelFits(ctx.caps, choice, { ...shape, slots: 2 * shape.slots }, budgetBytes);
  } catch (e) {
    throw new TokenscopeError(
      'model-too-large',
      `The model fits, but not with the prefix cache's pool beside it (as many bytes as its KV cache): ${describeError(e)}`,
      'Run with --prefix-cache off, or lower --max-batch or --context.',
    );
  }
}

/** The protocol part of the latency settings, shared by both engines. */
function sweepSettings(l: LatencyJob) {
  return {
    prompt_lengths: l.promptLengths,
    output_tokens: l.gen,
    reps: l.reps,
    warmup: l.warmup ?? 1,
    cooldown_ms: l.cooldownMs ?? 50,
    seed: l.seed ?? 42,
    ...(l.cachedPrefixes?.length ? { cached_prefixes: l.cachedPrefixes } : {}),
  };
}

function progressSlice(hooks: JobHooks, from: number, to: number, label: string) {
  return (step: string, f: number) => hooks.onProgress?.(`${label}: ${step}`, from + (to - from) * f);
}

export async function runJob(ctx: GpuContext, job: BenchJob, disabled: Fallbacks, hooks: JobHooks = {}): Promise<BenchResult> {
  return job.engine === 'webllm' ? runWithWebLLM(ctx, job, disabled, hooks) : runTokenscope(ctx, job, disabled, hooks);
}

/** Our engine's part of a job; `beforeRelease` sees the loaded model once everything ran. */
async function runTokenscope(
  ctx: GpuContext,
  job: BenchJob,
  disabled: Fallbacks,
  hooks: JobHooks,
  beforeRelease?: (loaded: LoadedModel, result: BenchResult) => Promise<void>,
): Promise<BenchResult> {
  checkPresetFits(job);
  const result = newResult(describeEnvironment(ctx, disabled));
  // The model is opened and checked before the roofs are measured (seconds to tens of seconds), so a
  // bad file, prompt or context is refused at once.
  const opened = job.model ? await openForJob(job, job.model, hooks) : null;
  try {
    return await runOpened(ctx, job, hooks, result, opened, beforeRelease);
  } finally {
    // The model file (the CLI's path) stays open while the run reads it: weights, then the accuracy pass's reference.
    await opened?.resolved.release?.();
  }
}

/** runTokenscope past opening the model: the checks, the roofs, the model's phases. */
async function runOpened(
  ctx: GpuContext,
  job: BenchJob,
  hooks: JobHooks,
  result: BenchResult,
  opened: OpenedModel | null,
  beforeRelease?: (loaded: LoadedModel, result: BenchResult) => Promise<void>,
): Promise<BenchResult> {
  const modelWork = job.model ? 0.85 : 0;
  const probeEnd = job.probe && !job.roofs ? 1 - modelWork : 0;
  const shape = opened ? engineShape(job, opened.maxSeq) : null;
  if (opened && shape) {
    checkModelFits(ctx.caps, opened.resolved.choice, shape, job.memoryBudgetBytes);
    if (job.serve && job.serve.prefix_cache !== false) checkPrefixPoolFits(ctx, opened.resolved.choice, shape, job.memoryBudgetBytes);
  }
  if (job.roofs) {
    result.ceilings = { ...job.roofs.ceilings, source: job.roofs.source };
    hooks.onPartial?.(result);
  } else if (job.probe) {
    const measuredAt = new Date().toISOString();
    const ceilings = await measureCeilings(ctx, {
      maxWorkingSetBytes: job.probeMiB ? job.probeMiB * 1024 * 1024 : undefined,
      shapes: job.probeShapes,
      protocol: job.protocol,
      signal: hooks.signal,
      onProgress: progressSlice(hooks, opened ? 0.05 : 0, probeEnd + (opened ? 0.05 : 0), 'roofs'),
    });
    result.ceilings = { ...ceilings, source: { kind: 'measured', measured_at: measuredAt } };
    hooks.onPartial?.(result);
  }
  if (!opened) return result;
  const { resolved, promptIds, maxSeq } = opened;
  let loaded: LoadedModel | null = null;
  try {
    loaded = await loadModel(ctx, resolved.choice, {
      shape: shape ?? engineShape(job, maxSeq),
      budgetBytes: job.memoryBudgetBytes,
      parseMs: resolved.parseMs,
      onProgress: progressSlice(hooks, probeEnd + 0.05, probeEnd + 0.15, 'model'),
      autotune: hooks.tuneCache ? { cache: hooks.tuneCache } : undefined,
    });
    const { engine, info, cold } = loaded;
    result.model = info;
    result.cold_start = cold;
    result.kernel_shapes = loaded.kernelShapes;
    hooks.onPartial?.(result);

    if (job.generate && promptIds) {
      hooks.onProgress?.('generating', probeEnd + 0.15);
      const g = await generate(engine, promptIds, job.generate.gen, {
        stopAt: resolved.tokenizer ? engine.config.eosId : undefined,
        signal: hooks.signal,
        sampling: job.generate.sampling,
        checkLogits: true,
      });
      result.generation = {
        prompt_token_ids: promptIds,
        token_ids: g.outputTokens,
        text: resolved.tokenizer ? resolved.tokenizer.decode(g.outputTokens) : null,
        note: resolved.tokenizer ? undefined : 'synthetic weights have no tokenizer: the prompt was encoded as UTF-8 bytes and the output is token ids only',
      };
      const timing = { promptTokens: promptIds.length, tSend: g.tSend, tTokens: g.tTokens };
      const [ttft, e2el] = [ttftMs(timing), e2elMs(timing)];
      if (ttft !== undefined && e2el !== undefined) {
        const n = g.tTokens.length;
        result.generation.timing = { ttft_ms: ttft, e2el_ms: e2el, decode_tokens_per_s: n > 1 && e2el > ttft ? (n - 1) / ((e2el - ttft) / 1000) : null };
      }
      hooks.onPartial?.(result);
    }
    if (job.latency) {
      if (!result.ceilings) throw new TokenscopeError('bad-input', 'The latency sweep needs the roofs.', 'Run with the probe (do not pass --no-probe).');
      const settings = { ...sweepSettings(job.latency), chunk: engine.shape.maxRows, profile: job.latency.profile ?? false };
      const end = job.llamaBench ? 0.85 : 1;
      const sampler = await besideSampler(ctx, result.ceilings, { shapes: job.probeShapes, signal: hooks.signal });
      if (typeof sampler === 'string') result.notes = [...(result.notes ?? []), sampler];
      let sweep: LatencySection;
      try {
        sweep = await runLatency(engine, cold, result.ceilings, settings, {
          signal: hooks.signal,
          waitUntilVisible: hooks.waitUntilVisible,
          readBeside: typeof sampler === 'string' ? undefined : () => sampler.sample(),
          onProgress: progressSlice(hooks, probeEnd + 0.15, probeEnd + 0.15 + (end - probeEnd - 0.15), 'latency'),
          onRequest: (partial) => {
            result.latency = partial;
            hooks.onPartial?.(result);
          },
        });
      } finally {
        if (typeof sampler !== 'string') sampler.destroy();
      }
      result.latency = sweep;
      // The read roof again after the model phases: every "% of roof" above divides by the first
      // reading, so a device that throttled or was shared in between must say so, and one that reads
      // more now than then raises the roof (withReadDrift).
      hooks.onProgress?.('re-measuring the read roof', end);
      const after = await measureReadRoof(ctx, {
        protocol: job.protocol ?? DRIFT_PROTOCOL,
        shapes: job.probeShapes,
        signal: hooks.signal,
        maxWorkingSetBytes: result.ceilings.working_set_bytes,
      });
      result.ceilings = withReadDrift(result.ceilings, after, ctx.caps.cpuLike);
      // A roof raised by that reading: every figure of the sweep that divides by it, again.
      if (result.ceilings.drift?.raised_from_gbps !== undefined) {
        result.latency = { ...sweep, ...roofFigures(engine, sweep.settings, sweep.requests, sweep.dispatches_per_step, result.ceilings) };
      }
      hooks.onPartial?.(result);
    }
    if (job.serve) {
      if (!result.ceilings) throw new TokenscopeError('bad-input', 'Serving mode needs the roofs.', 'Run with the probe.');
      // The scheduler, workloads and prefix cache load with the first serving run, not with the page.
      const { runServing } = await import('../serve/run.ts');
      result.serve = await runServing(engine, job.serve, result.ceilings, {
        signal: hooks.signal,
        onProgress: progressSlice(hooks, probeEnd + 0.15, 1, 'serve'),
        onPartial: (partial) => {
          result.serve = partial;
          hooks.onPartial?.(result);
        },
      });
      hooks.onPartial?.(result);
    }
    if (job.llamaBench) {
      result.llama_bench = await runLlamaBench(engine, info, 'WebGPU', llamaBenchSettings(job), {
        signal: hooks.signal,
        onProgress: progressSlice(hooks, job.latency || job.serve ? 0.85 : probeEnd + 0.15, 1, 'llama-bench'),
      });
      hooks.onPartial?.(result);
    }
    if (job.latency || job.generate) {
      hooks.onProgress?.('accuracy: the logits against the CPU reference', 1);
      result.accuracy = await runAccuracy(loaded, resolved.choice, job.accuracy ?? 'auto', ctx, hooks);
      hooks.onPartial?.(result);
    }
    await beforeRelease?.(loaded, result);
  } catch (e) {
    if (ctx.isLost() || (e instanceof TokenscopeError && e.code === 'cancelled')) {
      result.notes = [...(result.notes ?? []), `The run stopped early: ${describeError(e)}`];
      hooks.onPartial?.(result);
    }
    throw e;
  } finally {
    await loaded?.engine.destroy();
  }
  return result;
}

/**
 * The accuracy section of a run, after its timed phases (the pass writes the KV cache): measured,
 * or why not. A pass that fails for want of memory (the reference's f32 weights) says so in the
 * section instead of discarding the run; any other failure stops the job.
 */
async function runAccuracy(loaded: LoadedModel, choice: ModelChoice, mode: AccuracyMode, ctx: GpuContext, hooks: JobHooks): Promise<AccuracyResult> {
  const skip = accuracySkipReason(loaded.info, mode);
  if (skip !== null || choice.kind !== 'gguf') return { skipped: skip ?? 'synthetic weights: speed only' };
  // The CPU reference and the comparison load with the first accuracy pass, not with the page.
  const { measureAccuracy } = await import('../measure/accuracy-run.ts');
  const second = await hooks.secondReference?.();
  try {
    return await measureAccuracy(loaded.engine, choice.model, {
      quant: choice.quant,
      signal: hooks.signal,
      second,
    });
  } catch (e) {
    if (!(e instanceof RangeError && /allocation failed|invalid array length/i.test(e.message)) || ctx.isLost()) throw e;
    return { skipped: `the CPU reference's f32 weights did not fit in memory (${e.message})` };
  } finally {
    await second?.dispose();
  }
}

/**
 * engine 'webllm': our part first (the roofs, and `model` when given, on the same sweep), then
 * WebLLM's sweep. WebLLM is imported only here, so other runs never load it.
 */
async function runWithWebLLM(ctx: GpuContext, job: BenchJob, disabled: Fallbacks, hooks: JobHooks): Promise<BenchResult> {
  if (ctx.runtime === 'node') throw new TokenscopeError('bad-input', 'WebLLM runs in the browser runtime only.', 'Use --runtime browser.');
  const { webllm, latency } = job;
  if (!webllm || !latency)
    throw new TokenscopeError('bad-input', 'A WebLLM run needs a WebLLM model id and the latency settings.', 'Pass --model with a WebLLM model id.');
  const family = parseModelId(webllm.model)?.family ?? webllm.model;
  const preset = matchingPreset(family);
  if (!preset) {
    throw new TokenscopeError(
      'bad-input',
      `No tokenscope preset is of ${webllm.model}'s family (${family}): its random prompt ids need the vocabulary size.`,
      'Pick a WebLLM model of a family tokenscope has a preset of (npm run bench -- --list-models).',
    );
  }
  const oursEnd = job.model ? 0.5 : 0.15;
  let costModel: WebLLMCostModel | undefined;
  const result = await runTokenscope(
    ctx,
    job,
    disabled,
    { ...hooks, onProgress: (step, f) => hooks.onProgress?.(step, f * oursEnd) },
    async ({ engine, info }, ours) => {
      if (!ours.ceilings || !sameFamily(info, family)) return;
      const costs = new Map<number, LengthCosts>();
      for (const P of latency.promptLengths) costs.set(P, lengthCosts(engine, P, latency.gen, engine.shape.maxRows));
      costModel = { model_id: info.id, quantization: info.quantization, costsAt: (P) => costs.get(P)!, roofs: ours.ceilings };
    },
  );
  const { loadWebLLM } = await import('../webllm/adapter.ts');
  const adapter = await loadWebLLM(webllm.model, {
    capabilities: ctx.caps,
    signal: hooks.signal,
    onProgress: progressSlice(hooks, oursEnd, oursEnd + 0.2, 'WebLLM model'),
  });
  // WebLLM's API has no KV cache to pre-fill: the cached-prefix sweep is ours only.
  const { cached_prefixes: _ours, ...sweep } = sweepSettings(latency);
  const settings: WebLLMSettings = { ...sweep, vocab_size: preset.config.vocabSize, bos_id: preset.config.bosId };
  let section: WebLLMSection;
  try {
    section = await runWebLLMLatency(
      adapter,
      settings,
      {
        signal: hooks.signal,
        waitUntilVisible: hooks.waitUntilVisible,
        onProgress: progressSlice(hooks, oursEnd + 0.2, 1, 'WebLLM latency'),
        onRequest: (partial) => {
          result.webllm = partial;
          hooks.onPartial?.(result);
        },
      },
      costModel,
    );
  } finally {
    await adapter.unload();
  }
  result.webllm = section;
  if (costModel && result.latency && result.model) {
    const linears = result.accuracy && isMeasured(result.accuracy) ? result.accuracy.arithmetic.linears : undefined;
    result.side_by_side = sideBySide({ latency: result.latency, model: result.model, linears }, section);
  }
  hooks.onPartial?.(result);
  return result;
}

/**
 * Text → token ids with the model's tokenizer (BOS first), or as one user message through the
 * file's chat template (tokenizer/prompt.ts); in a page that work runs in a worker
 * (tokenizer/off-thread.ts) so the tab stays responsive. Presets have no tokenizer, so UTF-8
 * bytes offset past the specials. A prompt past MAX_PROMPT_CHARS is refused before any of it.
 */
async function encodePrompt(resolved: ResolvedModel, prompt: string, chat: boolean, signal?: AbortSignal): Promise<number[]> {
  checkPromptLength(prompt);
  const { tokenizer, choice } = resolved;
  if (!tokenizer || choice.kind !== 'gguf') {
    if (chat) throw (await import('../model/tokenizer/prompt.ts')).noTemplate();
    return [1, ...new TextEncoder().encode(prompt)].map((b, i) => (i === 0 ? b : 3 + b));
  }
  const meta = choice.model.gguf.metadata;
  if (canEncodeOffThread()) return encodeOffThread(meta, prompt, chat, { signal });
  const { encodePromptWith } = await import('../model/tokenizer/prompt.ts');
  return encodePromptWith(tokenizer, meta, prompt, chat);
}

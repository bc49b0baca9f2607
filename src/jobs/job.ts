/**
 * A benchmark job: a plain JSON-serialisable description of what to run, executed by the same
 * code in the page, in Node, and in the browser driven by the CLI (`window.tokenscope.runJob`).
 */
import type { TuneCache } from '../kernels/autotune.ts';
import { describeError, TokenscopeError } from '../errors.ts';
import { findPreset } from '../model/catalog.ts';
import type { Capabilities, Fallbacks } from '../gpu/capabilities.ts';
import type { GpuContext } from '../gpu/device.ts';
import { generate } from '../model/generate.ts';
import type { ByteSource } from '../model/gguf/source.ts';
import { checkModelFits, configOf, loadModel, type LoadedModel, type ModelChoice } from '../model/load.ts';
import type { EngineShape } from '../model/memory.ts';
import { canEncodeOffThread, encodeOffThread } from '../model/tokenizer/off-thread.ts';
import { checkPromptLength } from '../model/tokenizer/vocab.ts';
import { accuracySkipReason, type AccuracyMode, type SecondReference } from '../measure/accuracy.ts';
import type { AccuracyResult } from '../measure/accuracy-run.ts';
import { measureCeilings, measureReadRoof, withReadDrift } from '../measure/ceilings.ts';
import { describeEnvironment } from '../measure/environment.ts';
import { lengthCosts, roofFigures, runLatency } from '../measure/latency.ts';
import type { LengthCosts } from '../measure/latency-summary.ts';
import { LLAMA_BENCH_DEFAULTS, llamaBenchTests, runLlamaBench, type LlamaBenchSettings } from '../measure/llama-bench-run.ts';
import { resolveModel, type ModelSpec, type ResolvedModel } from './model-source.ts';
import type { ProbeShapes } from '../kernels/select.ts';
import type { RepeatProtocol } from '../measure/protocol.ts';
import { e2elMs, ttftMs } from '../measure/metrics.ts';
import { newResult, type BenchResult, type Ceilings } from '../measure/schema.ts';
import type { PlannedWork } from '../measure/validate.ts';
import type { ServeSettings } from '../serve/run.ts';
import type { LengthDistribution } from '../serve/workload.ts';
import { parseModelId } from '../webllm/catalog.ts';
import { sideBySide } from './side-by-side.ts';
import { matchingPreset, runWebLLMLatency, sameFamily, type WebLLMCostModel, type WebLLMSection, type WebLLMSettings } from './webllm-run.ts';

function maxLength(d: LengthDistribution): number {
  return d.kind === 'fixed' ? d.tokens : d.kind === 'uniform' ? d.max : d.max;
}

/** The read roof's re-measurement after the model phases: fewer repetitions than the roofs' own (it is a check, not the roof). */
const DRIFT_PROTOCOL: RepeatProtocol = { warmup: 1, minReps: 3, maxReps: 10, minDurationMs: 200 };

export interface LatencyJob {
  promptLengths: number[];
  gen: number;
  reps: number;
  warmup?: number;
  profile?: boolean;
  chunk?: number;
  cooldownMs?: number;
  seed?: number;
  /** Cached prefix lengths whose TTFT is measured too (`--cached-prefix`; latency.ts cached_prefixes). */
  cachedPrefixes?: number[];
}

export interface BenchJob {
  /** Measure the device's roofs (needed for the roofline verdict; runs first). */
  probe: boolean;
  /** Cap on the bandwidth working set, MiB (default: chosen per device). */
  probeMiB?: number;
  /** Override the roofs' kernel shapes (default: chosen per device in kernels/select.ts). */
  probeShapes?: Partial<ProbeShapes>;
  protocol?: RepeatProtocol;
  /** Roofs measured before (the CLI's per-device cache, a saved result): used instead of measuring them. */
  roofs?: { ceilings: Ceilings; source: NonNullable<Ceilings['source']> };
  model?: ModelSpec;
  /** KV-cache positions (default: what the job needs, rounded up). */
  context?: number;
  /** Generate text from a prompt (greedy) and report it. */
  /** `chat`: send the prompt as a user message through the file's chat template (tokenizer.chat_template). */
  generate?: { prompt: string; gen: number; chat?: boolean; sampling?: { temperature: number; topK: number; topP: number; seed: number } };
  latency?: LatencyJob;
  /** llama-bench's protocol; `true` runs llama.cpp's defaults (pp512, tg128). */
  llamaBench?: boolean | ({ nPrompt: number; nGen: number } & Partial<LlamaBenchSettings>);
  /** Serving mode: a workload through the continuous-batching scheduler. */
  serve?: ServeSettings;
  /** Refuse models whose plan exceeds this many bytes. */
  memoryBudgetBytes?: number;
  /**
   * Whose latency sweep to run (default ours). 'webllm' (browser only) runs `latency` on
   * `webllm.model` after the rest of the job; when `model` is of the same family, WebLLM's rows
   * get its cost model and the result a side-by-side.
   */
  engine?: 'tokenscope' | 'webllm';
  webllm?: { model: string };
  /**
   * The accuracy pass of latency and generation runs (measure/accuracy-run.ts): `auto` (default)
   * on real models under 100 M parameters, `on` on any real model, `off` never.
   */
  accuracy?: AccuracyMode;
}

export interface JobHooks {
  signal?: AbortSignal;
  /** What is running and how far along the whole job is (0..1). */
  onProgress?: (step: string, fraction: number) => void;
  /** Partial results as they arrive (the page draws them live). */
  onPartial?: (result: BenchResult) => void;
  /** A model the page holds as bytes (a local File). */
  modelSource?: ByteSource;
  waitUntilVisible?: () => Promise<boolean>;
  /** Where tuned kernel shapes persist (page: localStorage; CLI: a file); without one, nothing is tuned. */
  tuneCache?: TuneCache;
  /** A second reference for the accuracy pass (the CLI's --agreement llama.cpp), opened only when the pass runs. */
  secondReference?: () => Promise<SecondReference>;
}

/** The embedded default: a small preset on CPU adapters (seconds), a realistic one on GPUs. */
export function defaultJob(caps: Pick<Capabilities, 'cpuLike'>): BenchJob {
  return caps.cpuLike
    ? { probe: true, model: { preset: 'stories15m', quant: 'q4_0' }, latency: { promptLengths: [16, 64], gen: 16, reps: 3 } }
    : { probe: true, model: { preset: 'llama-3.2-1b', quant: 'q4_0' }, latency: { promptLengths: [16, 64, 256, 1024], gen: 64, reps: 5 } };
}

/**
 * Positions the job needs (a prompt of P plus N outputs uses P + N − 1), rounded up to a multiple
 * of 64 but not past the model's context.
 */
export function contextFor(job: BenchJob, modelContext: number, promptIds?: number[]): number {
  const need = positionsNeeded(job, promptIds);
  // Round up to a multiple of 64 (at least 64) for the kernels, but never past what the file allows.
  return Math.max(need, Math.min(Math.max(64, Math.ceil(need / 64) * 64), modelContext));
}

/** Positions the job's longest request needs. */
function positionsNeeded(job: BenchJob, promptIds?: number[]): number {
  const needs = [1];
  if (job.latency) needs.push(Math.max(...job.latency.promptLengths) + job.latency.gen - 1);
  if (job.llamaBench) for (const t of llamaBenchTests(llamaBenchSettings(job))) needs.push(t.depth + (t.nPrompt > 0 ? t.nPrompt + t.nGen : t.nGen + 1));
  if (job.generate && promptIds) needs.push(promptIds.length + job.generate.gen - 1);
  if (job.serve) needs.push(servePositions(job.serve));
  return Math.max(...needs);
}

/**
 * Positions a serving workload's longest request needs: the shared prefix, then per turn the
 * longest message and answer (a conversation's last turn holds every earlier turn), less the last
 * output (never fed back); over every class.
 */
export function servePositions(s: ServeSettings): number {
  const turns = s.conversations !== undefined ? (s.turns ?? 1) : 1;
  const perTurn = [maxLength(s.prompt) + maxLength(s.output)];
  for (const c of s.classes ?? []) perTurn.push(maxLength(c.prompt ?? s.prompt) + maxLength(c.output ?? s.output));
  return (s.shared_prefix ?? 0) + turns * Math.max(...perTurn) - 1;
}

/**
 * Refuse up front (before the roofs) a job that cannot fit a preset model's context, rather than
 * after minutes of measuring: the preset's shape is known without downloading anything.
 */
export function checkPresetFits(job: BenchJob): void {
  const preset = job.model?.preset ? findPreset(job.model.preset) : undefined;
  if (!preset) return;
  const context = preset.config.contextLength;
  const need = Math.max(positionsNeeded(job), job.context ?? 0);
  if (need <= context) return;
  const lb = job.llamaBench ? llamaBenchSettings(job) : null;
  const hint =
    lb && (lb.nPrompt > context || lb.nGen + 1 > context)
      ? `Run llama-bench with pp${Math.min(lb.nPrompt, context)} and tg${Math.min(lb.nGen, context - 1)} instead.`
      : `Choose prompt and output lengths that add up to at most ${context} tokens, or a model with a longer context.`;
  throw new TokenscopeError('bad-input', `This job needs ${need} positions; ${preset.title} holds ${context}.`, hint);
}

/**
 * The work a job plans (validate.ts's PlannedWork), for the bound on what runs without a
 * confirmation (the CLI's --yes, the page's "Run it anyway"). A profiled sweep runs each length once more.
 */
export function plannedWork(job: BenchJob): PlannedWork {
  const work: PlannedWork = {};
  const l = job.latency;
  // Each cached prefix length repeats the sweep's prefills (without decode): counted as a whole sweep, an upper bound.
  if (l)
    work.latency = {
      promptLengths: l.promptLengths,
      gen: l.gen,
      reps: (l.reps + (l.profile ? 1 : 0)) * (1 + (l.cachedPrefixes?.length ?? 0)),
      warmup: l.warmup ?? 1,
    };
  const s = job.serve;
  if (s) {
    // The rate sweep runs the workload up to 6 more times (findCapacity's two brackets and 4 bisections).
    const runs = 1 + (s.sweep_batch?.length ?? 0) + (s.sweep_rate ? 6 : 0);
    const longestPrompt = servePositions(s) + 1 - maxLength(s.output);
    work.serve = { requests: s.requests, rate: s.rate, longestPrompt, longestOutput: maxLength(s.output), runs };
  }
  return work;
}

/** llama-bench's settings for a job: its pp/tg lengths over llama.cpp's defaults. */
export function llamaBenchSettings(job: BenchJob): LlamaBenchSettings {
  return typeof job.llamaBench === 'object' ? { ...LLAMA_BENCH_DEFAULTS, ...job.llamaBench } : LLAMA_BENCH_DEFAULTS;
}

/**
 * The KV-cache positions of a run: the job's context, or what its prompts and outputs need. When
 * no context was asked for and they do not fit the model, the message says so in those terms (a
 * hint to shorten a context nobody set would send the user looking for the wrong thing).
 */
export function runContext(job: BenchJob, model: { name: string; contextLength: number }, promptIds?: number[]): number {
  if (job.context !== undefined) return job.context;
  const maxSeq = contextFor(job, model.contextLength, promptIds);
  if (maxSeq > model.contextLength) {
    throw new TokenscopeError(
      'bad-input',
      `This run needs ${maxSeq} positions (its longest prompt plus output${job.serve?.shared_prefix || job.serve?.conversations ? ', with the shared prefix and every turn' : ''}), but ${model.name} holds ${model.contextLength} (its context_length).`,
      job.serve?.shared_prefix || job.serve?.conversations
        ? 'Use a shorter shared prefix, fewer turns, shorter prompts or fewer output tokens.'
        : 'Use shorter prompts or fewer output tokens.',
    );
  }
  return maxSeq;
}

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
      const sweep = await runLatency(engine, cold, result.ceilings, settings, {
        signal: hooks.signal,
        waitUntilVisible: hooks.waitUntilVisible,
        onProgress: progressSlice(hooks, probeEnd + 0.15, probeEnd + 0.15 + (end - probeEnd - 0.15), 'latency'),
        onRequest: (partial) => {
          result.latency = partial;
          hooks.onPartial?.(result);
        },
      });
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
    result.side_by_side = sideBySide({ latency: result.latency, model: result.model }, section);
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

/**
 * What a benchmark job is (a plain JSON-serialisable description of what to run) and what it
 * plans, before anything runs: its default, the positions it needs, the work it asks for. Pure:
 * the page's setup form reads it without loading the engine, which job.ts runs.
 */
import type { TuneCache } from '../kernels/autotune.ts';
import { TokenscopeError } from '../errors.ts';
import { findPreset } from '../model/catalog.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import type { ByteSource } from '../model/gguf/source.ts';
import type { AccuracyMode, SecondReference } from '../measure/accuracy.ts';
import { LLAMA_BENCH_DEFAULTS, llamaBenchTests, type LlamaBenchSettings } from '../measure/llama-bench-spec.ts';
import type { ModelSpec } from './model-source.ts';
import type { ProbeShapes } from '../kernels/select.ts';
import type { RepeatProtocol } from '../measure/protocol.ts';
import type { BenchResult, Ceilings } from '../measure/schema.ts';
import type { PlannedWork } from '../measure/validate.ts';
import type { ServeSettings } from '../serve/run.ts';
import type { LengthDistribution } from '../serve/workload.ts';

function maxLength(d: LengthDistribution): number {
  return d.kind === 'fixed' ? d.tokens : d.kind === 'uniform' ? d.max : d.max;
}

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

/**
 * Serving mode on the real engine: a seeded workload through the continuous-batching scheduler,
 * measured with vLLM `bench serve`'s definitions; optionally a batch-size sweep (the throughput /
 * latency trade-off and where decode leaves the memory-bound region) and a rate sweep for capacity
 * (DistServe: the highest rate at which ≥ 90% of requests meet the SLOs). Only the arrivals are
 * generated; every number comes from the engine on the device.
 */
import { costReport, type CostReport } from '../measure/cost.ts';
import { throwIfCancelled } from '../measure/protocol.ts';
import { rooflineOf, type Roofs } from '../measure/latency-summary.ts';
import { arithmeticIntensity, verdict, type Verdict } from '../measure/roofline.ts';
import { summarize } from '../measure/stats.ts';
import type { LatencyMetric } from '../measure/metrics.ts';
import type { Agrees } from '../measure/schema-kit.ts';
import type { BatchPointData, CapacityData, CostData, ServeRunData, ServeSettingsData } from '../measure/sections/serve.ts';
import { TokenscopeError } from '../errors.ts';
import type { Engine } from '../model/engine.ts';
import { GpuServingEngine, realClock, type PrefixCacheUse, type StepWork } from './gpu-engine.ts';
import { BLOCK_TOKENS } from './prefix-cache.ts';
import {
  availabilityOfTrace,
  batchHistogramOfTrace,
  busyShareOfTrace,
  classRowsOfTrace,
  errorRate,
  findCapacity,
  meanBatch,
  prefixCacheOfTrace,
  queueStatsOfTrace,
  requireSlaPercent,
  serveResultOfTrace,
  sloAttainment,
  type Availability,
  type BatchBin,
  type ClassRow,
  type PrefixCacheReport,
  type CapacityResult,
  type QueueStats,
  type ServeResult,
  type Slo,
} from './metrics.ts';
import { checkSchedulerOptions, runServe, type SchedulerOptions } from './scheduler.ts';
import { requestTiming, throwIfFatal, type ServeTrace } from './trace.ts';
import { checkClasses, generateWorkload, type LengthDistribution, type RequestClass } from './workload.ts';

export interface ServeSettings {
  requests: number;
  /** Requests/s; Infinity sends all at t = 0. */
  rate: number;
  burstiness: number;
  prompt: LengthDistribution;
  output: LengthDistribution;
  max_batch: number;
  max_tokens_per_step: number;
  /** Chunked-prefill chunk size; null = off. */
  chunk: number | null;
  slo: Slo;
  seed: number;
  /** vLLM's --percentile-metrics: the metrics the summary prints percentiles of (default all four). */
  percentile_metrics?: LatencyMetric[];
  /** vLLM's --metric-percentiles: which percentiles it prints (default 90, 95, 99); each gets its result key. */
  metric_percentiles?: number[];
  dollars_per_hour?: number;
  watts?: number;
  sweep_batch?: number[];
  /** Bisect the rate for capacity. */
  sweep_rate?: boolean;
  /** Reject arrivals when this many requests already wait beyond the free slots. */
  max_queue?: number;
  /** Cancel a request not finished this many ms after its arrival. */
  timeout_ms?: number;
  /** Cap the output of requests admitted while more than this many wait behind them… */
  degrade_over?: number;
  /** …at this many tokens (default: half of what they ask, rounded up). */
  degrade_to?: number;
  /** Availability target, percent of requests (e.g. 99.9). */
  sla_percent?: number;
  /** Request classes, each with its share, SLOs and optionally its own lengths. */
  classes?: RequestClass[];
  /** Automatic prefix caching; on unless false. */
  prefix_cache?: boolean;
  /** Every request (every conversation's first turn) starts with the same system prompt of this many tokens. */
  shared_prefix?: number;
  /** Multi-turn chat: this many conversations of `turns` turns each (requests = conversations × turns). */
  conversations?: number;
  turns?: number;
}

export interface DecodeRoofline {
  batch: number;
  /** Median host ms of steps that decoded exactly `batch` sequences and prefilled nothing. */
  step_ms: number;
  steps: number;
  flops: number;
  bytes: number;
  intensity: number;
  verdict: Verdict;
}

export interface ServeRun {
  result: ServeResult;
  slo_attainment: number | null;
  error_rate: number;
  /** Per request, ms from the run's start. */
  timeline: {
    id: number;
    prompt_tokens: number;
    output_tokens: number;
    arrival_ms: number;
    admit_ms: number | null;
    first_token_ms: number | null;
    finish_ms: number;
    error: string | null;
    /** Why it failed (null when it completed); absent in older reports. */
    cause?: string | null;
    /** The output cap the degradation policy gave it; null when it ran as asked. */
    degraded_to?: number | null;
    /** Its request class; null without classes. */
    class?: string | null;
    /** Prompt tokens found in the prefix cache at admission. */
    cached_tokens?: number;
    /** The output token ids, in order. */
    token_ids?: number[];
  }[];
  steps: { start_ms: number; end_ms: number; decode: number; prefill_tokens: number; running: number; waiting: number }[];
  decode_roofline: DecodeRoofline[];
  /** Errors by cause, availability against the SLA, error budget, degradation rate. */
  availability?: Availability;
  /** Queue time (admission − arrival) percentiles. */
  queue?: QueueStats;
  /** Steps per batch size (sequences in the step), as the scheduler ran them. */
  batch_histogram?: BatchBin[];
  /** Mean sequences per step. */
  mean_batch?: number;
  /** Σ step wall time ÷ run wall time (scheduler clock: encode, submit, GPU, readback). */
  busy_share?: number;
  /** Σ (ids on the host − submit) ÷ run wall time: GPU work and readback, without host encoding. */
  submit_busy_share?: number | null;
  /** Per request class: throughput, goodput, SLO attainment, cost attributed by tokens. */
  classes?: ClassRow[];
  /** Prefix caching: hit rate, TTFT of hits vs misses, the memory it holds. */
  prefix_cache?: PrefixCacheReport;
}

export interface BatchPoint {
  batch: number;
  output_throughput: number;
  request_throughput: number;
  median_ttft_ms: number;
  p99_ttft_ms: number;
  median_tpot_ms: number;
  p99_tpot_ms: number;
  decode: DecodeRoofline | null;
}

export interface ServeSection {
  settings: ServeSettings;
  run: ServeRun;
  cost: CostReport | null;
  batch_sweep: BatchPoint[] | null;
  rate_sweep: (CapacityResult & { target: number }) | null;
}

export type ServeRoofs = Roofs;

export interface ServeHooks {
  signal?: AbortSignal;
  onProgress?: (step: string, fraction: number) => void;
  onPartial?: (section: Partial<ServeSection>) => void;
}

/** Decode-only steps grouped by batch size, each a point on the roofline. */
export function decodeRooflines(work: readonly StepWork[], roofs: ServeRoofs): DecodeRoofline[] {
  const byBatch = new Map<number, StepWork[]>();
  for (const w of work) if (w.prefillRows === 0 && w.decodeRows > 0) byBatch.set(w.decodeRows, [...(byBatch.get(w.decodeRows) ?? []), w]);
  return [...byBatch.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([batch, steps]) => {
      const stepMs = summarize(steps.map((s) => s.ms)).p50;
      const flops = summarize(steps.map((s) => s.cost.flops)).p50;
      const bytes = summarize(steps.map((s) => s.cost.bytes)).p50;
      return {
        batch,
        step_ms: stepMs,
        steps: steps.length,
        flops,
        bytes,
        intensity: arithmeticIntensity(flops, bytes),
        verdict: verdict({ flops, bytes, ms: stepMs }, rooflineOf(roofs)),
      };
    });
}

export function summarizeRun(
  trace: ServeTrace,
  work: readonly StepWork[] | null,
  settings: ServeSettings,
  roofs: ServeRoofs,
  cache: PrefixCacheUse | null = null,
): ServeRun {
  const hasSlo = Object.values(settings.slo).some((v) => v !== undefined);
  const timings = trace.requests.map(requestTiming);
  const t0 = trace.tStart;
  const wall = trace.tEnd - trace.tStart;
  const histogram = batchHistogramOfTrace(trace);
  return {
    result: serveResultOfTrace(trace, hasSlo ? settings.slo : undefined, settings.metric_percentiles),
    slo_attainment: hasSlo ? sloAttainment(timings, settings.slo) : null,
    error_rate: errorRate(timings),
    timeline: trace.requests.map((r) => ({
      id: r.id,
      prompt_tokens: r.promptTokens,
      output_tokens: r.tTokens.length,
      arrival_ms: r.tArrival - t0,
      admit_ms: r.tAdmit !== undefined ? r.tAdmit - t0 : null,
      first_token_ms: r.tTokens.length ? r.tTokens[0] - t0 : null,
      finish_ms: r.tFinish - t0,
      error: r.error ?? null,
      cause: r.cause ?? null,
      degraded_to: r.degradedTo ?? null,
      class: r.className ?? null,
      cached_tokens: r.cachedTokens ?? 0,
      token_ids: r.tokenIds ?? [],
    })),
    steps: trace.steps.map((s) => ({
      start_ms: s.tStart - t0,
      end_ms: s.tEnd - t0,
      decode: s.decode.length,
      prefill_tokens: s.prefill.reduce((n, p) => n + p.tokens, 0),
      running: s.running,
      waiting: s.waiting,
    })),
    decode_roofline: decodeRooflines(work ?? [], roofs),
    availability: availabilityOfTrace(trace, settings.sla_percent),
    queue: queueStatsOfTrace(trace),
    batch_histogram: histogram,
    mean_batch: meanBatch(histogram),
    busy_share: busyShareOfTrace(trace),
    submit_busy_share: work === null || !(wall > 0) ? null : Math.min(1, work.reduce((t, w) => t + w.ms, 0) / wall),
    ...(settings.classes ? { classes: classRowsOfTrace(trace, settings.classes, settings.dollars_per_hour) } : {}),
    prefix_cache: prefixCacheOfTrace(trace, cache, BLOCK_TOKENS),
  };
}

/**
 * The untimed warm-up before a measured workload: every step program a run with `maxBatch`
 * sequences can use (steps are padded to row buckets, so that is a few), then a few requests sent
 * at once. No pipeline compiles and no program is built inside the measured steps.
 */
export async function warmUpServing(engine: Engine, settings: ServeSettings, maxBatch: number, requests = settings.requests): Promise<void> {
  await engine.warmBuckets(settings.max_tokens_per_step, maxBatch, maxBatch > 1 ? ['one-slot', 'distinct', 'any'] : ['one-slot', 'distinct']);
  // Single-turn requests (conversations wait on their turns, and the warm-up only builds programs).
  const warm = generateWorkload({
    ...workloadSpec(engine, settings, Infinity, Math.min(requests, 2 * maxBatch)),
    conversations: undefined,
    seed: settings.seed + 1,
  });
  // Admission limits stay off here: the warm-up must build every program, not shed its requests.
  throwIfFatal(
    await runServe(warm, await servingEngine(engine, settings, maxBatch), realClock, {
      ...schedulerOptions(settings),
      maxQueue: undefined,
      timeoutMs: undefined,
      degrade: undefined,
    }),
  );
}

/**
 * One workload at `rate` with `maxBatch` concurrent sequences, after the warm-up. `fatal` is the
 * error that ended it early (a lost device): the run's records up to then, for the caller to keep
 * before it rethrows.
 */
async function serveOnce(
  engine: Engine,
  settings: ServeSettings,
  roofs: ServeRoofs,
  rate: number,
  maxBatch: number,
  requests = settings.requests,
): Promise<{ run: ServeRun; fatal?: unknown }> {
  await warmUpServing(engine, settings, maxBatch, requests);
  const workload = generateWorkload(workloadSpec(engine, settings, rate, requests));
  const gpu = await servingEngine(engine, settings, maxBatch);
  const trace = await runServe(workload, gpu, realClock, schedulerOptions(settings));
  return { run: summarizeRun(trace, gpu.work, settings, roofs, gpu.prefixCacheUse()), fatal: trace.fatal };
}

/** The scheduler's engine for a run: with a fresh (cold) prefix cache unless it is off. */
export function servingEngine(engine: Engine, settings: ServeSettings, maxBatch: number): Promise<GpuServingEngine> {
  return settings.prefix_cache === false ? Promise.resolve(new GpuServingEngine(engine, maxBatch)) : GpuServingEngine.withPrefixCache(engine, maxBatch);
}

/** {@link serveOnce} where an early end has nothing to keep: rethrow it. */
async function serveOrThrow(...args: Parameters<typeof serveOnce>): Promise<ServeRun> {
  const { run, fatal } = await serveOnce(...args);
  if (fatal !== undefined) throw fatal;
  return run;
}

export function workloadSpec(engine: Engine, settings: ServeSettings, rate: number, requests: number) {
  return {
    requests,
    rate,
    burstiness: settings.burstiness,
    prompt: settings.prompt,
    output: settings.output,
    vocabSize: engine.config.vocabSize,
    seed: settings.seed,
    classes: settings.classes,
    sharedPrefix: settings.shared_prefix,
    conversations: settings.conversations !== undefined ? { count: settings.conversations, turns: settings.turns ?? 1 } : undefined,
  };
}

export function schedulerOptions(settings: ServeSettings): SchedulerOptions {
  return {
    maxTokensPerStep: settings.max_tokens_per_step,
    chunkSize: settings.chunk ?? undefined,
    maxQueue: settings.max_queue,
    timeoutMs: settings.timeout_ms,
    degrade: settings.degrade_over === undefined ? undefined : { overQueue: settings.degrade_over, outputTokens: settings.degrade_to },
  };
}

/**
 * Refuse a shared prefix or conversations no run can serve: zero or negative counts, turns without
 * conversations, a longest request (prefix + every turn's message and answer) past the context.
 */
export function checkPrefixWorkload(settings: ServeSettings, maxSeq: number): void {
  const positive = (name: string, v: number | undefined) => {
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) throw new TokenscopeError('bad-input', `${name} must be an integer ≥ 1, got ${v}.`);
  };
  positive('The shared prefix', settings.shared_prefix);
  positive('The conversation count', settings.conversations);
  positive('The turns per conversation', settings.turns);
  if (settings.turns !== undefined && settings.conversations === undefined)
    throw new TokenscopeError('bad-input', 'Turns per conversation need a conversation count.', 'Give --conversations C with --turns T.');
  const turns = settings.conversations !== undefined ? (settings.turns ?? 1) : 1;
  const longest = (d: LengthDistribution) => (d.kind === 'fixed' ? d.tokens : d.max);
  const perTurn = Math.max(
    longest(settings.prompt) + longest(settings.output),
    ...(settings.classes ?? []).map((c) => longest(c.prompt ?? settings.prompt) + longest(c.output ?? settings.output)),
  );
  const need = (settings.shared_prefix ?? 0) + turns * perTurn - 1;
  if (need > maxSeq)
    throw new TokenscopeError(
      'bad-input',
      `The longest request needs ${need} positions (shared prefix ${settings.shared_prefix ?? 0} + ${turns} × (prompt + output)); the context holds ${maxSeq}.`,
      'Lower the shared prefix, the turns or the lengths, or raise the context.',
    );
}

export async function runServing(engine: Engine, given: ServeSettings, roofs: ServeRoofs, hooks: ServeHooks = {}): Promise<ServeSection> {
  // The report says whether the prefix cache ran (on unless turned off).
  const settings: ServeSettings = { ...given, prefix_cache: given.prefix_cache !== false };
  if (settings.max_batch > engine.shape.slots)
    throw new TokenscopeError('bad-input', `max batch ${settings.max_batch} exceeds the engine's ${engine.shape.slots} slots.`);
  const sweepBatch = settings.sweep_batch ?? [];
  const stages = 1 + sweepBatch.length + (settings.sweep_rate ? 6 : 0);
  let stage = 0;
  const progress = (what: string) => hooks.onProgress?.(what, stage++ / stages);

  progress(`serving ${settings.requests} requests at ${settings.rate === Infinity ? 'once' : `${settings.rate} req/s`}, batch ≤ ${settings.max_batch}`);
  checkSchedulerOptions(schedulerOptions(settings));
  if (settings.sla_percent !== undefined) requireSlaPercent(settings.sla_percent);
  if (settings.classes) checkClasses(settings.classes);
  if (settings.degrade_to !== undefined && settings.degrade_over === undefined)
    throw new TokenscopeError(
      'bad-input',
      'An output cap for degraded requests needs a queue depth to degrade over.',
      'Give --degrade-over N with --degrade-to.',
    );
  checkPrefixWorkload(settings, engine.shape.maxSeq);
  const { run, fatal } = await serveOnce(engine, settings, roofs, settings.rate, settings.max_batch);
  const section: ServeSection = { settings, run, cost: null, batch_sweep: null, rate_sweep: null };
  if (fatal !== undefined) {
    // The requests lost with the device are in the report (availability, errors by cause); the run still fails.
    hooks.onPartial?.(section);
    throw fatal;
  }
  if (settings.dollars_per_hour && run.result.output_throughput > 0) {
    section.cost = costReport({
      dollarsPerHour: settings.dollars_per_hour,
      watts: settings.watts,
      outputTokensPerS: run.result.output_throughput,
      totalTokensPerS: run.result.total_token_throughput,
    });
  }
  hooks.onPartial?.(section);

  if (sweepBatch.length) {
    section.batch_sweep = [];
    for (const batch of sweepBatch) {
      throwIfCancelled(hooks.signal);
      progress(`batch sweep: B = ${batch}`);
      // Every request at t = 0 and enough of them that B sequences decode together most of the time.
      const r = await serveOrThrow(engine, settings, roofs, Infinity, batch, Math.max(settings.requests, 2 * batch));
      section.batch_sweep.push({
        batch,
        output_throughput: r.result.output_throughput,
        request_throughput: r.result.request_throughput,
        median_ttft_ms: r.result.median_ttft_ms,
        p99_ttft_ms: r.result.p99_ttft_ms,
        median_tpot_ms: r.result.median_tpot_ms,
        p99_tpot_ms: r.result.p99_tpot_ms,
        decode: r.decode_roofline.find((d) => d.batch === batch) ?? null,
      });
      hooks.onPartial?.(section);
    }
  }

  if (settings.sweep_rate) {
    const hasSlo = Object.values(settings.slo).some((v) => v !== undefined);
    if (!hasSlo)
      throw new TokenscopeError('bad-input', 'A rate sweep needs SLOs.', 'Give --slo ttft=MS,tpot=MS (or a preset such as llama3.1-8b-interactive).');
    // Bracket around the rate the device sustains with everything queued at once.
    const top = run.result.request_throughput > 0 ? run.result.request_throughput : 1;
    const capacity = await findCapacity(
      async (rate) => {
        throwIfCancelled(hooks.signal);
        progress(`rate sweep: ${rate.toFixed(2)} req/s`);
        return (await serveOrThrow(engine, settings, roofs, rate, settings.max_batch)).slo_attainment ?? 0;
      },
      { lo: top / 16, hi: top * 1.5, target: 0.9, iterations: 4 },
    );
    section.rate_sweep = { ...capacity, target: 0.9 };
    hooks.onPartial?.(section);
  }
  return section;
}

// The result's declaration of this section (measure/sections/serve.ts) and these interfaces agree,
// but for `rate`, which JSON cannot hold as Infinity (it arrives as null).
const settingsAgree: Agrees<Omit<ServeSettings, 'rate'>, Omit<ServeSettingsData, 'rate'>> = true;
const runAgrees: Agrees<ServeRun, ServeRunData> = true;
const batchAgrees: Agrees<BatchPoint, BatchPointData> = true;
const costAgrees: Agrees<CostReport, CostData> = true;
const capacityAgrees: Agrees<NonNullable<ServeSection['rate_sweep']>, CapacityData> = true;
void [settingsAgree, runAgrees, batchAgrees, costAgrees, capacityAgrees];

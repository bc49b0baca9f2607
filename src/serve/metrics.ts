/**
 * Serving metrics in vLLM `bench serve`'s result layout, goodput against SLOs, capacity search
 * (DistServe). Per-request formulas come from measure/metrics.ts; vLLM's printed summary is
 * measure/format.ts formatServeSummary (the text report prints it).
 */
import { e2elMs, isCompleted, itlsMs, latencyStats, outputTokens, tpotMs, ttftMs, type LatencyStats, type RequestTiming } from '../measure/metrics.ts';
import { percentileNearestRank, summarize } from '../measure/stats.ts';
import { TokenscopeError } from '../errors.ts';
import { FAILURE_CAUSES, requestTiming, type FailureCause, type ServeTrace } from './trace.ts';
import type { PrefixCacheUse } from './gpu-engine.ts';

/** Service-level objectives in ms; a request is good only if it meets every one given. */
export interface Slo {
  ttft?: number;
  tpot?: number;
  e2el?: number;
}

/**
 * vLLM's result JSON. Units as vLLM writes them: `duration` and the per-request arrays `ttfts`,
 * `itls`, `latencies` in seconds, the `*_ms` aggregates in ms. Arrays cover every request in order;
 * a failed request has latency 0, output length 0, its TTFT and ITLs only if tokens came before it
 * failed, and its message in `errors` ('' when it succeeded) — as vLLM fills them.
 */
export interface ServeResult extends LatencyStats {
  completed: number;
  failed: number;
  duration: number;
  total_input_tokens: number;
  total_output_tokens: number;
  /** completed / duration. */
  request_throughput: number;
  /** good requests / duration; null without SLOs, as vLLM writes it without --goodput. */
  request_goodput: number | null;
  /** Σ output tokens / duration. */
  output_throughput: number;
  /** (Σ prompt + Σ output tokens) / duration. */
  total_token_throughput: number;
  input_lens: number[];
  output_lens: number[];
  ttfts: number[];
  itls: number[][];
  latencies: number[];
  errors: string[];
}

/**
 * Good = completed and TTFT ≤ slo.ttft, TPOT ≤ slo.tpot (TPOT counts as 0 for a one-token output,
 * as vLLM does), E2EL ≤ slo.e2el — each only when given.
 */
export function meetsSlo(r: RequestTiming, slo: Slo): boolean {
  if (!isCompleted(r)) return false;
  const within = (limit: number | undefined, value: number) => limit === undefined || value <= limit;
  return within(slo.ttft, ttftMs(r) as number) && within(slo.tpot, tpotMs(r) ?? 0) && within(slo.e2el, e2elMs(r) as number);
}

function requireRequests(timings: readonly RequestTiming[]): void {
  if (timings.length === 0) throw new TokenscopeError('bad-input', 'no requests to measure', 'Run at least one request.');
}

/**
 * SLO attainment = good / (completed + failed): errors count against it, as AIPerf counts them
 * (vLLM's goodput divides by time instead and so ignores them).
 */
export function sloAttainment(timings: readonly RequestTiming[], slo: Slo): number {
  requireRequests(timings);
  return timings.filter((r) => meetsSlo(r, slo)).length / timings.length;
}

/** Error rate = failed / (completed + failed). */
export function errorRate(timings: readonly RequestTiming[]): number {
  requireRequests(timings);
  return timings.filter((r) => !isCompleted(r)).length / timings.length;
}

/**
 * vLLM's `bench serve` result for requests that ran for `durationS` seconds in all; `percentiles`
 * (its --metric-percentiles) add their `p{n}_{metric}_ms` keys to the always-present p90/p95/p99.
 */
export function serveResult(timings: readonly RequestTiming[], durationS: number, slo?: Slo, percentiles: readonly number[] = []): ServeResult {
  requireRequests(timings);
  if (!(durationS > 0)) throw new TokenscopeError('bad-input', `duration must be > 0 s, got ${durationS}`);
  const done = timings.filter(isCompleted);
  const totalInput = done.reduce((sum, r) => sum + r.promptTokens, 0);
  const totalOutput = done.reduce((sum, r) => sum + outputTokens(r), 0);
  return {
    completed: done.length,
    failed: timings.length - done.length,
    duration: durationS,
    total_input_tokens: totalInput,
    total_output_tokens: totalOutput,
    request_throughput: done.length / durationS,
    request_goodput: slo === undefined ? null : timings.filter((r) => meetsSlo(r, slo)).length / durationS,
    output_throughput: totalOutput / durationS,
    total_token_throughput: (totalInput + totalOutput) / durationS,
    ...latencyStats(timings, percentiles),
    input_lens: timings.map((r) => r.promptTokens),
    output_lens: timings.map((r) => (isCompleted(r) ? outputTokens(r) : 0)),
    ttfts: timings.map((r) => (ttftMs(r) ?? 0) / 1000),
    itls: timings.map((r) => itlsMs(r).map((ms) => ms / 1000)),
    latencies: timings.map((r) => (isCompleted(r) ? (e2elMs(r) as number) / 1000 : 0)),
    errors: timings.map((r) => r.error ?? ''),
  };
}

/** {@link serveResult} of a scheduler run; duration = run end − run start. */
export function serveResultOfTrace(trace: ServeTrace, slo?: Slo, percentiles: readonly number[] = []): ServeResult {
  return serveResult(trace.requests.map(requestTiming), (trace.tEnd - trace.tStart) / 1000, slo, percentiles);
}

/** Failures by cause; JSON keys in snake case. */
export type ErrorsByCause = Record<'rejected' | 'timeout' | 'admission' | 'device_lost' | 'engine', number>;

const causeKey = (c: FailureCause): keyof ErrorsByCause => (c === 'device-lost' ? 'device_lost' : c);

/**
 * Availability of a run against an SLA (SRE's error budget): availability = successful ÷ all
 * requests; the budget allows (1 − sla) × requests failures; what is left = allowed − failed, also
 * as a share of the allowance (negative once overspent; null when the SLA allows none).
 */
export interface Availability {
  requests: number;
  successful: number;
  failed: number;
  errors_by_cause: ErrorsByCause;
  availability: number;
  /** The SLA as a fraction (99.9% → 0.999); null when none was given, and so are the budget fields. */
  sla: number | null;
  meets_sla: boolean | null;
  error_budget: number | null;
  error_budget_left: number | null;
  error_budget_left_share: number | null;
  /** Requests served with their output capped by the degradation policy (completed or not). */
  degraded: number;
  /** degraded ÷ all requests. */
  degradation_rate: number;
}

/** `slaPercent` as the flag takes it: in (0, 100]. */
export function requireSlaPercent(slaPercent: number): void {
  if (!(slaPercent > 0 && slaPercent <= 100)) {
    throw new TokenscopeError('bad-input', `the SLA must be a percentage in (0, 100], got ${slaPercent}`, 'Write it as a percent of requests, e.g. 99.9.');
  }
}

export function availabilityOfTrace(trace: ServeTrace, slaPercent?: number): Availability {
  const n = trace.requests.length;
  if (n === 0) throw new TokenscopeError('bad-input', 'no requests to measure', 'Run at least one request.');
  if (slaPercent !== undefined) requireSlaPercent(slaPercent);
  const errors = Object.fromEntries(FAILURE_CAUSES.map((c) => [causeKey(c), 0])) as ErrorsByCause;
  for (const r of trace.requests) if (r.error !== undefined) errors[causeKey(r.cause ?? 'engine')] += 1;
  const failed = Object.values(errors).reduce((a, b) => a + b, 0);
  const sla = slaPercent === undefined ? null : slaPercent / 100;
  const allowed = sla === null ? null : (1 - sla) * n;
  const degraded = trace.requests.filter((r) => r.degradedTo !== undefined).length;
  return {
    requests: n,
    successful: n - failed,
    failed,
    errors_by_cause: errors,
    availability: (n - failed) / n,
    sla,
    meets_sla: sla === null ? null : (n - failed) / n >= sla,
    error_budget: allowed,
    error_budget_left: allowed === null ? null : allowed - failed,
    error_budget_left_share: allowed === null || allowed === 0 ? null : (allowed - failed) / allowed,
    degraded,
    degradation_rate: degraded / n,
  };
}

/** Queue time = admission − arrival, ms, over the requests that got a slot (ours; vLLM's server logs it as request_queue_time). */
export interface QueueStats {
  /** Requests admitted (those rejected or timed out in the queue have no queue time). */
  count: number;
  mean_queue_ms: number;
  median_queue_ms: number;
  std_queue_ms: number;
  p90_queue_ms: number;
  p95_queue_ms: number;
  p99_queue_ms: number;
}

export function queueStatsOfTrace(trace: ServeTrace): QueueStats {
  const waits = trace.requests.filter((r) => r.tAdmit !== undefined).map((r) => (r.tAdmit as number) - r.tArrival);
  // Like vLLM's latency keys, 0 when there are no samples.
  const s = waits.length ? summarize(waits) : { mean: 0, p50: 0, std: 0, p90: 0, p95: 0, p99: 0 };
  return {
    count: waits.length,
    mean_queue_ms: s.mean,
    median_queue_ms: s.p50,
    std_queue_ms: s.std,
    p90_queue_ms: s.p90,
    p95_queue_ms: s.p95,
    p99_queue_ms: s.p99,
  };
}

/** Steps the scheduler ran with `batch` sequences in them (decodes + prefill chunks), and their wall ms. */
export interface BatchBin {
  batch: number;
  steps: number;
  ms: number;
}

/** The batch-size distribution the scheduler actually ran, by batch size ascending. */
export function batchHistogramOfTrace(trace: ServeTrace): BatchBin[] {
  const bins = new Map<number, BatchBin>();
  for (const s of trace.steps) {
    const batch = s.decode.length + s.prefill.length;
    const bin = bins.get(batch) ?? { batch, steps: 0, ms: 0 };
    bin.steps += 1;
    bin.ms += s.tEnd - s.tStart;
    bins.set(batch, bin);
  }
  return [...bins.values()].sort((a, b) => a.batch - b.batch);
}

/** Mean sequences per step, step-weighted; 0 without steps. */
export function meanBatch(bins: readonly BatchBin[]): number {
  const steps = bins.reduce((n, b) => n + b.steps, 0);
  return steps === 0 ? 0 : bins.reduce((n, b) => n + b.batch * b.steps, 0) / steps;
}

/**
 * Busy share = Σ step wall time (the scheduler's clock from planning a step to its tokens on the
 * host: encode, submit, GPU, readback) ÷ run wall time. An upper bound on the GPU's busy share.
 */
export function busyShareOfTrace(trace: ServeTrace): number {
  const wall = trace.tEnd - trace.tStart;
  if (!(wall > 0)) return 0;
  return Math.min(1, trace.steps.reduce((t, s) => t + (s.tEnd - s.tStart), 0) / wall);
}

/** One request class's share of a run. Throughputs per second of the whole run's duration. */
export interface ClassRow {
  name: string;
  slo: Slo;
  requests: number;
  completed: number;
  failed: number;
  /** completed / duration. */
  request_throughput: number;
  /** Requests meeting the class's SLOs / duration; null when the class has none. */
  request_goodput: number | null;
  /** Σ output tokens / duration. */
  output_throughput: number;
  /** Good / all of the class's requests (errors count against it); null without SLOs. */
  slo_attainment: number | null;
  /** Σ over steps of step ms × (the class's tokens in the step ÷ the step's tokens), ÷ Σ step ms. */
  step_time_share: number;
  /** The run's cost × step_time_share ÷ the class's output tokens × 1000; null without a price or tokens. */
  dollars_per_1k_output_tokens: number | null;
}

/**
 * Per-class rows of a run whose requests carry a class. Cost is attributed by tokens: each step's
 * wall time is split over its sequences by the tokens each fed (a decode 1, a prefill chunk its
 * length), and the run's whole price (idle time included) follows those shares.
 */
export function classRowsOfTrace(trace: ServeTrace, classes: readonly { name: string; slo: Slo }[], dollarsPerHour?: number): ClassRow[] {
  const durationS = (trace.tEnd - trace.tStart) / 1000;
  const classOf = new Map(trace.requests.map((r) => [r.id, r.className]));
  const stepMs = new Map<string, number>();
  let allStepMs = 0;
  for (const s of trace.steps) {
    const fed = [...s.decode.map((seq) => ({ seq, tokens: 1 })), ...s.prefill];
    const tokens = fed.reduce((n, f) => n + f.tokens, 0);
    const ms = s.tEnd - s.tStart;
    allStepMs += ms;
    for (const f of fed) {
      const name = classOf.get(f.seq);
      if (name !== undefined) stepMs.set(name, (stepMs.get(name) ?? 0) + (ms * f.tokens) / tokens);
    }
  }
  const runDollars = dollarsPerHour === undefined ? null : (dollarsPerHour * durationS) / 3600;
  return classes.map((c) => {
    const mine = trace.requests.filter((r) => r.className === c.name);
    const timings = mine.map(requestTiming);
    const done = timings.filter(isCompleted);
    const outputs = done.reduce((n, r) => n + outputTokens(r), 0);
    const hasSlo = Object.values(c.slo).some((v) => v !== undefined);
    const good = hasSlo ? timings.filter((r) => meetsSlo(r, c.slo)).length : null;
    const share = allStepMs > 0 ? (stepMs.get(c.name) ?? 0) / allStepMs : 0;
    const perS = (x: number) => (durationS > 0 ? x / durationS : 0);
    return {
      name: c.name,
      slo: c.slo,
      requests: mine.length,
      completed: done.length,
      failed: mine.length - done.length,
      request_throughput: perS(done.length),
      request_goodput: good === null ? null : perS(good),
      output_throughput: perS(outputs),
      slo_attainment: good === null || mine.length === 0 ? null : good / mine.length,
      step_time_share: share,
      dollars_per_1k_output_tokens: runDollars === null || outputs === 0 ? null : ((runDollars * share) / outputs) * 1000,
    };
  });
}

/** MLPerf Inference server-scenario limits (p99 TTFT / p99 TPOT, ms), from docs/METRICS.md. */
export const MLPERF_SLOS = {
  'llama2-70b': { ttft: 2000, tpot: 200 },
  'llama2-70b-interactive': { ttft: 450, tpot: 40 },
  'llama3.1-8b': { ttft: 2000, tpot: 100 },
  'llama3.1-8b-interactive': { ttft: 500, tpot: 30 },
  'llama3.1-405b': { ttft: 6000, tpot: 175 },
  'llama3.1-405b-interactive': { ttft: 4500, tpot: 80 },
  'mixtral-8x7b': { ttft: 2000, tpot: 200 },
} as const satisfies Record<string, Required<Pick<Slo, 'ttft' | 'tpot'>>>;
export type MlperfPreset = keyof typeof MLPERF_SLOS;

/** MLPerf's minimum run length for a valid server-scenario result. */
export const MLPERF_MIN_DURATION_S = 600;

export interface MlperfCheck {
  /** Nearest-rank p99 (MLPerf's percentile) over completed requests, ms. */
  p99TtftMs: number;
  /** Over completed requests with more than one output token; 0 when there are none. */
  p99TpotMs: number;
  withinLimits: boolean;
  /** The run lasted at least {@link MLPERF_MIN_DURATION_S}. */
  longEnough: boolean;
}

/** MLPerf's pass rule: both p99s within the preset's limits (and, for a valid result, ≥ 10 minutes). */
export function mlperfCheck(timings: readonly RequestTiming[], preset: MlperfPreset, durationS: number): MlperfCheck {
  const done = timings.filter(isCompleted);
  if (done.length === 0) throw new TokenscopeError('bad-input', 'no completed requests to check', 'Fix the failing requests first.');
  const tpots = done.map(tpotMs).filter((x): x is number => x !== undefined);
  const p99TtftMs = percentileNearestRank(
    done.map((r) => ttftMs(r) as number),
    99,
  );
  const p99TpotMs = tpots.length > 0 ? percentileNearestRank(tpots, 99) : 0;
  const limits = MLPERF_SLOS[preset];
  return { p99TtftMs, p99TpotMs, withinLimits: p99TtftMs <= limits.ttft && p99TpotMs <= limits.tpot, longEnough: durationS >= MLPERF_MIN_DURATION_S };
}

const SLO_HINT = `Write metric=ms pairs such as "ttft=500,tpot=50" (metrics ttft, tpot, e2el), or a preset: ${Object.keys(MLPERF_SLOS).join(', ')}.`;

/**
 * Parse "ttft=500,tpot=50" (vLLM's "ttft:500 tpot:50" also works) or an MLPerf preset name into
 * an {@link Slo}. Values are ms, non-negative; each metric at most once.
 */
export function parseSlo(text: string): Slo {
  const trimmed = text.trim();
  if (trimmed in MLPERF_SLOS) return { ...MLPERF_SLOS[trimmed as MlperfPreset] };
  const pairs = trimmed.split(/[\s,]+/).filter((p) => p !== '');
  if (pairs.length === 0) throw new TokenscopeError('bad-input', 'the SLO is empty', SLO_HINT);
  const slo: Slo = {};
  for (const pair of pairs) {
    const match = /^([a-z0-9]+)[=:](.*)$/i.exec(pair);
    if (!match) throw new TokenscopeError('bad-input', `"${pair}" is not a metric=ms pair`, SLO_HINT);
    const key = match[1].toLowerCase();
    if (key !== 'ttft' && key !== 'tpot' && key !== 'e2el') throw new TokenscopeError('bad-input', `unknown SLO metric "${match[1]}"`, SLO_HINT);
    if (slo[key] !== undefined) throw new TokenscopeError('bad-input', `SLO metric "${key}" is given twice`, SLO_HINT);
    const value = match[2].trim() === '' ? NaN : Number(match[2]);
    if (!(value >= 0 && Number.isFinite(value))) {
      throw new TokenscopeError('bad-input', `SLO value "${match[2]}" for ${key} is not a non-negative number of ms`, SLO_HINT);
    }
    slo[key] = value;
  }
  return slo;
}

/** SLO attainment measured at one arrival rate (req/s). */
export interface RateProbe {
  rate: number;
  attainment: number;
}

export interface CapacityResult {
  /** Highest rate known to meet the target; null when even `lo` misses it. */
  rate: number | null;
  /** 'found' inside [lo, hi]; 'below-range' when lo fails; 'above-range' when hi already passes (capacity ≥ hi). */
  status: 'found' | 'below-range' | 'above-range';
  /** The final bracket: lo meets the target, hi does not (when found). */
  lo: number;
  hi: number;
  probes: RateProbe[];
}

/**
 * DistServe's capacity ("per-GPU goodput"): the highest arrival rate whose SLO attainment is ≥ target,
 * by bisection over [lo, hi], assuming attainment falls as the rate rises. Runs lo and hi first, then
 * `iterations` midpoints: the bracket shrinks to (hi − lo) / 2^iterations.
 */
export async function findCapacity(
  runAtRate: (rate: number) => Promise<number>,
  options: { lo: number; hi: number; target?: number; iterations?: number },
): Promise<CapacityResult> {
  const { target = 0.9, iterations = 6 } = options;
  let { lo, hi } = options;
  if (!(lo > 0 && hi > lo && Number.isFinite(hi))) throw new TokenscopeError('bad-input', `rate range needs 0 < lo < hi, got ${lo}..${hi}`);
  if (!(target > 0 && target <= 1)) throw new TokenscopeError('bad-input', `attainment target ${target} is outside (0, 1]`, 'DistServe uses 0.9.');
  if (!(Number.isInteger(iterations) && iterations >= 0)) throw new TokenscopeError('bad-input', `iterations must be an integer ≥ 0, got ${iterations}`);
  const probes: RateProbe[] = [];
  const meets = async (rate: number) => {
    const attainment = await runAtRate(rate);
    probes.push({ rate, attainment });
    return attainment >= target;
  };
  if (!(await meets(lo))) return { rate: null, status: 'below-range', lo, hi, probes };
  if (await meets(hi)) return { rate: hi, status: 'above-range', lo, hi, probes };
  for (let i = 0; i < iterations; i++) {
    const mid = (lo + hi) / 2;
    if (await meets(mid)) lo = mid;
    else hi = mid;
  }
  return { rate: lo, status: 'found', lo, hi, probes };
}

/** Run each rate in increasing order; the probes come back sorted by rate. */
export async function sweepRates(runAtRate: (rate: number) => Promise<number>, rates: readonly number[]): Promise<RateProbe[]> {
  const probes: RateProbe[] = [];
  for (const rate of [...rates].sort((a, b) => a - b)) probes.push({ rate, attainment: await runAtRate(rate) });
  return probes;
}

/**
 * Capacity from a sweep: scanning up from the lowest rate, the last rate meeting the target before
 * the first that misses it (a lucky pass above a miss does not count); null if the lowest misses.
 */
export function capacityFromSweep(probes: readonly RateProbe[], target = 0.9): number | null {
  let capacity: number | null = null;
  for (const p of [...probes].sort((a, b) => a.rate - b.rate)) {
    if (p.attainment < target) break;
    capacity = p.rate;
  }
  return capacity;
}

/** TTFT of a group of requests (ms from arrival); vLLM's key names. */
export interface TtftGroup {
  count: number;
  mean_ttft_ms: number;
  median_ttft_ms: number;
  p90_ttft_ms: number;
  p99_ttft_ms: number;
}

/** The prefix cache's report (METRICS.md "Prefix caching"): the pool's fields are null with the cache off. */
export interface PrefixCacheReport {
  enabled: boolean;
  block_tokens: number;
  prompt_tokens: number;
  cached_tokens: number;
  hit_rate: number | null;
  requests: number;
  requests_with_hit: number;
  ttft_hit: TtftGroup | null;
  ttft_miss: TtftGroup | null;
  capacity_blocks: number | null;
  pool_bytes: number | null;
  block_bytes: number | null;
  blocks: number | null;
  bytes: number | null;
  inserted: number | null;
  evictions: number | null;
  refused: number | null;
  blocks_copied_in: number | null;
  blocks_copied_out: number | null;
  copy_bytes: number | null;
}

function ttftGroup(ttfts: readonly number[]): TtftGroup | null {
  if (ttfts.length === 0) return null;
  const s = summarize(ttfts);
  return { count: ttfts.length, mean_ttft_ms: s.mean, median_ttft_ms: s.p50, p90_ttft_ms: s.p90, p99_ttft_ms: s.p99 };
}

/**
 * Hit rate = cached prompt tokens ÷ prompt tokens, over the requests admitted (those refused or
 * timed out in the queue were never looked up); a hit is a request with any cached block; TTFT of
 * hits vs misses over the requests that got a first token. `use` is the pool's account (gpu-engine.ts),
 * null with the cache off.
 */
export function prefixCacheOfTrace(trace: ServeTrace, use: PrefixCacheUse | null, blockTokens: number): PrefixCacheReport {
  const admitted = trace.requests.filter((r) => r.tAdmit !== undefined);
  const prompt = admitted.reduce((n, r) => n + r.promptTokens, 0);
  const cached = admitted.reduce((n, r) => n + (r.cachedTokens ?? 0), 0);
  const started = admitted.filter((r) => r.tTokens.length > 0);
  const ttft = (r: (typeof started)[number]) => r.tTokens[0] - r.tArrival;
  return {
    enabled: use !== null,
    block_tokens: blockTokens,
    prompt_tokens: prompt,
    cached_tokens: cached,
    hit_rate: prompt > 0 ? cached / prompt : null,
    requests: admitted.length,
    requests_with_hit: admitted.filter((r) => (r.cachedTokens ?? 0) > 0).length,
    ttft_hit: ttftGroup(started.filter((r) => (r.cachedTokens ?? 0) > 0).map(ttft)),
    ttft_miss: ttftGroup(started.filter((r) => !((r.cachedTokens ?? 0) > 0)).map(ttft)),
    capacity_blocks: use?.capacity_blocks ?? null,
    pool_bytes: use?.pool_bytes ?? null,
    block_bytes: use?.block_bytes ?? null,
    blocks: use?.blocks ?? null,
    bytes: use?.bytes ?? null,
    inserted: use?.inserted ?? null,
    evictions: use?.evictions ?? null,
    refused: use?.refused ?? null,
    blocks_copied_in: use?.blocks_copied_in ?? null,
    blocks_copied_out: use?.blocks_copied_out ?? null,
    copy_bytes: use?.copy_bytes ?? null,
  };
}

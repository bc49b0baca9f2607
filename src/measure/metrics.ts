/**
 * Per-request latency metrics from raw host timestamps, their vLLM-style aggregates, and the
 * llama-bench single-stream table. Definitions: docs/METRICS.md. Every formula lives here once.
 */
import { TokenscopeError } from '../errors.ts';
import { mean, percentile, stdSample, summarize } from './stats.ts';

/** Host-clock timestamps in ms (performance.now() domain) of one request. */
export interface RequestTiming {
  promptTokens: number;
  /** When the request was sent; every latency is measured from here (vLLM's `start_time`). */
  tSend: number;
  /** Time each output token id became available; the first entry is the first token. */
  tTokens: number[];
  /**
   * When the request was ready to send, if a client-side limit held it back before `tSend`
   * (vLLM's `request_arrival_time` under `--max-concurrency`). Absent: equal to `tSend`.
   */
  tArrival?: number;
  /** Set when the request failed; its tokens so far stay in `tTokens`. */
  error?: string;
}

/** vLLM `bench serve` latency keys, all in ms. Std is the population std (ddof 0). */
export type LatencyMetric = 'ttft' | 'tpot' | 'itl' | 'e2el';
export type LatencyStatKey = `${'mean' | 'median' | 'std' | 'p90' | 'p95' | 'p99'}_${LatencyMetric}_ms`;
export type LatencyStats = Record<LatencyStatKey, number>;

/** Output tokens N_out = number of token timestamps. */
export function outputTokens(r: RequestTiming): number {
  return r.tTokens.length;
}

/** TTFT = t(first token) − t_send, ms; undefined before any token arrived. */
export function ttftMs(r: RequestTiming): number | undefined {
  return r.tTokens.length > 0 ? r.tTokens[0] - r.tSend : undefined;
}

/** E2EL = t(last token) − t_send, ms; undefined before any token arrived. */
export function e2elMs(r: RequestTiming): number | undefined {
  return r.tTokens.length > 0 ? r.tTokens[r.tTokens.length - 1] - r.tSend : undefined;
}

/** TPOT = (E2EL − TTFT) / (N_out − 1), ms; only defined for N_out > 1. */
export function tpotMs(r: RequestTiming): number | undefined {
  const n = r.tTokens.length;
  return n > 1 ? ((e2elMs(r) as number) - (ttftMs(r) as number)) / (n - 1) : undefined;
}

/** ITLs = every gap t_i − t_(i−1) between consecutive output tokens, ms (N_out − 1 values). */
export function itlsMs(r: RequestTiming): number[] {
  return r.tTokens.slice(1).map((t, i) => t - r.tTokens[i]);
}

/** Prefill throughput (AIPerf, per user) = prompt tokens / TTFT in seconds. */
export function prefillTokensPerS(r: RequestTiming): number | undefined {
  const ttft = ttftMs(r);
  return ttft === undefined ? undefined : r.promptTokens / (ttft / 1000);
}

/** Decode rate (AIPerf "output token throughput per user") = 1 / TPOT in seconds. */
export function decodeTokensPerS(r: RequestTiming): number | undefined {
  const tpot = tpotMs(r);
  return tpot === undefined ? undefined : 1000 / tpot;
}

/** Client-side queueing = t_send − t_arrival, ms (0 when no client limit held the request). */
export function clientQueueMs(r: RequestTiming): number {
  return r.tArrival === undefined ? 0 : r.tSend - r.tArrival;
}

/** A request counts as completed when it has no error; a completed request has ≥ 1 token. */
export function isCompleted(r: RequestTiming): boolean {
  if (r.error !== undefined) return false;
  if (r.tTokens.length === 0) {
    throw new TokenscopeError('bad-input', 'a completed request has no output tokens', 'Record an error for requests that produced nothing.');
  }
  return true;
}

/** vLLM's name for percentile p in its result keys: "p99", "p99.9" (Python's str of an integral float drops ".0"). */
export function percentileKey(p: number, metric: LatencyMetric): string {
  return `p${p}_${metric}_ms`;
}

function statsOf(metric: LatencyMetric, values: readonly number[], extra: readonly number[]): Partial<LatencyStats> & Record<string, number> {
  // vLLM reports 0 for a metric with no samples (`np.mean(x or 0)`).
  const s = values.length > 0 ? summarize(values) : { mean: 0, p50: 0, std: 0, p90: 0, p95: 0, p99: 0 };
  const more = Object.fromEntries(extra.map((p) => [percentileKey(p, metric), values.length > 0 ? percentile(values, p) : 0]));
  return {
    [`mean_${metric}_ms`]: s.mean,
    [`median_${metric}_ms`]: s.p50,
    [`std_${metric}_ms`]: s.std,
    [`p90_${metric}_ms`]: s.p90,
    [`p95_${metric}_ms`]: s.p95,
    [`p99_${metric}_ms`]: s.p99,
    ...more,
  };
}

/**
 * vLLM aggregates over completed requests: TTFT, TPOT and E2EL are request-weighted (one value per
 * request; TPOT only from requests with N_out > 1), ITL is token-weighted (all gaps pooled).
 * A metric with no samples reads 0, as in vLLM. p90/p95/p99 are always there; `percentiles`
 * (vLLM's --metric-percentiles, e.g. 50 or 99.9) add their own `p{n}_{metric}_ms` keys.
 */
export function latencyStats(records: readonly RequestTiming[], percentiles: readonly number[] = []): LatencyStats {
  const done = records.filter(isCompleted);
  const defined = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined);
  return {
    ...statsOf('ttft', defined(done.map(ttftMs)), percentiles),
    ...statsOf('tpot', defined(done.map(tpotMs)), percentiles),
    ...statsOf('itl', done.flatMap(itlsMs), percentiles),
    ...statsOf('e2el', defined(done.map(e2elMs)), percentiles),
  } as LatencyStats;
}

/**
 * printf-style fixed notation ("%.Nf" in C, "{:.Nf}" in Python): exact binary ties round to even
 * (JS toFixed rounds them up), and non-finite values read "inf" / "-inf" / "nan".
 */
export function formatFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const text = x.toFixed(digits);
  // A tie x = (n + ½)·10^−digits is exactly representable only as m / 2^(digits+1) with m odd.
  const m = Math.abs(x) * 2 ** (digits + 1);
  if (!Number.isInteger(m) || m % 2 === 0) return text;
  const lastDigit = Number(text[text.length - 1]);
  if (lastDigit % 2 === 0) return text;
  const sign = x < 0 ? '-' : '';
  return sign + (Math.abs(x) - 0.5 * 10 ** -digits).toFixed(digits);
}

/** llama-bench's test name: `pp512`, `tg128`, `pp512+tg128`, with ` @ d<depth>` after a pre-filled context. */
export type LlamaBenchTest = `${'pp' | 'tg'}${number}` | `pp${number}+tg${number}` | `${string} @ d${number}`;

/** The test name llama-bench prints for n prompt tokens, n generated tokens and a context depth. */
export function llamaBenchTestName(nPrompt: number, nGen: number, depth = 0): LlamaBenchTest {
  const base = nGen === 0 ? `pp${nPrompt}` : nPrompt === 0 ? `tg${nGen}` : `pp${nPrompt}+tg${nGen}`;
  return (depth > 0 ? `${base} @ d${depth}` : base) as LlamaBenchTest;
}

/** One llama-bench result row. */
export interface LlamaBenchRow {
  model: string;
  sizeBytes: number;
  params: number;
  backend: string;
  /** GPU layers; llama-bench's default −1 means all. */
  ngl: number;
  test: LlamaBenchTest;
  /** Mean of the per-repetition tokens/s. */
  meanTokensPerS: number;
  /** Sample std (ddof 1) of the per-repetition tokens/s; 0 for one repetition, as llama-bench prints. */
  stdTokensPerS: number;
  samples: number[];
}

/** llama-bench's reported value: mean ± sample std of per-repetition tokens/s (n_tokens / rep seconds). */
export function llamaBenchRow(
  model: string,
  sizeBytes: number,
  params: number,
  backend: string,
  test: LlamaBenchTest,
  perRepTokensPerS: readonly number[],
  ngl = -1,
): LlamaBenchRow {
  if (!/^(pp\d+|tg\d+|pp\d+\+tg\d+)( @ d\d+)?$/.test(test)) {
    throw new TokenscopeError('bad-input', `"${test}" is not a llama-bench test name`, 'Use names like pp512, tg128 or pp512+tg128 @ d4096.');
  }
  if (perRepTokensPerS.length === 0) {
    throw new TokenscopeError('bad-input', `${test} has no repetitions`, 'Run at least one repetition.');
  }
  return {
    model,
    sizeBytes,
    params,
    backend,
    ngl,
    test,
    meanTokensPerS: mean(perRepTokensPerS),
    stdTokensPerS: perRepTokensPerS.length > 1 ? stdSample(perRepTokensPerS) : 0,
    samples: [...perRepTokensPerS],
  };
}

/** llama-bench markdown columns: header, printf width (negative = left-aligned), cell text. */
const LLAMA_BENCH_COLUMNS: readonly [string, number, (r: LlamaBenchRow) => string][] = [
  ['model', -30, (r) => r.model],
  ['size', 10, (r) => (r.sizeBytes < 1024 ** 3 ? `${formatFixed(r.sizeBytes / 1024 ** 2, 2)} MiB` : `${formatFixed(r.sizeBytes / 1024 ** 3, 2)} GiB`)],
  ['params', 10, (r) => (r.params < 1e9 ? `${formatFixed(r.params / 1e6, 2)} M` : `${formatFixed(r.params / 1e9, 2)} B`)],
  ['backend', -10, (r) => r.backend],
  ['ngl', 3, (r) => String(r.ngl)],
  ['test', 15, (r) => r.test],
  ['t/s', 20, (r) => `${formatFixed(r.meanTokensPerS, 2)} ± ${formatFixed(r.stdTokensPerS, 2)}`],
];

function pad(text: string, width: number): string {
  return width < 0 ? text.padEnd(-width) : text.padStart(width);
}

/**
 * The table llama-bench prints with `-o md` for a GPU backend (size in MiB/GiB of 1024² / 1024³
 * bytes, params in M/B of 1e6 / 1e9, right-aligned numbers marked `:` in the rule line).
 * The trailing `build:` line is left out: there is no llama.cpp build to name.
 */
export function formatLlamaBenchTable(rows: readonly LlamaBenchRow[]): string {
  const line = (cells: string[]) => `|${cells.map((c) => ` ${c} |`).join('')}`;
  return (
    [
      line(LLAMA_BENCH_COLUMNS.map(([name, width]) => pad(name, width))),
      line(LLAMA_BENCH_COLUMNS.map(([, width]) => '-'.repeat(Math.abs(width) - 1) + (width > 0 ? ':' : '-'))),
      ...rows.map((r) => line(LLAMA_BENCH_COLUMNS.map(([, width, cell]) => pad(cell(r), width)))),
    ].join('\n') + '\n'
  );
}

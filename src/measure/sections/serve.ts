/**
 * The `serve` section (written by serve/run.ts): vLLM `bench serve`'s result with our per-request
 * timeline, per-step records and decode roofline, and the sweeps. A bare vLLM result (older
 * reports, imports) is accepted too.
 */
import { array, bool, either, nullable, num, object, oneOf, optional, str, type Infer, type OptionalSchema, type Schema } from '../schema-kit.ts';
import { latencyStatsShape, verdictSchema } from './latency.ts';
import {
  count,
  fraction,
  intensity,
  MAX_REQUESTS,
  MAX_ROWS,
  MAX_SENTENCE,
  MAX_TOKENS,
  ms,
  requestsPerS,
  seconds,
  seed,
  signedMs,
  tokensPerS,
  work,
} from './units.ts';

const sloSchema = object({ ttft: optional(ms()), tpot: optional(ms()), e2el: optional(ms()) });

const lengthSchema = either(
  (v) => ((v as { kind?: unknown } | null)?.kind === 'fixed' ? 'a' : 'b'),
  object({ kind: oneOf(['fixed'] as const), tokens: count() }),
  either(
    (v) => ((v as { kind?: unknown } | null)?.kind === 'uniform' ? 'a' : 'b'),
    object({ kind: oneOf(['uniform'] as const), min: count(), max: count() }),
    object({ kind: oneOf(['lognormal'] as const), median: count(), sigma: num(0, 100), max: count() }),
  ),
);

const settingsSchema = object({
  requests: count(),
  rate: nullable(requestsPerS()).describe('Requests/s; null (Infinity in the run) sends all at t = 0.'),
  burstiness: num(0, 1e6),
  prompt: lengthSchema,
  output: lengthSchema,
  max_batch: count(),
  max_tokens_per_step: count(),
  chunk: nullable(count()).describe('Chunked-prefill chunk size; null = off.'),
  slo: sloSchema,
  seed: seed(),
  dollars_per_hour: optional(num(0, 1e9)),
  watts: optional(num(0, 1e9)),
  sweep_batch: optional(array(count(), MAX_ROWS)),
  sweep_rate: optional(bool()),
});

const vllmShape = {
  completed: count(),
  failed: count(),
  duration: seconds(),
  total_input_tokens: count(),
  total_output_tokens: count(),
  request_throughput: requestsPerS().describe('completed / duration.'),
  request_goodput: nullable(requestsPerS()).describe('good requests / duration; null without SLOs, as vLLM writes it without --goodput.'),
  output_throughput: tokensPerS(),
  total_token_throughput: tokensPerS(),
  ...latencyStatsShape,
  input_lens: array(count(), MAX_REQUESTS),
  output_lens: array(count(), MAX_REQUESTS),
  ttfts: array(seconds(), MAX_REQUESTS),
  itls: array(array(seconds(), MAX_TOKENS), MAX_REQUESTS),
  latencies: array(seconds(), MAX_REQUESTS),
  errors: array(str(MAX_SENTENCE), MAX_REQUESTS),
};

/** vLLM's result as the job writes it inside `run` (serve/metrics.ts ServeResult). */
export const vllmResultSchema = object(vllmShape, { otherStrings: MAX_SENTENCE });

/** A bare vLLM result (imports): any subset of its keys, and keys of its own (strings capped). */
export const bareVllmResultSchema = object(
  Object.fromEntries(Object.entries(vllmShape).map(([k, s]) => [k, optional(s as Schema<unknown>)])) as unknown as {
    [K in keyof typeof vllmShape]: OptionalSchema<Infer<(typeof vllmShape)[K]>>;
  },
  { otherStrings: MAX_SENTENCE },
);

const decodeRooflineSchema = object({
  batch: count(),
  step_ms: ms().describe('Median host ms of steps that decoded exactly `batch` sequences and prefilled nothing.'),
  steps: count(),
  flops: work(),
  bytes: work(),
  intensity: intensity(),
  verdict: verdictSchema,
});

const runSchema = object({
  result: vllmResultSchema,
  slo_attainment: nullable(fraction()),
  error_rate: fraction(),
  timeline: array(
    object({
      id: count(),
      prompt_tokens: count(),
      output_tokens: count(),
      arrival_ms: signedMs(),
      admit_ms: nullable(signedMs()),
      first_token_ms: nullable(signedMs()),
      finish_ms: signedMs(),
      error: nullable(str(MAX_SENTENCE)),
    }),
    MAX_REQUESTS,
  ).describe("Per request, ms from the run's start."),
  steps: array(
    object({ start_ms: signedMs(), end_ms: signedMs(), decode: count(), prefill_tokens: count(), running: count(), waiting: count() }),
    MAX_REQUESTS,
  ),
  decode_roofline: array(decodeRooflineSchema, MAX_ROWS),
});

const costSchema = object({
  dollarsPer1kOutputTokens: num(0, 1e9),
  dollarsPer1kTotalTokens: num(0, 1e9),
  joulesPerOutputToken: optional(num(0, 1e9)),
});

const batchPointSchema = object({
  batch: count(),
  output_throughput: tokensPerS(),
  request_throughput: requestsPerS(),
  median_ttft_ms: ms(),
  p99_ttft_ms: ms(),
  median_tpot_ms: ms(),
  p99_tpot_ms: ms(),
  decode: nullable(decodeRooflineSchema),
});

const capacitySchema = object({
  rate: nullable(requestsPerS()).describe('Highest rate known to meet the target; null when even `lo` misses it.'),
  status: oneOf(['found', 'below-range', 'above-range'] as const),
  lo: requestsPerS(),
  hi: requestsPerS(),
  probes: array(object({ rate: requestsPerS(), attainment: fraction() }), MAX_ROWS),
  target: fraction(),
});

/** The section the job writes; `settings` and the sweeps are optional for older reports. */
export const serveRunSectionSchema = object({
  settings: optional(settingsSchema),
  run: runSchema,
  cost: optional(nullable(costSchema)),
  batch_sweep: optional(nullable(array(batchPointSchema, MAX_ROWS))),
  rate_sweep: optional(nullable(capacitySchema)),
});

export const serveSchema = either((v) => ((v as { run?: unknown } | null)?.run === undefined ? 'b' : 'a'), serveRunSectionSchema, bareVllmResultSchema);

export type ServeRunSection = Infer<typeof serveRunSectionSchema>;
export type BareVllmResult = Infer<typeof bareVllmResultSchema>;
export type ServeSettingsData = Infer<typeof settingsSchema>;
export type ServeRunData = Infer<typeof runSchema>;
export type BatchPointData = Infer<typeof batchPointSchema>;
export type CapacityData = Infer<typeof capacitySchema>;
export type CostData = Infer<typeof costSchema>;

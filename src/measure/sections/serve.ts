/**
 * The `serve` section (written by serve/run.ts): vLLM `bench serve`'s result with our per-request
 * timeline, per-step records and decode roofline, and the sweeps. A bare vLLM result (older
 * reports, imports) is accepted too.
 */
import { array, bool, either, nullable, num, object, oneOf, optional, str, type Infer, type OptionalSchema, type Schema } from '../schema-kit.ts';
import { fixedOrDash, formatServeSummary, pctOrDash, table } from '../format.ts';
import { compareMetrics, PER_REQUEST_NOTE, PER_TOKEN_NOTE, type Direction, type Metric, type MetricComparison, type SectionModule } from '../section.ts';
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

/** The serving section as a result holds it: the job's section (as far as it got), or a bare vLLM result. */
type ServeSectionData = Partial<ServeRunSection> & BareVllmResult;
export type VllmResultData = Infer<typeof vllmResultSchema>;

/** vLLM's result inside the job's section (`run.result`), or the bare one (imports). */
const vllmOf = (s: ServeSectionData): Partial<VllmResultData> => s.run?.result ?? s;

/** `s` with vLLM's result replaced, and in the job's section the run's records too. */
function withResult(s: ServeSectionData, result: Partial<VllmResultData>, run: Partial<ServeRunData> = {}): ServeSectionData {
  // The trimmed copy keeps the shape it had: a job's section with fewer records, or a bare result.
  return (s.run?.result ? { ...s, run: { ...s.run, ...run, result } } : result) as ServeSectionData;
}

/** vLLM's per-request ITLs and the run's per-step records. */
function trimPerToken(s: ServeSectionData): ServeSectionData | null {
  const vllm = vllmOf(s);
  const steps = s.run?.steps;
  if (!(vllm.itls?.some((x) => x.length > 0) ?? false) && (steps?.length ?? 0) === 0) return null;
  return withResult(s, { ...vllm, ...(vllm.itls && { itls: vllm.itls.map(() => []) }) }, steps ? { steps: [] } : {});
}

const PER_REQUEST = ['input_lens', 'output_lens', 'ttfts', 'itls', 'latencies', 'errors'] as const;

/** vLLM's per-request arrays and the run's timeline. */
function trimRequests(s: ServeSectionData): ServeSectionData | null {
  const vllm = vllmOf(s);
  const timeline = s.run?.timeline;
  if (!PER_REQUEST.some((k) => (vllm[k]?.length ?? 0) > 0) && (timeline?.length ?? 0) === 0) return null;
  return withResult(s, { ...vllm, ...Object.fromEntries(PER_REQUEST.map((k) => [k, []])) }, timeline ? { timeline: [] } : {});
}

type VllmKey = keyof VllmResultData;
const serveMetric = (key: VllmKey, metric: string, unit: string, direction: Direction): Metric<Partial<VllmResultData>> => ({
  key,
  metric,
  unit,
  direction,
  value: (s) => s[key] as number | null | undefined,
});

const SERVE_METRICS: readonly Metric<Partial<VllmResultData>>[] = [
  serveMetric('request_throughput', 'request throughput', 'req/s', 'higher-is-better'),
  serveMetric('request_goodput', 'request goodput', 'req/s', 'higher-is-better'),
  serveMetric('output_throughput', 'output token throughput', 'tok/s', 'higher-is-better'),
  serveMetric('total_token_throughput', 'total token throughput', 'tok/s', 'higher-is-better'),
  ...(['ttft', 'tpot', 'itl', 'e2el'] as const).flatMap((m) => [
    serveMetric(`median_${m}_ms`, `median ${m.toUpperCase()}`, 'ms', 'lower-is-better'),
    serveMetric(`p99_${m}_ms`, `p99 ${m.toUpperCase()}`, 'ms', 'lower-is-better'),
  ]),
];

/** vLLM's result inside a serving section (`serve.run.result`), or a bare one (imports); none in a section without its result. */
const comparedResultOf = (s: ServeSectionData): Partial<VllmResultData> | undefined => s.run?.result ?? (s.run === undefined ? s : undefined);

function compareServe(a: ServeSectionData, b: ServeSectionData): MetricComparison[] {
  const resultA = comparedResultOf(a);
  const resultB = comparedResultOf(b);
  return resultA && resultB ? compareMetrics(SERVE_METRICS, resultA, resultB) : [];
}

/** vLLM's summary, then SLO attainment, cost, the decode roofline by batch, the sweeps. */
function formatServe(s: ServeSectionData): string {
  if (!s.run) return '';
  const run = s.run;
  const out = [formatServeSummary(run.result, { percentileMetrics: ['ttft', 'tpot', 'itl', 'e2el'], percentiles: [90, 95, 99] }).trimEnd()];
  const settings = s.settings;
  const slo = Object.entries(settings?.slo ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ≤ ${v} ms`)
    .join(', ');
  if (run.slo_attainment !== null)
    out.push(`SLO attainment (${slo}): ${pctOrDash(run.slo_attainment)} of ${run.result.completed + run.result.failed} requests (errors count against it).`);
  out.push(`Error rate: ${pctOrDash(run.error_rate)}.`);
  if (s.cost) {
    out.push(
      `Cost at $${settings?.dollars_per_hour}/h: $${s.cost.dollarsPer1kOutputTokens.toFixed(5)} per 1k output tokens, $${s.cost.dollarsPer1kTotalTokens.toFixed(5)} per 1k total tokens` +
        (s.cost.joulesPerOutputToken !== undefined ? `; ${s.cost.joulesPerOutputToken.toFixed(3)} J per output token at ${settings?.watts} W.` : '.'),
    );
  }
  if (run.decode_roofline.length) {
    out.push('', 'Decode steps by batch size (steps that only decoded; bytes and FLOPs from the cost models):');
    out.push(
      table(
        ['batch', 'steps', 'step ms', 'FLOP/byte', 'GB/s', 'GFLOP/s', 'bound'],
        run.decode_roofline.map((d) => [
          String(d.batch),
          String(d.steps),
          fixedOrDash(d.step_ms, 3),
          d.intensity.toFixed(2),
          (d.verdict.achievedBytesPerS / 1e9).toFixed(2),
          (d.verdict.achievedFlopsPerS / 1e9).toFixed(2),
          d.verdict.bound,
        ]),
        [true, true, true, true, true, true, false],
      ),
    );
  }
  if (s.batch_sweep?.length) {
    out.push('', 'Batch-size sweep (all requests at t = 0):');
    out.push(
      table(
        ['max batch', 'output tok/s', 'req/s', 'TTFT p50', 'TTFT p99', 'TPOT p50', 'TPOT p99', 'decode GB/s', 'of read roof', 'bound'],
        s.batch_sweep.map((b) => [
          String(b.batch),
          b.output_throughput.toFixed(1),
          b.request_throughput.toFixed(2),
          fixedOrDash(b.median_ttft_ms),
          fixedOrDash(b.p99_ttft_ms),
          fixedOrDash(b.median_tpot_ms),
          fixedOrDash(b.p99_tpot_ms),
          b.decode ? (b.decode.verdict.achievedBytesPerS / 1e9).toFixed(2) : '—',
          b.decode ? pctOrDash(b.decode.verdict.bandwidthShare) : '—',
          b.decode?.verdict.bound ?? '—',
        ]),
        [true, true, true, true, true, true, true, true, true, false],
      ),
    );
  }
  if (s.rate_sweep) {
    const c = s.rate_sweep;
    out.push(
      '',
      `Capacity (highest rate with ≥ ${pctOrDash(c.target)} of requests within the SLOs): ${c.rate === null ? 'none — even the lowest rate missed' : `${c.rate.toFixed(2)} req/s${c.status === 'above-range' ? ' or more' : ''}`}.`,
    );
    out.push(
      table(
        ['rate req/s', 'attainment'],
        [...c.probes].sort((a, b) => a.rate - b.rate).map((p) => [p.rate.toFixed(2), pctOrDash(p.attainment)]),
        [true, true],
      ),
    );
  }
  return out.join('\n');
}

export const serveSection = {
  schema: serveSchema,
  trim: { 'per-token': { note: PER_TOKEN_NOTE, trim: trimPerToken }, 'per-request': { note: PER_REQUEST_NOTE, trim: trimRequests } },
  compare: { title: 'Serving', rows: compareServe },
  csv: null,
  report: formatServe,
} satisfies SectionModule<'serve'>;

/**
 * The `serve` section (written by serve/run.ts): vLLM `bench serve`'s result with our per-request
 * timeline, per-step records and decode roofline, and the sweeps. A bare vLLM result (older
 * reports, imports) is accepted too.
 */
import { array, bool, either, fieldsOf, nullable, num, object, oneOf, optional, str, type Infer, type OptionalSchema, type Schema } from '../schema-kit.ts';
import { banner, fixedOrDash, formatServeSummary, pctOrDash, table } from '../format.ts';
import { formatFixed } from '../metrics.ts';
import { compareMetrics, PER_REQUEST_NOTE, PER_TOKEN_NOTE, type Direction, type Metric, type MetricComparison, type SectionModule } from '../section.ts';
import { latencyStatsShape, verdictSchema } from './latency.ts';
import {
  bytes,
  count,
  fraction,
  intensity,
  MAX_REQUESTS,
  MAX_NAME,
  MAX_ROWS,
  MAX_SENTENCE,
  MAX_TOKENS,
  ms,
  requestsPerS,
  seconds,
  seed,
  signedMs,
  tokenId,
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
  percentile_metrics: optional(
    array(oneOf(['ttft', 'tpot', 'itl', 'e2el'] as const), 4).describe("vLLM's --percentile-metrics: the metrics whose percentiles the summary prints."),
  ),
  metric_percentiles: optional(
    array(num(0, 100), MAX_ROWS).describe("vLLM's --metric-percentiles: the percentiles printed (each also a p{n}_{metric}_ms key)."),
  ),
  dollars_per_hour: optional(num(0, 1e9)),
  watts: optional(num(0, 1e9)),
  sweep_batch: optional(array(count(), MAX_ROWS)),
  sweep_rate: optional(bool()),
  max_queue: optional(count().describe('Reject arrivals when this many requests already wait beyond the free slots.')),
  timeout_ms: optional(ms().describe('Cancel a request not finished this many ms after its arrival.')),
  degrade_over: optional(count().describe('Cap the output of requests admitted while more than this many wait behind them.')),
  degrade_to: optional(count().describe('The cap, tokens (default: half of what the request asks, rounded up).')),
  sla_percent: optional(num(0, 100).describe('Availability target, percent of requests.')),
  prefix_cache: optional(bool().describe('Automatic prefix caching on (blocks of 16 tokens, copy-on-hit).')),
  shared_prefix: optional(count().describe('Tokens of the system prompt every request (every first turn) starts with.')),
  conversations: optional(count().describe('Multi-turn chat: conversations, each of `turns` turns (requests = conversations × turns).')),
  turns: optional(count()),
  classes: optional(
    array(
      object({ name: str(MAX_NAME), share: num(0, 1e9), slo: sloSchema, prompt: optional(lengthSchema), output: optional(lengthSchema) }),
      MAX_ROWS,
    ).describe('Request classes: share of the requests, SLOs, and optionally their own lengths.'),
  ),
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

const availabilitySchema = object({
  requests: count(),
  successful: count(),
  failed: count(),
  errors_by_cause: object(fieldsOf(['rejected', 'timeout', 'admission', 'device_lost', 'engine'] as const, count())).describe(
    'Failed requests by cause: queue full at arrival, past the timeout, refused a KV slot, lost with the device, an engine error.',
  ),
  availability: fraction().describe('successful / requests.'),
  sla: nullable(fraction()).describe('The SLA as a fraction (99.9% → 0.999); null when none was given.'),
  meets_sla: nullable(bool()),
  error_budget: nullable(num(0, 1e9)).describe('Failures the SLA allows: (1 − sla) × requests.'),
  error_budget_left: nullable(num(-1e9, 1e9)).describe('error_budget − failed (negative once overspent).'),
  error_budget_left_share: nullable(num(-1e9, 1)).describe('error_budget_left / error_budget; null when the SLA allows no failure.'),
  degraded: count().describe('Requests admitted with their output capped by the degradation policy.'),
  degradation_rate: fraction().describe('degraded / requests.'),
});

const queueSchema = object({
  count: count().describe('Requests that got a slot (the rejected and those timed out in the queue have no queue time).'),
  ...fieldsOf(['mean_queue_ms', 'median_queue_ms', 'std_queue_ms', 'p90_queue_ms', 'p95_queue_ms', 'p99_queue_ms'] as const, ms()),
});

const ttftGroupSchema = object({
  count: count(),
  ...fieldsOf(['mean_ttft_ms', 'median_ttft_ms', 'p90_ttft_ms', 'p99_ttft_ms'] as const, ms()),
});

const prefixCacheSchema = object({
  enabled: bool(),
  block_tokens: count(),
  prompt_tokens: count().describe('Prompt tokens of the admitted requests.'),
  cached_tokens: count().describe('Of them, found in the cache at admission (copied, not prefilled).'),
  hit_rate: nullable(fraction()).describe('cached_tokens / prompt_tokens; null when no request was admitted.'),
  requests: count().describe('Requests admitted.'),
  requests_with_hit: count().describe('Admitted requests with at least one cached block.'),
  ttft_hit: nullable(ttftGroupSchema).describe('TTFT of the requests with a hit (from arrival, as vLLM measures it).'),
  ttft_miss: nullable(ttftGroupSchema).describe('TTFT of the requests without one.'),
  capacity_blocks: nullable(count()).describe('Blocks the pool holds at most; null with the cache off.'),
  pool_bytes: nullable(bytes()).describe('Device bytes of the pool (K and V, every layer).'),
  block_bytes: nullable(bytes()),
  blocks: nullable(count()).describe('Blocks cached at the end of the run.'),
  bytes: nullable(bytes()).describe('Their bytes.'),
  inserted: nullable(count()),
  evictions: nullable(count()).describe('Blocks evicted (least recently used, unreferenced) to make room.'),
  refused: nullable(count()).describe('New blocks not cached because every block was in use.'),
  blocks_copied_in: nullable(count()).describe('Blocks copied pool → slot (the hits).'),
  blocks_copied_out: nullable(count()).describe('Blocks copied slot → pool (new blocks).'),
  copy_bytes: nullable(bytes()).describe('Bytes those copies moved on the device.'),
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
      cause: optional(nullable(str(MAX_NAME))),
      degraded_to: optional(nullable(count())),
      class: optional(nullable(str(MAX_NAME))),
      cached_tokens: optional(count().describe('Prompt tokens found in the prefix cache at admission (not prefilled).')),
      token_ids: optional(array(tokenId(), MAX_TOKENS).describe('The output token ids, in order.')),
    }),
    MAX_REQUESTS,
  ).describe("Per request, ms from the run's start."),
  steps: array(
    object({ start_ms: signedMs(), end_ms: signedMs(), decode: count(), prefill_tokens: count(), running: count(), waiting: count() }),
    MAX_REQUESTS,
  ),
  decode_roofline: array(decodeRooflineSchema, MAX_ROWS),
  availability: optional(availabilitySchema),
  queue: optional(queueSchema.describe('Queue time = admission − arrival, ms (vLLM logs it as request_queue_time).')),
  batch_histogram: optional(
    array(object({ batch: count(), steps: count(), ms: ms() }), MAX_ROWS).describe('Steps per batch size (sequences in the step) and their wall ms.'),
  ),
  mean_batch: optional(num(0, 1e6)),
  busy_share: optional(fraction().describe('Σ step wall time ÷ run wall time (encode, submit, GPU, readback).')),
  submit_busy_share: optional(nullable(fraction()).describe('Σ (ids on the host − submit) ÷ run wall time.')),
  prefix_cache: optional(prefixCacheSchema.describe('Automatic prefix caching: hit rate, TTFT of hits vs misses, the memory it holds.')),
  classes: optional(
    array(
      object({
        name: str(MAX_NAME),
        slo: sloSchema,
        requests: count(),
        completed: count(),
        failed: count(),
        request_throughput: requestsPerS(),
        request_goodput: nullable(requestsPerS()),
        output_throughput: tokensPerS(),
        slo_attainment: nullable(fraction()),
        step_time_share: fraction().describe("Σ step ms × the class's tokens in the step ÷ the step's tokens, ÷ Σ step ms."),
        dollars_per_1k_output_tokens: nullable(num(0, 1e9)).describe("The run's price × step_time_share ÷ the class's output tokens × 1000."),
      }),
      MAX_ROWS,
    ).describe('Per request class; cost attributed by the tokens each class fed to each step.'),
  ),
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

type RunData = NonNullable<ServeSectionData['run']>;

/** Queue time in vLLM's summary layout (vLLM's bench does not print it; its server logs request_queue_time). */
function formatQueue(q: NonNullable<RunData['queue']>): string {
  const row = (label: string, x: number) => `${label.padEnd(40)} ${formatFixed(x, 2).padEnd(10)}`;
  return [
    banner('Queue Time (admission − arrival)', '-'),
    row('Mean queue time (ms):', q.mean_queue_ms),
    row('Median queue time (ms):', q.median_queue_ms),
    row('P99 queue time (ms):', q.p99_queue_ms),
    `${'Requests admitted:'.padEnd(40)} ${q.count}`,
    '='.repeat(50),
  ].join('\n');
}

function formatAvailability(a: NonNullable<RunData['availability']>): string[] {
  const causes = Object.entries(a.errors_by_cause)
    .map(([k, n]) => `${k.replace('_', ' ')} ${n}`)
    .join(', ');
  const out = [`Availability: ${pctOrDash(a.availability)} (${a.successful} of ${a.requests} requests succeeded). Failures by cause: ${causes}.`];
  if (a.sla !== null && a.error_budget !== null && a.error_budget_left !== null) {
    const share = a.error_budget_left_share === null ? '' : ` (${pctOrDash(a.error_budget_left_share)} of it)`;
    out.push(
      `Against an SLA of ${formatFixed(100 * a.sla, 3).replace(/\.?0+$/, '')}%: ${a.meets_sla ? 'met' : 'missed'}; the error budget allows ${a.error_budget.toFixed(2)} failures, ` +
        `${a.error_budget_left >= 0 ? `${a.error_budget_left.toFixed(2)} left` : `overspent by ${(-a.error_budget_left).toFixed(2)}`}${share}.`,
    );
  }
  if (a.degraded > 0) out.push(`Degradation rate: ${pctOrDash(a.degradation_rate)} (${a.degraded} requests admitted with their output capped).`);
  return out;
}

function formatBatches(run: RunData): string[] {
  const bins = run.batch_histogram ?? [];
  const steps = bins.reduce((n, b) => n + b.steps, 0);
  const most = Math.max(...bins.map((b) => b.steps));
  const busy = run.busy_share === undefined ? '' : ` Busy ${pctOrDash(run.busy_share)} of the run's wall time (step wall time: encode, submit, GPU, readback)`;
  const submit = run.submit_busy_share == null ? '' : `; ${pctOrDash(run.submit_busy_share)} from submit to the ids on the host`;
  return [
    `Batch sizes the scheduler ran (sequences per step; mean ${fixedOrDash(run.mean_batch)}).${busy}${submit}${busy ? '.' : ''}`,
    table(
      ['batch', 'steps', 'share', 'step ms', ''],
      bins.map((b) => [
        String(b.batch),
        String(b.steps),
        pctOrDash(b.steps / steps),
        fixedOrDash(b.ms / b.steps, 3),
        '█'.repeat(Math.max(1, Math.round((20 * b.steps) / most))),
      ]),
      [true, true, true, true, false],
    ),
  ];
}

function formatPrefixCache(p: NonNullable<RunData['prefix_cache']>): string[] {
  const row = (label: string, x: string) => `${label.padEnd(40)} ${x}`;
  const ttft = (g: typeof p.ttft_hit) =>
    g ? `${formatFixed(g.median_ttft_ms, 2)} / ${formatFixed(g.p90_ttft_ms, 2)} / ${formatFixed(g.p99_ttft_ms, 2)} (${g.count})` : '—';
  const mib = (b: number | null) => (b === null ? '—' : b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(2)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
  const out = [
    banner(`Prefix Cache (${p.enabled ? `copy-on-hit, ${p.block_tokens}-token blocks` : 'off'})`, '-'),
    row('Hit rate (cached / prompt tokens):', `${pctOrDash(p.hit_rate)} (${p.cached_tokens} of ${p.prompt_tokens})`),
    row('Requests with a hit:', `${p.requests_with_hit} of ${p.requests}`),
    row('TTFT hits p50/p90/p99 ms (n):', ttft(p.ttft_hit)),
    row('TTFT misses p50/p90/p99 ms (n):', ttft(p.ttft_miss)),
  ];
  if (p.enabled) {
    out.push(
      row('Blocks held / pool:', `${p.blocks} / ${p.capacity_blocks} (${mib(p.bytes)} of ${mib(p.pool_bytes)})`),
      row('Inserted / evicted / not cached:', `${p.inserted} / ${p.evictions} / ${p.refused}`),
      row('Blocks copied in / out (bytes):', `${p.blocks_copied_in} / ${p.blocks_copied_out} (${mib(p.copy_bytes)})`),
    );
  }
  out.push('='.repeat(50));
  return out;
}

function formatClasses(classes: NonNullable<RunData['classes']>): string[] {
  const slo = (c: (typeof classes)[number]) =>
    Object.entries(c.slo)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}≤${v}`)
      .join(' ') || '—';
  return [
    "Request classes (cost attributed by the tokens each class fed to each step; the run's whole price, idle time included):",
    table(
      ['class', 'SLO ms', 'requests', 'failed', 'req/s', 'output tok/s', 'goodput req/s', 'attainment', 'step time', '$/1k output tok'],
      classes.map((c) => [
        c.name,
        slo(c),
        String(c.requests),
        String(c.failed),
        c.request_throughput.toFixed(2),
        c.output_throughput.toFixed(1),
        fixedOrDash(c.request_goodput),
        pctOrDash(c.slo_attainment),
        pctOrDash(c.step_time_share),
        fixedOrDash(c.dollars_per_1k_output_tokens, 5),
      ]),
      [false, false, true, true, true, true, true, true, true, true],
    ),
  ];
}

/** vLLM's summary, then SLO attainment, cost, the decode roofline by batch, the sweeps. */
function formatServe(s: ServeSectionData): string {
  if (!s.run) return '';
  const run = s.run;
  const settings = s.settings;
  const out = [
    formatServeSummary(run.result, {
      percentileMetrics: settings?.percentile_metrics ?? ['ttft', 'tpot', 'itl', 'e2el'],
      percentiles: settings?.metric_percentiles ?? [90, 95, 99],
    }).trimEnd(),
  ];
  const slo = Object.entries(settings?.slo ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ≤ ${v} ms`)
    .join(', ');
  if (run.slo_attainment !== null)
    out.push(`SLO attainment (${slo}): ${pctOrDash(run.slo_attainment)} of ${run.result.completed + run.result.failed} requests (errors count against it).`);
  out.push(`Error rate: ${pctOrDash(run.error_rate)}.`);
  if (run.queue) out.push(formatQueue(run.queue));
  if (run.availability) out.push(...formatAvailability(run.availability));
  if (run.prefix_cache) out.push(...formatPrefixCache(run.prefix_cache));
  if (s.cost) {
    out.push(
      `Cost at $${settings?.dollars_per_hour}/h: $${s.cost.dollarsPer1kOutputTokens.toFixed(5)} per 1k output tokens, $${s.cost.dollarsPer1kTotalTokens.toFixed(5)} per 1k total tokens` +
        (s.cost.joulesPerOutputToken !== undefined ? `; ${s.cost.joulesPerOutputToken.toFixed(3)} J per output token at ${settings?.watts} W.` : '.'),
    );
  }
  if (run.batch_histogram?.length) out.push('', ...formatBatches(run));
  if (run.classes?.length) out.push('', ...formatClasses(run.classes));
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

/**
 * Validators of the result sections a report reads — `model`, `cold_start`, `generation`,
 * `latency`, `llama_bench` (jobs/job.ts writes them), `serve` (vLLM `bench serve` keys,
 * serve/metrics.ts), `webllm` (jobs/webllm-run.ts), `side_by_side` (jobs/side-by-side.ts) and
 * the link's `trimmed` flag — registered with validateResult when this
 * module loads. Import `validateResult` from here so they are in place.
 *
 * Every field the report reads is checked for type; numbers are finite (and ≥ 0 where negative
 * makes no sense), arrays and strings have length caps. Strings may hold anything: the UI renders
 * them as text.
 */
import type { LatencyStatKey } from '../measure/metrics.ts';
import type { Summary } from '../measure/stats.ts';
import {
  expectArray, expectBoolean, expectNumber, expectObject, expectString, registerSection, SchemaError, validateResult,
} from '../measure/validate.ts';

export { validateResult };

type Json = unknown;

/** Most prompt lengths (rows, verdicts), depth bins and kernel rows a section may hold. */
const MAX_ROWS = 256;
/** Most timed requests of a latency sweep or a serving run. */
const MAX_REQUESTS = 100_000;
/** Most entries of one per-token array (a request's output tokens, a prompt's ids). */
const MAX_TOKENS = 1 << 20;
/** Longest name-like string (model id, quantization, kernel class) and longest sentence. */
const MAX_NAME = 256;
const MAX_SENTENCE = 2000;
/** Longest generated text. */
const MAX_TEXT = 1 << 20;

const STAT_NAMES = ['mean', 'median', 'std', 'p90', 'p95', 'p99'] as const;
const LATENCY_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;
/** vLLM's latency aggregate keys (mean_ttft_ms … p99_e2el_ms). */
const LATENCY_STAT_KEYS: readonly LatencyStatKey[] = STAT_NAMES.flatMap((s) => LATENCY_METRICS.map((m) => `${s}_${m}_ms` as const));
const SUMMARY_KEYS = ['count', 'mean', 'std', 'min', 'p50', 'p90', 'p95', 'p99', 'max'] as const satisfies readonly (keyof Summary)[];

const nonNegative = (v: Json, path: string) => expectNumber(v, path, { min: 0 });
const count = (v: Json, path: string) => expectNumber(v, path, { min: 0, integer: true });
const anyNumber = (v: Json, path: string) => expectNumber(v, path);

function nullable(v: Json, path: string, check: (v: Json, path: string) => unknown): void {
  if (v !== null) check(v, path);
}

function expectOneOf(v: Json, path: string, options: readonly string[]): void {
  if (!options.includes(expectString(v, path, MAX_NAME))) throw new SchemaError(path, `must be one of ${options.join(', ')}`);
}

function each(v: Json, path: string, maxLength: number, check: (v: Json, path: string) => unknown): void {
  expectArray(v, path, maxLength).forEach((item, i) => check(item, `${path}[${i}]`));
}

function fields(o: Record<string, Json>, path: string, keys: readonly string[], check: (v: Json, path: string) => unknown): void {
  for (const k of keys) check(o[k], `${path}.${k}`);
}

/** `model` (ModelInfo in model/load.ts). */
function validateModel(v: Json, path: string): void {
  const m = expectObject(v, path);
  fields(m, path, ['id', 'name', 'architecture', 'quantization', 'label'], (s, p) => expectString(s, p, MAX_NAME));
  fields(m, path, ['parameters', 'weight_bytes'], nonNegative);
  expectBoolean(m.synthetic, `${path}.synthetic`);
  const c = expectObject(m.config, `${path}.config`);
  const cp = `${path}.config`;
  fields(c, cp, ['architecture', 'name', 'ropeStyle'], (s, p) => expectString(s, p, MAX_NAME));
  fields(c, cp, ['dim', 'hiddenDim', 'nLayers', 'nHeads', 'nKvHeads', 'headDim', 'vocabSize', 'contextLength', 'ropeDim', 'bosId', 'eosId'], count);
  fields(c, cp, ['ropeTheta', 'rmsEps'], nonNegative);
  fields(c, cp, ['qkvBias', 'tiedEmbeddings'], expectBoolean);
}

/** The protocol settings both engines' sweeps share. */
function validateSweepSettings(v: Json, path: string): Record<string, Json> {
  const s = expectObject(v, path);
  each(s.prompt_lengths, `${path}.prompt_lengths`, MAX_ROWS, count);
  fields(s, path, ['output_tokens', 'reps', 'warmup'], count);
  fields(s, path, ['cooldown_ms'], nonNegative);
  fields(s, path, ['seed'], anyNumber);
  return s;
}

function validateSettings(v: Json, path: string): void {
  const s = validateSweepSettings(v, path);
  count(s.chunk, `${path}.chunk`);
  expectBoolean(s.profile, `${path}.profile`);
  if (s.prompt_ids !== undefined) each(s.prompt_ids, `${path}.prompt_ids`, MAX_TOKENS, count);
}

function validateRequest(v: Json, path: string): void {
  const r = expectObject(v, path);
  fields(r, path, ['prompt_tokens', 'output_tokens', 'rep'], count);
  each(r.token_ms, `${path}.token_ms`, MAX_TOKENS, nonNegative);
  nullable(r.gpu_prefill_ms, `${path}.gpu_prefill_ms`, nonNegative);
  nullable(r.gpu_decode_ms, `${path}.gpu_decode_ms`, (a, p) => each(a, p, MAX_TOKENS, nonNegative));
  expectBoolean(r.disturbed, `${path}.disturbed`);
}

function validateStats(v: Json, path: string): void {
  fields(expectObject(v, path), path, LATENCY_STAT_KEYS, nonNegative);
}

function validateSummary(v: Json, path: string): void {
  fields(expectObject(v, path), path, SUMMARY_KEYS, nonNegative);
}

/** A latency row; `costs` 'optional' for WebLLM's, whose cost-model fields are null without one. */
function validateRow(v: Json, path: string, costs: 'required' | 'optional' = 'required'): void {
  const r = expectObject(v, path);
  fields(r, path, ['prompt_tokens', 'output_tokens', 'n'], count);
  validateStats(r.stats, `${path}.stats`);
  validateSummary(r.ttft, `${path}.ttft`);
  nullable(r.tpot, `${path}.tpot`, validateSummary);
  nonNegative(r.prefill_tokens_per_s, `${path}.prefill_tokens_per_s`);
  const costed = ['prefill_flops', 'prefill_gflops', 'prefill_of_matmul_roof', 'decode_bytes_per_token', 'decode_ceiling_tokens_per_s'];
  fields(r, path, costed, costs === 'required' ? nonNegative : (x, p) => nullable(x, p, nonNegative));
  const optional = ['decode_tokens_per_s', 'decode_bandwidth_gbps', 'decode_efficiency', 'gpu_prefill_ms', 'gpu_decode_ms'];
  fields(r, path, optional, (x, p) => nullable(x, p, nonNegative));
  // Overheads are differences of medians and may come out negative.
  fields(r, path, ['host_overhead_ms', 'overhead_vs_floor_ms'], (x, p) => nullable(x, p, anyNumber));
}

function validateDepthPoint(v: Json, path: string): void {
  const d = expectObject(v, path);
  fields(d, path, ['depth', 'n'], count);
  fields(d, path, ['tpot_ms', 'ceiling_tokens_per_s'], nonNegative);
}

const VERDICT_NUMBERS = ['achievedFlopsPerS', 'achievedBytesPerS', 'computeShare', 'bandwidthShare', 'intensity', 'ridgePoint', 'floorMs', 'efficiency'];

function validateVerdict(v: Json, path: string): void {
  const d = expectObject(v, path);
  expectOneOf(d.bound, `${path}.bound`, ['memory-bound', 'compute-bound', 'overhead-bound']);
  expectString(d.sentence, `${path}.sentence`, MAX_SENTENCE);
  fields(d, path, VERDICT_NUMBERS, nonNegative);
}

function validateVerdicts(v: Json, path: string): void {
  const d = expectObject(v, path);
  count(d.prompt_tokens, `${path}.prompt_tokens`);
  validateVerdict(d.prefill, `${path}.prefill`);
  nullable(d.decode, `${path}.decode`, validateVerdict);
}

function validateKernelRow(v: Json, path: string): void {
  const k = expectObject(v, path);
  expectOneOf(k.phase, `${path}.phase`, ['prefill', 'decode']);
  expectString(k.kind, `${path}.kind`, MAX_NAME);
  fields(k, path, ['ms_per_step', 'share', 'dispatches_per_step'], nonNegative);
}

/**
 * The `latency` section (LatencySection in measure/latency.ts). A sweep that stopped early carries
 * only `requests` and `rows` (job.ts shares the partial section), so the rest is checked when present.
 */
export function validateLatency(v: Json, path: string): void {
  const l = expectObject(v, path);
  const present = (k: string) => l[k] !== undefined;
  each(l.requests, `${path}.requests`, MAX_REQUESTS, validateRequest);
  each(l.rows, `${path}.rows`, MAX_ROWS, validateRow);
  if (present('settings')) validateSettings(l.settings, `${path}.settings`);
  if (present('gpu_clock')) expectOneOf(l.gpu_clock, `${path}.gpu_clock`, ['gpu-timestamp', 'host']);
  if (present('cold_start')) {
    const cold = validateColdStart(l.cold_start, `${path}.cold_start`);
    fields(cold, `${path}.cold_start`, ['first_ttft_ms', 'warm_ttft_ms'], nonNegative);
    count(cold.first_prompt_tokens, `${path}.cold_start.first_prompt_tokens`);
  }
  if (present('depth_curve')) each(l.depth_curve, `${path}.depth_curve`, MAX_ROWS, validateDepthPoint);
  if (present('summary')) {
    const summary = expectObject(l.summary, `${path}.summary`);
    validateStats(summary, `${path}.summary`);
    count(summary.completed, `${path}.summary.completed`);
  }
  if (present('verdicts')) each(l.verdicts, `${path}.verdicts`, MAX_ROWS, validateVerdicts);
  if (present('kernels')) nullable(l.kernels, `${path}.kernels`, (k, p) => each(k, p, MAX_ROWS, validateKernelRow));
  if (present('kernel_points')) {
    nullable(l.kernel_points, `${path}.kernel_points`, (k, p) =>
      each(k, p, MAX_ROWS, (x, q) => {
        const point = expectObject(x, q);
        validateKernelRow({ ...point, ms_per_step: point.ms, share: 0, dispatches_per_step: 0 }, q);
        fields(point, q, ['prompt_tokens', 'flops', 'bytes', 'ms'], nonNegative);
      }),
    );
  }
  if (present('profile_step_ms')) {
    nullable(l.profile_step_ms, `${path}.profile_step_ms`, (o, p) => fields(expectObject(o, p), p, ['prefill', 'decode'], (x, q) => nullable(x, q, nonNegative)));
  }
  if (present('trimmed')) expectBoolean(l.trimmed, `${path}.trimmed`);
}

/** `cold_start` (ColdStart in model/load.ts), also the base of the latency section's. */
function validateColdStart(v: Json, path: string): Record<string, Json> {
  const cold = expectObject(v, path);
  fields(cold, path, ['parse_ms', 'upload_ms', 'compile_ms'], nonNegative);
  if (cold.autotune_ms !== undefined) nonNegative(cold.autotune_ms, `${path}.autotune_ms`);
  return cold;
}

/** `kernel_shapes` (KernelShapes in model/load.ts): the linear shapes a run used. */
function validateKernelShapes(v: Json, path: string): void {
  const k = expectObject(v, path);
  const source = expectString(k.source, `${path}.source`, MAX_NAME);
  if (source !== 'autotuned' && source !== 'static') throw new SchemaError(`${path}.source`, 'must be "autotuned" or "static"');
  const linear = expectObject(k.linear, `${path}.linear`);
  if (Object.keys(linear).length > MAX_ROWS) throw new SchemaError(`${path}.linear`, `has more than ${MAX_ROWS} entries`);
  for (const [key, shape] of Object.entries(linear)) {
    const s = expectObject(shape, `${path}.linear.${key}`);
    const kernel = expectString(s.kernel, `${path}.linear.${key}.kernel`, MAX_NAME);
    if (!['matvec', 'matmul', 'rows'].includes(kernel)) throw new SchemaError(`${path}.linear.${key}.kernel`, 'must be "matvec", "matmul" or "rows"');
  }
  if (k.note !== undefined) expectString(k.note, `${path}.note`, MAX_SENTENCE);
}

/** `generation`: a prompt's greedy continuation (job.ts). */
function validateGeneration(v: Json, path: string): void {
  const g = expectObject(v, path);
  each(g.prompt_token_ids, `${path}.prompt_token_ids`, MAX_TOKENS, count);
  each(g.token_ids, `${path}.token_ids`, MAX_TOKENS, count);
  nullable(g.text, `${path}.text`, (t, p) => expectString(t, p, MAX_TEXT));
  if (g.note !== undefined) expectString(g.note, `${path}.note`, MAX_SENTENCE);
}

/** `llama_bench`: LlamaBenchRow[] (measure/metrics.ts). */
function validateLlamaBench(v: Json, path: string): void {
  each(v, path, MAX_ROWS, (row, p) => {
    const r = expectObject(row, p);
    fields(r, p, ['model', 'backend', 'test'], (s, q) => expectString(s, q, MAX_NAME));
    fields(r, p, ['sizeBytes', 'params', 'meanTokensPerS', 'stdTokensPerS'], nonNegative);
    // llama-bench's ngl −1 means every layer.
    expectNumber(r.ngl, `${p}.ngl`, { min: -1, integer: true });
    each(r.samples, `${p}.samples`, MAX_ROWS, nonNegative);
  });
}

/** vLLM `bench serve` scalar keys (besides the latency aggregates) and what each must be. */
const SERVE_SCALAR_KEYS = {
  completed: count,
  failed: count,
  duration: nonNegative,
  total_input_tokens: count,
  total_output_tokens: count,
  request_throughput: nonNegative,
  request_goodput: (v: Json, p: string) => nullable(v, p, nonNegative),
  output_throughput: nonNegative,
  total_token_throughput: nonNegative,
} as const;

const SERVE_ARRAY_KEYS = ['input_lens', 'output_lens', 'ttfts', 'latencies'] as const;

/**
 * The `serve` section as the job writes it (serve/run.ts ServeSection): `run` holds vLLM's result
 * and our per-request timeline, per-step records and decode roofline; the sweeps sit beside it.
 * A bare vLLM result (older reports, imports) is accepted too.
 */
export function validateServe(v: Json, path: string): void {
  const section = expectObject(v, path);
  if (section.run === undefined) {
    validateServeResult(section, path);
    return;
  }
  const run = expectObject(section.run, `${path}.run`);
  validateServeResult(run.result, `${path}.run.result`);
  nullable(run.slo_attainment, `${path}.run.slo_attainment`, nonNegative);
  nonNegative(run.error_rate, `${path}.run.error_rate`);
  if (run.timeline !== undefined) {
    each(run.timeline, `${path}.run.timeline`, MAX_REQUESTS, (t, p) => {
      const r = expectObject(t, p);
      fields(r, p, ['id', 'prompt_tokens', 'output_tokens'], count);
      fields(r, p, ['arrival_ms', 'finish_ms'], (x, q) => expectNumber(x, q));
      fields(r, p, ['admit_ms', 'first_token_ms'], (x, q) => nullable(x, q, (y, w) => expectNumber(y, w)));
      nullable(r.error, `${p}.error`, (e, q) => expectString(e, q, MAX_SENTENCE));
    });
  }
  if (run.steps !== undefined) {
    each(run.steps, `${path}.run.steps`, MAX_REQUESTS, (t, p) => fields(expectObject(t, p), p, ['start_ms', 'end_ms', 'decode', 'prefill_tokens', 'running', 'waiting'], (x, q) => expectNumber(x, q)));
  }
  each(run.decode_roofline, `${path}.run.decode_roofline`, MAX_ROWS, (d, p) => validateDecodeRoofline(d, p));
  if (section.batch_sweep !== null && section.batch_sweep !== undefined) {
    each(section.batch_sweep, `${path}.batch_sweep`, MAX_ROWS, (b, p) => {
      const r = expectObject(b, p);
      count(r.batch, `${p}.batch`);
      fields(r, p, ['output_throughput', 'request_throughput', 'median_ttft_ms', 'p99_ttft_ms', 'median_tpot_ms', 'p99_tpot_ms'], nonNegative);
      nullable(r.decode, `${p}.decode`, validateDecodeRoofline);
    });
  }
  if (section.rate_sweep !== null && section.rate_sweep !== undefined) {
    const c = expectObject(section.rate_sweep, `${path}.rate_sweep`);
    nullable(c.rate, `${path}.rate_sweep.rate`, nonNegative);
    expectOneOf(c.status, `${path}.rate_sweep.status`, ['found', 'below-range', 'above-range']);
    nonNegative(c.target, `${path}.rate_sweep.target`);
    each(c.probes, `${path}.rate_sweep.probes`, MAX_ROWS, (x, p) => fields(expectObject(x, p), p, ['rate', 'attainment'], nonNegative));
  }
}

function validateDecodeRoofline(v: Json, path: string): void {
  const d = expectObject(v, path);
  count(d.batch, `${path}.batch`);
  fields(d, path, ['step_ms', 'flops', 'bytes', 'intensity'], nonNegative);
  const verdict = expectObject(d.verdict, `${path}.verdict`);
  expectOneOf(verdict.bound, `${path}.verdict.bound`, ['memory-bound', 'compute-bound', 'overhead-bound']);
  expectString(verdict.sentence, `${path}.verdict.sentence`, MAX_SENTENCE);
  fields(verdict, `${path}.verdict`, ['achievedFlopsPerS', 'achievedBytesPerS', 'bandwidthShare', 'computeShare'], nonNegative);
}

/**
 * vLLM's `bench serve` result: permissive about which keys are present (it may hold a subset of
 * vLLM's result and keys of its own), strict about the type of every vLLM key that is there.
 */
function validateServeResult(v: Json, path: string): void {
  const s = expectObject(v, path);
  const present = (k: string) => s[k] !== undefined;
  for (const [k, check] of Object.entries(SERVE_SCALAR_KEYS)) if (present(k)) check(s[k], `${path}.${k}`);
  fields(s, path, LATENCY_STAT_KEYS.filter(present), nonNegative);
  fields(s, path, SERVE_ARRAY_KEYS.filter(present), (a, p) => each(a, p, MAX_REQUESTS, nonNegative));
  if (present('itls')) each(s.itls, `${path}.itls`, MAX_REQUESTS, (a, p) => each(a, p, MAX_TOKENS, nonNegative));
  if (present('errors')) each(s.errors, `${path}.errors`, MAX_REQUESTS, (e, p) => expectString(e, p, MAX_SENTENCE));
  for (const [k, x] of Object.entries(s)) {
    if (typeof x === 'string') expectString(x, `${path}.${k}`, MAX_SENTENCE);
  }
}

const COMPARED_METRICS = ['ttft_ms', 'tpot_ms', 'prefill_tokens_per_s', 'decode_tokens_per_s'] as const;

/** ComparedMetrics (webllm/mapping.ts): each a non-negative number or null. */
function validateCompared(v: Json, path: string): void {
  fields(expectObject(v, path), path, COMPARED_METRICS, (x, p) => nullable(x, p, nonNegative));
}

function validateWebLLMRequest(v: Json, path: string): void {
  validateRequest(v, path);
  const r = expectObject(v, path);
  expectOneOf(r.engine, `${path}.engine`, ['webllm']);
  expectString(r.model_id, `${path}.model_id`, MAX_NAME);
  expectOneOf(r.path, `${path}.path`, ['tokens', 'chat']);
  count(r.chunks, `${path}.chunks`);
}

function validateComparison(v: Json, path: string): void {
  const c = expectObject(v, path);
  fields(c, path, ['prompt_tokens', 'rep'], count);
  validateCompared(c.ours, `${path}.ours`);
  validateCompared(c.webllm, `${path}.webllm`);
  for (const [k, x] of Object.entries(expectObject(c.disagreement, `${path}.disagreement`))) {
    expectOneOf(k, `${path}.disagreement`, COMPARED_METRICS);
    anyNumber(x, `${path}.disagreement.${k}`);
  }
  each(c.flagged, `${path}.flagged`, COMPARED_METRICS.length, (m, p) => expectOneOf(m, p, COMPARED_METRICS));
}

/** The `webllm` section (WebLLMSection in jobs/webllm-run.ts), complete or as far as it got. */
export function validateWebLLM(v: Json, path: string): void {
  const w = expectObject(v, path);
  const m = expectObject(w.model, `${path}.model`);
  fields(m, `${path}.model`, ['id', 'family', 'quantization'], (s, p) => expectString(s, p, MAX_NAME));
  nonNegative(m.vramMB, `${path}.model.vramMB`);
  const s = validateSweepSettings(w.settings, `${path}.settings`);
  fields(s, `${path}.settings`, ['vocab_size', 'bos_id'], count);
  nullable(w.cost_source, `${path}.cost_source`, (o, p) => fields(expectObject(o, p), p, ['model_id', 'quantization'], (x, q) => expectString(x, q, MAX_NAME)));
  each(w.requests, `${path}.requests`, MAX_REQUESTS, validateWebLLMRequest);
  each(w.rows, `${path}.rows`, MAX_ROWS, (row, p) => validateRow(row, p, 'optional'));
  each(w.verdicts, `${path}.verdicts`, MAX_ROWS, validateVerdicts);
  each(w.comparisons, `${path}.comparisons`, MAX_REQUESTS, validateComparison);
  count(w.flagged_count, `${path}.flagged_count`);
}

/** The `side_by_side` section (SideBySide in jobs/side-by-side.ts). */
export function validateSideBySide(v: Json, path: string): void {
  const s = expectObject(v, path);
  fields(s, path, ['tokenscope_model', 'webllm_model'], (x, p) => expectString(x, p, MAX_NAME));
  each(s.rows, `${path}.rows`, MAX_ROWS, (row, p) => {
    const r = expectObject(row, p);
    count(r.prompt_tokens, `${p}.prompt_tokens`);
    for (const k of ['tokenscope', 'webllm', 'ratio']) validateCompared(r[k], `${p}.${k}`);
  });
  each(s.differences, `${path}.differences`, MAX_ROWS, (d, p) => expectString(d, p, MAX_SENTENCE));
  each(s.points, `${path}.points`, 4 * MAX_ROWS, (point, p) => {
    const o = expectObject(point, p);
    expectOneOf(o.engine, `${p}.engine`, ['tokenscope', 'webllm']);
    count(o.prompt_tokens, `${p}.prompt_tokens`);
    expectOneOf(o.phase, `${p}.phase`, ['prefill', 'decode']);
    fields(o, p, ['intensity', 'gflops', 'gbps'], nonNegative);
    expectBoolean(o.estimate, `${p}.estimate`);
  });
}

registerSection('model', validateModel);
registerSection('cold_start', validateColdStart);
registerSection('kernel_shapes', validateKernelShapes);
registerSection('generation', validateGeneration);
registerSection('latency', validateLatency);
registerSection('llama_bench', validateLlamaBench);
registerSection('serve', validateServe);
registerSection('webllm', validateWebLLM);
registerSection('side_by_side', validateSideBySide);
registerSection('trimmed', expectBoolean);

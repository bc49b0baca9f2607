/**
 * The `latency` section (measure/latency.ts LatencySection, which must agree) and the pieces the
 * `webllm` section shares with it: timed requests, rows, stats, verdicts.
 */
import type { LatencySection } from '../latency.ts';
import type { KernelClass } from '../../kernels/kernel.ts';
import type { LatencyStatKey } from '../metrics.ts';
import { array, bool, fieldsOf, nullable, num, object, oneOf, optional, str, type Agrees, type Infer, type Schema } from '../schema-kit.ts';
import {
  count,
  fraction,
  gbps,
  gflops,
  intensity,
  MAX_NAME,
  MAX_REQUESTS,
  MAX_ROWS,
  MAX_SENTENCE,
  MAX_TOKENS,
  ms,
  perSecond,
  ratio,
  seed,
  signedMs,
  tokenId,
  tokensPerS,
  work,
} from './units.ts';

const phase = () => oneOf(['prefill', 'decode'] as const);
/** Any name: kernel classes grow with the kernels, and the page shows the name as text. */
const kernelClass = () => str(MAX_NAME) as Schema<string> as Schema<KernelClass>;

const STAT_NAMES = ['mean', 'median', 'std', 'p90', 'p95', 'p99'] as const;
const LATENCY_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;
/** vLLM's latency aggregate keys (mean_ttft_ms … p99_e2el_ms). */
export const LATENCY_STAT_KEYS: readonly LatencyStatKey[] = STAT_NAMES.flatMap((s) => LATENCY_METRICS.map((m) => `${s}_${m}_ms` as const));

/** The protocol settings both engines' sweeps share. */
export const sweepSettingsShape = {
  prompt_lengths: array(count(), MAX_ROWS),
  output_tokens: count(),
  reps: count(),
  warmup: count(),
  cooldown_ms: ms().describe('Pause between requests, ms.'),
  seed: seed(),
};

export const requestShape = {
  prompt_tokens: count(),
  output_tokens: count(),
  rep: count(),
  token_ms: array(ms(), MAX_TOKENS).describe('Host clock: when each output token id was available, ms after the request was sent.'),
  gpu_prefill_ms: nullable(ms()),
  gpu_decode_ms: nullable(array(ms(), MAX_TOKENS)),
  disturbed: bool().describe('The tab was hidden (or the machine otherwise disturbed) during this request.'),
};

/** vLLM's latency aggregates, mean_ttft_ms … p99_e2el_ms. */
export const latencyStatsShape = fieldsOf(LATENCY_STAT_KEYS, ms());

export const summarySchema = object({
  count: count(),
  ...fieldsOf(['mean', 'std', 'min', 'p50', 'p90', 'p95', 'p99', 'max'] as const, ms()),
});

/** The host-clock part of a row: what any engine's records give without a cost model. */
export const timingRowShape = {
  prompt_tokens: count(),
  output_tokens: count(),
  n: count().describe('Requests in this row.'),
  stats: object(latencyStatsShape),
  ttft: summarySchema,
  tpot: nullable(summarySchema),
  prefill_tokens_per_s: tokensPerS().describe('prompt tokens / median TTFT.'),
  decode_tokens_per_s: nullable(tokensPerS()).describe('1 / median TPOT.'),
};

/** The fields of a row only a cost model (and the GPU clock) gives. */
export const costRowShape = {
  prefill_flops: work(),
  prefill_gflops: gflops().describe('prefill FLOPs / median GPU prefill time (host TTFT when no GPU clock).'),
  prefill_of_matmul_roof: ratio().describe(
    "prefill_gflops ÷ the prefill-GEMM roof measured on this device (the engine's own linear kernel on an n×n f32 weight).",
  ),
  decode_bytes_per_token: work(),
  decode_bandwidth_gbps: nullable(gbps()).describe('bytes per token / median TPOT: the bandwidth decode achieved, host clock.'),
  decode_efficiency: nullable(ratio()).describe('decode tokens/s ÷ ceiling (read roof / bytes per token).'),
  decode_ceiling_tokens_per_s: tokensPerS(),
  gpu_prefill_ms: nullable(ms()),
  gpu_decode_ms: nullable(ms()),
  host_overhead_ms: nullable(signedMs()).describe(
    "Median over decode steps of (the step's inter-token gap − its own GPU time); below 0 only where the GPU and host clocks disagree.",
  ),
  overhead_vs_floor_ms: nullable(signedMs()).describe('TPOT − bytes/bandwidth: time per token beyond the bandwidth floor.'),
};

export const verdictSchema = object({
  bound: oneOf(['memory-bound', 'compute-bound', 'overhead-bound'] as const),
  sentence: str(MAX_SENTENCE),
  achievedFlopsPerS: perSecond(),
  achievedBytesPerS: perSecond(),
  computeShare: ratio(),
  bandwidthShare: ratio(),
  intensity: intensity(),
  ridgePoint: intensity(),
  floorMs: ms(),
  efficiency: ratio(),
});

export const verdictsSchema = array(object({ prompt_tokens: count(), prefill: verdictSchema, decode: nullable(verdictSchema) }), MAX_ROWS);

const kernelRowSchema = object({
  phase: phase(),
  kind: kernelClass(),
  ms_per_step: ms(),
  share: fraction().describe("Share of the phase's summed kernel time."),
  dispatches_per_step: num(0, 1e6).describe('Dispatches of the class per step (a median: may be fractional).'),
});

const kernelPointSchema = object({
  prompt_tokens: count(),
  phase: phase(),
  kind: kernelClass(),
  flops: work(),
  bytes: work(),
  ms: ms().describe('Profiled GPU ms per step (one timed pass per kernel).'),
});

/**
 * A sweep that stopped early carries only `requests` and `rows` (job.ts shares the partial
 * section), so everything else is optional here.
 */
export const latencySchema = object({
  settings: optional(
    object({
      ...sweepSettingsShape,
      chunk: count().describe('Prefill chunk size.'),
      profile: bool(),
      prompt_ids: optional(array(tokenId(), MAX_TOKENS)),
    }),
  ),
  gpu_clock: optional(oneOf(['gpu-timestamp', 'host'] as const)),
  cold_start: optional(
    object({
      parse_ms: ms(),
      upload_ms: ms(),
      compile_ms: ms(),
      first_ttft_ms: ms(),
      warm_ttft_ms: ms(),
      first_prompt_tokens: count(),
    }),
  ),
  requests: array(object(requestShape), MAX_REQUESTS),
  rows: array(object({ ...timingRowShape, ...costRowShape }), MAX_ROWS),
  depth_curve: optional(
    array(
      object({
        depth: count().describe('KV positions attended by the step (context depth).'),
        tpot_ms: ms(),
        n: count(),
        ceiling_tokens_per_s: tokensPerS(),
      }),
      MAX_ROWS,
    ),
  ),
  dispatches_per_step: optional(object({ prefill: count(), decode: count() })).describe(
    'Dispatches one step records, counted from the recorded programs: the first prefill chunk and a decode step.',
  ),
  summary: optional(object({ ...latencyStatsShape, completed: count() })),
  verdicts: optional(verdictsSchema),
  kernels: optional(nullable(array(kernelRowSchema, MAX_ROWS))),
  kernel_points: optional(nullable(array(kernelPointSchema, MAX_ROWS))),
  profile_step_ms: optional(nullable(object({ prefill: nullable(ms()), decode: nullable(ms()) }))),
  trimmed: optional(bool()).describe('Samples were trimmed when the section went into a link.'),
});

// The schema lets a partial section through; the complete one the sweep writes must agree with it.
type Complete = Required<Infer<typeof latencySchema>>;
const latencyAgrees: Agrees<Omit<Complete, 'kernel_points' | 'trimmed'>, Omit<Required<LatencySection>, 'kernel_points' | 'trimmed'>> = true;
const rowAgrees: Agrees<Complete['rows'][number], LatencySection['rows'][number]> = true;
void [latencyAgrees, rowAgrees];

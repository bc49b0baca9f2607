/**
 * The `latency` section (measure/latency.ts LatencySection, which must agree) and the pieces the
 * `webllm` section shares with it: timed requests, rows, stats, verdicts.
 */
import type { LatencySection } from '../latency.ts';
import type { KernelClass } from '../../kernels/kernel.ts';
import { fixedOrDash, pctOrDash, table } from '../format.ts';
import type { LatencyRow, TimingRow } from '../latency-summary.ts';
import type { LatencyStatKey } from '../metrics.ts';
import type { LatencyReport } from '../schema.ts';
import { compareMetrics, PER_REQUEST_NOTE, PER_TOKEN_NOTE, type Cell, type Metric, type MetricComparison, type SectionModule } from '../section.ts';
import type { Summary } from '../stats.ts';
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
  read_beside_gbps: optional(gbps()).describe(
    "The streaming read measured beside this request: the mean of the read-roof kernel's blocks timed just before and just after it, GB/s to four significant figures.",
  ),
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
    "prefill_gflops ÷ the prefill-GEMM roof measured on this device: the larger of the engine's own linear kernel on an n×n f32 weight and, where measured, on an n×n q4_0 weight with 8-bit activations.",
  ),
  decode_bytes_per_token: work(),
  decode_bandwidth_gbps: nullable(gbps()).describe('bytes per token / median TPOT: the bandwidth decode achieved, host clock.'),
  decode_efficiency: nullable(ratio()).describe('decode tokens/s ÷ ceiling (read roof / bytes per token).'),
  decode_ceiling_tokens_per_s: tokensPerS(),
  gpu_prefill_ms: nullable(ms()),
  gpu_decode_ms: nullable(ms()),
  host_overhead_ms: nullable(signedMs()).describe(
    "Median over requests of (the request's TPOT − the mean GPU time of its decode steps): the time per token the GPU waited for the host; below 0 only where the GPU and host clocks disagree.",
  ),
  overhead_vs_floor_ms: nullable(signedMs()).describe('TPOT − bytes/bandwidth: time per token beyond the bandwidth floor.'),
};

export const verdictSchema = object({
  bound: oneOf(['memory-bound', 'compute-bound', 'launch-bound', 'overhead-bound'] as const),
  sentence: str(MAX_SENTENCE),
  achievedFlopsPerS: perSecond(),
  achievedBytesPerS: perSecond(),
  computeShare: ratio(),
  bandwidthShare: ratio(),
  intensity: intensity(),
  ridgePoint: intensity(),
  floorMs: ms(),
  launchMs: optional(ms()).describe('The launch floor: dispatches × the launch roof (absent where either is unknown).'),
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
      cached_prefixes: optional(array(count(), MAX_ROWS)).describe('--cached-prefix: prefix lengths whose TTFT is measured with them already in the KV cache.'),
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
  rows: array(
    object({
      ...timingRowShape,
      ...costRowShape,
      decode_of_read_beside: optional(nullable(ratio())).describe(
        "Median over requests of (bytes per token ÷ the request's TPOT) ÷ the streaming read measured beside that request: decode against what the memory system gave at the same moment.",
      ),
    }),
    MAX_ROWS,
  ),
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
  prefix_ttft: optional(
    array(
      object({
        prompt_tokens: count(),
        cached_tokens: count().describe('Positions already in the KV cache (prefilled untimed from the same prompt), as a prefix-cache hit leaves them.'),
        n: count(),
        ttft: summarySchema.describe('TTFT of the remaining prompt_tokens − cached_tokens, prefilled from position cached_tokens.'),
        uncached_ttft_p50_ms: ms().describe("The same prompt length's median TTFT with nothing cached (its row in rows)."),
        saved_ms: signedMs().describe('uncached_ttft_p50_ms − ttft.p50.'),
        saved_share: num(-1e6, 1).describe('saved_ms ÷ uncached_ttft_p50_ms.'),
      }),
      MAX_ROWS,
    ),
  ).describe('TTFT saved at each cached prefix length (--cached-prefix): what a prefix-cache hit of that length saves, without the copy a hit costs.'),
  dispatches_per_step: optional(object({ prefill: count(), decode: count() })).describe(
    'Dispatches one step records, counted from the recorded programs: the first prefill chunk and a decode step.',
  ),
  summary: optional(object({ ...latencyStatsShape, completed: count() })),
  decode_waterfall: optional(
    array(
      object({
        prompt_tokens: count(),
        tpot_ms: ms(),
        launch_ms: ms().describe('Decode dispatches × the launch roof (ceilings.launch.dispatch_us).'),
        stream_ms: ms().describe("The step's bytes at the read roof."),
        kernel_ms: ms().describe('GPU time beyond launch + stream: kernel inefficiency.'),
        host_ms: ms().describe('TPOT − GPU time: submission, readback and host work.'),
        readback_ms: ms().describe('The part of host_ms one submit-and-read round trip (ceilings.launch.roundtrip_us) accounts for.'),
        floors_exceed_gpu: optional(bool()).describe(
          'launch + stream exceed the GPU time: the launch probe over-reads these dispatches, and the split is not drawn.',
        ),
      }),
      MAX_ROWS,
    ),
  ).describe('Where one decode token goes, a sequential model: TPOT = launch + stream + kernel + host (rows with GPU timestamps and a launch roof).'),
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

const withTrimmed = (latency: LatencyReport): LatencyReport => ({ ...latency, trimmed: true });

/** Each request's raw token times and per-step GPU times. */
function trimPerToken(latency: LatencyReport): LatencyReport | null {
  if (!latency.requests.some((q) => q.token_ms.length > 0 || (q.gpu_decode_ms?.length ?? 0) > 0)) return null;
  const requests = latency.requests.map((q) => ({ ...q, token_ms: [], gpu_decode_ms: q.gpu_decode_ms === null ? null : [] }));
  return withTrimmed({ ...latency, requests });
}

/** The sweep's requests and a real prompt's ids. */
function trimRequests(latency: LatencyReport): LatencyReport | null {
  // A sweep that stopped early has no settings (see validate-sections.ts).
  if (latency.requests.length === 0 && latency.settings?.prompt_ids === undefined) return null;
  const settings = latency.settings && (({ prompt_ids: _ids, ...rest }) => rest)(latency.settings);
  return withTrimmed({ ...latency, ...(settings && { settings }), requests: [] });
}

/** Significant digits kept when numbers are rounded: more than any table or chart shows. */
export const ROUNDED_DIGITS = 6;

/** A copy of `v` with every number rounded to ROUNDED_DIGITS, and whether any changed. */
function rounded<T>(v: T): { value: T; changed: boolean } {
  let changed = false;
  const walk = (x: unknown): unknown => {
    if (typeof x === 'number') {
      const y = Number(x.toPrecision(ROUNDED_DIGITS));
      changed ||= y !== x;
      return y;
    }
    if (Array.isArray(x)) return x.map(walk);
    if (typeof x === 'object' && x !== null) return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y)]));
    return x;
  };
  return { value: walk(v) as T, changed };
}

/** The named parts of the section rounded to ROUNDED_DIGITS significant digits. */
function roundParts(latency: LatencyReport, keys: readonly (keyof LatencySection)[]): LatencyReport | null {
  const { value, changed } = rounded(Object.fromEntries(keys.filter((k) => latency[k] !== undefined).map((k) => [k, latency[k]])));
  return changed ? withTrimmed({ ...latency, ...value }) : null;
}

/** Everything the tables and charts read besides the length rows. */
const DERIVED_LATENCY: readonly (keyof LatencySection)[] = [
  'cold_start',
  'depth_curve',
  'summary',
  'verdicts',
  'decode_waterfall',
  'kernels',
  'profile_step_ms',
];

const ROW_METRICS: readonly Metric<LatencyRow>[] = [
  { key: 'median_ttft_ms', metric: 'median TTFT', unit: 'ms', direction: 'lower-is-better', value: (r) => r.ttft.p50 },
  { key: 'p99_ttft_ms', metric: 'p99 TTFT', unit: 'ms', direction: 'lower-is-better', value: (r) => r.ttft.p99 },
  { key: 'median_tpot_ms', metric: 'median TPOT', unit: 'ms', direction: 'lower-is-better', value: (r) => r.tpot?.p50 },
  { key: 'p99_tpot_ms', metric: 'p99 TPOT', unit: 'ms', direction: 'lower-is-better', value: (r) => r.tpot?.p99 },
  { key: 'prefill_tokens_per_s', metric: 'prefill throughput', unit: 'tok/s', direction: 'higher-is-better', value: (r) => r.prefill_tokens_per_s },
  { key: 'decode_tokens_per_s', metric: 'decode throughput', unit: 'tok/s', direction: 'higher-is-better', value: (r) => r.decode_tokens_per_s },
  { key: 'decode_efficiency', metric: 'decode efficiency', unit: 'of ceiling', direction: 'higher-is-better', value: (r) => r.decode_efficiency },
  {
    key: 'decode_of_read_beside',
    metric: 'decode of the read beside it',
    unit: 'of read beside',
    direction: 'higher-is-better',
    value: (r) => r.decode_of_read_beside ?? undefined,
  },
];

/** The rows at each prompt length both sweeps measured, in a's order. */
function compareLatency(a: LatencyReport, b: LatencyReport): MetricComparison[] {
  return a.rows.flatMap((rowA) => {
    const rowB = b.rows.find((r) => r.prompt_tokens === rowA.prompt_tokens);
    return rowB ? compareMetrics(ROW_METRICS, rowA, rowB, rowA.prompt_tokens) : [];
  });
}

const summaryColumns = (name: 'ttft' | 'tpot', pick: (r: LatencyRow) => Summary | null): [string, (r: LatencyRow) => Cell][] =>
  (
    [
      ['mean', 'mean'],
      ['median', 'p50'],
      ['p90', 'p90'],
      ['p95', 'p95'],
      ['p99', 'p99'],
    ] as const
  ).map(([label, stat]) => [`${label}_${name}_ms`, (r) => pick(r)?.[stat] ?? null]);

/** The CSV columns: header and cell of a row. A TPOT of a one-token output is empty, not 0. */
const CSV_COLUMNS: readonly [string, (r: LatencyRow) => Cell][] = [
  ['prompt_tokens', (r) => r.prompt_tokens],
  ['output_tokens', (r) => r.output_tokens],
  ['n', (r) => r.n],
  ...summaryColumns('ttft', (r) => r.ttft),
  ...summaryColumns('tpot', (r) => r.tpot),
  ['prefill_tokens_per_s', (r) => r.prefill_tokens_per_s],
  ['decode_tokens_per_s', (r) => r.decode_tokens_per_s],
  ['decode_bytes_per_token', (r) => r.decode_bytes_per_token],
  ['decode_bandwidth_gbps', (r) => r.decode_bandwidth_gbps],
  ['decode_efficiency', (r) => r.decode_efficiency],
  ['decode_of_read_beside', (r) => r.decode_of_read_beside ?? null],
  ['gpu_prefill_ms', (r) => r.gpu_prefill_ms],
  ['gpu_decode_ms', (r) => r.gpu_decode_ms],
  ['host_overhead_ms', (r) => r.host_overhead_ms],
];

/** prompt, out, n, TTFT p50/p99, TPOT p50/p99, prefill tok/s: the cells both engines' latency tables start with. */
export function timingCells(row: TimingRow): string[] {
  return [
    String(row.prompt_tokens),
    String(row.output_tokens),
    String(row.n),
    fixedOrDash(row.ttft.p50),
    fixedOrDash(row.ttft.p99),
    fixedOrDash(row.tpot?.p50),
    fixedOrDash(row.tpot?.p99),
    row.prefill_tokens_per_s.toFixed(1),
  ];
}

/** The length-stratified table, the TPOT-vs-depth curve, the kernel breakdown and the verdicts. */
function formatLatency(l: LatencyReport): string {
  if (!l.rows) return '';
  const rows = l.rows.map((row) => [
    ...timingCells(row),
    row.prefill_gflops.toFixed(2),
    pctOrDash(row.prefill_of_matmul_roof),
    row.decode_tokens_per_s === null ? '—' : row.decode_tokens_per_s.toFixed(1),
    fixedOrDash(row.gpu_decode_ms, 3),
    fixedOrDash(row.host_overhead_ms, 3),
    row.decode_bandwidth_gbps === null ? '—' : row.decode_bandwidth_gbps.toFixed(2),
    pctOrDash(row.decode_efficiency),
  ]);
  const out = [
    `Latency by prompt length (host clock; n requests each; GPU time from ${l.gpu_clock === 'gpu-timestamp' ? 'timestamp queries' : 'the host clock'}):`,
    table(
      [
        'prompt',
        'out',
        'n',
        'TTFT p50',
        'TTFT p99',
        'TPOT p50',
        'TPOT p99',
        'prefill tok/s',
        'prefill GFLOP/s',
        'of matmul roof',
        'decode tok/s',
        'GPU ms/tok',
        'host ms/tok',
        'decode GB/s',
        'of read roof',
      ],
      rows,
      rows[0]?.map(() => true),
    ),
    'TTFT = first token − request start; TPOT = (E2EL − TTFT)/(N_out − 1) (vLLM, MLPerf); ms. p99 of fewer than 20 samples is close to the maximum.',
    'decode GB/s = bytes a decode step must read (weights + scales + KV cache + activations, from the kernels\' cost models) / TPOT; "of read roof" = that / streaming-read bandwidth.',
  ];
  const paired = l.rows.filter((r) => r.decode_of_read_beside != null);
  const reads = l.requests.flatMap((r) => (r.read_beside_gbps !== undefined ? [r.read_beside_gbps] : []));
  if (paired.length)
    out.push(
      `Decode of the read beside it (the streaming read timed just before and after each request; the median over requests of bytes/TPOT ÷ that read — load that slows both alike cancels in it): ${paired.map((r) => `prompt ${r.prompt_tokens} ${pctOrDash(r.decode_of_read_beside)}`).join(', ')}; the reads beside the requests ranged ${Math.min(...reads).toPrecision(3)}–${Math.max(...reads).toPrecision(3)} GB/s.`,
    );
  if (l.dispatches_per_step)
    out.push(`Dispatches per step (from the recorded programs): prefill ${l.dispatches_per_step.prefill}, decode ${l.dispatches_per_step.decode}.`);
  if (l.cold_start)
    out.push(
      `First request (cold): TTFT ${fixedOrDash(l.cold_start.first_ttft_ms)} ms at ${l.cold_start.first_prompt_tokens} tokens vs warm median ${fixedOrDash(l.cold_start.warm_ttft_ms)} ms.`,
    );
  if (l.depth_curve?.length) {
    out.push('', 'TPOT by context depth (median ITL of the steps at that depth; ceiling = read roof / bytes per token):');
    out.push(
      table(
        ['depth', 'TPOT ms', 'n', 'ceiling tok/s', 'observed tok/s'],
        l.depth_curve.map((d) => [String(d.depth), fixedOrDash(d.tpot_ms, 3), String(d.n), d.ceiling_tokens_per_s.toFixed(0), (1000 / d.tpot_ms).toFixed(1)]),
        [true, true, true, true, true],
      ),
    );
  }
  if (l.prefix_ttft?.length) {
    out.push(
      '',
      'TTFT with a cached prefix (the first C positions already in the KV cache, as a prefix-cache hit leaves them; the copy a hit costs not included):',
    );
    out.push(
      table(
        ['prompt', 'cached', 'n', 'TTFT p50', 'TTFT p90', 'uncached p50', 'saved ms', 'saved'],
        l.prefix_ttft.map((r) => [
          String(r.prompt_tokens),
          String(r.cached_tokens),
          String(r.n),
          fixedOrDash(r.ttft.p50),
          fixedOrDash(r.ttft.p90),
          fixedOrDash(r.uncached_ttft_p50_ms),
          fixedOrDash(r.saved_ms),
          `${(r.saved_share * 100).toFixed(0)}%`,
        ]),
        [true, true, true, true, true, true, true, true],
      ),
    );
  }
  if (l.decode_waterfall?.length) {
    out.push('', 'Where a decode token goes (ms; a sequential model: TPOT = launch floor + stream at the read roof + kernel inefficiency + host):');
    out.push(
      table(
        ['prompt', 'TPOT', 'launch', 'stream', 'kernels', 'host', 'of which readback'],
        l.decode_waterfall.map((w) => [
          `${w.prompt_tokens}${w.floors_exceed_gpu ? ' *' : ''}`,
          fixedOrDash(w.tpot_ms, 3),
          `${fixedOrDash(w.launch_ms, 3)} (${pctOrDash(w.launch_ms / w.tpot_ms)})`,
          `${fixedOrDash(w.stream_ms, 3)} (${pctOrDash(w.stream_ms / w.tpot_ms)})`,
          `${fixedOrDash(w.kernel_ms, 3)} (${pctOrDash(w.kernel_ms / w.tpot_ms)})`,
          `${fixedOrDash(w.host_ms, 3)} (${pctOrDash(w.host_ms / w.tpot_ms)})`,
          fixedOrDash(w.readback_ms, 3),
        ]),
        [true, true, true, true, true, true, true],
      ),
    );
    if (l.decode_waterfall.some((w) => w.floors_exceed_gpu))
      out.push("  * launch + stream exceed the step's GPU time: the launch probe over-reads what these dispatches cost here, so this split is not meaningful.");
  }
  if (l.kernels?.length) {
    const inflation = (phase: 'prefill' | 'decode', headline: number | null | undefined) => {
      const span = l.profile_step_ms?.[phase];
      return span && headline
        ? `${phase} step ${fixedOrDash(span, 3)} ms profiled vs ${fixedOrDash(headline, 3)} ms unprofiled (×${(span / headline).toFixed(1)})`
        : '';
    };
    const first = l.rows[0];
    out.push('', 'GPU time per step by kernel class (profile mode: one timed pass per kernel — it perturbs timing, so these are never in the numbers above):');
    out.push(`  ${[inflation('prefill', first?.gpu_prefill_ms), inflation('decode', first?.gpu_decode_ms)].filter(Boolean).join('; ')}`);
    out.push(
      table(
        ['phase', 'kernel class', 'ms/step', 'share', 'dispatches/step'],
        l.kernels.map((k) => [k.phase, k.kind, fixedOrDash(k.ms_per_step, 3), pctOrDash(k.share), k.dispatches_per_step.toFixed(0)]),
        [false, false, true, true, true],
      ),
    );
  }
  if (l.verdicts?.length) {
    out.push('', 'Roofline verdict (roofs: streaming-read bandwidth and the compute roof, the faster FMA peak):');
    for (const v of l.verdicts) {
      out.push(`  prompt ${v.prompt_tokens}: prefill — ${v.prefill.sentence}`);
      if (v.decode) out.push(`  prompt ${v.prompt_tokens}: decode — ${v.decode.sentence}`);
    }
  }
  return out.join('\n');
}

export const latencySection = {
  schema: latencySchema,
  trim: {
    'per-token': { note: PER_TOKEN_NOTE, trim: trimPerToken },
    'per-request': { note: PER_REQUEST_NOTE, trim: trimRequests },
    'derived-digits': {
      note: `The depth curve, summary, verdicts, decode waterfall and kernel breakdown were rounded to ${ROUNDED_DIGITS} significant digits for the link.`,
      trim: (l) => roundParts(l, DERIVED_LATENCY),
    },
    'row-digits': { note: `The latency rows were rounded to ${ROUNDED_DIGITS} significant digits for the link.`, trim: (l) => roundParts(l, ['rows']) },
  },
  compare: { title: 'Latency', rows: compareLatency },
  csv: { header: CSV_COLUMNS.map(([name]) => name), rows: (l) => l.rows.map((row) => CSV_COLUMNS.map(([, cell]) => cell(row))) },
  report: formatLatency,
} satisfies SectionModule<'latency'>;

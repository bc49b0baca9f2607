/** The `environment` and `ceilings` sections: where a result was measured, and the device's roofs. */
import type { AdapterDescription } from '../../gpu/capabilities.ts';
import { table } from '../format.ts';
import type { BenchResult } from '../schema.ts';
import { compareMetrics, type Metric, type SectionModule } from '../section.ts';
import { array, bool, nullable, num, object, oneOf, optional, record, SchemaError, str, type Agrees, type Infer } from '../schema-kit.ts';
import { bytes, count, gbps, gflops, work } from './units.ts';
import { roofStatisticText } from '../roof-checks.ts';

const adapter = object({
  vendor: str(512),
  architecture: str(512),
  device: str(512),
  description: str(512),
  isFallbackAdapter: bool(),
});
const adapterAgrees: Agrees<Infer<typeof adapter>, AdapterDescription> = true;
void adapterAgrees;

export const environmentSchema = object({
  runtime: oneOf(['browser', 'node'] as const),
  user_agent: str(4096).describe('navigator.userAgent in the page; "Node vX (webgpu Dawn)" in Node.'),
  adapter,
  features: array(str(128), 256),
  limits: record(num(0, Number.MAX_SAFE_INTEGER), { maxKeys: 256 }),
  disabled_features: array(str(64), 16).describe('Capability fallbacks forced by the user (e.g. ["shader-f16"]).'),
  wgsl_language_features: optional(array(str(128), 64)).describe(
    'WGSL language features the kernels use here (reported by the GPU object and not disabled), e.g. packed_4x8_integer_dot_product (absent in older results).',
  ),
  cpu_adapter: bool().describe('Heuristic: the adapter is a CPU implementation (SwiftShader, lavapipe, WARP).'),
  timestamp_quantization: optional(
    nullable(
      object({
        quantized: bool(),
        quantum_ns: num(1, 1e9).describe("The largest power of two (ns) dividing every timestamp read: 1–512 when unquantized, 65536 under Dawn's rounding."),
      }),
    ),
  ).describe('How finely GPU timestamps resolve (absent in older results; null without timestamp-query).'),
});
export type Environment = Omit<Infer<typeof environmentSchema>, 'limits'> & { limits: Record<string, number> };

export const CEILING_KEYS = [
  'read_bandwidth_gbps',
  'copy_bandwidth_gbps',
  'copy_buffer_to_buffer_gbps',
  'f32_gflops',
  'matmul_f32_gflops',
  'matmul_q8_gflops',
  'f16_gflops',
] as const;
export type CeilingKey = (typeof CEILING_KEYS)[number];

const roof = () => num(0, 1e7);

/** One measured roof with the samples behind it. */
const measurementSchema = object({
  value: roof().describe('The roof: the statistic of `samples` that `statistic` names (the median where it is absent, in older results).'),
  statistic: optional(oneOf(['best-median-250ms', 'best-median-of-5', 'p90', 'median'] as const)).describe(
    "Which statistic `value` is: 'best-median-250ms', the highest median of consecutive samples lasting at least 250 ms (at least 5; the median of all where they last less), the rate the device sustained at its best; 'best-median-of-5' (older results), the highest median of 5 consecutive samples; 'p90' (older), the samples' upper decile (numpy linear); absent in the oldest, whose value is the median.",
  ),
  median: optional(roof()).describe('Median of `samples` (absent in older results, where it is `value`).'),
  spread: optional(num(0, 1e7)).describe('(max − min) / median of `samples`; over 0.25 is flagged in `consistency.warnings` (absent in older results).'),
  unit: oneOf(['GB/s', 'GFLOP/s'] as const),
  min: roof(),
  max: roof(),
  samples: array(roof(), 10_000).describe('Per-repetition values in `unit` (a shared link may keep only a few; `n` stays the count measured).'),
  n: count().describe('Repetitions measured.'),
  clock: oneOf(['gpu-timestamp', 'host'] as const),
  work_per_rep: work().describe('Bytes moved (read + written) or FLOPs done per repetition.'),
  shape: str(256).describe('The kernel shape chosen for this device (e.g. "64 workgroups × 256").'),
  verified: bool().describe('What the kernel computed was checked against the CPU.'),
});
export type CeilingMeasurement = Infer<typeof measurementSchema>;

/** One launch figure (src/measure/launch.ts): µs per dispatch, pass or round trip. */
const launchMeasurementSchema = object({
  value: num(0, 1e7).describe('p10 of the repetitions, µs: a cost’s best sustained value.'),
  median: optional(num(0, 1e7)).describe('Median of the repetitions, µs.'),
  min: num(0, 1e7),
  max: num(0, 1e7),
  n: count().describe('Repetitions measured.'),
  clock: oneOf(['gpu-timestamp', 'host'] as const),
  lengths: array(count(), 4).describe('The chain lengths a slope is taken between (one for the round trip).'),
});

/** The launch roof: the fixed cost of a dispatch, a pass and a submit-and-read round trip (docs/METRICS.md § Launch roof). */
export const launchSchema = object({
  dispatch_us: num(0, 1e7).describe('A dependent dispatch inside one compute pass: slope over two chain lengths, µs.'),
  pass_us: num(0, 1e7).describe('The same dispatch in a compute pass of its own: slope over two pass counts, host clock, µs.'),
  roundtrip_us: num(0, 1e7).describe('One submission of one dispatch and a 4-byte readback (copy, map, read), host clock, µs.'),
  measurements: object({ dispatch_us: launchMeasurementSchema, pass_us: launchMeasurementSchema, roundtrip_us: launchMeasurementSchema }),
});
export type LaunchRoofs = Infer<typeof launchSchema>;

export const ceilingsSchema = object(
  {
    read_bandwidth_gbps: gbps(),
    copy_bandwidth_gbps: gbps(),
    copy_buffer_to_buffer_gbps: gbps(),
    f32_gflops: gflops(),
    matmul_f32_gflops: gflops(),
    f16_gflops: nullable(gflops()).describe('null when the device has no shader-f16.'),
    matmul_q8_gflops: optional(nullable(gflops())).describe(
      "The engine's own prefill kernel on an n×n q4_0 weight where it runs with 8-bit activations (packed_4x8_integer_dot_product, CPU adapters); null elsewhere; absent in older results.",
    ),
    working_set_bytes: bytes(),
    launch: optional(launchSchema).describe('The launch roof (absent in older results).'),
    drift: optional(
      object({
        read_after_gbps: gbps().describe('The streaming read re-measured after the model phases.'),
        ratio: num(0, 1e6).describe('read_after_gbps ÷ the read roof measured first (read_bandwidth_gbps, or raised_from_gbps where the roof was raised).'),
        bound: num(0, 1).describe('The flagged distance from 1 (0.15).'),
        warning: nullable(str(1000)).describe('A sentence when the ratio leaves 1 ± bound.'),
        raised_from_gbps: optional(gbps()).describe(
          'Present when the re-measured read exceeded the first by more than the bound: the first reading. read_bandwidth_gbps (and its measurement) is then the re-measured one, and every figure that divides by it was computed with it.',
        ),
      }),
    ).describe('The read roof measured again at the end of a latency sweep (absent in older results and other modes).'),
    consistency: optional(
      object({
        read_of_copy_read_half: num(0, 1e7).describe("Streaming read ÷ the copy kernel's read half (its GB/s over 2); below 1 is flagged."),
        read_of_b2b_read_half: num(0, 1e7).describe(
          "Streaming read ÷ copyBufferToBuffer's read half; below 0.5 is flagged on GPUs, below 0.1 on CPU adapters (whose copyBufferToBuffer is a host memcpy).",
        ),
        warnings: array(str(1000), 64).describe(
          'One sentence per failed check (roofs that disagree, samples that span over 25% of their median); empty when none failed.',
        ),
      }),
    ).describe('Checks across the roofs (src/measure/roof-checks.ts); absent in older results.'),
    source: optional(
      object({
        kind: oneOf(['measured', 'cached', 'file'] as const),
        measured_at: str(64).describe('When these roofs were measured (ISO 8601).'),
        path: optional(str(4096)).describe('The cache or result file they were read from.'),
      }),
    ).describe('Whether the roofs were measured by this run or reused (the per-device cache, --roofs FILE); absent in older results.'),
    measurements: object({
      read_bandwidth_gbps: measurementSchema,
      copy_bandwidth_gbps: measurementSchema,
      copy_buffer_to_buffer_gbps: measurementSchema,
      f32_gflops: measurementSchema,
      matmul_f32_gflops: measurementSchema,
      f16_gflops: nullable(measurementSchema),
      matmul_q8_gflops: optional(nullable(measurementSchema)),
    }),
  },
  {
    refine: (c, path) => {
      const measurements = c.measurements as Record<string, unknown>;
      for (const key of ['f16_gflops', 'matmul_q8_gflops'] as const) {
        // Absent (an older result) reads as null.
        const valueMissing = (c[key] ?? null) === null;
        const measurementMissing = (measurements[key] ?? null) === null;
        if (valueMissing && !measurementMissing) throw new SchemaError(`${path}.measurements.${key}`, 'must be null when the value is null');
        if (!valueMissing && measurementMissing) throw new SchemaError(`${path}.measurements.${key}`, 'must be present when the value is');
      }
    },
  },
).describe('GB/s are 10⁹ bytes per second, counting bytes read + bytes written.');
export type Ceilings = Infer<typeof ceilingsSchema>;

/** The two prefill GEMM roofs: f32 weights (every device) and 8-bit activations (null or absent where not run). */
export type PrefillGemmKey = 'matmul_f32_gflops' | 'matmul_q8_gflops';

/**
 * The roof prefill meets in practice: the larger of the engine's two prefill GEMM roofs (f32 weights,
 * and q4_0 with 8-bit activations where that kernel runs), since a model's prefill may run either and
 * a roof that its prefill outruns is no roof. Absent (older results) counts as not measured.
 */
export function prefillGemmRoof(c: { matmul_f32_gflops: number; matmul_q8_gflops?: number | null }): { key: PrefillGemmKey; gflops: number } {
  const q8 = c.matmul_q8_gflops ?? null;
  return q8 !== null && q8 > c.matmul_f32_gflops ? { key: 'matmul_q8_gflops', gflops: q8 } : { key: 'matmul_f32_gflops', gflops: c.matmul_f32_gflops };
}

/** The two FMA peaks a compute roof can be. */
export type ComputeRoofKey = 'f32_gflops' | 'f16_gflops';

export interface FmaPeak {
  key: ComputeRoofKey;
  name: 'f32 FMA peak' | 'f16 FMA peak';
  gflops: number;
}

/**
 * The compute roof: the faster of the device's FMA peaks — f16 where shader-f16 exists and its
 * chains ran faster than f32's (GPUs, where the prefill GEMM multiplies f16 tiles with f16
 * products), else f32 (CPU adapters, whose f16 is emulated and slower; devices without shader-f16).
 * A roof below a rate the device reaches inflates every share of it, so it is the device's best,
 * like the read roof. Absent (older results) counts as not measured. `other` is the slower peak
 * (null without shader-f16).
 */
export function computeRoof(c: { f32_gflops: number; f16_gflops?: number | null }): FmaPeak & { other: FmaPeak | null } {
  const f32: FmaPeak = { key: 'f32_gflops', name: 'f32 FMA peak', gflops: c.f32_gflops };
  const f16: FmaPeak | null = c.f16_gflops != null ? { key: 'f16_gflops', name: 'f16 FMA peak', gflops: c.f16_gflops } : null;
  return f16 !== null && f16.gflops > f32.gflops ? { ...f16, other: f32 } : { ...f32, other: f16 };
}

/** The environment's lines of the text report (it is no section: every result has one). */
export function formatEnvironment(r: BenchResult): string {
  const e = r.environment;
  const a = e.adapter;
  const name = [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ') || 'unknown adapter';
  return [
    `Adapter: ${name}${a.isFallbackAdapter ? ' (fallback adapter)' : ''}${e.cpu_adapter ? ' — a CPU implementation: numbers describe this CPU, not a GPU' : ''}`,
    `Runtime: ${e.runtime} — ${e.user_agent}`,
    `Features: ${[...e.features, ...(e.wgsl_language_features ?? [])].join(', ') || 'none'}${e.disabled_features.length ? ` (disabled: ${e.disabled_features.join(', ')})` : ''}`,
  ].join('\n');
}

/** Ceiling samples kept per roof when they are trimmed for a link: min, quartiles, max. */
export const CEILING_SAMPLES_KEPT = 5;

/** `k` order statistics of `xs` spread from min to max. */
function spread(xs: readonly number[], k: number): number[] {
  const sorted = [...xs].sort((a, b) => a - b);
  return Array.from({ length: k }, (_, i) => sorted[Math.round((i * (sorted.length - 1)) / (k - 1))]);
}

/** Each roof's per-repetition samples, down to a few (value, min and max stay those of all). */
function trimCeilingSamples(c: Ceilings): Ceilings | null {
  if (!Object.values(c.measurements).some((m) => m && m.samples.length > CEILING_SAMPLES_KEPT)) return null;
  const trimmed = (m: CeilingMeasurement | null) =>
    m && (m.samples.length > CEILING_SAMPLES_KEPT ? { ...m, samples: spread(m.samples, CEILING_SAMPLES_KEPT) } : m);
  const measurements = Object.fromEntries(Object.entries(c.measurements).map(([k, m]) => [k, trimmed(m)])) as Ceilings['measurements'];
  return { ...c, measurements };
}

const CEILING_METRICS: readonly Metric<Ceilings>[] = (
  [
    ['read_bandwidth_gbps', 'streaming read bandwidth', 'GB/s'],
    ['copy_bandwidth_gbps', 'copy kernel bandwidth', 'GB/s'],
    ['copy_buffer_to_buffer_gbps', 'copyBufferToBuffer bandwidth', 'GB/s'],
    ['f32_gflops', 'f32 FMA throughput', 'GFLOP/s'],
    ['f16_gflops', 'f16 FMA throughput', 'GFLOP/s'],
    ['matmul_f32_gflops', 'prefill GEMM (f32 weights) throughput', 'GFLOP/s'],
    ['matmul_q8_gflops', 'prefill GEMM (8-bit activations) throughput', 'GFLOP/s'],
  ] as const satisfies readonly (readonly [CeilingKey, string, string])[]
).map(([key, metric, unit]) => ({ key, metric, unit, direction: 'higher-is-better', value: (c: Ceilings) => c[key] }));

export const CEILING_LABELS: Record<CeilingKey, string> = {
  read_bandwidth_gbps: 'streaming read',
  copy_bandwidth_gbps: 'read+write copy kernel',
  copy_buffer_to_buffer_gbps: 'copyBufferToBuffer',
  f32_gflops: 'f32 FMA',
  f16_gflops: 'f16 FMA',
  matmul_f32_gflops: 'prefill GEMM (f32)',
  matmul_q8_gflops: 'prefill GEMM (8-bit act.)',
};

/** Why a nullable roof was not measured, where "not supported" would not say it. */
export const NOT_RUN: Partial<Record<CeilingKey, string>> = {
  matmul_q8_gflops: "this device's Q4_0 prefill does not run with 8-bit activations",
};

function fmt(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** The roofs as a table, with the working set, the kernels against copyBufferToBuffer, the ridge point and the checks that failed. */
export function formatCeilings(c: Ceilings): string {
  const rows = (Object.keys(CEILING_LABELS) as CeilingKey[]).map((key) => {
    const m = c.measurements[key];
    if (m === undefined) return [CEILING_LABELS[key], 'n/a', '', '', '', '', 'not measured (an older result)'];
    if (!m) return [CEILING_LABELS[key], 'n/a', '', '', '', '', NOT_RUN[key] ?? 'not supported on this device'];
    const median = m.median ?? m.value;
    return [CEILING_LABELS[key], `${fmt(m.value)} ${m.unit}`, fmt(median), `${fmt(m.min)}–${fmt(m.max)}`, String(m.n), m.clock, m.shape];
  });
  const ratio = (k: CeilingKey) => (c[k] != null ? (c[k]! / c.copy_buffer_to_buffer_gbps).toFixed(2) : 'n/a');
  const gemm = prefillGemmRoof(c);
  const compute = computeRoof(c);
  const statistic = roofStatisticText(c.measurements.read_bandwidth_gbps.statistic);
  const warnings = c.consistency?.warnings ?? [];
  return [
    table(['roof', 'value', 'median', 'min–max', 'n', 'clock', 'shape'], rows, [false, true, true, true, true]),
    '',
    `Each roof (value) is ${statistic}. Working set ${(c.working_set_bytes / 2 ** 20).toFixed(0)} MiB; GB/s = 1e9 bytes/s counting bytes read + written.`,
    `Against copyBufferToBuffer: streaming read ×${ratio('read_bandwidth_gbps')}, copy kernel ×${ratio('copy_bandwidth_gbps')}.`,
    `Compute roof: the ${compute.name}${compute.other ? ' (the faster of the two FMA peaks)' : ''}. Ridge point (compute roof / read roof): ${(compute.gflops / c.read_bandwidth_gbps).toFixed(2)} FLOP/byte; the ${CEILING_LABELS[gemm.key]} reaches ${((gemm.gflops / compute.gflops) * 100).toFixed(0)}% of that peak.`,
    ...warnings.map((w) => `Warning: ${w}`),
    ...(c.drift
      ? [
          c.drift.raised_from_gbps !== undefined
            ? `Read roof after the model phases: ${fmt(c.drift.read_after_gbps)} GB/s, ×${c.drift.ratio.toFixed(2)} the ${fmt(c.drift.raised_from_gbps)} GB/s measured first: the roof in use. Warning: ${c.drift.warning}`
            : `Read roof after the model phases: ${fmt(c.drift.read_after_gbps)} GB/s (×${c.drift.ratio.toFixed(2)} of the roof in use)${c.drift.warning ? `. Warning: ${c.drift.warning}` : `, within ±${c.drift.bound * 100}%.`}`,
        ]
      : []),
    ...(c.launch ? ['', formatLaunch(c.launch)] : []),
    ...(c.source && c.source.kind !== 'measured'
      ? [
          `These roofs were reused (${c.source.kind === 'cached' ? 'per-device cache' : 'a saved result'}${c.source.path ? ` ${c.source.path}` : ''}), measured ${c.source.measured_at}.`,
        ]
      : []),
  ].join('\n');
}

/** The launch roof as a table: per dispatch, per pass, per round trip. */
export function formatLaunch(l: LaunchRoofs): string {
  const rows = (
    [
      ['dependent dispatch (one pass)', l.measurements.dispatch_us],
      ['dispatch in its own pass', l.measurements.pass_us],
      ['submit + 4-byte readback', l.measurements.roundtrip_us],
    ] as const
  ).map(([what, m]) => [
    what,
    `${fmt(m.value)} µs`,
    m.median === undefined ? '' : `${fmt(m.median)} µs`,
    `${fmt(m.min)}–${fmt(m.max)}`,
    String(m.n),
    m.clock,
    m.lengths.join(' vs '),
  ]);
  return [
    table(['launch roof', 'p10', 'median', 'min–max', 'n', 'clock', 'chain lengths'], rows, [false, true, true, true, true]),
    `A step of N dependent dispatches cannot take less than N × ${fmt(l.dispatch_us)} µs here (the launch floor).`,
  ].join('\n');
}

export const ceilingsSection = {
  schema: ceilingsSchema,
  trim: {
    'per-repetition': {
      note: `Ceiling samples were cut to ${CEILING_SAMPLES_KEPT} per roof (min to max) for the link; each roof's value, median, min and max are from all of them.`,
      trim: trimCeilingSamples,
    },
  },
  compare: { title: 'Roofs', rows: (a, b) => compareMetrics(CEILING_METRICS, a, b) },
  csv: null,
  report: formatCeilings,
} satisfies SectionModule<'ceilings'>;

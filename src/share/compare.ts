/**
 * Two results side by side (two GPUs, two browsers, two models, before/after): one row per metric
 * both have, with the ratio b / a and which side is better — higher-is-better or lower-is-better
 * stated per metric. Latency rows are matched by prompt length. A comparison link (`#c=…`)
 * carries both results, each trimmed to half the link budget.
 */
import type { LatencyRow } from '../measure/latency-summary.ts';
import type { BenchResult, CeilingKey, Ceilings } from '../measure/schema.ts';
import { expectObject } from '../measure/validate.ts';
import { isTokenscopeError, TokenscopeError } from '../errors.ts';
import type { ServeResult } from '../serve/metrics.ts';
import { checkedLength, decodeFragment, encodeFragment } from './codec.ts';
import { LINK_BUDGET_CHARS, shareable } from './permalink.ts';
import { validateResult } from '../measure/validate.ts';

export type Direction = 'higher-is-better' | 'lower-is-better';
export type Better = 'a' | 'b' | 'same';

export interface ComparisonRow {
  section: 'ceilings' | 'latency' | 'serve';
  /** Stable key: the result field the value comes from (`read_bandwidth_gbps`, `median_ttft_ms`, …). */
  key: string;
  /** What it is, in words ("median TTFT"). */
  metric: string;
  unit: string;
  direction: Direction;
  /** Latency rows: the prompt length both results were measured at; otherwise null. */
  prompt_tokens: number | null;
  a: number;
  b: number;
  /** b / a; null when a is 0 and b is not. */
  ratio: number | null;
  better: Better;
}

/** Values within 1% of each other (of the larger) read as the same. */
export const SAME_WITHIN = 0.01;

interface Metric<T> {
  key: string;
  metric: string;
  unit: string;
  direction: Direction;
  value: (x: T) => number | null | undefined;
}

const higher = 'higher-is-better';
const lower = 'lower-is-better';

const CEILING_METRICS: readonly Metric<Ceilings>[] = (
  [
    ['read_bandwidth_gbps', 'streaming read bandwidth', 'GB/s'],
    ['copy_bandwidth_gbps', 'copy kernel bandwidth', 'GB/s'],
    ['copy_buffer_to_buffer_gbps', 'copyBufferToBuffer bandwidth', 'GB/s'],
    ['f32_gflops', 'f32 FMA throughput', 'GFLOP/s'],
    ['f16_gflops', 'f16 FMA throughput', 'GFLOP/s'],
    ['matmul_f32_gflops', 'prefill GEMM (f32 weights) throughput', 'GFLOP/s'],
  ] as const satisfies readonly (readonly [CeilingKey, string, string])[]
).map(([key, metric, unit]) => ({ key, metric, unit, direction: higher, value: (c: Ceilings) => c[key] }));

const LATENCY_METRICS: readonly Metric<LatencyRow>[] = [
  { key: 'median_ttft_ms', metric: 'median TTFT', unit: 'ms', direction: lower, value: (r) => r.ttft.p50 },
  { key: 'p99_ttft_ms', metric: 'p99 TTFT', unit: 'ms', direction: lower, value: (r) => r.ttft.p99 },
  { key: 'median_tpot_ms', metric: 'median TPOT', unit: 'ms', direction: lower, value: (r) => r.tpot?.p50 },
  { key: 'p99_tpot_ms', metric: 'p99 TPOT', unit: 'ms', direction: lower, value: (r) => r.tpot?.p99 },
  { key: 'prefill_tokens_per_s', metric: 'prefill throughput', unit: 'tok/s', direction: higher, value: (r) => r.prefill_tokens_per_s },
  { key: 'decode_tokens_per_s', metric: 'decode throughput', unit: 'tok/s', direction: higher, value: (r) => r.decode_tokens_per_s },
  { key: 'decode_efficiency', metric: 'decode efficiency', unit: 'of ceiling', direction: higher, value: (r) => r.decode_efficiency },
];

type ServeKey = keyof ServeResult;
const serveMetric = (key: ServeKey, metric: string, unit: string, direction: Direction): Metric<Partial<ServeResult>> => ({
  key,
  metric,
  unit,
  direction,
  value: (s) => s[key] as number | null | undefined,
});

const SERVE_METRICS: readonly Metric<Partial<ServeResult>>[] = [
  serveMetric('request_throughput', 'request throughput', 'req/s', higher),
  serveMetric('request_goodput', 'request goodput', 'req/s', higher),
  serveMetric('output_throughput', 'output token throughput', 'tok/s', higher),
  serveMetric('total_token_throughput', 'total token throughput', 'tok/s', higher),
  ...(['ttft', 'tpot', 'itl', 'e2el'] as const).flatMap((m) => [
    serveMetric(`median_${m}_ms`, `median ${m.toUpperCase()}`, 'ms', lower),
    serveMetric(`p99_${m}_ms`, `p99 ${m.toUpperCase()}`, 'ms', lower),
  ]),
];

function better(a: number, b: number, direction: Direction): Better {
  if (Math.abs(b - a) <= SAME_WITHIN * Math.max(Math.abs(a), Math.abs(b))) return 'same';
  return b > a === (direction === higher) ? 'b' : 'a';
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

function rows<T>(section: ComparisonRow['section'], metrics: readonly Metric<T>[], a: T, b: T, promptTokens: number | null = null): ComparisonRow[] {
  return metrics.flatMap(({ value, ...m }) => {
    const va = value(a);
    const vb = value(b);
    if (!isNumber(va) || !isNumber(vb)) return [];
    const ratio = va === 0 ? (vb === 0 ? 1 : null) : vb / va;
    return [{ section, ...m, prompt_tokens: promptTokens, a: va, b: vb, ratio, better: better(va, vb, m.direction) }];
  });
}

/**
 * Every metric both results have: the ceilings, the latency rows at each prompt length both
 * measured (in a's order), and the serving summary.
 */
export function compareResults(a: BenchResult, b: BenchResult): ComparisonRow[] {
  const out: ComparisonRow[] = [];
  if (a.ceilings && b.ceilings) out.push(...rows('ceilings', CEILING_METRICS, a.ceilings, b.ceilings));
  const latencyA = a.latency;
  const latencyB = b.latency;
  for (const rowA of latencyA?.rows ?? []) {
    const rowB = latencyB?.rows.find((r) => r.prompt_tokens === rowA.prompt_tokens);
    if (rowB) out.push(...rows('latency', LATENCY_METRICS, rowA, rowB, rowA.prompt_tokens));
  }
  const serveA = serveResultOf(a);
  const serveB = serveResultOf(b);
  if (serveA && serveB) out.push(...rows('serve', SERVE_METRICS, serveA, serveB));
  return out;
}

/** vLLM's result inside a serving section (`serve.run.result`), or a bare one (imports). */
function serveResultOf(r: BenchResult): Partial<ServeResult> | undefined {
  const serve = r.serve;
  return serve?.run?.result ?? (serve?.run === undefined ? serve : undefined);
}

export interface Comparison {
  a: BenchResult;
  b: BenchResult;
}

/** The fragment `#c=…` carrying both results, each trimmed to half of `budgetChars`. */
export async function encodeComparison(a: BenchResult, b: BenchResult, budgetChars = LINK_BUDGET_CHARS): Promise<string> {
  const [sharedA, sharedB] = await Promise.all([shareable(a, budgetChars / 2), shareable(b, budgetChars / 2)]);
  return checkedLength(await encodeFragment('c', { a: sharedA, b: sharedB }));
}

function validateSide(doc: unknown, side: string): BenchResult {
  try {
    return validateResult(doc);
  } catch (e) {
    if (!isTokenscopeError(e)) throw e;
    throw new TokenscopeError(e.code, `In the ${side} result of the comparison: ${e.message}`, e.hint, { cause: e });
  }
}

/** The two validated results a `#c=…` fragment carries; every failure is a `bad-input` TokenscopeError. */
export async function decodeComparison(fragment: string): Promise<Comparison> {
  const doc = expectObject(await decodeFragment('c', fragment), 'comparison');
  return { a: validateSide(doc.a, 'first'), b: validateSide(doc.b, 'second') };
}

/**
 * Permalinks: a whole report in the URL fragment (`#r=…`, see codec.ts), so a link renders the
 * full report with no server. A link is kept under a budget by trimming, in a fixed order, the
 * bulky raw data the report's tables and charts do not draw from; the rows, depth curve, summary,
 * verdicts, kernel breakdown and ceiling values are kept, and only as the last steps rounded to
 * more digits than any table shows. The trimmed result says what went in its `notes` and
 * `trimmed` flag.
 */
import type { LatencySection } from '../measure/latency.ts';
import type { BenchResult, CeilingMeasurement, Ceilings, LatencyReport } from '../measure/schema.ts';
import type { ServeResult } from '../serve/metrics.ts';
import type { ServeRun } from '../serve/run.ts';
import { checkedLength, decodeFragment, encodeFragment } from './codec.ts';
import { validateResult } from '../measure/validate.ts';

/** Default size of a shared link's fragment, characters: short enough for chat apps and issue trackers. */
export const LINK_BUDGET_CHARS = 8000;
/** Ceiling samples kept per roof when they are trimmed: min, quartiles, max. */
export const CEILING_SAMPLES_KEPT = 5;

/** One trimming step: the trimmed copy, or null when there is nothing of its kind to trim. */
interface TrimStep {
  note: string;
  trim: (r: BenchResult) => BenchResult | null;
}

const latencyOf = (r: BenchResult) => r.latency;
/** A serving section as the job writes it (vLLM's result in `run.result`), or vLLM's flat result. */
const serveSection = (r: BenchResult) => r.serve;
const serveOf = (r: BenchResult) => {
  const s = serveSection(r);
  return s?.run?.result ?? s;
};

/** `r` with vLLM's serving result replaced, and in a ServeSection the run's records too. */
function withServe(r: BenchResult, result: Partial<ServeResult>, run: Partial<ServeRun> = {}): BenchResult {
  const s = serveSection(r)!;
  // The trimmed copy keeps the shape it had: a job's section with fewer records, or a bare result.
  const serve = s.run?.result ? { ...s, run: { ...s.run, ...run, result } } : result;
  return { ...r, serve: serve as BenchResult['serve'] };
}

function withLatency(r: BenchResult, latency: LatencyReport): BenchResult {
  return { ...r, latency: { ...latency, trimmed: true } };
}

/**
 * Raw per-token timings: each request's token times and per-step GPU times, vLLM's per-request
 * ITLs and the serving run's per-step records.
 */
function trimPerToken(r: BenchResult): BenchResult | null {
  const latency = latencyOf(r);
  const serve = serveOf(r);
  const latencyHas = latency?.requests.some((q) => q.token_ms.length > 0 || (q.gpu_decode_ms?.length ?? 0) > 0) ?? false;
  const steps = serveSection(r)?.run?.steps;
  const serveHas = (serve?.itls?.some((x) => x.length > 0) ?? false) || (steps?.length ?? 0) > 0;
  if (!latencyHas && !serveHas) return null;
  let out = r;
  if (latency && latencyHas) {
    const requests = latency.requests.map((q) => ({ ...q, token_ms: [], gpu_decode_ms: q.gpu_decode_ms === null ? null : [] }));
    out = withLatency(out, { ...latency, requests });
  }
  if (serve && serveHas) out = withServe(out, { ...serve, ...(serve.itls && { itls: serve.itls.map(() => []) }) }, steps ? { steps: [] } : {});
  return out;
}

const SERVE_PER_REQUEST = ['input_lens', 'output_lens', 'ttfts', 'itls', 'latencies', 'errors'] as const;

/** Per-request records: the latency sweep's requests and a real prompt's ids, vLLM's per-request arrays, the serving timeline. */
function trimRequests(r: BenchResult): BenchResult | null {
  const latency = latencyOf(r);
  const serve = serveOf(r);
  // A sweep that stopped early has no settings (see validate-sections.ts).
  const latencyHas = latency !== undefined && (latency.requests.length > 0 || latency.settings?.prompt_ids !== undefined);
  const timeline = serveSection(r)?.run?.timeline;
  const serveHas = SERVE_PER_REQUEST.some((k) => (serve?.[k]?.length ?? 0) > 0) || (timeline?.length ?? 0) > 0;
  if (!latencyHas && !serveHas) return null;
  let out = r;
  if (latency && latencyHas) {
    const settings = latency.settings && (({ prompt_ids: _ids, ...rest }) => rest)(latency.settings);
    out = withLatency(out, { ...latency, ...(settings && { settings }), requests: [] });
  }
  if (serve && serveHas) out = withServe(out, { ...serve, ...Object.fromEntries(SERVE_PER_REQUEST.map((k) => [k, []])) }, timeline ? { timeline: [] } : {});
  return out;
}

/** `k` order statistics of `xs` spread from min to max. */
function spread(xs: readonly number[], k: number): number[] {
  const sorted = [...xs].sort((a, b) => a - b);
  return Array.from({ length: k }, (_, i) => sorted[Math.round((i * (sorted.length - 1)) / (k - 1))]);
}

/** Each roof's per-repetition samples, down to a few (value, min and max stay those of all). */
function trimCeilingSamples(r: BenchResult): BenchResult | null {
  const c = r.ceilings;
  if (!c || !Object.values(c.measurements).some((m) => m && m.samples.length > CEILING_SAMPLES_KEPT)) return null;
  const trimmed = (m: CeilingMeasurement | null) =>
    m && (m.samples.length > CEILING_SAMPLES_KEPT ? { ...m, samples: spread(m.samples, CEILING_SAMPLES_KEPT) } : m);
  const measurements = Object.fromEntries(Object.entries(c.measurements).map(([k, m]) => [k, trimmed(m)])) as Ceilings['measurements'];
  return { ...r, ceilings: { ...c, measurements } };
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

/** The named parts of the latency section rounded to ROUNDED_DIGITS significant digits. */
function roundLatency(r: BenchResult, keys: readonly (keyof LatencySection)[]): BenchResult | null {
  const latency = latencyOf(r);
  if (!latency) return null;
  const { value, changed } = rounded(Object.fromEntries(keys.filter((k) => latency[k] !== undefined).map((k) => [k, latency[k]])));
  return changed ? withLatency(r, { ...latency, ...value }) : null;
}

/** Everything the tables and charts read besides the length rows. */
const DERIVED_LATENCY: readonly (keyof LatencySection)[] = ['cold_start', 'depth_curve', 'summary', 'verdicts', 'kernels', 'profile_step_ms'];

/** The trimming order: cheapest loss first. */
const TRIM_STEPS: readonly TrimStep[] = [
  { note: 'Raw per-token samples were trimmed for the link; the JSON export has them all.', trim: trimPerToken },
  {
    note: 'Per-request records were left out of the link; the tables and charts are computed from all of them, and the JSON export has them.',
    trim: trimRequests,
  },
  {
    note: `Ceiling samples were cut to ${CEILING_SAMPLES_KEPT} per roof (min to max) for the link; each roof's median, min and max are from all of them.`,
    trim: trimCeilingSamples,
  },
  {
    note: `The depth curve, summary, verdicts and kernel breakdown were rounded to ${ROUNDED_DIGITS} significant digits for the link.`,
    trim: (r) => roundLatency(r, DERIVED_LATENCY),
  },
  { note: `The latency rows were rounded to ${ROUNDED_DIGITS} significant digits for the link.`, trim: (r) => roundLatency(r, ['rows']) },
];

interface Fitted {
  result: BenchResult;
  fragment: string;
}

/**
 * The result as it goes into a link: untouched when its fragment fits `budgetChars`, else trimmed
 * step by step until it does. Past every step it may still be over the budget (many prompt
 * lengths); it is then shared as is, unless it is over what decoding accepts.
 */
async function fit(result: BenchResult, budgetChars: number): Promise<Fitted> {
  let current = result;
  let fragment = await encodeFragment('r', current);
  for (const step of TRIM_STEPS) {
    if (fragment.length <= budgetChars) break;
    const next = step.trim(current);
    if (next === null) continue;
    current = { ...next, trimmed: true, notes: [...(next.notes ?? []), step.note] };
    fragment = await encodeFragment('r', current);
  }
  return { result: current, fragment: checkedLength(fragment) };
}

/** The result trimmed (in TRIM_STEPS order) until its link fits `budgetChars`. */
export async function shareable(result: BenchResult, budgetChars = LINK_BUDGET_CHARS): Promise<BenchResult> {
  return (await fit(result, budgetChars)).result;
}

/** The URL fragment `#r=…` of the result, trimmed to `budgetChars` (see {@link shareable}). */
export async function encodeReport(result: BenchResult, budgetChars = LINK_BUDGET_CHARS): Promise<string> {
  return (await fit(result, budgetChars)).fragment;
}

/** The validated result a `#r=…` fragment carries; every failure is a `bad-input` TokenscopeError. */
export async function decodeReport(fragment: string): Promise<BenchResult> {
  return validateResult(await decodeFragment('r', fragment));
}

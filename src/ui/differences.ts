/**
 * What differs between two reports (model, quantization, mode, settings, device, browser) and
 * whether a metric's difference is larger than the runs' own spread. Pure, unit-tested.
 */
import type { LatencySection } from '../measure/latency.ts';
import type { BenchResult, CeilingKey } from '../measure/schema.ts';
import type { ComparisonRow } from '../share/compare.ts';

export interface Difference {
  what: 'model' | 'quantization' | 'mode' | 'settings' | 'device' | 'browser';
  a: string;
  b: string;
}

/** Which measurements a report holds, in words ("roofs + latency sweep"). */
export function modeOf(r: BenchResult): string {
  const parts = [
    r.ceilings ? 'roofs' : '',
    r.latency ? 'latency sweep' : '',
    r.llama_bench ? 'llama-bench' : '',
    r.serve ? 'serving' : '',
    r.webllm ? 'WebLLM' : '',
  ].filter(Boolean);
  return parts.join(' + ') || 'nothing measured';
}

function settingsOf(r: BenchResult): string {
  const l = (r.latency as Partial<LatencySection> | undefined)?.settings;
  const parts: string[] = [];
  if (l) parts.push(`prompts ${l.prompt_lengths.join(', ')}; ${l.output_tokens} output tokens; ${l.reps} reps`);
  const s = (r.serve as { settings?: { requests?: number; max_batch?: number; rate?: number | null } } | undefined)?.settings;
  if (s) parts.push(`${s.requests ?? '?'} requests, batch ≤ ${s.max_batch ?? '?'}`);
  const ws = r.ceilings?.working_set_bytes;
  if (ws) parts.push(`roofs over ${Math.round(ws / 2 ** 20)} MiB`);
  return parts.join('; ') || '—';
}

/** "Chrome 131" from a user agent (or its first 40 characters when no known browser is named). */
export function browserOf(userAgent: string): string {
  const known: [RegExp, string][] = [
    [/Edg\/(\d+)/, 'Edge'],
    [/HeadlessChrome\/(\d+)/, 'Headless Chrome'],
    [/Chrome\/(\d+)/, 'Chrome'],
    [/Firefox\/(\d+)/, 'Firefox'],
    [/Version\/(\d+)[\d.]* .*Safari/, 'Safari'],
    [/^Node v(\d+)/, 'Node'],
  ];
  for (const [re, name] of known) {
    const m = re.exec(userAgent);
    if (m) return `${name} ${m[1]}`;
  }
  return userAgent.slice(0, 40) || 'unknown';
}

function deviceOf(r: BenchResult): string {
  const a = r.environment.adapter;
  return [a.vendor, a.architecture, a.description].filter(Boolean).join(' · ') || 'unknown adapter';
}

/** The fields of A and B that differ; the same list is empty. */
export function differences(a: BenchResult, b: BenchResult): Difference[] {
  const model = (r: BenchResult) => (r.model as { name?: string } | undefined)?.name ?? '—';
  const quant = (r: BenchResult) => (r.model as { quantization?: string } | undefined)?.quantization ?? '—';
  const fields: [Difference['what'], (r: BenchResult) => string][] = [
    ['model', model],
    ['quantization', quant],
    ['mode', modeOf],
    ['settings', settingsOf],
    ['device', deviceOf],
    ['browser', (r) => browserOf(r.environment.user_agent)],
  ];
  return fields.flatMap(([what, f]) => (f(a) === f(b) ? [] : [{ what, a: f(a), b: f(b) }]));
}

/** A run's own spread for one metric: the range its repetitions covered. */
export interface Spread {
  lo: number;
  hi: number;
}

/**
 * The spread behind a comparison row's value in one result, or null when the result does not
 * keep one: a roof's min–max over its repetitions; a latency row's min–max of TTFT or TPOT
 * (rates are prompt tokens or 1 over those).
 */
export function spreadOf(r: BenchResult, row: ComparisonRow): Spread | null {
  if (row.section === 'ceilings') {
    const m = r.ceilings?.measurements?.[row.key as CeilingKey];
    return m ? { lo: m.min, hi: m.max } : null;
  }
  if (row.section !== 'latency') return null;
  const lr = (r.latency as Partial<LatencySection> | undefined)?.rows?.find((x) => x.prompt_tokens === row.prompt_tokens);
  if (!lr) return null;
  const range = (s: { min: number; max: number } | null | undefined) => (s ? { lo: s.min, hi: s.max } : null);
  const inverse = (s: Spread | null, k: number) => (s && s.lo > 0 ? { lo: k / s.hi, hi: k / s.lo } : null);
  switch (row.key) {
    case 'median_ttft_ms':
    case 'p99_ttft_ms':
      return range(lr.ttft);
    case 'median_tpot_ms':
    case 'p99_tpot_ms':
      return range(lr.tpot);
    case 'prefill_tokens_per_s':
      return inverse(range(lr.ttft), 1000 * lr.prompt_tokens);
    case 'decode_tokens_per_s':
      return inverse(range(lr.tpot), 1000);
    default:
      return null;
  }
}

export type Call = 'a' | 'b' | 'same' | 'within noise';

/**
 * Who is better on a row, or "within noise" when the two runs' own ranges overlap (each run's
 * repetitions already disagree by as much as the two runs do), or "same" within 1%.
 */
export function noiseCall(row: ComparisonRow, a: Spread | null, b: Spread | null): Call {
  if (row.better === 'same') return 'same';
  if (a && b && a.lo <= b.hi && b.lo <= a.hi) return 'within noise';
  return row.better;
}

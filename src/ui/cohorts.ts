/**
 * Many results at once, grouped as webgpu-bench's leaderboard and webai-bench's cohorts group
 * them: by device (the adapter), model, format and runtime (browser or Node, our engine or
 * WebLLM). A result gives one run per engine it measured (its latency sweep, its WebLLM rows).
 * Per run: decode tok/s, TPOT p50 and % of the read roof at its shortest prompt (decode speed
 * varies little with the prompt), TTFT at the prompt length most runs share. Per group: n, the
 * median of each, and the spread of decode tok/s across runs (p10–p90 where n ≥ 5, min–max
 * below that, as such). Pure, unit-tested.
 */
import type { BenchResult } from '../measure/schema.ts';
import { percentile } from '../measure/stats.ts';

/** The smallest group whose spread is read as p10–p90 (below it: min–max). */
export const PERCENTILE_SPREAD_MIN_N = 5;

export type Engine = 'tokenscope' | 'WebLLM';

interface TimingRow {
  prompt_tokens: number;
  ttft: { p50: number };
  tpot: { p50: number } | null;
  decode_tokens_per_s: number | null;
  decode_efficiency?: number | null;
}

/** One engine's measurements in one result. */
export interface Run {
  /** Index of the result in the list given. */
  source: number;
  label: string;
  created_at: string;
  device: string;
  model: string;
  format: string;
  runtime: string;
  engine: Engine;
  /** Part of "your run" (the latest run made on this page). */
  mine: boolean;
  decode_tokens_per_s: number | null;
  tpot_p50_ms: number | null;
  /** TTFT at the view's common prompt length; null when this run did not measure it. */
  ttft_ms: number | null;
  /** Decode tok/s ÷ the read roof's ceiling for this model. */
  read_roof_share: number | null;
  rows: readonly TimingRow[];
}

export interface Spread {
  lo: number;
  hi: number;
  kind: 'p10–p90' | 'min–max';
}

export interface Group {
  key: string;
  device: string;
  model: string;
  format: string;
  runtime: string;
  runs: Run[];
  n: number;
  decode_tokens_per_s: number | null;
  tpot_p50_ms: number | null;
  ttft_ms: number | null;
  read_roof_share: number | null;
  /** Spread of decode tok/s across the group's runs; null without a decode number. */
  decode_spread: Spread | null;
}

export interface Ranked {
  run: Run;
  /** 1 = fastest decode of all runs with a decode number. */
  rank: number;
  of: number;
  groupRank: number;
  groupOf: number;
  group: Group;
}

export interface Cohorts {
  groups: Group[];
  /** The prompt length TTFT is read at (most runs measured it); null when no run has rows. */
  prompt_tokens: number | null;
  runs: Run[];
  /** Results that measured no tokens (roofs only): counted, not grouped. */
  without_rows: number;
  mine: Ranked | null;
}

export interface LabelledResult {
  label: string;
  result: BenchResult;
  mine?: boolean;
}

export function deviceName(r: BenchResult): string {
  const a = r.environment.adapter;
  return a.description || [a.vendor, a.architecture].filter(Boolean).join(' ') || 'unknown adapter';
}

/** The row each run reads its decode numbers from: the shortest prompt with a decode number. */
function decodeRow(rows: readonly TimingRow[]): TimingRow | undefined {
  return [...rows].sort((a, b) => a.prompt_tokens - b.prompt_tokens).find((r) => r.decode_tokens_per_s !== null);
}

/** Each engine's run in one result (none for a roofs-only result). */
function runsOf(item: LabelledResult, source: number): Omit<Run, 'ttft_ms'>[] {
  const r = item.result;
  const base = { source, label: item.label, created_at: r.created_at, device: deviceName(r), mine: item.mine === true };
  const runtime = (engine: Engine) => `${r.environment.runtime === 'node' ? 'Node' : 'browser'} · ${engine}`;
  const out: Omit<Run, 'ttft_ms'>[] = [];
  const add = (engine: Engine, model: string, format: string, rows: readonly TimingRow[]) => {
    if (!rows.length) return;
    const row = decodeRow(rows);
    out.push({
      ...base,
      model,
      format,
      runtime: runtime(engine),
      engine,
      decode_tokens_per_s: row?.decode_tokens_per_s ?? null,
      tpot_p50_ms: row?.tpot?.p50 ?? null,
      read_roof_share: row?.decode_efficiency ?? null,
      rows,
    });
  };
  if (r.latency?.rows) add('tokenscope', r.model?.name ?? 'unknown model', r.model?.quantization ?? '?', r.latency.rows);
  if (r.webllm?.rows) add('WebLLM', r.webllm.model.id, r.webllm.model.quantization, r.webllm.rows);
  return out;
}

/** The prompt length the most runs measured (the shorter on a tie). */
function commonPromptLength(runs: readonly Pick<Run, 'rows'>[]): number | null {
  const counts = new Map<number, number>();
  for (const run of runs) for (const p of new Set(run.rows.map((row) => row.prompt_tokens))) counts.set(p, (counts.get(p) ?? 0) + 1);
  let best: [number, number] | null = null;
  for (const [p, n] of counts) if (!best || n > best[1] || (n === best[1] && p < best[0])) best = [p, n];
  return best?.[0] ?? null;
}

const present = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null && Number.isFinite(x));
const median = (xs: (number | null)[]) => {
  const v = present(xs);
  return v.length ? percentile(v, 50) : null;
};

/** p10–p90 of the values where there are at least {@link PERCENTILE_SPREAD_MIN_N}, else min–max (said in `kind`). */
export function spreadOf(values: (number | null)[]): Spread | null {
  const v = present(values);
  if (!v.length) return null;
  if (v.length >= PERCENTILE_SPREAD_MIN_N) return { lo: percentile(v, 10), hi: percentile(v, 90), kind: 'p10–p90' };
  return { lo: Math.min(...v), hi: Math.max(...v), kind: 'min–max' };
}

function groupOf(key: string, runs: Run[]): Group {
  const { device, model, format, runtime } = runs[0];
  return {
    key,
    device,
    model,
    format,
    runtime,
    runs,
    n: runs.length,
    decode_tokens_per_s: median(runs.map((r) => r.decode_tokens_per_s)),
    tpot_p50_ms: median(runs.map((r) => r.tpot_p50_ms)),
    ttft_ms: median(runs.map((r) => r.ttft_ms)),
    read_roof_share: median(runs.map((r) => r.read_roof_share)),
    decode_spread: spreadOf(runs.map((r) => r.decode_tokens_per_s)),
  };
}

const byDecode = (a: { decode_tokens_per_s: number | null }, b: { decode_tokens_per_s: number | null }) =>
  (b.decode_tokens_per_s ?? -Infinity) - (a.decode_tokens_per_s ?? -Infinity);

/** Where the newest of "your" runs ranks by decode tok/s, among all runs and within its group. */
function rankMine(runs: Run[], groups: Group[]): Ranked | null {
  const timed = runs.filter((r) => r.decode_tokens_per_s !== null).sort(byDecode);
  const mine = timed.filter((r) => r.mine).sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
  if (!mine) return null;
  const group = groups.find((g) => g.runs.includes(mine))!;
  const inGroup = group.runs.filter((r) => r.decode_tokens_per_s !== null).sort(byDecode);
  return { run: mine, rank: timed.indexOf(mine) + 1, of: timed.length, groupRank: inGroup.indexOf(mine) + 1, groupOf: inGroup.length, group };
}

/** The runs of `items` grouped by device, model, format and runtime, fastest decode first. */
export function cohorts(items: readonly LabelledResult[]): Cohorts {
  const bare = items.flatMap((item, i) => runsOf(item, i));
  const prompt = commonPromptLength(bare);
  const runs: Run[] = bare.map((r) => ({ ...r, ttft_ms: r.rows.find((row) => row.prompt_tokens === prompt)?.ttft.p50 ?? null }));
  const byKey = new Map<string, Run[]>();
  for (const run of runs) {
    const key = JSON.stringify([run.device, run.model, run.format, run.runtime]);
    byKey.set(key, [...(byKey.get(key) ?? []), run]);
  }
  const groups = [...byKey].map(([key, rs]) => groupOf(key, rs)).sort(byDecode);
  const withRuns = new Set(runs.map((r) => r.source));
  return { groups, prompt_tokens: prompt, runs, without_rows: items.length - withRuns.size, mine: rankMine(runs, groups) };
}

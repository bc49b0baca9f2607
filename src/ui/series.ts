/**
 * The data behind each chart, shaped from a (possibly partial, possibly trimmed) latency section.
 * Pure: every latency comes from the metric functions in measure/metrics.ts, so a chart never
 * disagrees with the tables. Raw point series are thinned to a few thousand points so a long
 * sweep stays quick to draw.
 */
import type { LatencySection } from '../measure/latency.ts';
import { timingOf, type KernelRow, type RequestRecord } from '../measure/latency-summary.ts';
import { itlsMs, tpotMs, ttftMs } from '../measure/metrics.ts';

export interface XY {
  x: number;
  y: number;
}

/** A latency section as it may arrive: live (requests and rows only) or from a trimmed link. */
export type LatencyView = Partial<LatencySection>;

const MAX_POINTS = 3000;

/** Every k-th item so that at most `max` remain (always keeps the last). */
export function thin<T>(xs: readonly T[], max = MAX_POINTS): T[] {
  if (xs.length <= max) return [...xs];
  const step = xs.length / max;
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(xs[Math.floor(i * step)]);
  out[out.length - 1] = xs[xs.length - 1];
  return out;
}

const clean = (requests: readonly RequestRecord[] | undefined) => (requests ?? []).filter((r) => r.token_ms.length > 0);

/** One point per request: (prompt tokens, TTFT ms). */
export function requestTtfts(l: LatencyView): XY[] {
  return clean(l.requests).map((r) => ({ x: r.prompt_tokens, y: ttftMs(timingOf(r))! }));
}

/** One point per decode step: (context depth it attended, its inter-token gap ms). */
export function stepGaps(l: LatencyView): XY[] {
  const points = clean(l.requests)
    .filter((r) => !r.disturbed)
    .flatMap((r) => itlsMs(timingOf(r)).map((y, i) => ({ x: r.prompt_tokens + i + 1, y })));
  return thin(points);
}

/** The empirical CDF of `xs` as a step line: (value, share of values ≤ it), from 0 at the smallest, thinned. */
export function ecdf(xs: readonly number[]): XY[] {
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return [];
  return [{ x: sorted[0], y: 0 }, ...thin(sorted.map((x, i) => ({ x, y: (i + 1) / n })))];
}

/** The three latency distributions the CDF chart draws: TTFT and TPOT per request, ITL per token. */
export function latencyDistributions(l: LatencyView): { ttft: number[]; tpot: number[]; itl: number[] } {
  const timings = clean(l.requests).map(timingOf);
  return {
    ttft: timings.map((t) => ttftMs(t)!),
    tpot: timings.map(tpotMs).filter((x): x is number => x !== undefined),
    itl: timings.flatMap(itlsMs),
  };
}

/** Measured phases on the roofline: (FLOP/byte, GFLOP/s) per prompt length, from the verdicts. */
export function phasePoints(l: LatencyView): { prefill: (XY & { tokens: number })[]; decode: (XY & { tokens: number })[] } {
  const verdicts = l.verdicts ?? [];
  return {
    prefill: verdicts.map((v) => ({ x: v.prefill.intensity, y: v.prefill.achievedFlopsPerS / 1e9, tokens: v.prompt_tokens })),
    decode: verdicts.flatMap((v) => (v.decode ? [{ x: v.decode.intensity, y: v.decode.achievedFlopsPerS / 1e9, tokens: v.prompt_tokens }] : [])),
  };
}

/** Profiled kernel classes as roofline points: cost-model FLOPs/bytes per step over the profiled time. */
export function kernelXY(l: LatencyView): (XY & { label: string })[] {
  return (l.kernel_points ?? []).map((k) => ({
    x: k.flops / k.bytes,
    y: k.flops / (k.ms / 1000) / 1e9,
    label: `${k.phase} ${k.kind} (prompt ${k.prompt_tokens})`,
  }));
}

/** Kernel classes in a stable order (largest total share first) and each phase's rows. */
export function kernelTable(rows: readonly KernelRow[]): { kinds: string[]; byPhase: Record<'prefill' | 'decode', Map<string, KernelRow>> } {
  const byPhase = { prefill: new Map<string, KernelRow>(), decode: new Map<string, KernelRow>() };
  const total = new Map<string, number>();
  for (const r of rows) {
    byPhase[r.phase].set(r.kind, r);
    total.set(r.kind, (total.get(r.kind) ?? 0) + r.share);
  }
  const kinds = [...total.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  return { kinds, byPhase };
}

/** TTFT and TPOT per request, split by prompt length (pooling lengths would draw a staircase of them). */
export function distributionsByLength(l: LatencyView): { promptTokens: number; ttft: number[]; tpot: number[] }[] {
  const byLength = new Map<number, { promptTokens: number; ttft: number[]; tpot: number[] }>();
  for (const r of clean(l.requests)) {
    const t = timingOf(r);
    const entry = byLength.get(r.prompt_tokens) ?? { promptTokens: r.prompt_tokens, ttft: [], tpot: [] };
    entry.ttft.push(ttftMs(t)!);
    const tpot = tpotMs(t);
    if (tpot !== undefined) entry.tpot.push(tpot);
    byLength.set(r.prompt_tokens, entry);
  }
  return [...byLength.values()].sort((a, b) => a.promptTokens - b.promptTokens);
}

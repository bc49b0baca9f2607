/**
 * Plain-text pieces of the text report (jobs/report.ts) the section modules share: fixed-width
 * tables, numbers with a dash for "none", and vLLM `bench serve`'s printed summary.
 */
import { formatFixed, percentileKey, type LatencyMetric } from './metrics.ts';
import type { VllmResultData } from './sections/serve.ts';

/** While set (withTableSink), every table() also hands its cells here: the CLI's `--out` writes each as CSV. */
let tableSink: ((header: readonly string[], rows: readonly string[][]) => void) | null = null;

/** Run `fn`, handing every table it formats to `sink`. */
export function withTableSink<T>(sink: (header: readonly string[], rows: readonly string[][]) => void, fn: () => T): T {
  const previous = tableSink;
  tableSink = sink;
  try {
    return fn();
  } finally {
    tableSink = previous;
  }
}

/** A fixed-width table: columns padded to their widest cell. */
export function table(header: string[], rows: string[][], rightAlign: boolean[] = []): string {
  tableSink?.(header, rows);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (rightAlign[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** `x` with `digits` decimals, or — when there is none. */
export const fixedOrDash = (x: number | null | undefined, digits = 2) => (x === null || x === undefined ? '—' : x.toFixed(digits));
/** `x` as a percentage with one decimal, or — when there is none. */
export const pctOrDash = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);

/** vLLM's section titles, in the order it prints them. */
const SECTIONS: readonly [LatencyMetric, string, string][] = [
  ['ttft', 'TTFT', 'Time to First Token'],
  ['tpot', 'TPOT', 'Time per Output Token (excl. 1st token)'],
  ['itl', 'ITL', 'Inter-token Latency'],
  ['e2el', 'E2EL', 'End-to-end Latency'],
];

/** Python's '{s:{c}^{n}}'.format(...): centre in n columns, the odd fill character goes right. */
export function banner(title: string, fill: string, width = 50): string {
  const padding = Math.max(0, width - title.length);
  const left = Math.floor(padding / 2);
  return fill.repeat(left) + title + fill.repeat(padding - left);
}

export interface SummaryOptions {
  /** vLLM's --percentile-metrics; default ttft, tpot, itl (E2EL is printed only when asked for). */
  percentileMetrics?: readonly LatencyMetric[];
  /** vLLM's --metric-percentiles, from those the result holds (p90/p95/p99 always; others when the run was asked for them); default 99. */
  percentiles?: readonly number[];
}

/**
 * The summary vLLM `bench serve` prints, line for line: "{:<40} {:<10}" rows (counts as integers,
 * the rest "%.2f"), 50-column banners. The goodput row appears only with SLOs, as in vLLM.
 */
export function formatServeSummary(result: VllmResultData, options: SummaryOptions = {}): string {
  const { percentileMetrics = ['ttft', 'tpot', 'itl'], percentiles = [99] } = options;
  const row = (label: string, value: string) => `${label.padEnd(40)} ${value.padEnd(10)}`;
  const count = (label: string, n: number) => row(label, String(n));
  const fixed = (label: string, x: number) => row(label, formatFixed(x, 2));
  const lines = [
    banner(' Serving Benchmark Result ', '='),
    count('Successful requests:', result.completed),
    count('Failed requests:', result.failed),
    fixed('Benchmark duration (s):', result.duration),
    count('Total input tokens:', result.total_input_tokens),
    count('Total generated tokens:', result.total_output_tokens),
    fixed('Request throughput (req/s):', result.request_throughput),
    ...(result.request_goodput === null ? [] : [fixed('Request goodput (req/s):', result.request_goodput)]),
    fixed('Output token throughput (tok/s):', result.output_throughput),
    fixed('Total token throughput (tok/s):', result.total_token_throughput),
  ];
  for (const [metric, name, title] of SECTIONS) {
    if (!percentileMetrics.includes(metric)) continue;
    lines.push(
      banner(title, '-'),
      fixed(`Mean ${name} (ms):`, result[`mean_${metric}_ms`]),
      fixed(`Median ${name} (ms):`, result[`median_${metric}_ms`]),
      ...percentiles.map((p) => {
        const value = (result as unknown as Record<string, number | undefined>)[percentileKey(p, metric)];
        return value === undefined ? row(`P${p} ${name} (ms):`, '-') : fixed(`P${p} ${name} (ms):`, value);
      }),
    );
  }
  lines.push('='.repeat(50));
  return lines.join('\n') + '\n';
}

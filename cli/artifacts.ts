/**
 * `--out DIR`: a run's artifacts, as AIPerf leaves them — the result JSON (tokenscope's schema),
 * per-request records in AIPerf's `profile_export.jsonl` shape, a CSV of every table the text
 * report prints (and llama-bench's rows in its CSV), and report.html (cli/report-html.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatSection, type ReportedSection } from '../src/jobs/report.ts';
import { withTableSink } from '../src/measure/format.ts';
import { formatLlamaBenchOutput } from '../src/measure/llama-bench-output.ts';
import { REPORT_ORDER, type BenchResult } from '../src/measure/schema.ts';
import { formatEnvironment } from '../src/measure/sections/environment.ts';

type Metric = { value: number | number[]; unit: string };

/** One request as AIPerf's profile_export.jsonl holds it: metadata, metrics with units, error. */
export interface ProfileRecord {
  metadata: { session_num: number; x_request_id: string; turn_index: 0; benchmark_phase: 'latency-sweep' | 'serve'; was_cancelled: boolean };
  metrics: Record<string, Metric>;
  error: { code: null; type: string; message: string } | null;
}

const ms = (value: number | number[]): Metric => ({ value, unit: 'ms' });
const tokens = (value: number): Metric => ({ value, unit: 'tokens' });

/**
 * AIPerf's per-request metrics from token times (ms after the request was sent): TTFT, the
 * inter-chunk gaps (one token per chunk here), ITL = (E2EL − TTFT) / (OSL − 1), request latency.
 */
function requestMetrics(promptTokens: number, tokenMs: readonly number[]): Record<string, Metric> {
  const m: Record<string, Metric> = { input_sequence_length: tokens(promptTokens) };
  if (tokenMs.length === 0) return m;
  const [first, last] = [tokenMs[0], tokenMs[tokenMs.length - 1]];
  m.time_to_first_token = ms(first);
  m.inter_chunk_latency = ms(tokenMs.slice(1).map((t, i) => t - tokenMs[i]));
  if (tokenMs.length > 1) {
    m.inter_token_latency = ms((last - first) / (tokenMs.length - 1));
    m.output_token_throughput_per_user = { value: 1000 / ((last - first) / (tokenMs.length - 1)), unit: 'tokens/sec/user' };
  }
  m.request_latency = ms(last);
  m.output_sequence_length = tokens(tokenMs.length);
  return m;
}

/** The run's requests: the latency sweep's timed repetitions and the serve run's requests, in order. */
export function profileRecords(result: BenchResult): ProfileRecord[] {
  const records: ProfileRecord[] = [];
  for (const q of result.latency?.requests ?? []) {
    records.push({
      metadata: {
        session_num: records.length,
        x_request_id: `pp${q.prompt_tokens}-rep${q.rep}`,
        turn_index: 0,
        benchmark_phase: 'latency-sweep',
        was_cancelled: false,
      },
      metrics: requestMetrics(q.prompt_tokens, q.token_ms),
      error: null,
    });
  }
  const run = result.serve?.run;
  if (run) {
    const r = run.result;
    run.timeline.forEach((q, i) => {
      // vLLM's per-request arrays (s): the TTFT, then each gap, give the token times after the send.
      const ttftS = r.ttfts?.[i];
      const gapsS = r.itls?.[i] ?? [];
      const tokenMs = q.output_tokens > 0 && ttftS !== undefined ? [ttftS * 1000] : [];
      for (const gap of gapsS) tokenMs.push(tokenMs[tokenMs.length - 1] + gap * 1000);
      records.push({
        metadata: { session_num: records.length, x_request_id: `serve-${q.id}`, turn_index: 0, benchmark_phase: 'serve', was_cancelled: q.cause === 'timeout' },
        metrics: q.error === null ? requestMetrics(q.prompt_tokens, tokenMs) : { error_isl: tokens(q.prompt_tokens) },
        error: q.error === null ? null : { code: null, type: q.cause ?? 'error', message: q.error },
      });
    });
  }
  return records;
}

/** A CSV of one table: every cell quoted (RFC 4180). */
export function csv(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (v: string) => `"${v.replace(/"/g, '""')}"`;
  return [header, ...rows].map((r) => `${r.map(cell).join(',')}\n`).join('');
}

/** Every table the text report prints, as files: "{section}.csv", "{section}-2.csv", … in report order. */
export function reportTables(result: BenchResult): { name: string; text: string }[] {
  const files: { name: string; text: string }[] = [];
  const sections: [string, () => string][] = [
    ['environment', () => formatEnvironment(result)],
    ...REPORT_ORDER.map((s): [string, () => string] => [s, () => formatSection(result, s as ReportedSection)]),
  ];
  for (const [name, format] of sections) {
    const tables: string[] = [];
    withTableSink((header, rows) => tables.push(csv(header, rows)), format);
    tables.forEach((text, i) => files.push({ name: `${name.replace(/_/g, '-')}${i === 0 ? '' : `-${i + 1}`}.csv`, text }));
  }
  if (result.llama_bench?.length) {
    const a = result.environment.adapter;
    const text = formatLlamaBenchOutput(result.llama_bench, 'csv', {
      model_filename: result.model?.id ?? '',
      gpu_info: a.description || [a.vendor, a.architecture].filter(Boolean).join(' '),
      test_time: result.created_at,
    });
    files.push({ name: 'llama-bench.csv', text });
  }
  return files;
}

/** Write the data artifacts into `dir` (created): the files written, in order (report.html is the caller's, cli/report-html.ts). */
export function writeArtifacts(dir: string, result: BenchResult): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const put = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    written.push(join(dir, name));
  };
  put('result.json', `${JSON.stringify(result, null, 2)}\n`);
  const records = profileRecords(result);
  if (records.length) put('profile_export.jsonl', records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  for (const t of reportTables(result)) put(t.name, t.text);
  return written;
}

/**
 * llama-bench's output formats for our llama-bench rows (`-o md|csv|json|jsonl|sql`): its markdown
 * table, and its records with its keys (avg_ts, stddev_ts, samples_ts, n_prompt, n_gen, n_depth,
 * model_filename, model_type, model_size, model_n_params, test_time, backends…), so scripts that
 * read llama-bench's JSON read ours. Keys llama.cpp fills from its own build and threads
 * (build_commit, n_threads, type_k…) are left out rather than made up.
 */
import { formatLlamaBenchTable, type LlamaBenchRow } from './metrics.ts';
import { mean, stdSample } from './stats.ts';

export type LlamaBenchOutput = 'md' | 'csv' | 'json' | 'jsonl' | 'sql';

/** What the rows do not carry: where the model came from, the GPU and when the run started. */
export interface LlamaBenchRunInfo {
  model_filename: string;
  gpu_info: string;
  /** ISO 8601. */
  test_time: string;
}

export interface LlamaBenchRecord {
  gpu_info: string;
  backends: string;
  model_filename: string;
  model_type: string;
  model_size: number;
  model_n_params: number;
  n_gpu_layers: number;
  n_prompt: number;
  n_gen: number;
  n_depth: number;
  test_time: string;
  avg_ns: number;
  stddev_ns: number;
  avg_ts: number;
  stddev_ts: number;
  samples_ns: number[];
  samples_ts: number[];
}

/** n_prompt, n_gen and n_depth of a test name: "pp512" → 512/0/0, "tg128 @ d4096" → 0/128/4096, "pp512+tg128". */
export function parseLlamaBenchTest(test: string): { n_prompt: number; n_gen: number; n_depth: number } {
  const m = /^(?:pp(\d+))?(?:\+?tg(\d+))?(?: @ d(\d+))?$/.exec(test);
  if (!m || (m[1] === undefined && m[2] === undefined)) throw new Error(`"${test}" is not a llama-bench test name`);
  return { n_prompt: Number(m[1] ?? 0), n_gen: Number(m[2] ?? 0), n_depth: Number(m[3] ?? 0) };
}

export function llamaBenchRecord(row: LlamaBenchRow, run: LlamaBenchRunInfo): LlamaBenchRecord {
  const n = parseLlamaBenchTest(row.test);
  const tokens = n.n_prompt + n.n_gen;
  // llama-bench keeps nanoseconds per repetition and derives tokens/s from them; ours are the other way round.
  const ns = row.samples.map((ts) => Math.round((tokens / ts) * 1e9));
  return {
    gpu_info: run.gpu_info,
    backends: row.backend,
    model_filename: run.model_filename,
    model_type: row.model,
    model_size: row.sizeBytes,
    model_n_params: row.params,
    n_gpu_layers: row.ngl,
    ...n,
    test_time: run.test_time,
    avg_ns: Math.round(mean(ns)),
    stddev_ns: ns.length > 1 ? Math.round(stdSample(ns)) : 0,
    avg_ts: row.meanTokensPerS,
    stddev_ts: row.stdTokensPerS,
    samples_ns: ns,
    samples_ts: [...row.samples],
  };
}

/** The rows as llama-bench prints them with `-o FORMAT` (CSV: every value quoted, lists joined with ";"). */
export function formatLlamaBenchOutput(rows: readonly LlamaBenchRow[], format: LlamaBenchOutput, run: LlamaBenchRunInfo): string {
  if (format === 'md') return formatLlamaBenchTable(rows);
  const records = rows.map((r) => llamaBenchRecord(r, run));
  if (format === 'jsonl') return records.map((r) => `${JSON.stringify(r)}\n`).join('');
  if (format === 'json') return `${JSON.stringify(records, null, 2)}\n`;
  const keys = Object.keys(records[0] ?? llamaBenchRecord(placeholderRow, run)) as (keyof LlamaBenchRecord)[];
  if (format === 'sql') return formatSql(records, keys);
  const cell = (v: unknown) => `"${(Array.isArray(v) ? v.join(';') : String(v)).replace(/"/g, '""')}"`;
  return [keys.join(','), ...records.map((r) => keys.map((k) => cell(r[k])).join(','))].map((l) => `${l}\n`).join('');
}

/** SQL types of llama-bench's `-o sql` columns; the rest are TEXT. */
const SQL_TYPES: Partial<Record<keyof LlamaBenchRecord, 'INTEGER' | 'REAL'>> = {
  model_size: 'INTEGER',
  model_n_params: 'INTEGER',
  n_gpu_layers: 'INTEGER',
  n_prompt: 'INTEGER',
  n_gen: 'INTEGER',
  n_depth: 'INTEGER',
  avg_ns: 'INTEGER',
  stddev_ns: 'INTEGER',
  avg_ts: 'REAL',
  stddev_ts: 'REAL',
};

/**
 * llama-bench's `-o sql`: a `CREATE TABLE IF NOT EXISTS test` of its columns, then one INSERT per
 * test with every value quoted, so the output pipes into `sqlite3 results.db`. As in llama-bench,
 * the per-repetition samples are JSON-only.
 */
function formatSql(records: readonly LlamaBenchRecord[], allKeys: readonly (keyof LlamaBenchRecord)[]): string {
  const keys = allKeys.filter((k) => k !== 'samples_ns' && k !== 'samples_ts');
  const columns = keys.map((k, i) => `  ${k} ${SQL_TYPES[k] ?? 'TEXT'}${i < keys.length - 1 ? ',' : ''}\n`).join('');
  const quote = (v: unknown) => `'${String(v).replace(/'/g, "''")}'`;
  const inserts = records.map((r) => `INSERT INTO test (${keys.join(', ')}) VALUES (${keys.map((k) => quote(r[k])).join(', ')});\n`);
  return `CREATE TABLE IF NOT EXISTS test (\n${columns});\n\n${inserts.join('')}`;
}

/** Only its keys are used: the CSV header of an empty run. */
const placeholderRow: LlamaBenchRow = {
  model: '',
  sizeBytes: 0,
  params: 0,
  backend: '',
  ngl: -1,
  test: 'pp1',
  meanTokensPerS: 1,
  stdTokensPerS: 0,
  samples: [1],
};

/**
 * Export and import: the full result as pretty JSON (what links trim, this keeps), the latency
 * rows as CSV for spreadsheets, and an imported JSON file back into a validated result.
 */
import type { LatencyRow } from '../measure/latency-summary.ts';
import type { BenchResult } from '../measure/schema.ts';
import type { Summary } from '../measure/stats.ts';
import { badInput, parseJson } from './json.ts';
import { validateResult } from '../measure/validate.ts';

/** Largest JSON file imported, characters (a long sweep with every raw sample is a few MB). */
export const MAX_IMPORT_CHARS = 50 * 1024 * 1024;

/** The whole result, every raw sample included, as pretty JSON. */
export function toJson(result: BenchResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}

type Cell = string | number | null;

/**
 * One CSV field (RFC 4180). A string that a spreadsheet would run as a formula (starting with
 * = + - @, or tab / carriage return as OWASP adds) gets a leading apostrophe; numbers never do,
 * so a negative overhead stays a number.
 */
function csvField(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return String(cell);
  const text = /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
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
  ['gpu_prefill_ms', (r) => r.gpu_prefill_ms],
  ['gpu_decode_ms', (r) => r.gpu_decode_ms],
  ['host_overhead_ms', (r) => r.host_overhead_ms],
];

/**
 * The latency rows as CSV, one line per prompt length, CRLF line ends (RFC 4180). The first
 * column names the model so sheets pasted together stay apart. No latency section: the header only.
 */
export function rowsToCsv(result: BenchResult): string {
  const latency = result.latency;
  const model = result.model?.name ?? null;
  const header = ['model', ...CSV_COLUMNS.map(([name]) => name)];
  const lines = (latency?.rows ?? []).map((row) => [model, ...CSV_COLUMNS.map(([, cell]) => cell(row))]);
  return [header, ...lines].map((cells) => `${cells.map(csvField).join(',')}\r\n`).join('');
}

/** An imported JSON file as a validated result; every failure is a `bad-input` TokenscopeError. */
export function parseImportedJson(text: string): BenchResult {
  if (text.length > MAX_IMPORT_CHARS) {
    throw badInput('file', `The file has ${text.length} characters; tokenscope imports at most ${MAX_IMPORT_CHARS}.`);
  }
  return validateResult(parseJson(text.replace(/^\uFEFF/, ''), 'file'));
}

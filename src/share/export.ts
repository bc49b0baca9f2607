/**
 * Export and import: the full result as pretty JSON (what links trim, this keeps), a section's
 * rows as CSV for spreadsheets (the section's module gives them; the page offers the latency rows),
 * and an imported JSON file back into a validated result.
 */
import { RESULT_SECTIONS, type BenchResult } from '../measure/schema.ts';
import type { Cell, SectionCsv, SectionKey } from '../measure/section.ts';
import { badInput, parseJson } from './json.ts';
import { validateResult } from '../measure/validate.ts';

/** Largest JSON file imported, characters (a long sweep with every raw sample is a few MB). */
export const MAX_IMPORT_CHARS = 50 * 1024 * 1024;

/** The whole result, every raw sample included, as pretty JSON. */
export function toJson(result: BenchResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}

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

/** The sections whose module gives CSV rows. */
export type CsvSection = { [K in SectionKey]: (typeof RESULT_SECTIONS)[K]['csv'] extends null ? never : K }[SectionKey];

/**
 * One section's rows as CSV, CRLF line ends (RFC 4180). The first column names the model so sheets
 * pasted together stay apart. A result without the section: the header only.
 */
export function sectionCsv(result: BenchResult, section: CsvSection): string {
  const csv = RESULT_SECTIONS[section].csv as SectionCsv<unknown>;
  const data = result[section];
  const model = result.model?.name ?? null;
  const lines = data === undefined ? [] : csv.rows(data).map((cells) => [model, ...cells]);
  return [['model', ...csv.header], ...lines].map((cells) => `${cells.map(csvField).join(',')}\r\n`).join('');
}

/** The latency rows as CSV, one line per prompt length: the page's rows.csv. */
export function rowsToCsv(result: BenchResult): string {
  return sectionCsv(result, 'latency');
}

/** An imported JSON file as a validated result; every failure is a `bad-input` TokenscopeError. */
export function parseImportedJson(text: string): BenchResult {
  if (text.length > MAX_IMPORT_CHARS) {
    throw badInput('file', `The file has ${text.length} characters; tokenscope imports at most ${MAX_IMPORT_CHARS}.`);
  }
  return validateResult(parseJson(text.replace(/^\uFEFF/, ''), 'file'));
}

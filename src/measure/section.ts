/**
 * What one result section owns besides its declaration: how it is trimmed for a link, compared
 * with another result's, written as CSV rows and printed in the text report. Each
 * `sections/<section>.ts` exports one SectionModule built from pure functions; `RESULT_SECTIONS`
 * (schema.ts) lists them, and share/ and jobs/ loop over that list. Every piece is required and
 * `null` where the section has none, so a new section states each choice and the compiler checks it.
 */
import type { BenchResult } from './schema.ts';
import type { Schema } from './schema-kit.ts';

/** The optional top-level fields of a result: its sections. */
export type SectionKey = Exclude<keyof BenchResult, 'schema_version' | 'tool' | 'created_at' | 'environment' | 'notes'>;

/** A section as a result holds it (present). */
export type SectionOf<K extends SectionKey> = NonNullable<BenchResult[K]>;

/**
 * The kinds of loss a link may take, cheapest first: raw per-token timings, per-request records,
 * per-repetition samples, then numbers the tables and charts read rounded (derived figures before
 * the rows themselves). share/permalink.ts applies them in this order until the link fits.
 */
export const TRIM_STEPS = ['per-token', 'per-request', 'per-repetition', 'derived-digits', 'row-digits'] as const;
export type TrimStep = (typeof TRIM_STEPS)[number];

/** One trimming step of a section: the trimmed copy, or null when it has nothing of that kind. */
export interface SectionTrim<T> {
  /** What went, in the link's notes (sections trimmed in one step with the same note share it). */
  note: string;
  trim: (section: T) => T | null;
}

/** Notes the sections share: one step can trim several sections' records of one kind. */
export const PER_TOKEN_NOTE = 'Raw per-token samples were trimmed for the link; the JSON export has them all.';
export const PER_REQUEST_NOTE =
  'Per-request records were left out of the link; the tables and charts are computed from all of them, and the JSON export has them.';

export type Direction = 'higher-is-better' | 'lower-is-better';
export type Better = 'a' | 'b' | 'same';

/** One metric both results have, as a section's comparison gives it (share/compare.ts adds the section). */
export interface MetricComparison {
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

export interface SectionComparison<T> {
  /** The heading of the section's rows where two results are shown side by side. */
  title: string;
  /** Every metric both sections have, in reading order. */
  rows: (a: T, b: T) => MetricComparison[];
}

/** Values within 1% of each other (of the larger) read as the same. */
export const SAME_WITHIN = 0.01;

/** How one compared metric is read from a section (or one of its rows). */
export interface Metric<T> {
  key: string;
  metric: string;
  unit: string;
  direction: Direction;
  value: (x: T) => number | null | undefined;
}

function better(a: number, b: number, direction: Direction): Better {
  if (Math.abs(b - a) <= SAME_WITHIN * Math.max(Math.abs(a), Math.abs(b))) return 'same';
  return b > a === (direction === 'higher-is-better') ? 'b' : 'a';
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** The rows of `metrics` both `a` and `b` have a finite value for. */
export function compareMetrics<T>(metrics: readonly Metric<T>[], a: T, b: T, promptTokens: number | null = null): MetricComparison[] {
  return metrics.flatMap(({ value, ...m }) => {
    const va = value(a);
    const vb = value(b);
    if (!isNumber(va) || !isNumber(vb)) return [];
    const ratio = va === 0 ? (vb === 0 ? 1 : null) : vb / va;
    return [{ ...m, prompt_tokens: promptTokens, a: va, b: vb, ratio, better: better(va, vb, m.direction) }];
  });
}

/** One CSV cell: share/export.ts quotes and escapes it. */
export type Cell = string | number | null;

export interface SectionCsv<T> {
  /** Column names, after the `model` column share/export.ts puts first. */
  header: readonly string[];
  /** One list of cells per CSV line, in `header`'s order. */
  rows: (section: T) => Cell[][];
}

/**
 * The section's block of the text report: '' when there is nothing to print. It gets the whole
 * result for the sections it prints alongside its own (see `SectionModule.report`).
 */
export type SectionReport<T> = (section: T, result: BenchResult) => string;

export interface SectionModule<K extends SectionKey> {
  /** The declaration: type, validator, JSON Schema. */
  schema: Schema<unknown>;
  /** Trimming for links, by step; null: the section goes into a link whole. */
  trim: Partial<Record<TrimStep, SectionTrim<SectionOf<K>>>> | null;
  /** Comparison with another result's section; null: not compared. */
  compare: SectionComparison<SectionOf<K>> | null;
  /** Its CSV rows; null: no CSV form. */
  csv: SectionCsv<SectionOf<K>> | null;
  /**
   * Its block of the text report; `{ in: key }`: printed inside another section's block (which
   * reads it from the result); null: not in the text report.
   */
  report: SectionReport<SectionOf<K>> | { in: SectionKey } | null;
}

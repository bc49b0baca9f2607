/**
 * The plain-text report for the CLI (a pure function of a result): the environment, then each
 * section's block as its module in measure/sections/ prints it, in REPORT_ORDER.
 */
import { REPORT_ORDER, RESULT_SECTIONS, type BenchResult } from '../measure/schema.ts';
import type { SectionReport } from '../measure/section.ts';
import { formatEnvironment } from '../measure/sections/environment.ts';

export type ReportedSection = (typeof REPORT_ORDER)[number];

/** One section's block ('' when the result lacks it or it has nothing to print). */
export function formatSection(result: BenchResult, section: ReportedSection): string {
  const report = RESULT_SECTIONS[section].report as SectionReport<unknown>;
  const data = result[section];
  return data === undefined ? '' : report(data, result);
}

/** The whole report: blocks separated by a blank line. */
export function formatReport(result: BenchResult): string {
  return [formatEnvironment(result), ...REPORT_ORDER.map((section) => formatSection(result, section))].filter(Boolean).join('\n\n');
}

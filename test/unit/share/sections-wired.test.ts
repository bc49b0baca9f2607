/**
 * Every module in RESULT_SECTIONS reaches the public entry points the way it says: its trimming
 * through the link (shareable), its comparison through compareResults, its CSV rows through the
 * export, its report block through the text report — each checked on the full fixture and on a
 * copy with the section mutated or removed, so a section whose piece is not wired, or is wired to
 * the wrong data, fails here.
 */
import { describe, expect, it } from 'vitest';
import { formatReport, formatSection } from '../../../src/jobs/report.ts';
import { REPORT_ORDER, RESULT_SECTIONS, type BenchResult } from '../../../src/measure/schema.ts';
import { TRIM_STEPS, type SectionKey, type SectionTrim } from '../../../src/measure/section.ts';
import { validateResult } from '../../../src/measure/validate.ts';
import { compareResults, comparisonTitle, type ComparedSection } from '../../../src/share/compare.ts';
import { sectionCsv, type CsvSection } from '../../../src/share/export.ts';
import { shareable } from '../../../src/share/permalink.ts';
import { linkRounded } from '../../../src/share/codec.ts';
import { fullResult } from './fixtures.ts';

const KEYS = Object.keys(RESULT_SECTIONS) as SectionKey[];

/** The full fixture with the link flag set too: every section present. */
function full(): BenchResult {
  return { ...fullResult(), trimmed: true } as BenchResult;
}

function without(r: BenchResult, key: SectionKey): BenchResult {
  const copy = { ...r };
  delete copy[key];
  return copy;
}

/** `r` with every number of one section doubled, prompt lengths kept (rows are matched by them). */
function doubled(r: BenchResult, key: SectionKey): BenchResult {
  const section = JSON.parse(JSON.stringify(r[key]), (k, v) => (typeof v === 'number' && k !== 'prompt_tokens' ? v * 2 : v));
  return { ...r, [key]: section };
}

describe('every section module', () => {
  it('has its section in the full fixture', () => {
    const r = full();
    expect(KEYS.filter((k) => r[k] === undefined)).toEqual([]);
  });

  it.each(KEYS)('%s: prints its report where its module says', (key) => {
    const report = RESULT_SECTIONS[key].report;
    const r = full();
    const text = formatReport(r);
    const reported = REPORT_ORDER as readonly SectionKey[];
    if (typeof report === 'function') {
      expect(reported.filter((k) => k === key)).toHaveLength(1);
      const block = formatSection(r, key as (typeof REPORT_ORDER)[number]);
      expect(block).not.toBe('');
      expect(text).toContain(block);
      expect(formatReport(without(r, key))).not.toContain(block);
    } else if (report === null) {
      expect(reported).not.toContain(key);
      expect(formatReport(without(r, key))).toBe(text);
    } else {
      // Printed inside another section's block, which reads it from the result.
      expect(reported).not.toContain(key);
      expect(reported).toContain(report.in);
      const host = report.in as (typeof REPORT_ORDER)[number];
      expect(formatSection(without(r, key), host)).not.toBe(formatSection(r, host));
    }
  });

  it.each(KEYS)('%s: is trimmed for links where its module says, and stays valid', async (key) => {
    const trim = RESULT_SECTIONS[key].trim as Partial<Record<string, SectionTrim<unknown>>> | null;
    const r = full();
    const shared = await shareable(r, 1); // every step runs
    expect(() => validateResult(JSON.parse(JSON.stringify(shared)))).not.toThrow();
    if (trim === null) {
      expect(shared[key]).toEqual(linkRounded(r[key]));
      return;
    }
    expect(shared[key]).not.toEqual(r[key]);
    expect(TRIM_STEPS).toEqual(expect.arrayContaining(Object.keys(trim)));
    for (const piece of Object.values(trim)) expect(shared.notes).toContain(piece!.note);
  });

  it.each(KEYS)('%s: is compared where its module says', (key) => {
    if (RESULT_SECTIONS[key].compare === null) return;
    const section = key as ComparedSection;
    const r = full();
    const same = compareResults(r, r).filter((row) => row.section === section);
    expect(same.length).toBeGreaterThan(0);
    expect(same.every((row) => row.better === 'same' && row.ratio === 1)).toBe(true);
    const twice = compareResults(r, doubled(r, key)).filter((row) => row.section === section);
    expect(twice.map((row) => row.key)).toEqual(same.map((row) => row.key));
    for (const row of twice) expect(row.ratio).toBeCloseTo(2, 12);
    expect(compareResults(r, without(r, key)).filter((row) => row.section === section)).toEqual([]);
    expect(comparisonTitle(section)).not.toBe('');
  });

  it.each(KEYS)('%s: exports its CSV rows where its module says', (key) => {
    const csv = RESULT_SECTIONS[key].csv;
    if (csv === null) return;
    const section = key as CsvSection;
    const r = full();
    const lines = sectionCsv(r, section).split('\r\n').slice(0, -1);
    expect(lines[0]).toBe(['model', ...csv.header].join(','));
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(1).every((line) => line.split(',').length === csv.header.length + 1)).toBe(true);
    expect(sectionCsv(doubled(r, key), section)).not.toBe(sectionCsv(r, section));
    expect(sectionCsv(without(r, key), section)).toBe(`${lines[0]}\r\n`);
  });
});

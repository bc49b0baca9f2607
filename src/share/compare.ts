/**
 * Two results side by side (two GPUs, two browsers, two models, before/after): one row per metric
 * both have, with the ratio b / a and which side is better — higher-is-better or lower-is-better
 * stated per metric (each section's module in measure/sections/ says which metrics). Latency rows
 * are matched by prompt length. A comparison link (`#c=…`) carries both results, each trimmed to
 * half the link budget.
 */
import { RESULT_SECTIONS, type BenchResult } from '../measure/schema.ts';
import type { MetricComparison, SectionKey } from '../measure/section.ts';
import { expectObject } from '../measure/validate.ts';
import { isTokenscopeError, TokenscopeError } from '../errors.ts';
import { checkedLength, decodeFragment, encodeFragment } from './codec.ts';
import { LINK_BUDGET_CHARS, shareable } from './permalink.ts';
import { validateResult } from '../measure/validate.ts';

/** The sections whose module compares them. */
export type ComparedSection = { [K in SectionKey]: (typeof RESULT_SECTIONS)[K]['compare'] extends null ? never : K }[SectionKey];

export interface ComparisonRow extends MetricComparison {
  section: ComparedSection;
}

/** The heading of a compared section's rows. */
export const comparisonTitle = (section: ComparedSection): string => RESULT_SECTIONS[section].compare.title;

/**
 * Every metric both results have, section by section in RESULT_SECTIONS order (each section's
 * module says which: the ceilings, the latency rows at each prompt length both measured in a's
 * order, the serving summary).
 */
export function compareResults(a: BenchResult, b: BenchResult): ComparisonRow[] {
  return (Object.keys(RESULT_SECTIONS) as SectionKey[]).flatMap((section) => {
    const compare = RESULT_SECTIONS[section].compare as { rows: (a: unknown, b: unknown) => MetricComparison[] } | null;
    const sectionA = a[section];
    const sectionB = b[section];
    if (compare === null || sectionA === undefined || sectionB === undefined) return [];
    return compare.rows(sectionA, sectionB).map((row) => ({ section: section as ComparedSection, ...row }));
  });
}

export interface Comparison {
  a: BenchResult;
  b: BenchResult;
}

/** The fragment `#c=…` carrying both results, each trimmed to half of `budgetChars`. */
export async function encodeComparison(a: BenchResult, b: BenchResult, budgetChars = LINK_BUDGET_CHARS): Promise<string> {
  const [sharedA, sharedB] = await Promise.all([shareable(a, budgetChars / 2), shareable(b, budgetChars / 2)]);
  return checkedLength(await encodeFragment('c', { a: sharedA, b: sharedB }));
}

function validateSide(doc: unknown, side: string): BenchResult {
  try {
    return validateResult(doc);
  } catch (e) {
    if (!isTokenscopeError(e)) throw e;
    throw new TokenscopeError(e.code, `In the ${side} result of the comparison: ${e.message}`, e.hint, { cause: e });
  }
}

/** The two validated results a `#c=…` fragment carries; every failure is a `bad-input` TokenscopeError. */
export async function decodeComparison(fragment: string): Promise<Comparison> {
  const doc = expectObject(await decodeFragment('c', fragment), 'comparison');
  return { a: validateSide(doc.a, 'first'), b: validateSide(doc.b, 'second') };
}

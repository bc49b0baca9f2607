/**
 * Permalinks: a whole report in the URL fragment (`#r=…`, see codec.ts), so a link renders the
 * full report with no server. A link is kept under a budget by trimming, step by step in the order
 * of measure/section.ts TRIM_STEPS, the bulky raw data the report's tables and charts do not draw
 * from; the rows, depth curve, summary, verdicts, kernel breakdown and ceiling values are kept, and
 * only as the last steps rounded to more digits than any table shows. What each step takes from a
 * section is that section's module's `trim` (measure/sections/). The trimmed result says what went
 * in its `notes` and `trimmed` flag. Every link, trimmed or not, carries its numbers to nine
 * significant digits (codec.ts LINK_DIGITS), past which a timing holds only floating-point residue.
 */
import type { BenchResult } from '../measure/schema.ts';
import { RESULT_SECTIONS } from '../measure/schema.ts';
import { TRIM_STEPS, type SectionKey, type SectionTrim, type TrimStep } from '../measure/section.ts';
import { checkedLength, decodeFragment, encodeFragment, linkRounded } from './codec.ts';
import { validateResult } from '../measure/validate.ts';

/** Default size of a shared link's fragment, characters: short enough for chat apps and issue trackers. */
export const LINK_BUDGET_CHARS = 8000;

/**
 * One step over every section: the trimmed copy and the notes of the sections it trimmed (one
 * note for sections that share it), or null when no section had anything of its kind.
 */
function trimStep(r: BenchResult, step: TrimStep): { result: BenchResult; notes: string[] } | null {
  let result = r;
  const notes: string[] = [];
  for (const key of Object.keys(RESULT_SECTIONS) as SectionKey[]) {
    const piece = (RESULT_SECTIONS[key].trim as Partial<Record<TrimStep, SectionTrim<unknown>>> | null)?.[step];
    const section = r[key];
    if (!piece || section === undefined) continue;
    const trimmed = piece.trim(section);
    if (trimmed === null) continue;
    result = { ...result, [key]: trimmed };
    if (!notes.includes(piece.note)) notes.push(piece.note);
  }
  return notes.length ? { result, notes } : null;
}

interface Fitted {
  result: BenchResult;
  fragment: string;
}

/**
 * The result as it goes into a link: whole (its numbers to LINK_DIGITS significant digits) when
 * its fragment fits `budgetChars`, else trimmed step by step until it does. Past every step it may
 * still be over the budget (many prompt lengths); it is then shared as is, unless it is over what
 * decoding accepts.
 */
async function fit(result: BenchResult, budgetChars: number): Promise<Fitted> {
  let current = linkRounded(result);
  let fragment = await encodeFragment('r', current);
  for (const step of TRIM_STEPS) {
    if (fragment.length <= budgetChars) break;
    const next = trimStep(current, step);
    if (next === null) continue;
    current = { ...next.result, trimmed: true, notes: [...(next.result.notes ?? []), ...next.notes] };
    fragment = await encodeFragment('r', current);
  }
  return { result: current, fragment: checkedLength(fragment) };
}

/** The result trimmed (in TRIM_STEPS order) until its link fits `budgetChars`. */
export async function shareable(result: BenchResult, budgetChars = LINK_BUDGET_CHARS): Promise<BenchResult> {
  return (await fit(result, budgetChars)).result;
}

/** The URL fragment `#r=…` of the result, trimmed to `budgetChars` (see {@link shareable}). */
export async function encodeReport(result: BenchResult, budgetChars = LINK_BUDGET_CHARS): Promise<string> {
  return (await fit(result, budgetChars)).fragment;
}

/** The validated result a `#r=…` fragment carries; every failure is a `bad-input` TokenscopeError. */
export async function decodeReport(fragment: string): Promise<BenchResult> {
  return validateResult(await decodeFragment('r', fragment));
}

/**
 * A list of results, for the page's many-results view: a JSON document the CLI writes with
 * `--merge` (`{"kind": "tokenscope-results", "version": 1, "results": [...]}`), or a bare JSON
 * array. Each item is a result or a tokenscope link (`…#r=…`, `…#c=…`). Everything in it is
 * validated, item by item, and an error names the item. A list at a URL is fetched with the same
 * bounds as model downloads (model/gguf/http.ts: header and stall timeouts, a byte cap).
 */
import { isTokenscopeError, TokenscopeError } from '../errors.ts';
import type { BenchResult } from '../measure/schema.ts';
import { validateResult } from '../measure/validate.ts';
import { boundedFetch, serverOf, type FetchOptions } from '../model/gguf/http.ts';
import { decodeComparison } from './compare.ts';
import { MAX_IMPORT_CHARS } from './export.ts';
import { parseJson } from './json.ts';
import { decodeReport } from './permalink.ts';

export const LIST_KIND = 'tokenscope-results';
export const LIST_VERSION = 1;
/** Most items a list may hold: far more than a view can show usefully, few enough to validate at once. */
export const MAX_LIST_ITEMS = 2000;

export interface ResultList {
  kind: typeof LIST_KIND;
  version: typeof LIST_VERSION;
  results: BenchResult[];
}

const HINT = 'Give a list written by `npm run bench -- --merge … --json list.json`, or a JSON array of results or tokenscope links.';

const badList = (message: string, cause?: unknown) => new TokenscopeError('bad-input', message, HINT, { cause });

/** `e` with "In item i (what): " before its message. */
function inItem(e: unknown, i: number, what: string): TokenscopeError {
  if (!isTokenscopeError(e)) return badList(`Item ${i + 1} (${what}) could not be read: ${String(e)}`, e);
  return new TokenscopeError(e.code, `Item ${i + 1} (${what}): ${e.message}`, e.hint, { cause: e });
}

/** The results a pasted or listed link carries: one for `#r=`, two for `#c=`. */
export async function resultsOfLink(text: string): Promise<BenchResult[]> {
  const hash = text.trim().replace(/^[^#]*/, '');
  if (hash.startsWith('#r=')) return [await decodeReport(hash)];
  if (hash.startsWith('#c=')) {
    const { a, b } = await decodeComparison(hash);
    return [a, b];
  }
  throw new TokenscopeError(
    'bad-input',
    'This is not a tokenscope link: it has no #r= or #c= part.',
    'Paste whole links made by the Share button, one per line.',
  );
}

/** The items of a parsed list document, checked for shape (not yet validated one by one). */
function itemsOf(doc: unknown): unknown[] {
  let items: unknown[];
  if (Array.isArray(doc)) items = doc;
  else if (doc && typeof doc === 'object' && 'results' in doc) {
    const { kind, version } = doc as { kind?: unknown; version?: unknown };
    if (kind !== undefined && kind !== LIST_KIND) throw badList(`This is not a tokenscope result list (its kind is ${JSON.stringify(kind).slice(0, 60)}).`);
    if (version !== undefined && version !== LIST_VERSION)
      throw badList(`This result list is version ${JSON.stringify(version).slice(0, 20)}; this page reads version ${LIST_VERSION}.`);
    const results = (doc as { results: unknown }).results;
    if (!Array.isArray(results)) throw badList('The list\'s "results" is not an array.');
    items = results;
  } else throw badList('This is not a list of results: expected a JSON array, or an object with a "results" array.');
  if (items.length === 0) throw badList('The list is empty.');
  if (items.length > MAX_LIST_ITEMS) throw badList(`The list has ${items.length} items; the view takes at most ${MAX_LIST_ITEMS}.`);
  return items;
}

/** Every result of a list document (results inline, or links to decode); the first bad item stops it with an error naming the item. */
export async function resultsOfList(doc: unknown): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  for (const [i, item] of itemsOf(doc).entries()) {
    try {
      if (typeof item === 'string') out.push(...(await resultsOfLink(item)));
      else out.push(validateResult(item));
    } catch (e) {
      throw inItem(e, i, typeof item === 'string' ? 'a link' : 'a result');
    }
  }
  return out;
}

/** Whether a parsed document is a list (an array, or an object with "results") rather than one result. */
export const isListDocument = (doc: unknown): boolean => Array.isArray(doc) || (doc !== null && typeof doc === 'object' && 'results' in doc);

/** A file's text as results: one result (saved with --json or exported), or a list. */
export async function parseResultsText(text: string): Promise<BenchResult[]> {
  if (text.length > MAX_IMPORT_CHARS) throw badList(`It has ${text.length} characters; the view reads at most ${MAX_IMPORT_CHARS}.`);
  const doc = parseJson(text.replace(/^\uFEFF/, ''), 'file');
  return isListDocument(doc) ? resultsOfList(doc) : [validateResult(doc)];
}

/** The results of a list at `url` (http or https), fetched with bounded waits and at most MAX_IMPORT_CHARS bytes. */
export async function fetchResultList(url: string, options: FetchOptions = {}): Promise<BenchResult[]> {
  let parsed: URL;
  try {
    parsed = new URL(url, globalThis.location?.href);
  } catch (e) {
    throw badList(`“${url.slice(0, 200)}” is not a URL.`, e);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw badList(`The list must be fetched over http or https, not ${parsed.protocol}`);
  const chunks: Uint8Array[] = [];
  try {
    const answer = await boundedFetch(parsed.href, { credentials: 'omit' }, options);
    for await (const chunk of answer.body(MAX_IMPORT_CHARS, 'the result list')) chunks.push(chunk);
  } catch (e) {
    if (!isTokenscopeError(e, 'io')) throw e;
    throw new TokenscopeError(
      'io',
      `The result list could not be fetched: ${e.message}`,
      'Check the URL: it must serve a JSON list (with CORS allowed when it is on another site), or download the list and open it as a file.',
      { cause: e },
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
  } catch (e) {
    throw badList(`The list from ${serverOf(parsed.href)} is not UTF-8 text.`, e);
  }
  return resultsOfList(parseJson(text.replace(/^\uFEFF/, ''), 'file'));
}

/** Results merged into one list (the CLI's `--merge`); each must already be validated. */
export function resultList(results: BenchResult[]): ResultList {
  if (results.length > MAX_LIST_ITEMS) throw badList(`${results.length} results; a list holds at most ${MAX_LIST_ITEMS}.`);
  return { kind: LIST_KIND, version: LIST_VERSION, results };
}

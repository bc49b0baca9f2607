import { describe, expect, it } from 'vitest';
import { isTokenscopeError } from '../../../src/errors.ts';
import { encodeReport } from '../../../src/share/permalink.ts';
import { encodeComparison } from '../../../src/share/compare.ts';
import { fetchResultList, MAX_LIST_ITEMS, parseResultsText, resultList, resultsOfList } from '../../../src/share/result-list.ts';
import { smallResult } from './fixtures.ts';

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (!isTokenscopeError(e)) throw e;
    return { code: e.code, message: e.message };
  }
  throw new Error('expected a refusal');
}

describe('result lists', () => {
  it('reads the merged list, a bare array, results and #r= / #c= links alike', async () => {
    const a = smallResult();
    const b = { ...smallResult(), created_at: '2026-03-01T00:00:00.000Z' };
    const link = `https://example.test/tokenscope/${await encodeReport(a)}`;
    const pair = await encodeComparison(a, b);
    const merged = JSON.stringify(resultList([a, b]));
    expect(await parseResultsText(merged)).toEqual([a, b]);
    expect((await parseResultsText(JSON.stringify([a, link, pair]))).map((r) => r.created_at)).toEqual([
      a.created_at,
      a.created_at,
      a.created_at,
      b.created_at,
    ]);
    expect(await parseResultsText(JSON.stringify(a))).toEqual([a]);
  });

  it('names the bad item, and refuses other kinds, versions, empty and oversized lists', async () => {
    const a = smallResult();
    const broken = { ...smallResult(), schema_version: 99 };
    expect((await refusal(resultsOfList([a, broken]))).message).toMatch(/^Item 2 \(a result\): This result uses schema version 99/);
    expect((await refusal(resultsOfList([a, 'https://x.test/#q=abc']))).message).toMatch(/^Item 2 \(a link\): This is not a tokenscope link/);
    const damaged = { ...smallResult(), latency: { ...a.latency, rows: 'x' } };
    expect((await refusal(resultsOfList({ results: [damaged] }))).message).toMatch(/^Item 1 \(a result\): Invalid result: latency\.rows/);
    expect((await refusal(resultsOfList({ kind: 'other', results: [a] }))).message).toMatch(/not a tokenscope result list/);
    expect((await refusal(resultsOfList({ kind: 'tokenscope-results', version: 2, results: [a] }))).message).toMatch(/version 2; this page reads version 1/);
    expect((await refusal(resultsOfList([]))).message).toMatch(/empty/);
    expect((await refusal(resultsOfList({ results: 'no' }))).message).toMatch(/"results" is not an array/);
    expect((await refusal(resultsOfList(new Array(MAX_LIST_ITEMS + 1).fill(0)))).message).toMatch(/at most 2000/);
    expect((await refusal(parseResultsText('{"results": [1,'))).message).toMatch(/not valid JSON/);
    expect((await refusal(parseResultsText('1'.padStart(20, '[')))).message).toMatch(/nests/);
  });

  it('fetches a list with bounded waits, and says what went wrong', async () => {
    const a = smallResult();
    const ok: typeof fetch = async () => new Response(JSON.stringify([a]), { status: 200 });
    expect(await fetchResultList('https://lists.test/l.json', { fetch: ok })).toEqual([a]);
    const missing: typeof fetch = async () => new Response('nope', { status: 404 });
    expect(await refusal(fetchResultList('https://lists.test/l.json', { fetch: missing }))).toMatchObject({
      code: 'io',
      message: expect.stringMatching(/^The result list could not be fetched: .*HTTP 404/),
    });
    const stalls: typeof fetch = async () => new Response(new ReadableStream({ pull: () => new Promise(() => {}) }), { status: 200 });
    expect((await refusal(fetchResultList('https://lists.test/l.json', { fetch: stalls, idleTimeoutMs: 50 }))).message).toMatch(/stalled/);
    expect((await refusal(fetchResultList('file:///etc/passwd', { fetch: ok }))).message).toMatch(/http or https/);
    expect((await refusal(fetchResultList('https://lists.test/l.json', { fetch: async () => new Response('<html>', { status: 200 }) }))).message).toMatch(
      /not valid JSON/,
    );
  });
});

/**
 * Files kept in the browser (the real Cache API, in Chromium; Node has none, so this file skips
 * there). The server is a fetch function serving a small GGUF, counting its requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forgetAll, forgetFile, isKept, keptFiles, keptOrDownload, modelCacheAvailable } from '../../src/model/gguf/model-cache.ts';
import { readGGUF } from '../../src/model/gguf/reader.ts';
import { buildTestModel } from '../../src/model/gguf/synthetic.ts';
import { isTokenscopeError } from '../../src/errors.ts';

const file = buildTestModel({ architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 1, nHeads: 4, vocabSize: 300 });
const URL_A = 'https://models.test/a.gguf';
const URL_B = 'https://models.test/b.gguf';

interface ServerOptions {
  status?: number;
  /** Overrides Content-Length (a truncated transfer, an absurd size); null sends none. */
  declared?: number | null;
  /** After the file: zeros forever, or silence. */
  then?: 'endless' | 'stall';
}

/** Serves `file` whole, in 4 KiB chunks, counting what it sent. */
function server(opts: ServerOptions = {}) {
  const requests: string[] = [];
  const sent = { bytes: 0 };
  const fetch = (async (url: RequestInfo | URL) => {
    requests.push(String(url));
    if (opts.status) return new Response('nope', { status: opts.status });
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= file.length && opts.then === 'stall') return new Promise<void>(() => {});
        if (at >= file.length && opts.then !== 'endless') return c.close();
        const chunk = at < file.length ? file.slice(at, at + 4096) : new Uint8Array(4096);
        c.enqueue(chunk);
        at += chunk.length;
        sent.bytes += chunk.length;
      },
    });
    const declared = opts.declared === undefined ? file.length : opts.declared;
    return new Response(body, { headers: declared === null ? {} : { 'Content-Length': String(declared) } });
  }) as typeof globalThis.fetch;
  return { fetch, requests, sent };
}

describe.skipIf(!modelCacheAvailable())('files kept in the browser (Cache API)', () => {
  afterEach(() => forgetAll());

  it('downloads once with progress, then reads the kept copy without fetching', async () => {
    const s = server();
    const progress: number[] = [];
    const first = await keptOrDownload(URL_A, { fetch: s.fetch, onProgress: (loaded, total) => progress.push(loaded / total) });
    expect(first.fromCache).toBe(false);
    expect(progress.at(-1)).toBe(1);
    expect(progress.length).toBeGreaterThan(1);
    const second = await keptOrDownload(URL_A, { fetch: s.fetch });
    expect(second.fromCache).toBe(true);
    expect(s.requests).toEqual([URL_A]);
    // The kept copy is the file: its header reads back and its bytes are the same.
    expect((await readGGUF(second.source)).tensors.length).toBeGreaterThan(0);
    expect(await second.source.read(0, file.length)).toEqual(file);
    expect(await isKept(URL_A)).toBe(true);
    expect((await keptFiles()).map((f) => [f.url, f.bytes])).toEqual([[URL_A, file.length]]);
  });

  it('lists each kept file with its size and forgets one or all', async () => {
    await keptOrDownload(URL_A, { fetch: server().fetch });
    await keptOrDownload(URL_B, { fetch: server().fetch });
    expect((await keptFiles()).map((f) => f.url).sort()).toEqual([URL_A, URL_B]);
    expect(await forgetFile(URL_A)).toBe(true);
    expect((await keptFiles()).map((f) => f.url)).toEqual([URL_B]);
    await forgetAll();
    expect(await keptFiles()).toEqual([]);
  });

  it('keeps nothing when the transfer ends short of the declared size, or the server refuses', async () => {
    const short = keptOrDownload(URL_A, { fetch: server({ declared: file.length + 100 }).fetch });
    await expect(short).rejects.toSatisfy((e: unknown) => isTokenscopeError(e, 'io'));
    expect(await isKept(URL_A)).toBe(false);
    const refused = keptOrDownload(URL_A, { fetch: server({ status: 404 }).fetch });
    await expect(refused).rejects.toThrow(/HTTP 404/);
    expect(await keptFiles()).toEqual([]);
  });

  it('bounds the download: no size, more than declared, a stall, more than the storage left, the page’s cancel', async () => {
    const noSize = server({ declared: null, then: 'endless' });
    await expect(keptOrDownload(URL_A, { fetch: noSize.fetch })).rejects.toThrow(/no Content-Length/);
    expect(noSize.sent.bytes).toBeLessThan(1 << 20);
    // An endless same-origin body stops at its declared size (a browser also unpacks gzip unasked).
    const endless = server({ then: 'endless' });
    await expect(keptOrDownload(URL_A, { fetch: endless.fetch })).rejects.toThrow(new RegExp(`sent more than the ${file.length}-byte file holds`));
    expect(endless.sent.bytes).toBeLessThan(file.length + (1 << 20));
    const stalled = server({ declared: file.length + 1, then: 'stall' });
    await expect(keptOrDownload(URL_A, { fetch: stalled.fetch, idleTimeoutMs: 300 })).rejects.toThrow(/stalled sending/);
    await expect(keptOrDownload(URL_A, { fetch: server({ declared: 1e15 }).fetch })).rejects.toThrow(
      /declares 1000000000000000 bytes .* more than the .* this browser can still keep/,
    );
    const abort = new AbortController();
    const cancelled = keptOrDownload(URL_A, { fetch: server({ declared: file.length + 1, then: 'stall' }).fetch, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    await expect(cancelled).rejects.toSatisfy((e: unknown) => isTokenscopeError(e, 'cancelled'));
    expect(await keptFiles()).toEqual([]);
  });
});

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

/** Serves `file` whole, in 4 KiB chunks; `declared` overrides Content-Length (a truncated transfer). */
function server(opts: { status?: number; declared?: number } = {}) {
  const requests: string[] = [];
  const fetch = (async (url: RequestInfo | URL) => {
    requests.push(String(url));
    if (opts.status) return new Response('nope', { status: opts.status });
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= file.length) return c.close();
        c.enqueue(file.slice(at, at + 4096));
        at += 4096;
      },
    });
    return new Response(body, { headers: { 'Content-Length': String(opts.declared ?? file.length) } });
  }) as typeof globalThis.fetch;
  return { fetch, requests };
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
});

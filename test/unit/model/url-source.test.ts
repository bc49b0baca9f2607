import { describe, expect, it } from 'vitest';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { buildTestModel } from '../../../src/model/gguf/synthetic.ts';
import { urlSource } from '../../../src/model/gguf/url-source.ts';
import { expectTokenscopeError } from './helpers.ts';

const file = buildTestModel({ architecture: 'llama', dim: 128, hiddenDim: 256, nLayers: 2, nHeads: 4, vocabSize: 4096 });

interface ServerOptions {
  ranges: boolean;
  /** CORS without Access-Control-Expose-Headers hides Content-Range from the page. */
  hideContentRange?: boolean;
  status?: number;
}

/** A fetch that serves `file` like an HTTP server would, and logs each request's Range header. */
function server(options: ServerOptions) {
  const log: (string | null)[] = [];
  const fetch = async (_url: RequestInfo | URL, init?: RequestInit) => {
    const range = new Headers(init?.headers).get('Range');
    log.push(range);
    if (options.status) return new Response('nope', { status: options.status });
    const m = range && options.ranges ? /^bytes=(\d+)-(\d+)$/.exec(range) : null;
    if (m) {
      const [start, end] = [Number(m[1]), Math.min(Number(m[2]), file.length - 1)];
      const headers: Record<string, string> = options.hideContentRange ? {} : { 'Content-Range': `bytes ${start}-${end}/${file.length}` };
      return new Response(file.slice(start, end + 1), { status: 206, headers });
    }
    // The whole body in 64 KiB chunks, so progress is reported more than once.
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= file.length) return controller.close();
        controller.enqueue(file.slice(at, at + 65536));
        at += 65536;
      },
    });
    return new Response(body, { status: 200, headers: { 'Content-Length': String(file.length) } });
  };
  return { fetch: fetch as typeof globalThis.fetch, log };
}

describe('URL source', () => {
  it('uses Range requests when the server answers 206: the header, then one request per tensor', async () => {
    const s = server({ ranges: true });
    const progress: number[] = [];
    const source = await urlSource('https://models.example/m.gguf', { fetch: s.fetch, onProgress: (loaded) => progress.push(loaded) });
    expect(source.size).toBe(file.length);
    const gguf = await readGGUF(source);
    const t = gguf.tensor('blk.0.attn_q.weight')!;
    const bytes = await gguf.tensorBytes(t);
    expect(Buffer.from(bytes).equals(Buffer.from(file.subarray(t.offset, t.offset + t.byteSize)))).toBe(true);
    expect(s.log).toEqual(['bytes=0-0', `bytes=0-${(1 << 20) - 1}`, `bytes=${t.offset}-${t.offset + t.byteSize - 1}`]);
    expect(progress).toEqual([]);
  });

  it('streams the whole file once, reporting progress, when the server ignores Range', async () => {
    const s = server({ ranges: false });
    const progress: [number, number][] = [];
    const source = await urlSource('https://models.example/m.gguf', { fetch: s.fetch, onProgress: (l, t) => progress.push([l, t]) });
    const gguf = await readGGUF(source);
    await gguf.tensorBytes('output.weight');
    expect(s.log).toEqual(['bytes=0-0']);
    expect(progress.length).toBe(Math.ceil(file.length / 65536));
    expect(progress.at(-1)).toEqual([file.length, file.length]);
    expect(progress.every(([l], i) => i === 0 || l > progress[i - 1][0])).toBe(true);
  });

  it('downloads once when a 206 hides its Content-Range (CORS), since the size is unknown', async () => {
    const s = server({ ranges: true, hideContentRange: true });
    const source = await urlSource('https://models.example/m.gguf', { fetch: s.fetch });
    expect(source.size).toBe(file.length);
    expect(s.log).toEqual(['bytes=0-0', null]);
  });

  it('rangesOnly (inspecting a header) never downloads the whole file', async () => {
    const hidden = server({ ranges: true, hideContentRange: true });
    const viaHead = await urlSource('https://models.example/m.gguf', { fetch: hidden.fetch, rangesOnly: true });
    expect(viaHead.size).toBe(file.length);
    expect((await readGGUF(viaHead)).tensors.length).toBeGreaterThan(0);
    // The probe, the HEAD (no Range header), then ranges only.
    expect(hidden.log.slice(0, 2)).toEqual(['bytes=0-0', null]);
    expect(hidden.log.slice(2).every((r) => r !== null)).toBe(true);
    const noRanges = server({ ranges: false });
    await expectTokenscopeError(
      () => urlSource('https://models.example/m.gguf', { fetch: noRanges.fetch, rangesOnly: true }),
      'io',
      /does not serve byte ranges/,
    );
    expect(noRanges.log).toEqual(['bytes=0-0']);
  });

  it('turns HTTP and network failures into io errors', async () => {
    await expectTokenscopeError(
      () => urlSource('https://models.example/missing.gguf', { fetch: server({ ranges: true, status: 404 }).fetch }),
      'io',
      /answered HTTP 404/,
    );
    const offline = (() => Promise.reject(new TypeError('fetch failed'))) as typeof fetch;
    await expectTokenscopeError(() => urlSource('https://models.example/m.gguf', { fetch: offline }), 'io', /could not fetch .*: fetch failed/);
  });

  it('refuses a range answer of the wrong length (the file changed on the server)', async () => {
    const s = server({ ranges: true });
    const source = await urlSource('https://models.example/m.gguf', {
      fetch: (async (url: RequestInfo | URL, init?: RequestInit) => {
        const r = await s.fetch(url, init);
        return s.log.length > 1 ? new Response((await r.arrayBuffer()).slice(1), { status: 206 }) : r;
      }) as typeof fetch,
    });
    await expectTokenscopeError(() => source.read(10, 100), 'io', /range request for 100 bytes at byte 10 with status 206 and 99 bytes/);
  });
});

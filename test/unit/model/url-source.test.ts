import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { buildTestModel } from '../../../src/model/gguf/synthetic.ts';
import { urlSource } from '../../../src/model/gguf/url-source.ts';
import { resolveModel } from '../../../src/jobs/model-source.ts';
import { expectTokenscopeError } from './helpers.ts';
import { hostileServer, type HostileServer } from './hostile-server.ts';

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

/**
 * Short limits, so each case fails in a second or two; the defaults (8 s) are for users. The header
 * limit is the longer one: on a loaded machine a redirect loop or a first byte can take longer than
 * the stall window, and the case must fail for its own reason.
 */
const QUICK = { headerTimeoutMs: 1500, idleTimeoutMs: 300 };

/** `action` fails with an io error matching `message`, within `seconds`. */
async function failsQuickly(action: () => Promise<unknown>, message: RegExp, seconds = 5) {
  const t0 = performance.now();
  const error = await expectTokenscopeError(action, 'io', message);
  expect((performance.now() - t0) / 1000).toBeLessThan(seconds);
  return error;
}

describe('URL source against hostile servers: every case ends in seconds with a clear error', () => {
  let server: HostileServer;
  beforeAll(async () => {
    server = await hostileServer();
  });
  afterAll(() => server?.close());

  it('a server that never answers: the header timeout names the server', async () => {
    await failsQuickly(() => urlSource(server.url('/silent'), QUICK), /127\.0\.0\.1:\d+ did not answer within 1\.5 s/);
  });

  it('a body that stalls after its headers, a 206 that stalls, and drips: the stall timeout', async () => {
    await failsQuickly(
      () => urlSource(server.url('/stall-body'), QUICK),
      /stalled sending the 1048576-byte file: 1000 bytes in the last 0\.3 s \(1000 of 1048576/,
    );
    const ranged = await urlSource(server.url('/stall-206'), QUICK);
    await failsQuickly(() => ranged.read(0, 1 << 20), /stalled sending the range of 1048576 bytes at byte 0: 0 bytes in the last 0\.3 s/);
    // A drip is never silent for long, but falls far short of 64 KiB per window.
    await failsQuickly(() => urlSource(server.url('/drip'), QUICK), /stalled sending the 1048576-byte file: \d+ bytes in the last 0\.3 s/);
    const dripping = await urlSource(server.url('/drip-206'), QUICK);
    await failsQuickly(() => dripping.read(0, 1 << 20), /stalled sending the range of 1048576 bytes at byte 0/);
  });

  it('an endless body without a size is refused before it is read; an endless 206 stops at the bytes asked', async () => {
    const rss0 = process.memoryUsage().rss;
    await failsQuickly(() => urlSource(server.url('/endless'), QUICK), /does not say how big .* is \(no Content-Length\)/);
    const ranged = await urlSource(server.url('/endless-206'), QUICK);
    await failsQuickly(() => ranged.read(0, 1 << 20), /sent more than the range of 1048576 bytes at byte 0 holds/);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(256 << 20);
  });

  it('a body that decodes to more than its Content-Length (a browser unpacks gzip unasked) stops at that size', async () => {
    let sent = 0;
    const endlessBody = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += 1 << 20;
        c.enqueue(new Uint8Array(1 << 20));
      },
    });
    const lying = (async () => new Response(endlessBody, { headers: { 'Content-Length': String(8 << 20) } })) as typeof fetch;
    const rss0 = process.memoryUsage().rss;
    await failsQuickly(() => urlSource('https://models.example/m.gguf', { ...QUICK, fetch: lying }), /sent more than the 8388608-byte file holds/);
    expect(sent).toBeLessThanOrEqual(10 << 20);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(256 << 20);
  });

  it('asks for no compression and refuses a gzip bomb sent anyway, before unpacking a byte', async () => {
    const rss0 = process.memoryUsage().rss;
    await failsQuickly(() => urlSource(server.url('/gzip-bomb'), QUICK), /sent .*gzip-bomb compressed \(Content-Encoding: gzip\)/, 8);
    // undici repeats it for the Range probe (the Fetch standard adds it to every range request).
    const asked = server.requests.filter((r) => r.path === '/gzip-bomb').map((r) => r.acceptEncoding);
    expect(asked).toEqual([expect.stringMatching(/^identity(, identity)*$/)]);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(256 << 20);
  });

  it('a Content-Length of 100 GB without ranges is refused up front', async () => {
    const rss0 = process.memoryUsage().rss;
    await failsQuickly(
      () => urlSource(server.url('/huge'), QUICK),
      /declares 100000000000 bytes \(93\.13 GiB\), more than the 4\.00 GiB this process downloads whole/,
      1,
    );
    expect(process.memoryUsage().rss - rss0).toBeLessThan(256 << 20);
  });

  it('a redirect loop is called one, not a CORS problem', async () => {
    const error = await failsQuickly(() => urlSource(server.url('/loop'), QUICK), /\/loop redirects in a loop/);
    expect(error.describe()).not.toMatch(/CORS/);
  });

  it('the caller’s cancel stops a download mid-body with a cancelled error', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const t0 = performance.now();
    await expectTokenscopeError(() => urlSource(server.url('/drip'), { signal: abort.signal }), 'cancelled', /cancelled/);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe('--model URL (resolveModel in Node) against hostile servers', () => {
  let server: HostileServer;
  beforeAll(async () => {
    server = await hostileServer({ '/plain.gguf': file });
  });
  afterAll(() => server?.close());

  it('downloads a server without ranges once, its progress in bytes of the declared total', async () => {
    const steps: [string, number][] = [];
    const resolved = await resolveModel({ url: server.url('/plain.gguf') }, { onProgress: (step, f) => steps.push([step, f]) });
    expect(resolved.choice.kind).toBe('gguf');
    const mib = (file.length / 2 ** 20).toFixed(1);
    expect(steps.at(-1)).toEqual([`downloading ${server.url('/plain.gguf')}: ${mib} MiB of ${mib} MiB`, 1]);
  });

  it('a stalled or endless header read, a 100 GB body and a redirect loop end in seconds', async () => {
    const net = QUICK;
    await failsQuickly(() => resolveModel({ url: server.url('/stall-206') }, { net }), /stalled sending the range of 1048576 bytes at byte 0/);
    await failsQuickly(() => resolveModel({ url: server.url('/endless-206') }, { net }), /sent more than the range of 1048576 bytes at byte 0 holds/);
    await failsQuickly(() => resolveModel({ url: server.url('/huge') }, { net }), /declares 100000000000 bytes/, 1);
    await failsQuickly(() => resolveModel({ url: server.url('/loop') }, { net }), /redirects in a loop/);
  });
});

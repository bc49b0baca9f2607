import { deflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { isTokenscopeError } from '../../../src/errors.ts';
import { inflateRawCapped, linkRounded, MAX_DECOMPRESSED_BYTES, MAX_FRAGMENT_CHARS, toBase64Url } from '../../../src/share/codec.ts';
import { decodeReport, encodeReport } from '../../../src/share/permalink.ts';
import { mulberry32 } from '../../../src/serve/workload.ts';
import { largeResult, smallResult } from './fixtures.ts';

const fragmentOf = (bytes: Uint8Array) => `#r=${toBase64Url(bytes)}`;
const deflated = (text: string) => fragmentOf(deflateRawSync(Buffer.from(text, 'utf8')));
const deflatedJson = (doc: unknown) => deflated(JSON.stringify(doc));

/** Decoding fails with a bad-input error whose message matches and that says what to do. */
async function rejects(fragment: string, message: RegExp): Promise<void> {
  const e = await decodeReport(fragment).then(
    () => null,
    (x: unknown) => x,
  );
  expect(isTokenscopeError(e, 'bad-input'), String(e)).toBe(true);
  expect((e as Error).message).toMatch(message);
  expect((e as { hint: string }).hint).not.toBe('');
}

describe('hostile fragments are refused with bad-input', () => {
  it.each([
    ['another key', '#c=AAAA', /does not carry a tokenscope report/],
    ['no key', '#AAAA', /does not carry a tokenscope report/],
    ['characters outside base64url', '#r=ab*cd', /characters that base64url does not use/],
    ['standard base64 with padding', '#r=ab+/cd==', /characters that base64url does not use/],
    ['whitespace', '#r=abcd efgh', /characters that base64url does not use/],
    ['an impossible length', '#r=abcde', /impossible length/],
    ['an empty payload', '#r=', /not valid deflate/],
    ['a fragment over the cap', `#r=${'A'.repeat(MAX_FRAGMENT_CHARS)}`, /at most 65536/],
  ])('%s', async (_name, fragment, message) => {
    await rejects(fragment, message);
  });

  it('a truncated link', async () => {
    const body = (await encodeReport(largeResult())).slice(3);
    for (const keep of [0.25, 0.5, 0.9, 0.99]) await rejects(`#r=${body.slice(0, Math.floor(body.length * keep) & ~3)}`, /not valid deflate/);
  });

  it('random bytes', async () => {
    const random = mulberry32(11);
    for (let i = 0; i < 20; i++) {
      const bytes = Uint8Array.from({ length: 50 + 100 * i }, () => Math.floor(random() * 256));
      await rejects(fragmentOf(bytes), /not valid deflate|not valid UTF-8|not valid JSON|expands|Invalid result/);
    }
  });

  it('valid deflate of text that is not JSON', async () => {
    await rejects(deflated('<html><script>alert(1)</script>'), /not valid JSON/);
    await rejects(deflated('{"schema_version": 1,'), /not valid JSON at line 1, column 22/);
  });

  it('valid deflate of bytes that are not UTF-8', async () => {
    await rejects(fragmentOf(deflateRawSync(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))), /not valid UTF-8/);
  });

  it('JSON that is not a result', async () => {
    await rejects(deflatedJson([1, 2, 3]), /result must be an object/);
    await rejects(deflatedJson('hello'), /result must be an object/);
    await rejects(deflatedJson({ ...smallResult(), environment: undefined }), /environment must be an object/);
  });

  it('a result of another schema version', async () => {
    await rejects(deflatedJson({ ...smallResult(), schema_version: 2 }), /schema version 2; this tokenscope reads version 1/);
    await rejects(deflatedJson({ ...smallResult(), schema_version: '1' }), /schema_version must be a finite number/);
  });

  it('deep nesting, even in a field no validator reads, and inside strings it is fine', async () => {
    const deep = `{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    await rejects(deflated(deep), /nests arrays or objects deeper than 16 levels \(line 1, column 21\)/);
    const r = { ...smallResult(), notes: ['['.repeat(900)] };
    expect(await decodeReport(deflatedJson(r))).toEqual(r);
  });

  it('huge arrays', async () => {
    const r = smallResult();
    await rejects(
      deflatedJson({ ...r, latency: { ...(r.latency as object), requests: new Array(100_001).fill(0) } }),
      /latency.requests has more than 100000 items/,
    );
    await rejects(
      deflatedJson({ ...r, environment: { ...r.environment, features: new Array(257).fill('f') } }),
      /environment.features has more than 256 items/,
    );
  });
});

describe('decompression bombs', () => {
  let bigBomb: Buffer;
  let fittingBomb: Buffer;
  beforeAll(() => {
    bigBomb = deflateRawSync(Buffer.alloc(50 * 2 ** 20));
    fittingBomb = deflateRawSync(Buffer.alloc(40 * 2 ** 20));
  });

  it('50 MB of zeros is refused by the fragment cap', async () => {
    const fragment = fragmentOf(bigBomb);
    expect(fragment.length).toBeGreaterThan(MAX_FRAGMENT_CHARS);
    const t0 = performance.now();
    await rejects(fragment, /characters long; tokenscope links are at most/);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('40 MB of zeros under the fragment cap stops at the decompressed cap without inflating it all', async () => {
    const fragment = fragmentOf(fittingBomb);
    expect(fragment.length).toBeLessThan(MAX_FRAGMENT_CHARS);
    const before = process.memoryUsage().arrayBuffers;
    const t0 = performance.now();
    await rejects(fragment, new RegExp(`expands to more than ${MAX_DECOMPRESSED_BYTES} bytes`));
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * 2 ** 20);
  });

  it('the streaming cap holds for any size behind it', async () => {
    const bomb = deflateRawSync(Buffer.alloc(200 * 2 ** 20), { level: 1 });
    const t0 = performance.now();
    await expect(inflateRawCapped(new Uint8Array(bomb), 1 << 20)).rejects.toMatchObject({ code: 'bad-input' });
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe('markup in strings is data', () => {
  const PAYLOADS = [
    '<script>alert(1)</script>',
    '<img src=x onerror="alert(1)">',
    '"></td><svg onload=alert(1)>',
    'javascript:alert(1)',
    '\u2028\u0000\uFFFD 𝄞',
  ];
  /** Fields whose strings must be one of a few values (or a date) and so cannot carry a payload. */
  const ENUMS = new Set(['runtime', 'unit', 'clock', 'gpu_clock', 'bound', 'phase', 'created_at']);

  function poison(v: unknown, key: string, next: () => string): unknown {
    if (typeof v === 'string') return ENUMS.has(key) ? v : next();
    if (Array.isArray(v)) return v.map((x) => poison(x, key, next));
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, poison(x, k, next)]));
    return v;
  }

  it('every free-text string survives the link unchanged', async () => {
    let i = 0;
    const r = poison(smallResult(), '', () => PAYLOADS[i++ % PAYLOADS.length]) as ReturnType<typeof smallResult>;
    r.environment.limits['<script>'] = 1;
    r.notes = [...PAYLOADS];
    expect(i).toBeGreaterThan(20);
    const decoded = await decodeReport(await encodeReport(r));
    expect(decoded).toEqual(linkRounded(r));
    expect(decoded.environment.adapter.description).toBe(r.environment.adapter.description);
  });
});

/**
 * A source over a URL. When the server answers a Range request with 206 and a Content-Range,
 * each read is one Range request and nothing else is downloaded. Otherwise the whole body is
 * streamed once (reporting progress) and served from memory.
 */
import { TokenscopeError } from '../../errors.ts';
import { bytesSource, checkRange, concatBytes, type ByteSource } from './source.ts';

export interface UrlSourceOptions {
  /** Called as the body streams in when the server cannot serve ranges; `total` is 0 when unknown. */
  onProgress?: (loaded: number, total: number) => void;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /**
   * Never download the whole file (inspecting a header): where the server cannot serve ranges,
   * fail instead; where CORS hides Content-Range, take the size from a HEAD request's Content-Length.
   */
  rangesOnly?: boolean;
}

export async function urlSource(url: string, options: UrlSourceOptions = {}): Promise<ByteSource> {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const get = (init: RequestInit = {}) => fetchChecked(fetchFn, url, { ...init, signal: options.signal });

  const probe = await get({ headers: { Range: 'bytes=0-0' } });
  if (probe.status !== 206) {
    if (options.rangesOnly) {
      await probe.body?.cancel();
      throw new TokenscopeError(
        'io',
        `${url} does not serve byte ranges, so its header cannot be read without downloading the whole file`,
        'Run it to download it (once), or use a server that supports HTTP Range requests.',
      );
    }
    return bytesSource(await readBody(url, probe, options.onProgress), url);
  }
  await probe.body?.cancel();
  const total = rangeTotal(probe.headers.get('Content-Range'));
  if (total !== undefined) return rangeSource(url, total, get);
  if (options.rangesOnly) {
    const head = await get({ method: 'HEAD' });
    await head.body?.cancel();
    const length = Number(head.headers.get('Content-Length'));
    if (Number.isSafeInteger(length) && length > 0) return rangeSource(url, length, get);
    throw new TokenscopeError(
      'io',
      `${url} does not tell its size to this page (CORS hides Content-Range and Content-Length)`,
      'Run it to download it (once), or serve it with Access-Control-Expose-Headers: Content-Range.',
    );
  }
  // A 206 whose Content-Range is unreadable (CORS hides it unless exposed) gives no size: download once.
  return bytesSource(await readBody(url, await get(), options.onProgress), url);
}

function rangeSource(url: string, size: number, get: (init: RequestInit) => Promise<Response>): ByteSource {
  const source: ByteSource = {
    size,
    name: url,
    async read(offset, length) {
      checkRange(source, offset, length);
      if (length === 0) return new Uint8Array(0);
      const response = await get({ headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (response.status !== 206 || bytes.length !== length) {
        throw new TokenscopeError(
          'io',
          `${url} answered a range request for ${length} bytes at byte ${offset} ` + `with status ${response.status} and ${bytes.length} bytes`,
          'The file may have changed on the server; reload.',
        );
      }
      return bytes;
    },
  };
  return source;
}

/** The total from "bytes 0-0/12345"; undefined for "*" or anything malformed. */
function rangeTotal(header: string | null): number | undefined {
  const match = header?.match(/^bytes \d+-\d+\/(\d+)$/);
  const total = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(total) ? total : undefined;
}

async function fetchChecked(fetchFn: typeof fetch, url: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetchFn(url, init);
  } catch (e) {
    throw new TokenscopeError(
      'io',
      `could not fetch ${url}: ${(e as Error).message}`,
      'Check the URL and your connection; a server on another origin must allow CORS.',
      { cause: e },
    );
  }
  if (!response.ok) {
    throw new TokenscopeError('io', `${url} answered HTTP ${response.status}`, 'Check that the URL points at a .gguf file.');
  }
  return response;
}

async function readBody(url: string, response: Response, onProgress?: (loaded: number, total: number) => void) {
  const declared = Number(response.headers.get('Content-Length'));
  const total = Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  try {
    for (const reader = response.body.getReader(); ;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.length;
      onProgress?.(loaded, total);
    }
  } catch (e) {
    throw new TokenscopeError(
      'io',
      `download of ${url} failed after ${loaded} bytes: ${(e as Error).message}`,
      'Try again; a server that supports Range requests avoids downloading the whole file.',
      { cause: e },
    );
  }
  return concatBytes(chunks, loaded);
}

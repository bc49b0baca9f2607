/**
 * A source over a URL. When the server answers a Range request with 206 and a Content-Range,
 * each read is one Range request and nothing else is downloaded. Otherwise the whole body is
 * streamed once (reporting progress) and served from memory.
 *
 * Every request is bounded (http.ts): in time (headers, then a stall or drip mid-body) and in
 * bytes (a range read takes exactly the bytes asked for, a whole download exactly its declared
 * Content-Length, which must exist and fit in memory), so no server can hang or bloat the process.
 */
import { TokenscopeError } from '../../errors.ts';
import { fmtBytes } from '../memory.ts';
import { boundedFetch, contentLength, serverOf, type BoundedResponse, type NetLimits } from './http.ts';
import { bytesSource, checkRange, type ByteSource } from './source.ts';

export interface UrlSourceOptions extends NetLimits {
  /** Called as the body streams in when the server cannot serve ranges: bytes of the declared total. */
  onProgress?: (loaded: number, total: number) => void;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /**
   * Never download the whole file (inspecting a header): where the server cannot serve ranges,
   * fail instead; where CORS hides Content-Range, take the size from a HEAD request's Content-Length.
   */
  rangesOnly?: boolean;
  /** The largest file downloaded whole into memory (a server without ranges). Default 4 GiB. */
  maxDownloadBytes?: number;
}

/** One typed array holds a whole download: Node 20's largest is 4 GiB. */
export const DEFAULT_MAX_DOWNLOAD_BYTES = 2 ** 32;

export async function urlSource(url: string, options: UrlSourceOptions = {}): Promise<ByteSource> {
  const get = (init: RequestInit = {}) => boundedFetch(url, init, options);

  const probe = await get({ headers: { Range: 'bytes=0-0' } });
  if (probe.response.status !== 206) {
    if (options.rangesOnly) {
      await probe.cancel();
      throw new TokenscopeError(
        'io',
        `${url} does not serve byte ranges, so its header cannot be read without downloading the whole file`,
        'Run it to download it (once), or use a server that supports HTTP Range requests.',
      );
    }
    return bytesSource(await readWhole(url, probe, options), url);
  }
  await probe.cancel();
  const total = rangeTotal(probe.response.headers.get('Content-Range'));
  if (total !== undefined) return rangeSource(url, total, get);
  if (options.rangesOnly) {
    const head = await get({ method: 'HEAD' });
    await head.cancel();
    const length = contentLength(head.response);
    if (length !== undefined && length > 0) return rangeSource(url, length, get);
    throw new TokenscopeError(
      'io',
      `${url} does not tell its size to this page (CORS hides Content-Range and Content-Length)`,
      'Run it to download it (once), or serve it with Access-Control-Expose-Headers: Content-Range.',
    );
  }
  // A 206 whose Content-Range is unreadable (CORS hides it unless exposed) gives no size: download once.
  return bytesSource(await readWhole(url, await get(), options), url);
}

function rangeSource(url: string, size: number, get: (init: RequestInit) => Promise<BoundedResponse>): ByteSource {
  const source: ByteSource = {
    size,
    name: url,
    async read(offset, length) {
      checkRange(source, offset, length);
      if (length === 0) return new Uint8Array(0);
      const answer = await get({ headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
      const bytes = new Uint8Array(length);
      let at = 0;
      if (answer.response.status === 206) {
        for await (const chunk of answer.body(length, `the range of ${length} bytes at byte ${offset}`)) {
          bytes.set(chunk, at);
          at += chunk.length;
        }
      } else {
        await answer.cancel();
      }
      if (answer.response.status !== 206 || at !== length) {
        throw new TokenscopeError(
          'io',
          `${url} answered a range request for ${length} bytes at byte ${offset} with status ${answer.response.status} and ${at} bytes`,
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

/** The declared size of a whole download, refused up front when absent or beyond `max`. */
export function declaredSize(url: string, answer: BoundedResponse, max: number, where: string): number {
  const declared = contentLength(answer.response);
  if (declared === undefined) {
    throw new TokenscopeError(
      'io',
      `${serverOf(url)} does not say how big ${url} is (no Content-Length) and serves no byte ranges, so its download could never end`,
      'Serve the file with a Content-Length (any static file server does) or with Range support, or download it yourself and open the file.',
    );
  }
  if (declared > max) {
    throw new TokenscopeError(
      'io',
      `${url} declares ${declared} bytes (${fmtBytes(declared)}), more than the ${fmtBytes(max)} ${where}`,
      'Use a smaller model, a server with Range support (only the bytes needed are read), or download it yourself and open the file.',
    );
  }
  return declared;
}

/** The whole body, exactly its declared Content-Length, into one preallocated array. */
async function readWhole(url: string, answer: BoundedResponse, options: UrlSourceOptions): Promise<Uint8Array<ArrayBuffer>> {
  let total: number;
  try {
    total = declaredSize(url, answer, options.maxDownloadBytes ?? DEFAULT_MAX_DOWNLOAD_BYTES, 'this process downloads whole into memory');
  } catch (e) {
    await answer.cancel();
    throw e;
  }
  const bytes = new Uint8Array(total);
  let loaded = 0;
  for await (const chunk of answer.body(total, `the ${total}-byte file`)) {
    bytes.set(chunk, loaded);
    loaded += chunk.length;
    options.onProgress?.(loaded, total);
  }
  if (loaded !== total) {
    throw new TokenscopeError('io', `${url} arrived with ${loaded} bytes, not the ${total} the server declared`, 'Try again; the download was interrupted.');
  }
  return bytes;
}

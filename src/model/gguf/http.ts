/**
 * Fetching model bytes with every wait and every byte count bounded: a server that never answers,
 * stalls or drips mid-body, sends more than it declared, compresses, or redirects in a loop ends
 * in seconds with an `io` error that names the server and what to do, never a hang or a process
 * grown past what the file's headers promised. Browser-safe: fetch, AbortController and timers.
 */
import { TokenscopeError } from '../../errors.ts';

export interface NetLimits {
  /** From sending a request to its response headers, connecting included (ms). Default 8 s (issue 25: no stalled server may hold a run past 10 s). */
  headerTimeoutMs?: number;
  /**
   * A body that delivers less than `STALL_BYTES` (or what is left of it) within this window has
   * stalled (ms). Default 8 s: a floor of 8 KiB/s, so a drip fails as surely as silence.
   */
  idleTimeoutMs?: number;
}

export interface FetchOptions extends NetLimits {
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** The caller's cancel (the page's Cancel button). */
  signal?: AbortSignal;
}

export const DEFAULT_HEADER_TIMEOUT_MS = 8_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 8_000;
/** The progress a body must make within each idle window. */
const STALL_BYTES = 64 << 10;

/** A response with its headers checked, whose body is read only through `body()` (bounded). */
export interface BoundedResponse {
  readonly response: Response;
  /**
   * The body's chunks, failing once more than `cap` bytes arrive (decoded bytes count) or the
   * body stalls. Reading it to the end, failing, or `cancel()` releases the connection.
   */
  body(cap: number, what: string): AsyncGenerator<Uint8Array, void, undefined>;
  cancel(): Promise<void>;
}

const seconds = (ms: number) => `${+(ms / 1000).toFixed(1)} s`;

/** The server's name for messages: "models.example:8080". */
export function serverOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

function cancelledError(cause?: unknown): TokenscopeError {
  return new TokenscopeError('cancelled', 'The download was cancelled.', 'Run again to download it.', { cause });
}

/** Why a fetch failed: undici puts the reason in `cause` ("redirect count exceeded"). */
function failureText(e: unknown): string {
  const error = e as Error & { cause?: unknown };
  const cause = error?.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error?.message ?? String(e)}${cause}`;
}

/**
 * One request with `Accept-Encoding: identity`, bounded until its headers arrive; refused when it
 * is not 2xx or is compressed anyway (a compressed body's size is unknown until decoded).
 */
export async function boundedFetch(url: string, init: RequestInit, options: FetchOptions = {}): Promise<BoundedResponse> {
  const headerMs = options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const server = serverOf(url);
  const outer = options.signal;
  if (outer?.aborted) throw cancelledError(outer.reason);
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  const release = () => outer?.removeEventListener('abort', onAbort);
  const abort = () => {
    release();
    controller.abort();
  };

  const headers = new Headers(init.headers);
  // Browsers forbid this header and drop it; there the decoded bytes count against the cap instead.
  headers.set('Accept-Encoding', 'identity');
  let response: Response;
  try {
    response = await within(
      headerMs,
      (options.fetch ?? globalThis.fetch)(url, { ...init, headers, signal: controller.signal }),
      () => {
        abort();
        return new TokenscopeError(
          'io',
          `${server} did not answer within ${seconds(headerMs)} (no response headers for ${url})`,
          'The server may be down or overloaded: try again later, or check the URL.',
        );
      },
      outer,
    );
  } catch (e) {
    abort();
    if (e instanceof TokenscopeError) throw e;
    if (outer?.aborted) throw cancelledError(e);
    const text = failureText(e);
    if (/redirect/i.test(text)) {
      throw new TokenscopeError(
        'io',
        `${url} redirects in a loop (${text})`,
        'The link is broken on the server: open it in a browser to see where it leads, and use the final URL.',
        {
          cause: e,
        },
      );
    }
    throw new TokenscopeError(
      'io',
      `could not fetch ${url}: ${text}`,
      'Check the URL and your connection; a server on another origin must allow CORS, and a link must not redirect in a loop.',
      { cause: e },
    );
  }
  const cancel = async () => {
    abort();
    await response.body?.cancel().catch(() => {});
  };
  if (!response.ok) {
    await cancel();
    throw new TokenscopeError('io', `${url} answered HTTP ${response.status}`, 'Check that the URL points at a .gguf file.');
  }
  const encoding = response.headers.get('Content-Encoding');
  if (encoding && encoding.trim().toLowerCase() !== 'identity') {
    await cancel();
    throw new TokenscopeError(
      'io',
      `${server} sent ${url} compressed (Content-Encoding: ${encoding}) although it was asked not to; a compressed model's real size is unknown until it is unpacked`,
      'Serve the .gguf file as it is (no gzip, br or deflate for it), or download it yourself and open the file.',
    );
  }

  async function* body(cap: number, what: string): AsyncGenerator<Uint8Array, void, undefined> {
    if (!response.body) {
      release();
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (bytes.length > cap) throw overCap(bytes.length);
      if (bytes.length) yield bytes;
      return;
    }
    const reader = response.body.getReader();
    let loaded = 0;
    let windowStart = 0;
    let windowEnd = performance.now() + idleMs;
    try {
      for (;;) {
        const stalled = () =>
          new TokenscopeError(
            'io',
            `${server} stalled sending ${what}: ${loaded - windowStart} bytes in the last ${seconds(idleMs)} (${loaded} of ${cap} bytes so far)`,
            'The server or the connection is too slow or stuck: try again later, or download the file another way and open it from disk.',
          );
        const next = await within(Math.max(0, windowEnd - performance.now()), reader.read(), stalled, outer);
        if (next.done) return;
        loaded += next.value.length;
        if (loaded > cap) throw overCap(loaded);
        // A window ends with enough progress (a drip never gets there) or the whole body.
        if (loaded - windowStart >= Math.min(STALL_BYTES, cap - windowStart)) {
          windowStart = loaded;
          windowEnd = performance.now() + idleMs;
        }
        yield next.value;
      }
    } catch (e) {
      if (e instanceof TokenscopeError) throw e;
      if (outer?.aborted) throw cancelledError(e);
      throw new TokenscopeError('io', `${what} from ${server} failed after ${loaded} bytes: ${failureText(e)}`, 'Try again; the connection was interrupted.', {
        cause: e,
      });
    } finally {
      abort();
      reader.cancel().catch(() => {});
    }

    function overCap(loaded: number) {
      return new TokenscopeError(
        'io',
        `${server} sent more than ${what} holds (${loaded} bytes so far): it sends more than it declared, or compresses it`,
        'The server is misbehaving: serve the .gguf file as it is, with its true Content-Length, or download it and open the file.',
      );
    }
  }
  return { response, body, cancel };
}

/**
 * `promise`, or `onTimeout()`'s error once `ms` have passed, or a cancelled error once `signal`
 * fires (even where a fetch or a body ignores its signal).
 */
function within<T>(ms: number, promise: Promise<T>, onTimeout: () => Error, signal?: AbortSignal): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort = () => {};
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
    onAbort = () => reject(cancelledError(signal?.reason));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  });
}

/** A declared size from Content-Length, or undefined when absent or unreadable. */
export function contentLength(response: Response): number | undefined {
  const header = response.headers.get('Content-Length');
  const length = header === null || header.trim() === '' ? NaN : Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

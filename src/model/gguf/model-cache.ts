/**
 * GGUF files kept in the browser (the Cache API), so a model downloaded once is read from disk on
 * later visits instead of fetched again. A download is stored only once it completed (and matched
 * the size the server declared); the visitor sees what is kept, with sizes, and clears it.
 * Where there is no Cache API (Node, insecure origins) nothing is kept and callers read the URL.
 */
import { TokenscopeError } from '../../errors.ts';
import { boundedFetch, type NetLimits } from './http.ts';
import { blobSource, type ByteSource } from './source.ts';
import { declaredSize } from './url-source.ts';

const CACHE_NAME = 'tokenscope-models-v1';
/** When the file was kept (ISO 8601), stored with the response. */
const KEPT_AT = 'x-tokenscope-kept-at';

export interface KeptFile {
  url: string;
  bytes: number;
  keptAt: string | null;
}

export interface KeepOptions extends NetLimits {
  /** Called as the body streams in: bytes of the declared total. */
  onProgress?: (loaded: number, total: number) => void;
  signal?: AbortSignal;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
}

export function modelCacheAvailable(): boolean {
  return typeof caches !== 'undefined' && typeof caches.open === 'function';
}

function open(): Promise<Cache> {
  if (!modelCacheAvailable()) {
    throw new TokenscopeError('io', 'This page cannot keep files: the browser has no Cache API here.', 'Open the page over https (or localhost).');
  }
  return caches.open(CACHE_NAME);
}

/** Every kept file with its size, newest first. */
export async function keptFiles(): Promise<KeptFile[]> {
  if (!modelCacheAvailable()) return [];
  const cache = await open();
  const files: KeptFile[] = [];
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    if (!response) continue;
    files.push({ url: request.url, bytes: (await response.blob()).size, keptAt: response.headers.get(KEPT_AT) });
  }
  return files.sort((a, b) => (b.keptAt ?? '').localeCompare(a.keptAt ?? ''));
}

export async function isKept(url: string): Promise<boolean> {
  return modelCacheAvailable() && (await (await open()).match(url)) !== undefined;
}

export async function forgetFile(url: string): Promise<boolean> {
  return modelCacheAvailable() && (await open()).delete(url);
}

export async function forgetAll(): Promise<void> {
  if (modelCacheAvailable()) await caches.delete(CACHE_NAME);
}

/**
 * The kept copy of `url`, or — when there is none — the whole file downloaded once, kept, and
 * read from the kept copy. `fromCache` says which. The download is bounded as url-source.ts's
 * are (http.ts: timeouts, a stall, exactly the declared Content-Length), refused up front when it
 * would not fit this origin's free storage, and stops when `signal` (the page's Cancel) fires.
 */
export async function keptOrDownload(url: string, options: KeepOptions = {}): Promise<{ source: ByteSource; fromCache: boolean }> {
  const cache = await open();
  const kept = await cache.match(url);
  if (kept) return { source: blobSource(await kept.blob(), url), fromCache: true };

  const answer = await boundedFetch(url, {}, options);
  let total: number;
  try {
    total = declaredSize(url, answer, await freeStorage(), 'this browser can still keep for this page');
  } catch (e) {
    await answer.cancel();
    throw e;
  }
  let loaded = 0;
  /** Why the body stopped, which cache.put's own error (a TypeError) does not say. */
  let failure: unknown;
  const chunks = answer.body(total, `the ${total}-byte file`);
  const counted = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next().catch((e: unknown) => {
        failure = e;
        throw e;
      });
      if (next.done) return controller.close();
      loaded += next.value.length;
      options.onProgress?.(loaded, total);
      controller.enqueue(next.value);
    },
    async cancel() {
      await chunks.return();
    },
  });
  try {
    await cache.put(url, new Response(counted, { headers: { 'content-type': 'application/octet-stream', [KEPT_AT]: new Date().toISOString() } }));
  } catch (e) {
    await cache.delete(url);
    if (failure instanceof TokenscopeError) throw failure;
    if (options.signal?.aborted) throw new TokenscopeError('cancelled', 'The download was cancelled.', 'Run again to download it.', { cause: e });
    throw new TokenscopeError(
      'io',
      `could not download and keep ${url} (stopped after ${loaded} bytes): ${(e as Error).message}`,
      'Check the connection and the browser’s free storage (see "Files kept in this browser"), then try again.',
      { cause: e },
    );
  }
  const stored = await cache.match(url);
  const blob = await stored?.blob();
  if (!blob || blob.size !== total) {
    await cache.delete(url);
    throw new TokenscopeError(
      'io',
      `${url} arrived with ${blob?.size ?? 0} bytes, not the ${total} the server declared`,
      'Try again; the download was interrupted.',
    );
  }
  return { source: blobSource(blob, url), fromCache: false };
}

/** Bytes this origin may still store (the quota less what it uses); unbounded where the browser does not say. */
async function freeStorage(): Promise<number> {
  const estimate = await globalThis.navigator?.storage?.estimate?.().catch(() => undefined);
  return estimate?.quota !== undefined ? Math.max(0, estimate.quota - (estimate.usage ?? 0)) : Number.MAX_SAFE_INTEGER;
}

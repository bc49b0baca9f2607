/**
 * GGUF files kept in the browser (the Cache API), so a model downloaded once is read from disk on
 * later visits instead of fetched again. A download is stored only once it completed (and matched
 * the size the server declared); the visitor sees what is kept, with sizes, and clears it.
 * Where there is no Cache API (Node, insecure origins) nothing is kept and callers read the URL.
 */
import { TokenscopeError } from '../../errors.ts';
import { blobSource, type ByteSource } from './source.ts';

const CACHE_NAME = 'tokenscope-models-v1';
/** When the file was kept (ISO 8601), stored with the response. */
const KEPT_AT = 'x-tokenscope-kept-at';

export interface KeptFile {
  url: string;
  bytes: number;
  keptAt: string | null;
}

export interface KeepOptions {
  /** Called as the body streams in; `total` is 0 when the server did not say. */
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
 * read from the kept copy. `fromCache` says which.
 */
export async function keptOrDownload(url: string, options: KeepOptions = {}): Promise<{ source: ByteSource; fromCache: boolean }> {
  const cache = await open();
  const kept = await cache.match(url);
  if (kept) return { source: blobSource(await kept.blob(), url), fromCache: true };

  const response = await fetchWhole(url, options);
  const declared = Number(response.headers.get('Content-Length'));
  const total = Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
  let loaded = 0;
  const counted = response.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        loaded += chunk.length;
        options.onProgress?.(loaded, total);
        controller.enqueue(chunk);
      },
    }),
  );
  try {
    await cache.put(url, new Response(counted, { headers: { 'content-type': 'application/octet-stream', [KEPT_AT]: new Date().toISOString() } }));
  } catch (e) {
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
  if (!blob || (total > 0 && blob.size !== total)) {
    await cache.delete(url);
    throw new TokenscopeError(
      'io',
      `${url} arrived with ${blob?.size ?? 0} bytes, not the ${total} the server declared`,
      'Try again; the download was interrupted.',
    );
  }
  return { source: blobSource(blob, url), fromCache: false };
}

async function fetchWhole(url: string, options: KeepOptions): Promise<Response> {
  let response: Response;
  try {
    response = await (options.fetch ?? globalThis.fetch)(url, { signal: options.signal });
  } catch (e) {
    throw new TokenscopeError(
      'io',
      `could not fetch ${url}: ${(e as Error).message}`,
      'Check the URL and your connection; a server on another origin must allow CORS.',
      { cause: e },
    );
  }
  if (!response.ok || !response.body) {
    throw new TokenscopeError('io', `${url} answered HTTP ${response.status}`, 'Check that the URL points at a .gguf file.');
  }
  return response;
}

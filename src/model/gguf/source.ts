/**
 * Random-access byte sources: the reader asks for ranges, so a multi-GB model never has to be
 * in memory at once. Browser-safe; the Node file source lives in `node-source.ts` and the
 * HTTP one in `url-source.ts`.
 */
import { TokenscopeError } from '../../errors.ts';

export interface ByteSource {
  /** Total length in bytes. */
  readonly size: number;
  /** A file name or URL, for messages. */
  readonly name: string;
  /**
   * Exactly `length` bytes from `offset` (the caller keeps the range within `size`).
   * The result may be a view of a shared buffer: read it, do not modify it.
   */
  read(offset: number, length: number): Promise<Uint8Array<ArrayBuffer>>;
}

/** Throws unless [offset, offset + length) lies within a source of `size` bytes. */
export function checkRange(source: { size: number; name: string }, offset: number, length: number): void {
  const ok = Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0;
  if (!ok || offset + length > source.size) {
    throw new TokenscopeError(
      'io',
      `read of ${length} bytes at byte ${offset} is outside ${source.name} (${source.size} bytes)`,
      'This is a bug in the caller: report it with the model file name.',
    );
  }
}

/** A source over bytes already in memory (no copies: reads are views). */
export function bytesSource(data: Uint8Array<ArrayBuffer> | ArrayBuffer, name = 'memory'): ByteSource {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const source: ByteSource = {
    size: bytes.length,
    name,
    read(offset, length) {
      checkRange(source, offset, length);
      return Promise.resolve(bytes.subarray(offset, offset + length));
    },
  };
  return source;
}

/** A source over a Blob or a File the user picked; each read slices, so nothing is held. */
export function blobSource(blob: Blob, name = blob instanceof File ? blob.name : 'blob'): ByteSource {
  const source: ByteSource = {
    size: blob.size,
    name,
    async read(offset, length) {
      checkRange(source, offset, length);
      try {
        return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
      } catch (e) {
        throw new TokenscopeError('io', `could not read ${name} at byte ${offset}: ${String(e)}`, 'Pick the file again; it may have been moved or changed.', {
          cause: e,
        });
      }
    },
  };
  return source;
}

export function concatBytes(chunks: readonly Uint8Array[], length = chunks.reduce((n, c) => n + c.length, 0)): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

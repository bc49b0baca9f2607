/**
 * A source over a file on disk, for the CLI and tests (Node only: browser code must not import this).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { TokenscopeError } from '../../errors.ts';
import { checkRange, type ByteSource } from './source.ts';

export interface FileSource extends ByteSource {
  close(): Promise<void>;
}

export async function fileSource(path: string): Promise<FileSource> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (e) {
    throw new TokenscopeError('io', `cannot open ${path}: ${(e as Error).message}`, 'Check the path and its permissions.', { cause: e });
  }
  const { size } = await handle.stat();
  const source: FileSource = {
    size,
    name: basename(path),
    async read(offset, length) {
      checkRange(source, offset, length);
      const out = new Uint8Array(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(out, filled, length - filled, offset + filled);
        if (bytesRead === 0) {
          throw new TokenscopeError(
            'io',
            `${path} ended at byte ${offset + filled} while reading up to ${offset + length}`,
            'The file changed while it was being read; try again.',
          );
        }
        filled += bytesRead;
      }
      return out;
    },
    close: () => handle.close(),
  };
  return source;
}

import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
  '.gguf': 'application/octet-stream',
  '.ico': 'image/x-icon',
};

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

/** A file that exists only in memory, produced range by range (tests serve multi-GB GGUFs this way). */
export interface VirtualFile {
  size: number;
  /** Bytes [start, end] inclusive. */
  bytes(start: number, end: number): Uint8Array;
}

/** What one response carried (tests count requests and bytes served). */
export interface Served {
  method: string;
  path: string;
  range: string | null;
  status: number;
  bytes: number;
}

export interface StaticOptions {
  port?: number;
  /** URL prefixes mapped to other folders (e.g. test models). */
  extra?: Record<string, string>;
  /** URL paths served from memory. */
  virtual?: Record<string, VirtualFile>;
  /** Called for every response. */
  onServe?: (served: Served) => void;
}

/**
 * Serve `root` on 127.0.0.1 (an ephemeral port unless given), with HTTP Range support so a
 * GGUF can be streamed from it. `extra` maps URL prefixes to other folders (e.g. test models).
 */
export async function serveStatic(root: string, opts: StaticOptions = {}): Promise<StaticServer> {
  const mounts = [...Object.entries(opts.extra ?? {}).map(([p, dir]) => [p, resolve(dir)] as const), ['/', resolve(root)] as const];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = decodeURIComponent(url.pathname);
    const served = (status: number, bytes: number) => opts.onServe?.({ method: req.method ?? 'GET', path, range: req.headers.range ?? null, status, bytes });
    const virtual = opts.virtual?.[path];
    if (virtual) {
      serveVirtual(virtual, req.headers.range, req.method === 'HEAD', res, served);
      return;
    }
    const [prefix, dir] = mounts.find(([p]) => path.startsWith(p))!;
    let file = normalize(join(dir, path.slice(prefix.length)));
    if (!file.startsWith(dir + sep) && file !== dir) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const size = statSync(file).size;
    const headers: Record<string, string | number> = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'accept-ranges': 'bytes',
      'cache-control': 'no-store',
    };
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      const start = range[1] ? Number(range[1]) : size - Number(range[2]);
      const end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      if (start > end || start < 0 || start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      res.writeHead(206, { ...headers, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${size}` });
      createReadStream(file, { start, end }).pipe(res);
      served(206, end - start + 1);
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': size });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
    served(200, req.method === 'HEAD' ? 0 : size);
  });
  await new Promise<void>((ok) => server.listen(opts.port ?? 0, '127.0.0.1', ok));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

/** At most this much of a virtual file is produced per chunk, so a whole-file GET streams. */
const VIRTUAL_CHUNK = 1 << 20;

function serveVirtual(
  file: VirtualFile,
  rangeHeader: string | undefined,
  head: boolean,
  res: ServerResponse,
  served: (status: number, bytes: number) => void,
): void {
  const headers = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', 'cache-control': 'no-store' };
  const range = /^bytes=(\d+)-(\d*)$/.exec(rangeHeader ?? '');
  let [start, end, status] = [0, file.size - 1, 200];
  if (range) {
    [start, end, status] = [Number(range[1]), range[2] ? Math.min(Number(range[2]), file.size - 1) : file.size - 1, 206];
    if (start > end) {
      res.writeHead(416, { 'content-range': `bytes */${file.size}` }).end();
      served(416, 0);
      return;
    }
  }
  const length = end - start + 1;
  res.writeHead(status, { ...headers, 'content-length': length, ...(status === 206 ? { 'content-range': `bytes ${start}-${end}/${file.size}` } : {}) });
  served(status, head ? 0 : length);
  if (head) {
    res.end();
    return;
  }
  let at = start;
  const pump = () => {
    while (at <= end) {
      const last = Math.min(end, at + VIRTUAL_CHUNK - 1);
      const ok = res.write(file.bytes(at, last));
      at = last + 1;
      if (!ok) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  res.on('close', () => (at = end + 1));
  pump();
}

/**
 * A local HTTP server (node:http on 127.0.0.1, a free port) whose paths misbehave the ways a model
 * URL may: silence, stalls, drips, endless bodies, a gzip bomb, an absurd size, a redirect loop.
 * Every path answers a `Range: bytes=0-0` probe the way it answers anything else unless it says so.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';

/** A file size the ranged paths claim in their Content-Range. */
export const CLAIMED_SIZE = 1 << 30;
const ZEROS = new Uint8Array(64 << 10);

export interface HostileServer {
  url: (path: string) => string;
  /** Each request's path and Accept-Encoding header. */
  requests: { path: string; range: string | undefined; acceptEncoding: string | undefined }[];
  close(): Promise<void>;
}

/** Writes zeros as fast as the client reads them, forever (until the client goes away). */
function endless(res: ServerResponse): void {
  const more = () => {
    while (!res.destroyed && res.write(ZEROS));
  };
  res.on('drain', more);
  more();
}

/** One byte every `ms`, forever. */
function drip(res: ServerResponse, ms: number): void {
  const timer = setInterval(() => res.write(ZEROS.subarray(0, 1)), ms);
  res.on('close', () => clearInterval(timer));
}

/** A 206 answer to the probe, with a readable total, so the client goes on to ranged reads. */
function probeAnswer(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.headers.range !== 'bytes=0-0') return false;
  res.writeHead(206, { 'Content-Range': `bytes 0-0/${CLAIMED_SIZE}`, 'Content-Length': 1 }).end(ZEROS.subarray(0, 1));
  return true;
}

/** 1 GiB of zeros as 64 gzip members of 16 MiB each (about 1 MB on the wire). */
function gzipBomb(): Buffer {
  const member = gzipSync(Buffer.alloc(16 << 20), { level: 9 });
  return Buffer.concat(Array.from({ length: 64 }, () => member));
}

const routes = (bomb: Buffer): Record<string, (req: IncomingMessage, res: ServerResponse) => void> => ({
  /** Never answers. */
  '/silent': () => {},
  /** Headers with a 1 MiB Content-Length, 1000 bytes, then nothing. */
  '/stall-body': (_req, res) => {
    res.writeHead(200, { 'Content-Length': 1 << 20 });
    res.write(ZEROS.subarray(0, 1000));
  },
  /** Ranged: the probe is answered, every later range gets its 206 headers and nothing more. */
  '/stall-206': (req, res) => {
    if (probeAnswer(req, res)) return;
    res.writeHead(206, { 'Content-Range': `bytes 0-${(1 << 20) - 1}/${CLAIMED_SIZE}`, 'Content-Length': 1 << 20 });
    res.flushHeaders();
  },
  /** A 1 MiB file, one byte every 20 ms (a 6-hour download). */
  '/drip': (_req, res) => {
    res.writeHead(200, { 'Content-Length': 1 << 20 });
    drip(res, 20);
  },
  /** Ranged: every later range gets a 206 that drips. */
  '/drip-206': (req, res) => {
    if (probeAnswer(req, res)) return;
    res.writeHead(206, { 'Content-Range': `bytes 0-${(1 << 20) - 1}/${CLAIMED_SIZE}`, 'Content-Length': 1 << 20 });
    drip(res, 20);
  },
  /** No ranges, no Content-Length, zeros forever (chunked). */
  '/endless': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    endless(res);
  },
  /** Ranged: every later range gets a 206 of zeros forever (chunked, no Content-Length). */
  '/endless-206': (req, res) => {
    if (probeAnswer(req, res)) return;
    res.writeHead(206, { 'Content-Range': `bytes 0-${(1 << 20) - 1}/${CLAIMED_SIZE}` });
    endless(res);
  },
  /** Whatever was asked: 1 GiB of zeros gzipped, with the compressed Content-Length. */
  '/gzip-bomb': (_req, res) => {
    res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': bomb.length });
    res.end(bomb);
  },
  /** No ranges, Content-Length 100 GB, zeros as fast as they are read. */
  '/huge': (_req, res) => {
    res.writeHead(200, { 'Content-Length': 100e9 });
    endless(res);
  },
  /** Redirects to itself. */
  '/loop': (_req, res) => {
    res.writeHead(302, { Location: '/loop' }).end();
  },
});

/** `files` are served well, whole and without ranges, beside the hostile paths. */
export async function hostileServer(files: Record<string, Uint8Array> = {}): Promise<HostileServer> {
  const requests: HostileServer['requests'] = [];
  const paths = routes(gzipBomb());
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path, range: req.headers.range, acceptEncoding: req.headers['accept-encoding'] });
    const route = paths[path];
    if (route) route(req, res);
    else if (files[path]) res.writeHead(200, { 'Content-Length': files[path].length }).end(files[path]);
    else res.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

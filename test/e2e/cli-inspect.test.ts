import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveStatic, type Served, type StaticServer } from '../../cli/static-server.ts';
import { ROOT } from './browser.ts';

const run = promisify(execFile);
const MODELS = resolve(ROOT, '../shared/models');
const HAVE = existsSync(resolve(MODELS, 'stories260K.gguf'));

/** `npm run bench -- --inspect URL` prints the inspection and reads only the start of the file. */
describe.skipIf(!HAVE)(HAVE ? 'npm run bench -- --inspect' : 'npm run bench -- --inspect — SKIPPED: stories260K.gguf not found', () => {
  let server: StaticServer;
  const served: Served[] = [];
  beforeAll(async () => {
    server = await serveStatic(MODELS, { onServe: (s) => served.push(s) });
  });
  afterAll(() => server?.close());

  it('a URL: architecture, type shares, memory and "no roof measured yet", from Range requests only', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'tokenscope-inspect-')), 'inspect.json');
    const { stdout } = await run('npm', ['run', '--silent', 'bench', '--', '--inspect', `${server.url}stories260K.gguf`, '--json', out], { cwd: ROOT });
    expect(stdout).toMatch(/llama, GGUF v3/);
    expect(stdout).toMatch(/F32\s+48\s+1\.1 MiB\s+100\.0%/);
    expect(stdout).toMatch(/memory for a \d+-token context: [\d.]+ MiB .*fits this device/s);
    expect(stdout).toMatch(/no roof measured yet/);
    const json = JSON.parse(readFileSync(out, 'utf8'));
    expect(json.architecture).toBe('llama');
    expect(json.memory.context).toBe(json.contextLength);
    expect(json.types).toEqual([expect.objectContaining({ type: 'F32', tensors: 48, share: 1 })]);
    expect(served.every((s) => s.status === 206)).toBe(true);
    const bytes = served.reduce((n, s) => n + s.bytes, 0);
    expect(bytes).toBe(json.bytes_read + 1); // the reader's reads plus the 1-byte probe for the size
    expect(bytes).toBeLessThan(statSync(resolve(MODELS, 'stories260K.gguf')).size);
  }, 60_000);
});

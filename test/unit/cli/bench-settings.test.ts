/**
 * The CLI end to end on settings it must refuse: each exits before any GPU work (no roofs, no
 * progress), with the message and status the README promises.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testModelParts } from '../../../src/model/gguf/synthetic.ts';
import { meta } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';

function bench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './cli/register.mjs', 'cli/bench.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr, ms: performance.now() - started })));
}

describe('npm run bench refuses bad settings before any GPU work', () => {
  it('--rate without --mode serve exits 2 at once, naming the mode, with no roofs measured', async () => {
    const r = await bench(['--rate', 'abc']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --rate is a serve-mode flag; add --mode serve\.\n/);
    // Nothing ran: no progress line ("[ 20%] roofs: …"), no report; the usage follows the message.
    expect(r.stderr).not.toMatch(/\[\s*\d+%\]/);
    expect(r.stderr).toContain('Usage: npm run bench -- [options]');
    expect(r.stdout).toBe('');
    // Node and tsx start in about a second; the roofs alone take ~12 s on a CPU adapter.
    expect(r.ms).toBeLessThan(5000);
  }, 20_000);

  describe('--inspect of a file a run refuses', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenscope-inspect-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    it('prints "cannot run: …" with the run\'s message and exits 1', async () => {
      const parts = testModelParts({ architecture: 'llama', dim: 32, hiddenDim: 64, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 260 });
      parts.metadata.set('llama.attention.head_count_kv', meta.u32(0));
      const file = join(dir, 'kv0.gguf');
      writeFileSync(file, encodeGGUF(parts.metadata, parts.tensors));
      const r = await bench(['--inspect', file, '--quiet']);
      expect(r.stdout).toMatch(/^cannot run: kv0\.gguf: inconsistent hyperparameters: metadata key 'llama\.attention\.head_count_kv' is 0/m);
      expect(r.code).toBe(1);
    }, 60_000);
  });
});

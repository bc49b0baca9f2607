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

/** The child reports its own CPU time (user + system) as it exits: a bound on it holds on a loaded machine, where wall time does not. */
const REPORT_CPU = 'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\ncpu-ms "+(u.user+u.system)/1000+"\\n")})';

function bench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number; cpuMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', REPORT_CPU, '--import', 'tsx', '--import', './cli/register.mjs', 'cli/bench.ts', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((done) =>
    child.on('close', (code) => {
      const cpuMs = Number(/\ncpu-ms ([\d.]+)\n$/.exec(stderr)?.[1] ?? NaN);
      done({ code, stdout, stderr: stderr.replace(/\ncpu-ms [\d.]+\n$/, ''), ms: performance.now() - started, cpuMs });
    }),
  );
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
    // Node and tsx start in about half a second of CPU; the roofs alone take ~12 s on a CPU adapter.
    // The wall bound is loose for a machine shared with other jobs; the CPU bound is the tight one.
    expect(r.cpuMs).toBeLessThan(5000);
    expect(r.ms).toBeLessThan(30_000);
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

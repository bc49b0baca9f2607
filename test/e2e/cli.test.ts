import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { validateResult } from '../../src/bench/validate.ts';
import { ROOT } from './browser.ts';

const run = promisify(execFile);

async function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'bench', '--', ...args], { cwd: ROOT, maxBuffer: 1 << 24 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('npm run bench', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-cli-'));

  it.each(['node', 'browser'])('--probe --json in the %s runtime writes a schema-valid result with positive roofs', async (runtime) => {
    const out = join(dir, `${runtime}.json`);
    const r = await bench(['--runtime', runtime, '--probe', '--probe-mib', '16', '--reps', '3', '--json', out, '--quiet']);
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('streaming read');
    const result = validateResult(JSON.parse(readFileSync(out, 'utf8')));
    expect(result.environment.runtime).toBe(runtime);
    const c = result.ceilings!;
    for (const key of ['read_bandwidth_gbps', 'copy_bandwidth_gbps', 'copy_buffer_to_buffer_gbps', 'f32_gflops', 'matmul_f32_gflops'] as const) {
      expect(c[key]).toBeGreaterThan(0);
      expect(c.measurements[key]!.samples.length).toBeGreaterThanOrEqual(3);
    }
    // Node on lavapipe has shader-f16; Chromium's SwiftShader does not.
    if (runtime === 'node') expect(c.f16_gflops).toBeGreaterThan(0);
    else expect(c.f16_gflops).toBeNull();
  });

  it('rejects unknown flags and bad values with usage and a non-zero exit', async () => {
    const unknown = await bench(['--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown flag --frobnicate');
    expect(unknown.stderr).toContain('Usage:');
    const bad = await bench(['--runtime', 'deno']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must be one of node, browser');
    const feature = await bench(['--disable', 'warp-drive']);
    expect(feature.code).toBe(2);
    expect(feature.stderr).toContain('Unknown feature "warp-drive"');
  });
});

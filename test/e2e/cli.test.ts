import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { validateResult } from '../../src/measure/validate.ts';
import { fileSource } from '../../src/model/gguf/node-source.ts';
import { openModel } from '../../src/model/open.ts';
import { generateGreedy, loadReferenceWeights, ReferenceModel } from '../../src/model/reference.ts';
import { createTokenizer } from '../../src/model/tokenizer/index.ts';
import { STORIES_GGUF } from '../unit/model/paths.ts';
import { ROOT } from './browser.ts';

const run = promisify(execFile);

/** The roofs cache of these runs: a folder of their own, never the user's ~/.cache. */
const ROOFS_CACHE = mkdtempSync(join(tmpdir(), 'tokenscope-roofs-'));

async function bench(args: string[], cacheHome = ROOFS_CACHE): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const env = { ...process.env, XDG_CACHE_HOME: cacheHome, TOKENSCOPE_CACHE_DIR: undefined };
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'bench', '--', ...args], { cwd: ROOT, maxBuffer: 1 << 24, env });
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

  it.skipIf(!STORIES_GGUF).each(['node', 'browser'])(
    `--model FILE --prompt TEXT --gen N generates greedily in the %s runtime and matches the CPU reference${STORIES_GGUF ? '' : ' — SKIPPED: stories260K.gguf not found'}`,
    async (runtime) => {
      const out = join(dir, `gen-${runtime}.json`);
      const r = await bench([
        '--runtime',
        runtime,
        '--model',
        STORIES_GGUF!,
        '--prompt',
        'Once upon a time',
        '--gen',
        '24',
        '--probe-mib',
        '4',
        '--json',
        out,
        '--quiet',
      ]);
      expect(r.stderr).not.toMatch(/error:/);
      expect(r.code).toBe(0);
      const result = validateResult(JSON.parse(readFileSync(out, 'utf8')));
      const g = result.generation as { prompt_token_ids: number[]; token_ids: number[]; text: string };
      const source = await fileSource(STORIES_GGUF!);
      const model = await openModel(source);
      const tokenizer = createTokenizer(model.gguf.metadata);
      expect(g.prompt_token_ids).toEqual(tokenizer.encode('Once upon a time', { bos: true }));
      const reference = new ReferenceModel(model.config, await loadReferenceWeights(model.gguf, model.config, model.tensors));
      expect(g.token_ids).toEqual(generateGreedy(reference, g.prompt_token_ids, 24));
      await source.close();
      expect(g.text).toBe(tokenizer.decode(g.token_ids));
      expect(r.stdout).toContain(g.text.trim().slice(0, 20));
    },
  );

  it('--mode serve prints the vLLM summary and writes every request', async () => {
    const out = join(dir, 'serve.json');
    const r = await bench([
      '--mode',
      'serve',
      '--model',
      'stories260k',
      '--quant',
      'f32',
      '--requests',
      '6',
      '--max-batch',
      '3',
      '--rate',
      '20',
      '--prompt-len',
      'uniform:4-24',
      '--output-len',
      '6',
      '--max-tokens-per-step',
      '16',
      '--chunk',
      '8',
      '--slo',
      'ttft=5000,tpot=500',
      '--probe-mib',
      '4',
      '--json',
      out,
      '--quiet',
    ]);
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('============ Serving Benchmark Result ============');
    expect(r.stdout).toMatch(/Request goodput \(req\/s\):\s+\d/);
    const result = validateResult(JSON.parse(readFileSync(out, 'utf8')));
    const run = (result.serve as { run: { result: { completed: number; failed: number; request_goodput: number; request_throughput: number } } }).run.result;
    expect(run.completed + run.failed).toBe(6);
    expect(run.request_goodput).toBeLessThanOrEqual(run.request_throughput);
  });

  it('with no arguments runs the embedded default: roofs, then a latency sweep with a verdict', async () => {
    const r = await bench(['--quiet', '--probe-mib', '16']);
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('synthetic weights — speed only');
    expect(r.stdout).toContain('Latency by prompt length');
    expect(r.stdout).toContain('Roofline verdict');
  });

  it.skipIf(!STORIES_GGUF)('a second run within the reuse window skips the roofs and says so; -p/-n/-r/-o jsonl prints llama-bench records', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tokenscope-roofs-'));
    const args = ['-m', STORIES_GGUF!, '-p', '16', '-n', '4', '-r', '1', '-o', 'jsonl', '--probe-mib', '4'];
    const first = await bench([...args, '--roofs', 'fresh'], home);
    expect(first.stderr).not.toMatch(/error:/);
    expect(first.stderr).not.toMatch(/roofs: reused/);
    const second = await bench(args, home);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/^roofs: reused from .*roofs\.json \(measured /m);
    const rows = second.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number | string>);
    expect(rows.map((r) => [r.n_prompt, r.n_gen, r.n_depth])).toEqual([
      [16, 0, 0],
      [0, 4, 0],
    ]);
    for (const r of rows) expect(r.avg_ts).toBeGreaterThan(0);
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

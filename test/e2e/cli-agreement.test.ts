/**
 * `npm run bench -- --agreement llama.cpp` end to end (issue 22): the CLI runs the accuracy pass's
 * teacher-forced ids through llama.cpp itself (node-llama-cpp's CPU build) on the same file and
 * prints and writes three comparisons — ours and llama.cpp's each against the f32 reference, and
 * ours against llama.cpp. On an F32 file both follow the reference and each other. Quantized files
 * against llama.cpp's arithmetic: test/gpu/activation-rounding.test.ts (in process). Refusals come
 * before any GPU work, exit 2.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AccuracyMeasurement } from '../../src/measure/accuracy-run.ts';
import { validateResult } from '../../src/measure/validate.ts';
import { STORIES_GGUF } from '../unit/model/paths.ts';
import { runBench } from './bench-run.ts';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-agreement-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bench = (args: string[]) => runBench(args, { cacheHome: dir });

async function agreementRun(file: string, name: string): Promise<{ accuracy: AccuracyMeasurement; stdout: string }> {
  const out = join(dir, `${name}.json`);
  const r = await bench([
    '--model',
    file,
    '--prompt',
    'Once upon a time',
    '--gen',
    '4',
    '--probe-mib',
    '4',
    '--agreement',
    'llama.cpp',
    '--json',
    out,
    '--quiet',
  ]);
  expect(r.stderr).not.toMatch(/error:/);
  expect(r.code).toBe(0);
  const result = validateResult(JSON.parse(readFileSync(out, 'utf8')));
  return { accuracy: result.accuracy as AccuracyMeasurement, stdout: r.stdout };
}

describe.skipIf(!STORIES_GGUF)(`--agreement llama.cpp${STORIES_GGUF ? '' : ' — SKIPPED: stories260K.gguf not found'}`, () => {
  it('F32 stories260K: ours and llama.cpp both follow the f32 reference, and each other', async () => {
    const { accuracy: a, stdout } = await agreementRun(STORIES_GGUF!, 'f32');
    const g = a.agreement!;
    expect(g.with).toBe('llama.cpp');
    expect(g.against_reference.positions).toBe(a.positions);
    // llama.cpp rounds its KV cache to f16 and uses its fast exp; ours f32 sums in another order.
    expect(g.against_reference.top1_agreement).toBe(1);
    expect(g.against_reference.kld_mean).toBeLessThan(1e-4);
    expect(g.engine_against_it.top1_agreement).toBe(1);
    expect(g.engine_against_it.kld_mean).toBeLessThan(1e-4);
    expect(stdout).toMatch(/llama\.cpp vs f32 reference\s+\S+\s+\S+\s+100\.0%\s+none/);
    expect(stdout).toMatch(/tokenscope vs llama\.cpp/);
  });

  it('a run llama.cpp cannot share is refused before any GPU work, exit 2', async () => {
    const r = await bench(['--model', STORIES_GGUF!, '--quant', 'q4_0', '--agreement', 'llama.cpp']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--agreement compares on the same file, and --quant re-encodes it on load');
    expect(r.seconds).toBeLessThan(30);
  });
});

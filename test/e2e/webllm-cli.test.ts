/**
 * `npm run bench -- --engine webllm` end to end, offline: in the browser runtime the roofs are
 * measured, then WebLLM's first download fails (here Chromium cannot resolve huggingface.co, so
 * it fails at once) and the CLI exits 1 with the typed error and its hint; in Node it refuses
 * before any work; flags WebLLM cannot honour are usage errors. The download case is skipped
 * where huggingface.co resolves: there the run would download a model.
 */
import { lookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import { DOWNLOAD_HINT } from '../../src/webllm/errors.ts';
import { runBench } from './bench-run.ts';

const offline = await lookup('huggingface.co').then(
  () => false,
  () => true,
);

const bench = (args: string[]) => runBench(args);

const MODEL = 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC';

describe('npm run bench -- --engine webllm', () => {
  it.skipIf(!offline)(
    `in the browser, names the failed download and the hint${offline ? '' : ' — SKIPPED: huggingface.co resolves, so this would download'}`,
    async () => {
      const r = await bench(['--runtime', 'browser', '--engine', 'webllm', '--model', MODEL, '--probe-mib', '4', '--quiet']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: Loading ${MODEL} failed: TypeError: Failed to fetch — ${DOWNLOAD_HINT}`);
      // 17–30 s on this 2-core machine, nearly all of it the roofs on SwiftShader: the failed fetch
      // comes under a second after them. A hanging download would hit this bound instead.
      expect(r.seconds).toBeLessThan(90);
    },
    120_000,
  );

  it('in Node, says WebLLM needs the browser runtime', async () => {
    const r = await bench(['--runtime', 'node', '--engine', 'webllm', '--model', MODEL, '--quiet']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: WebLLM runs in the browser runtime only. — Use --runtime browser.');
    expect(r.seconds).toBeLessThan(30);
  });

  it.each([
    [[], /--engine webllm needs --model with a WebLLM model id/],
    [['--model', MODEL, '--prompt', 'Hi'], /--prompt needs --engine tokenscope/],
    [['--model', MODEL, '--mode', 'serve'], /--mode serve needs --engine tokenscope/],
  ])('rejects %j with usage (exit 2)', async (args, message) => {
    const r = await bench(['--engine', 'webllm', ...args, '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('Usage:');
  });
});

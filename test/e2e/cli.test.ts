import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateResult } from '../../src/measure/validate.ts';
import { fileSource } from '../../src/model/gguf/node-source.ts';
import { openModel } from '../../src/model/open.ts';
import { generateGreedy, loadReferenceWeights, ReferenceModel } from '../../src/model/reference.ts';
import { createTokenizer } from '../../src/model/tokenizer/index.ts';
import { STORIES_GGUF } from '../unit/model/paths.ts';
import { runBench, type BenchRun } from './bench-run.ts';
import { deepText, launch, watchErrors } from './browser.ts';

/** The roofs cache of these runs: a folder of their own, never the user's ~/.cache. */
const ROOFS_CACHE = mkdtempSync(join(tmpdir(), 'tokenscope-roofs-'));

function bench(args: string[], cacheHome = ROOFS_CACHE): Promise<BenchRun> {
  return runBench(args, { cacheHome });
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

  it.skipIf(!STORIES_GGUF)(
    `-hf ORG/REPO:QUANT from a local hub, -pg and -o sql, --out DIR: SQL rows and the artifacts, report.html self-contained${STORIES_GGUF ? '' : ' — SKIPPED: stories260K.gguf not found'}`,
    async () => {
      const bytes = readFileSync(STORIES_GGUF!);
      const hub = createServer((req, res) => {
        if (req.url === '/api/models/ggml-org/tiny-GGUF') {
          res.writeHead(200).end(JSON.stringify({ siblings: ['stories260K-Q8_0.gguf', 'stories260K-F32.gguf'].map((rfilename) => ({ rfilename })) }));
        } else if (req.url === '/ggml-org/tiny-GGUF/resolve/main/stories260K-F32.gguf') {
          const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
          const [a, b] = m ? [Number(m[1]), Math.min(m[2] ? Number(m[2]) : bytes.length - 1, bytes.length - 1)] : [0, bytes.length - 1];
          res
            .writeHead(m ? 206 : 200, { 'Content-Length': b - a + 1, ...(m ? { 'Content-Range': `bytes ${a}-${b}/${bytes.length}` } : {}) })
            .end(bytes.subarray(a, b + 1));
        } else res.writeHead(404).end();
      });
      await new Promise<void>((done) => hub.listen(0, '127.0.0.1', done));
      const out = join(dir, 'artifacts');
      process.env.TOKENSCOPE_HF_BASE = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
      try {
        const r = await bench(['-hf', 'ggml-org/tiny-GGUF:f32', '-p', '16', '-n', '0', '-pg', '16,4', '-r', '2', '-o', 'sql', '--out', out, '--quiet']);
        expect(r.stderr).not.toMatch(/error:/);
        expect(r.code).toBe(0);
        // stdout is llama-bench's SQL only: the table, then one INSERT per test.
        const lines = r.stdout.trimEnd().split('\n');
        expect(lines[0]).toBe('CREATE TABLE IF NOT EXISTS test (');
        const inserts = lines.filter((l) => l.startsWith('INSERT INTO test ('));
        expect(inserts).toHaveLength(2);
        expect(inserts[1]).toMatch(/stories260K-F32\.gguf', 'llama 293K F32', .*'16', '4', '0', '/);
        expect(r.stderr).toMatch(/Wrote \d+ files to .*result\.json, llama-bench\.csv, report\.html/);
        const result = validateResult(JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')));
        expect(result.llama_bench!.map((row) => row.test)).toEqual(['pp16', 'pp16+tg4']);
        const html = readFileSync(join(out, 'report.html'), 'utf8');
        expect(html).not.toMatch(/\s(src|href)="\.?\/?assets\//);
        const embedded = /<script type="application\/json" id="tokenscope-result">(.*?)<\/script>/s.exec(html)!;
        expect(JSON.parse(embedded[1])).toEqual(JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')));
        // Opened from disk, the page shows the saved report (its llama-bench rows) with no request beyond the file.
        const browser = await launch(false);
        try {
          const page = await browser.newPage();
          const errors = watchErrors(page);
          const requests: string[] = [];
          page.on('request', (req) => requests.push(req.url()));
          await page.goto(pathToFileURL(join(out, 'report.html')).href);
          await expect.poll(() => deepText(page, 'ts-app'), { timeout: 30_000 }).toMatch(/WebGPU -1 pp16\+tg4 [\d.]+ ± [\d.]+/);
          expect(await deepText(page, 'ts-app')).toContain('Saved report');
          expect(errors).toEqual([]);
          expect(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))).toEqual([]);
        } finally {
          await browser.close();
        }
      } finally {
        delete process.env.TOKENSCOPE_HF_BASE;
        await new Promise<void>((done) => hub.close(() => done()));
      }
    },
  );

  it("vLLM's serve flags: --goodput, --percentile-metrics, --metric-percentiles, --save-result with its keys and file name", async () => {
    const results = join(dir, 'vllm-results');
    const r = await bench([
      '--mode',
      'serve',
      '--model',
      'stories260k',
      '--quant',
      'f32',
      '--num-prompts',
      '4',
      '--max-concurrency',
      '2',
      '--prompt-len',
      '8',
      '--output-len',
      '4',
      '--goodput',
      'ttft:5000',
      'tpot:500',
      '--percentile-metrics',
      'ttft,e2el',
      '--metric-percentiles',
      '50,99.9',
      '--save-result',
      '--result-dir',
      results,
      '--probe-mib',
      '4',
      '--quiet',
    ]);
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Median TTFT \(ms\):\s+[\d.]+\s*\nP50 TTFT \(ms\):\s+[\d.]+\s*\nP99\.9 TTFT \(ms\):/);
    expect(r.stdout).not.toContain('Time per Output Token');
    const [file] = readdirSync(results);
    expect(file).toMatch(/^tokenscope-infqps-concurrency2-stories260k-\d{8}-\d{6}\.json$/);
    const saved = JSON.parse(readFileSync(join(results, file), 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({ backend: 'tokenscope', num_prompts: 4, request_rate: 'inf', max_concurrency: 2 });
    expect(Object.keys(saved).filter((k) => /^p[\d.]+_/.test(k))).toEqual(['p50_ttft_ms', 'p99.9_ttft_ms', 'p50_e2el_ms', 'p99.9_e2el_ms']);
    expect(saved.request_goodput).toBeGreaterThan(0);
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

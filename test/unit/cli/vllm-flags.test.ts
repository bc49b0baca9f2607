import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../../cli/args.ts';
import { jobFromFlags } from '../../../cli/bench-job.ts';
import { BENCH_FLAGS, misplacedFlag, outputDirProblem } from '../../../cli/bench-flags.ts';
import { vllmResultFileName, vllmResultJson } from '../../../cli/vllm-result.ts';
import { serveResult } from '../../../src/serve/metrics.ts';
import type { BenchResult } from '../../../src/measure/schema.ts';

const parse = (argv: string[]) => parseFlags(argv, BENCH_FLAGS, misplacedFlag);
const serve = (argv: string[]) => jobFromFlags(parse(['--mode', 'serve', ...argv]), true).serve!;

describe("vLLM bench serve's flags", () => {
  it('takes --goodput KEY:MS … as the SLOs, its words up to the next flag', () => {
    expect(serve(['--goodput', 'ttft:500', 'tpot:50', '--requests', '4']).slo).toEqual({ ttft: 500, tpot: 50 });
    expect(serve(['--goodput', 'e2el:900']).slo).toEqual({ e2el: 900 });
    expect(serve(['--slo', 'ttft=100,tpot=20']).slo).toEqual({ ttft: 100, tpot: 20 });
    expect(() => serve(['--goodput', 'ttft:500', 'speed:3'])).toThrow(/unknown SLO metric "speed"/);
  });

  it('keeps the chosen metrics and percentiles in the settings; checks them before the run', () => {
    const s = serve(['--percentile-metrics', 'ttft,e2el', '--metric-percentiles', '50,90,99.9']);
    expect(s.percentile_metrics).toEqual(['ttft', 'e2el']);
    expect(s.metric_percentiles).toEqual([50, 90, 99.9]);
    expect(serve([]).percentile_metrics).toBeUndefined();
    expect(() => serve(['--percentile-metrics', 'ttft,latency'])).toThrow(/--percentile-metrics takes ttft, tpot, itl, e2el; got "latency"/);
    expect(() => parse(['--mode', 'serve', '--metric-percentiles', '50,101'])).toThrow(
      /each value of --metric-percentiles must be a number from 0 to 100, got 101/,
    );
    expect(() => parse(['--metric-percentiles', '50'])).toThrow(/--metric-percentiles is a serve-mode flag; add --mode serve/);
  });

  it('--result-dir, --result-filename and --save-detailed need --save-result; the folder is checked before the run', () => {
    expect(() => parse(['--mode', 'serve', '--result-dir', 'x'])).toThrow(/--result-dir shapes the file of --save-result/);
    expect(parse(['--mode', 'serve', '--save-result', '--result-dir', 'x']).get('result-dir')).toBe('x');
    const dir = mkdtempSync(join(tmpdir(), 'ts-save-'));
    writeFileSync(join(dir, 'file'), '');
    expect(outputDirProblem(join(dir, 'new', 'deeper'), '--result-dir')).toBeNull();
    expect(outputDirProblem(dir, '--result-dir')).toBeNull();
    expect(outputDirProblem(join(dir, 'file', 'sub'), '--result-dir')).toMatch(/is a file, not a folder/);
  });
});

describe("--save-result's file", () => {
  const t = (promptTokens: number, tSend: number, tTokens: number[]) => ({ promptTokens, tSend, tTokens });
  const result = {
    created_at: '2026-12-05T03:04:05.000Z',
    serve: {
      settings: { requests: 2, rate: 2, burstiness: 1, percentile_metrics: ['ttft', 'itl'], metric_percentiles: [50, 99] },
      run: { result: serveResult([t(8, 0, [100, 130, 150]), t(8, 50, [200, 240])], 1, { ttft: 120 }, [50, 99]) },
    },
  } as unknown as BenchResult;
  const options = { modelId: '../shared/models/stories260K.gguf', maxConcurrency: 4, detailed: false };

  it("has vLLM's top-level keys and the chosen metrics' keys only", () => {
    const json = vllmResultJson(result, options)!;
    expect(Object.keys(json)).toEqual([
      'date',
      'backend',
      'label',
      'model_id',
      'tokenizer_id',
      'num_prompts',
      'request_rate',
      'burstiness',
      'max_concurrency',
      'duration',
      'completed',
      'failed',
      'total_input_tokens',
      'total_output_tokens',
      'request_throughput',
      'request_goodput',
      'output_throughput',
      'total_token_throughput',
      'mean_ttft_ms',
      'median_ttft_ms',
      'std_ttft_ms',
      'p50_ttft_ms',
      'p99_ttft_ms',
      'mean_itl_ms',
      'median_itl_ms',
      'std_itl_ms',
      'p50_itl_ms',
      'p99_itl_ms',
    ]);
    expect(json).toMatchObject({
      backend: 'tokenscope',
      num_prompts: 2,
      request_rate: 2,
      max_concurrency: 4,
      completed: 2,
      request_goodput: 1,
      p50_ttft_ms: 125,
    });
    expect(vllmResultJson(result, { ...options, detailed: true })).toMatchObject({ input_lens: [8, 8], output_lens: [3, 2], ttfts: [0.1, 0.15] });
    expect(vllmResultJson({ created_at: '' } as unknown as BenchResult, options)).toBeNull();
  });

  it('is named as vLLM names it: label-{rate}qps[-concurrencyN]-model-date', () => {
    const name = vllmResultFileName(result, options);
    expect(name).toMatch(/^tokenscope-2\.0qps-concurrency4-stories260K\.gguf-\d{8}-\d{6}\.json$/);
    const inf = { ...result, serve: { ...result.serve, settings: { ...result.serve!.settings, rate: null } } } as unknown as BenchResult;
    expect(vllmResultFileName(inf, { ...options, maxConcurrency: null })).toMatch(/^tokenscope-infqps-stories260K\.gguf-/);
  });
});

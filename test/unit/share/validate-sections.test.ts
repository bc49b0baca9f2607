import { describe, expect, it } from 'vitest';
import { validateResult } from '../../../src/measure/validate.ts';
import { latencySchema } from '../../../src/measure/sections/latency.ts';
import { serveSchema } from '../../../src/measure/sections/serve.ts';

const validateLatency = (v: unknown, path: string) => latencySchema.check(v, path);
const validateServe = (v: unknown, path: string) => serveSchema.check(v, path);
import { largeResult, smallResult } from './fixtures.ts';

type Doc = Record<string, any>;
const clone = (r: unknown): Doc => JSON.parse(JSON.stringify(r));

describe('section validators', () => {
  it('accept what the benchmark writes', () => {
    expect(validateResult(largeResult())).toEqual(largeResult());
  });

  it.each([
    ['a string where a row reads a number', (r: Doc) => (r.latency.rows[0].ttft.p50 = '12'), /latency.rows\[0\].ttft.p50 must be a finite number/],
    ['a negative token time', (r: Doc) => (r.latency.requests[1].token_ms[3] = -1), /latency.requests\[1\].token_ms\[3\] must be ≥ 0/],
    ['a missing vLLM stat', (r: Doc) => delete r.latency.summary.p99_itl_ms, /latency.summary.p99_itl_ms must be a finite number/],
    [
      'an unknown verdict',
      (r: Doc) => (r.latency.verdicts[0].prefill.bound = 'fast'),
      /bound must be one of memory-bound, compute-bound, launch-bound, overhead-bound/,
    ],
    ['a decode verdict that is not an object', (r: Doc) => (r.latency.verdicts[0].decode = 'fast'), /verdicts\[0\].decode must be an object/],
    ['an unknown kernel phase', (r: Doc) => (r.latency.kernels[0].phase = 'both'), /kernels\[0\].phase must be one of prefill, decode/],
    ['an unknown clock', (r: Doc) => (r.latency.gpu_clock = 'sundial'), /gpu_clock must be one of/],
    ['a fractional layer count', (r: Doc) => (r.model.config.nLayers = 1.5), /model.config.nLayers must be an integer/],
    ['a model name that is not a string', (r: Doc) => (r.model.name = 5), /model.name must be a string/],
    ['an endless model name', (r: Doc) => (r.model.name = 'x'.repeat(257)), /model.name is longer than 256 characters/],
    ['too many rows', (r: Doc) => (r.latency.rows = new Array(257).fill(r.latency.rows[0])), /latency.rows has more than 256 items/],
    ['a latency section without rows', (r: Doc) => delete r.latency.rows, /latency.rows must be an array/],
    ['a cold start without its times', (r: Doc) => (r.cold_start = {}), /cold_start.parse_ms must be a finite number/],
    ['generated text that is not text', (r: Doc) => (r.generation = { prompt_token_ids: [1], token_ids: [2], text: 3 }), /generation.text must be a string/],
    [
      'a llama-bench ngl below −1',
      (r: Doc) =>
        (r.llama_bench = [
          { model: 'm', backend: 'WebGPU', test: 'pp512', sizeBytes: 1, params: 1, meanTokensPerS: 1, stdTokensPerS: 0, ngl: -2, samples: [1] },
        ]),
      /llama_bench\[0\].ngl must be ≥ -1/,
    ],
    [
      'a profile step time that is not a number',
      (r: Doc) => (r.latency.profile_step_ms.decode = '2'),
      /latency.profile_step_ms.decode must be a finite number/,
    ],
    ['a trimmed flag that is not a boolean', (r: Doc) => (r.trimmed = 'yes'), /trimmed must be true or false/],
  ])('reject %s', (_name, mutate, message) => {
    const r = clone(largeResult());
    mutate(r);
    expect(() => validateResult(r)).toThrow(message);
  });

  it('accept a latency section that stopped early (requests and rows only)', () => {
    const { requests, rows } = clone(smallResult()).latency;
    expect(() => validateLatency({ requests, rows }, 'latency')).not.toThrow();
  });

  it('keep negative overheads: they are differences of medians', () => {
    const r = clone(smallResult());
    r.latency.rows[0].host_overhead_ms = -0.25;
    expect(() => validateResult(r)).not.toThrow();
  });
});

describe('the serve section', () => {
  const serve = {
    completed: 9,
    failed: 1,
    duration: 12.5,
    total_input_tokens: 900,
    total_output_tokens: 450,
    request_throughput: 0.72,
    request_goodput: null,
    output_throughput: 36,
    total_token_throughput: 108,
    median_ttft_ms: 120,
    p99_ttft_ms: 300,
    input_lens: [100, 100],
    output_lens: [50, 0],
    ttfts: [0.12, 0],
    itls: [[0.02, 0.021], []],
    latencies: [1.1, 0],
    errors: ['', 'timeout'],
  };

  it('accepts any subset of vLLM keys, and keys of its own', () => {
    expect(() => validateServe(serve, 'serve')).not.toThrow();
    expect(() => validateServe({}, 'serve')).not.toThrow();
    expect(() => validateServe({ ...serve, max_concurrency: 4, backend: 'tokenscope', slo: { ttft: 500 } }, 'serve')).not.toThrow();
  });

  it.each([
    ['a string count', { completed: '9' }, /serve.completed must be a finite number/],
    ['a fractional count', { failed: 0.5 }, /serve.failed must be an integer/],
    ['a negative stat', { p99_ttft_ms: -1 }, /serve.p99_ttft_ms must be ≥ 0/],
    ['goodput that is not a number', { request_goodput: 'lots' }, /serve.request_goodput must be a finite number/],
    ['a per-request array of strings', { ttfts: ['0.1'] }, /serve.ttfts\[0\] must be a finite number/],
    ['ITLs that are not arrays', { itls: [0.1] }, /serve.itls\[0\] must be an array/],
    ['an error that is not a string', { errors: [0] }, /serve.errors\[0\] must be a string/],
    ['an endless string of its own', { backend: 'x'.repeat(2001) }, /serve.backend is longer than 2000 characters/],
    ['not an object', [], /serve must be an object/],
  ])('rejects %s', (_name, patch, message) => {
    expect(() => validateServe(Array.isArray(patch) ? patch : { ...serve, ...patch }, 'serve')).toThrow(message);
  });

  it('is checked as part of a result', () => {
    expect(() => validateResult({ ...smallResult(), serve: { completed: -1 } })).toThrow(/serve.completed must be ≥ 0/);
  });
});

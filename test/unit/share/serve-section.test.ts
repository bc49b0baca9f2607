import { describe, expect, it } from 'vitest';
import { verdict } from '../../../src/measure/roofline.ts';
import { compareResults } from '../../../src/share/compare.ts';
import { serveSchema } from '../../../src/measure/sections/serve.ts';

const validateServe = (v: unknown, path: string) => serveSchema.check(v, path);
import { serveResult } from '../../../src/serve/metrics.ts';
import type { ServeSection } from '../../../src/serve/run.ts';
import { smallResult } from './fixtures.ts';

/** A serving section as runServing writes it, from hand-made timings. */
function section(tpotMs: number): ServeSection {
  const timings = [0, 10, 20].map((tSend) => ({ promptTokens: 16, tSend, tTokens: [tSend + 50, tSend + 50 + tpotMs, tSend + 50 + 2 * tpotMs] }));
  const decode = {
    batch: 2,
    step_ms: 5,
    steps: 3,
    flops: 1e6,
    bytes: 1e6,
    intensity: 1,
    verdict: verdict({ flops: 1e6, bytes: 1e6, ms: 5 }, { computeFlopsPerS: 1e9, bandwidthBytesPerS: 1e9 }),
  };
  return {
    settings: {
      requests: 3,
      rate: 10,
      burstiness: 1,
      prompt: { kind: 'fixed', tokens: 16 },
      output: { kind: 'fixed', tokens: 3 },
      max_batch: 2,
      max_tokens_per_step: 32,
      chunk: 8,
      slo: { ttft: 100 },
      seed: 1,
    },
    run: {
      result: serveResult(timings, 1, { ttft: 100 }),
      slo_attainment: 1,
      error_rate: 0,
      timeline: timings.map((t, i) => ({
        id: i,
        prompt_tokens: 16,
        output_tokens: 3,
        arrival_ms: t.tSend,
        admit_ms: t.tSend,
        first_token_ms: t.tTokens[0],
        finish_ms: t.tTokens[2],
        error: null,
      })),
      steps: [{ start_ms: 0, end_ms: 5, decode: 2, prefill_tokens: 0, running: 2, waiting: 1 }],
      decode_roofline: [decode],
    },
    cost: null,
    batch_sweep: [
      { batch: 2, output_throughput: 9, request_throughput: 3, median_ttft_ms: 50, p99_ttft_ms: 50, median_tpot_ms: tpotMs, p99_tpot_ms: tpotMs, decode },
    ],
    rate_sweep: {
      rate: 2,
      status: 'found',
      lo: 2,
      hi: 3,
      probes: [
        { rate: 2, attainment: 1 },
        { rate: 3, attainment: 0.5 },
      ],
      target: 0.9,
    },
  };
}

const json = (s: ServeSection) => JSON.parse(JSON.stringify(s));

describe('the serving section as the job writes it', () => {
  it('validates, nested result and records included', () => {
    expect(() => validateServe(json(section(10)), 'serve')).not.toThrow();
  });

  it.each([
    [
      'a string where the result’s throughput is',
      (s: any) => (s.run.result.request_throughput = 'fast'),
      /serve\.run\.result\.request_throughput must be a finite number/,
    ],
    ['a negative attainment', (s: any) => (s.run.slo_attainment = -1), /slo_attainment must be ≥ 0/],
    ['markup instead of a timeline entry', (s: any) => (s.run.timeline[0] = '<img src=x onerror=alert(1)>'), /timeline\[0\] must be an object/],
    ['an unknown verdict', (s: any) => (s.run.decode_roofline[0].verdict.bound = 'vibes'), /verdict\.bound must be one of/],
    ['a rate sweep without probes', (s: any) => delete s.rate_sweep.probes, /rate_sweep\.probes must be an array/],
    ['a batch point without its batch', (s: any) => delete s.batch_sweep[0].batch, /batch_sweep\[0\]\.batch must be a finite number/],
  ])('rejects %s', (_name, mutate, message) => {
    const s = json(section(10));
    mutate(s);
    expect(() => validateServe(s, 'serve')).toThrow(message);
  });

  it('is compared by the metrics inside run.result', () => {
    const a = { ...smallResult(), serve: json(section(10)) };
    const b = { ...smallResult(), serve: json(section(20)) };
    const tpot = compareResults(a, b).find((r) => r.section === 'serve' && r.key === 'median_tpot_ms');
    expect(tpot).toMatchObject({ a: 10, b: 20, ratio: 2, better: 'a' });
  });
});

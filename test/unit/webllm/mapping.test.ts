import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { timingOf, type RequestRecord } from '../../../src/measure/latency-summary.ts';
import { itlsMs, latencyStats } from '../../../src/measure/metrics.ts';
import { isTokenscopeError } from '../../../src/errors.ts';
import { compareSample, ourMetrics, parseRuntimeStats, tokenTimes, toRequestRecord, webllmMetrics, type WebLLMSample } from '../../../src/webllm/mapping.ts';

const { samples }: { samples: Record<string, WebLLMSample> } = JSON.parse(readFileSync(new URL('./fixtures/webllm-samples.json', import.meta.url), 'utf8'));
const { chat_steady: steady, chat_disagrees: disagrees, chat_merged_chunk: merged, tokens_exact: exact, tokens_single: single } = samples;

function expectClose(actual: Record<string, number | null | undefined>, expected: Record<string, number | null>) {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [key, value] of Object.entries(expected)) {
    if (value === null) expect(actual[key], key).toBeNull();
    else expect(actual[key], key).toBeCloseTo(value, 6);
  }
}

describe('toRequestRecord', () => {
  it('turns one chunk per token into token_ms after the send', () => {
    const record = toRequestRecord(steady, 2, false);
    expect(record).toEqual({
      engine: 'webllm',
      model_id: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC',
      path: 'chat',
      chunks: 8,
      prompt_tokens: 40,
      output_tokens: 8,
      rep: 2,
      token_ms: [52, 62.5, 72.75, 83, 93.25, 103.5, 113.75, 124],
      gpu_prefill_ms: null,
      gpu_decode_ms: null,
      disturbed: false,
    });
  });

  it('gives the tokens of a merged chunk equal times: TTFT, TPOT and the ITL values are those of the true placement', () => {
    // 6 tokens in 5 chunks: one chunk carried 2 tokens (a character split across tokens).
    const record = toRequestRecord(merged, 0, false);
    expect(record.chunks).toBe(5);
    expect(record.output_tokens).toBe(6);
    expect(record.token_ms).toEqual([30, 40, 60, 70, 80, 80]);
    const timing = timingOf(record);
    // Had the merged pair been the third chunk, the times would be [30, 40, 60, 60, 70, 80]: same gaps.
    const truth = { promptTokens: 31, tSend: 0, tTokens: [30, 40, 60, 60, 70, 80] };
    expect(itlsMs(timing).sort((a, b) => a - b)).toEqual(itlsMs(truth).sort((a, b) => a - b));
    expect(itlsMs(timing).sort((a, b) => a - b)).toEqual([0, 10, 10, 10, 20]);
    expect(latencyStats([timing])).toEqual(latencyStats([truth]));
    expect(ourMetrics(merged).ttft_ms).toBe(30);
    expect(ourMetrics(merged).tpot_ms).toBe(10); // (80 − 30) / (6 − 1)
  });

  it('is a RequestRecord our latency summary reads', () => {
    const record: RequestRecord = toRequestRecord(exact, 0, false);
    const stats = latencyStats([timingOf(record)]);
    expect(stats.median_ttft_ms).toBe(51);
    expect(stats.median_tpot_ms).toBeCloseTo(10.5, 9); // (82.5 − 51) / 3
    expect(stats.median_itl_ms).toBe(10.5);
    expect(stats.median_e2el_ms).toBe(82.5);
  });
});

describe('tokenTimes rejects samples that cannot be right', () => {
  it.each<[string, Partial<WebLLMSample>]>([
    ['more chunks than tokens', { output_tokens: 7 }],
    ['tokens without timestamps', { t_chunks: [] }],
    ['a chunk before the send', { t_chunks: [9999, 10062.5, 10072.75, 10083, 10093.25, 10103.5, 10113.75, 10124] }],
    ['timestamps going backwards', { t_chunks: [10052, 10062.5, 10060, 10083, 10093.25, 10103.5, 10113.75, 10124] }],
  ])('%s', (_label, change) => {
    expect(() => tokenTimes({ ...steady, ...change })).toThrow(expect.objectContaining({ code: 'bad-input' }));
  });
});

describe('webllmMetrics', () => {
  it('reads usage.extra in ms and tokens/s', () => {
    expectClose(
      { ...webllmMetrics(steady) },
      { ttft_ms: 48.5, tpot_ms: 9.8, prefill_tokens_per_s: 824.7422680412371, decode_tokens_per_s: 102.04081632653062 },
    );
  });

  it('derives TTFT and TPOT from the rates of runtimeStatsText on the token path', () => {
    // 128 tokens at 2560 tokens/s = 50 ms; 100 tokens/s = 10 ms per token.
    expectClose({ ...webllmMetrics(exact) }, { ttft_ms: 50, tpot_ms: 10, prefill_tokens_per_s: 2560, decode_tokens_per_s: 100 });
  });

  it('has no TPOT or decode rate for a one-token request (WebLLM prints NaN)', () => {
    expectClose({ ...webllmMetrics(single) }, { ttft_ms: 16, tpot_ms: null, prefill_tokens_per_s: 1000, decode_tokens_per_s: null });
  });

  it('refuses a sample with neither report', () => {
    expect(() => webllmMetrics({ ...exact, runtime_stats: null })).toThrow(expect.objectContaining({ code: 'bad-input' }));
  });
});

describe('parseRuntimeStats', () => {
  it('reads WebLLM 0.2.86’s text', () => {
    expect(parseRuntimeStats('prefill: 1234.5678 tokens/sec, decoding: 56.7890 tokens/sec')).toEqual({
      prefill_tokens_per_s: 1234.5678,
      decode_tokens_per_s: 56.789,
    });
    expect(parseRuntimeStats('prefill: NaN tokens/sec, decoding: NaN tokens/sec')).toEqual({ prefill_tokens_per_s: null, decode_tokens_per_s: null });
  });

  it('refuses anything else', () => {
    let thrown: unknown;
    try {
      parseRuntimeStats('peak-memory=1024 MB, all-memory=2048 MB');
    } catch (e) {
      thrown = e;
    }
    expect(isTokenscopeError(thrown, 'bad-input')).toBe(true);
  });
});

describe('compareSample', () => {
  it('computes our metrics with the shared formulas and WebLLM’s beside them', () => {
    const c = compareSample(steady);
    // TTFT 52; TPOT (124 − 52) / 7; prefill 40 / 0.052 s; decode 1 / TPOT.
    expectClose({ ...c.ours }, { ttft_ms: 52, tpot_ms: 72 / 7, prefill_tokens_per_s: 40 / 0.052, decode_tokens_per_s: 7000 / 72 });
    expectClose(c.disagreement, {
      ttft_ms: (52 - 48.5) / 48.5,
      tpot_ms: (72 / 7 - 9.8) / 9.8,
      prefill_tokens_per_s: (40 / 0.052 - 40 / 0.0485) / (40 / 0.0485),
      decode_tokens_per_s: (7000 / 72 - 1 / 0.0098) / (1 / 0.0098),
    });
    expect(c.flagged).toEqual([]);
  });

  it('flags a 20% and a 17% disagreement but not a 10% or a 9% one', () => {
    const c = compareSample(disagrees);
    expectClose(c.disagreement, { ttft_ms: 0.1, tpot_ms: 0.2, prefill_tokens_per_s: 50 / 55 - 1, decode_tokens_per_s: 1000 / 12 / 100 - 1 });
    expect(c.flagged).toEqual(['tpot_ms', 'decode_tokens_per_s']);
  });

  it('compares only what both sides define', () => {
    const c = compareSample(single);
    expect(Object.keys(c.disagreement)).toEqual(['ttft_ms', 'prefill_tokens_per_s']);
    expect(c.flagged).toEqual(['ttft_ms', 'prefill_tokens_per_s']); // 20 vs 16 ms, 800 vs 1000 tokens/s
  });

  it('takes the threshold as a parameter', () => {
    expect(compareSample(disagrees, 0.25).flagged).toEqual([]);
    expect(compareSample(steady, 0.05).flagged).toEqual(['ttft_ms', 'prefill_tokens_per_s']);
  });
});

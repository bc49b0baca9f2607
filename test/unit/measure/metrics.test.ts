import { describe, expect, it } from 'vitest';
import {
  clientQueueMs,
  decodeTokensPerS,
  e2elMs,
  formatFixed,
  formatLlamaBenchTable,
  itlsMs,
  latencyStats,
  llamaBenchRow,
  llamaBenchTestName,
  prefillTokensPerS,
  tpotMs,
  ttftMs,
  type RequestTiming,
} from '../../../src/measure/metrics.ts';
import { isTokenscopeError } from '../../../src/errors.ts';

// Sent at 1000 ms; tokens at 1100, 1120, 1150, 1160 → TTFT 100, E2EL 160, TPOT (160 − 100)/3 = 20,
// ITLs 20, 30, 10.
const four: RequestTiming = { promptTokens: 50, tSend: 1000, tTokens: [1100, 1120, 1150, 1160] };
// One output token: TTFT = E2EL = 40, no TPOT, no ITL.
const one: RequestTiming = { promptTokens: 8, tSend: 0, tTokens: [40] };
// Two tokens: TTFT 10, E2EL 70, TPOT 60, ITL [60].
const two: RequestTiming = { promptTokens: 20, tSend: 500, tTokens: [510, 570] };
const failed: RequestTiming = { promptTokens: 30, tSend: 0, tTokens: [5], error: 'device lost' };

describe('per-request metrics', () => {
  it.each([
    ['four tokens', four, 100, 20, [20, 30, 10], 160],
    ['one token', one, 40, undefined, [], 40],
    ['two tokens', two, 10, 60, [60], 70],
  ] as const)('%s: TTFT, TPOT, ITLs, E2EL', (_, r, ttft, tpot, itls, e2el) => {
    expect(ttftMs(r)).toBe(ttft);
    expect(tpotMs(r)).toBe(tpot);
    expect(itlsMs(r)).toEqual(itls);
    expect(e2elMs(r)).toBe(e2el);
  });

  it('no token yet: TTFT and E2EL are undefined', () => {
    const r: RequestTiming = { promptTokens: 4, tSend: 0, tTokens: [], error: 'x' };
    expect(ttftMs(r)).toBeUndefined();
    expect(e2elMs(r)).toBeUndefined();
  });

  it('prefill tokens/s = prompt / TTFT s; decode tokens/s = 1 / TPOT s', () => {
    expect(prefillTokensPerS(four)).toBe(500); // 50 tokens / 0.1 s
    expect(decodeTokensPerS(four)).toBe(50); // 1 / 0.020 s
    expect(decodeTokensPerS(one)).toBeUndefined();
  });

  it('client queue = tSend − tArrival', () => {
    expect(clientQueueMs({ ...four, tArrival: 970 })).toBe(30);
    expect(clientQueueMs(four)).toBe(0);
  });
});

describe('latencyStats (vLLM keys)', () => {
  const stats = latencyStats([four, one, two, failed]);

  it('has every vLLM key', () => {
    const keys = ['ttft', 'tpot', 'itl', 'e2el'].flatMap((m) => ['mean', 'median', 'std', 'p90', 'p95', 'p99'].map((s) => `${s}_${m}_ms`));
    expect(Object.keys(stats).sort()).toEqual(keys.sort());
  });

  it('TTFT is request-weighted over completed requests (the failed one is left out)', () => {
    // TTFTs 100, 40, 10: mean 50, median 40, population std √((50² + 10² + 40²)/3) = √1400.
    expect(stats.mean_ttft_ms).toBe(50);
    expect(stats.median_ttft_ms).toBe(40);
    expect(stats.std_ttft_ms).toBeCloseTo(Math.sqrt(1400), 12);
    // p99: h = 2·0.99 = 1.98 over [10, 40, 100] → 40 + 0.98·60 = 98.8.
    expect(stats.p99_ttft_ms).toBeCloseTo(98.8, 12);
  });

  it('TPOT excludes one-token outputs', () => {
    // TPOTs 20 and 60 only.
    expect(stats.mean_tpot_ms).toBe(40);
    expect(stats.std_tpot_ms).toBe(20);
  });

  it('ITL is token-weighted: all gaps pooled', () => {
    // Gaps 20, 30, 10, 60 → mean 30 (a request-weighted mean of per-request means would be 40).
    expect(stats.mean_itl_ms).toBe(30);
    expect(stats.median_itl_ms).toBe(25);
  });

  it('E2EL over completed requests', () => {
    // 160, 40, 70 → mean 90.
    expect(stats.mean_e2el_ms).toBe(90);
  });

  it('a metric with no samples reads 0, as vLLM reports it', () => {
    const s = latencyStats([one]);
    expect(s.mean_tpot_ms).toBe(0);
    expect(s.p99_itl_ms).toBe(0);
    expect(s.mean_ttft_ms).toBe(40);
  });

  it('rejects a completed request without tokens', () => {
    expect(() => latencyStats([{ promptTokens: 1, tSend: 0, tTokens: [] }])).toThrow(/no output tokens/);
  });
});

describe('formatFixed (printf %.2f)', () => {
  // Python's format(x, '.2f') on the same values: exact binary ties go to even.
  it.each([
    [0.125, '0.12'],
    [0.375, '0.38'],
    [0.625, '0.62'],
    [2.675, '2.67'],
    [1.005, '1.00'],
    [-0.125, '-0.12'],
    [3.14159, '3.14'],
    [0, '0.00'],
    [Infinity, 'inf'],
    [NaN, 'nan'],
  ])('%d → %s', (x, text) => {
    expect(formatFixed(x, 2)).toBe(text);
  });
});

describe('llama-bench', () => {
  it('row: mean ± sample std of per-repetition tokens/s', () => {
    const row = llamaBenchRow('m', 1, 1, 'WebGPU', 'pp512', [2300, 2450, 2368.8, 2400, 2325.2]);
    expect(row.meanTokensPerS).toBeCloseTo(2368.8, 10);
    expect(row.stdTokensPerS).toBeCloseTo(59.58456175889862, 10); // Python statistics.stdev
    expect(llamaBenchRow('m', 1, 1, 'WebGPU', 'tg128', [131.42]).stdTokensPerS).toBe(0);
  });

  it('test names as llama-bench prints them', () => {
    expect(llamaBenchTestName(512, 0)).toBe('pp512');
    expect(llamaBenchTestName(0, 128)).toBe('tg128');
    expect(llamaBenchTestName(512, 128, 4096)).toBe('pp512+tg128 @ d4096');
  });

  it('rejects a malformed test name and an empty run', () => {
    const bad = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return isTokenscopeError(e, 'bad-input');
      }
      return false;
    };
    expect(bad(() => llamaBenchRow('m', 1, 1, 'WebGPU', 'pp 512' as never, [1]))).toBe(true);
    expect(bad(() => llamaBenchRow('m', 1, 1, 'WebGPU', 'pp512', []))).toBe(true);
  });

  it('markdown table, byte for byte as llama-bench -o md prints it', () => {
    const rows = [
      llamaBenchRow('llama 7B Q4_0', 3825065984, 6738415616, 'WebGPU', 'pp512', [2300, 2450, 2368.8, 2400, 2325.2]),
      llamaBenchRow('qwen2 0.5B Q8_0', 531068928, 494032768, 'WebGPU', 'tg128', [131.42]),
    ];
    // Generated by emulating llama-bench's fprintf(" %*s |") (byte widths; t/s gets +1 for "±").
    expect(formatLlamaBenchTable(rows)).toBe(
      '| model                          |       size |     params | backend    | ngl |            test |                  t/s |\n' +
        '| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |\n' +
        '| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | WebGPU     |  -1 |           pp512 |      2368.80 ± 59.58 |\n' +
        '| qwen2 0.5B Q8_0                | 506.47 MiB |   494.03 M | WebGPU     |  -1 |           tg128 |        131.42 ± 0.00 |\n',
    );
  });
});

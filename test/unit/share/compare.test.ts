import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LatencyRow } from '../../../src/measure/latency-summary.ts';
import type { BenchResult } from '../../../src/measure/schema.ts';
import { compareResults, decodeComparison, encodeComparison, type ComparisonRow } from '../../../src/share/compare.ts';
import { toBase64Url } from '../../../src/share/codec.ts';
import { encodeReport, LINK_BUDGET_CHARS, shareable } from '../../../src/share/permalink.ts';
import { largeResult, latencyOf, smallResult } from './fixtures.ts';

/** A result whose ceilings and rows hold the given numbers (everything else from the small fixture). */
function result(ceilings: Record<string, number | null>, rows: Partial<LatencyRow>[], serve?: Record<string, number>): BenchResult {
  const r = smallResult();
  r.ceilings = { ...r.ceilings!, ...ceilings };
  const base = latencyOf(r).rows[0];
  r.latency = { ...latencyOf(r), rows: rows.map((row) => ({ ...base, ...row })) };
  if (serve) r.serve = serve;
  return r;
}

const summary = (p50: number, p99: number) => ({ count: 5, mean: p50, std: 0, min: p50, p50, p90: p99, p95: p99, p99, max: p99 });
const pick = (rows: ComparisonRow[], key: string, promptTokens: number | null = null) => rows.find((r) => r.key === key && r.prompt_tokens === promptTokens);

describe('compareResults', () => {
  const a = result(
    { read_bandwidth_gbps: 400, copy_bandwidth_gbps: 300, copy_buffer_to_buffer_gbps: 350, f32_gflops: 2000, matmul_f32_gflops: 1000, f16_gflops: 4000 },
    [
      {
        prompt_tokens: 128,
        ttft: summary(100, 150),
        tpot: summary(20, 25),
        prefill_tokens_per_s: 1280,
        decode_tokens_per_s: 50,
        decode_efficiency: 0.5,
        decode_of_read_beside: 0.5,
      },
      { prompt_tokens: 512, ttft: summary(300, 400), tpot: summary(22, 30), prefill_tokens_per_s: 1706.25, decode_tokens_per_s: 45, decode_efficiency: 0.4 },
      { prompt_tokens: 2048, ttft: summary(900, 1000), tpot: summary(25, 30), prefill_tokens_per_s: 2275, decode_tokens_per_s: 40, decode_efficiency: 0.3 },
    ],
    { request_throughput: 2, median_ttft_ms: 0, p99_ttft_ms: 0, output_throughput: 100 },
  );
  const b = result(
    { read_bandwidth_gbps: 500, copy_bandwidth_gbps: 240, copy_buffer_to_buffer_gbps: 350, f32_gflops: 2010, matmul_f32_gflops: 1000, f16_gflops: null },
    [
      { prompt_tokens: 512, ttft: summary(240, 600), tpot: null, prefill_tokens_per_s: 2133, decode_tokens_per_s: null, decode_efficiency: null },
      {
        prompt_tokens: 128,
        ttft: summary(80, 150),
        tpot: summary(25, 20),
        prefill_tokens_per_s: 1600,
        decode_tokens_per_s: 40,
        decode_efficiency: 0.625,
        decode_of_read_beside: 0.55,
      },
    ],
    { request_throughput: 3, median_ttft_ms: 0, p99_ttft_ms: 5 },
  );
  const rows = compareResults(a, b);

  it.each([
    // key, prompt tokens, a, b, ratio b/a, better
    ['read_bandwidth_gbps', null, 400, 500, 1.25, 'b'],
    ['copy_bandwidth_gbps', null, 300, 240, 0.8, 'a'],
    ['copy_buffer_to_buffer_gbps', null, 350, 350, 1, 'same'],
    ['f32_gflops', null, 2000, 2010, 1.005, 'same'],
    ['median_ttft_ms', 128, 100, 80, 0.8, 'b'],
    ['p99_ttft_ms', 128, 150, 150, 1, 'same'],
    ['median_tpot_ms', 128, 20, 25, 1.25, 'a'],
    ['p99_tpot_ms', 128, 25, 20, 0.8, 'b'],
    ['prefill_tokens_per_s', 128, 1280, 1600, 1.25, 'b'],
    ['decode_tokens_per_s', 128, 50, 40, 0.8, 'a'],
    ['decode_efficiency', 128, 0.5, 0.625, 1.25, 'b'],
    ['decode_of_read_beside', 128, 0.5, 0.55, 1.1, 'b'],
    ['median_ttft_ms', 512, 300, 240, 0.8, 'b'],
    ['p99_ttft_ms', 512, 400, 600, 1.5, 'a'],
    ['request_throughput', null, 2, 3, 1.5, 'b'],
    ['median_ttft_ms', null, 0, 0, 1, 'same'],
    ['p99_ttft_ms', null, 0, 5, null, 'a'],
  ] as const)('%s at %s: %s vs %s → ratio %s, %s better', (key, promptTokens, va, vb, ratio, better) => {
    const row = pick(rows, key, promptTokens);
    expect(row).toMatchObject({ a: va, b: vb, better });
    if (ratio === null) expect(row!.ratio).toBeNull();
    else expect(row!.ratio).toBeCloseTo(ratio, 12);
  });

  it('says which direction is better for every metric', () => {
    expect(pick(rows, 'read_bandwidth_gbps')).toMatchObject({
      section: 'ceilings',
      unit: 'GB/s',
      direction: 'higher-is-better',
      metric: 'streaming read bandwidth',
    });
    expect(pick(rows, 'median_ttft_ms', 128)).toMatchObject({ section: 'latency', unit: 'ms', direction: 'lower-is-better', metric: 'median TTFT' });
    expect(pick(rows, 'decode_tokens_per_s', 128)).toMatchObject({ unit: 'tok/s', direction: 'higher-is-better' });
    expect(pick(rows, 'request_throughput')).toMatchObject({ section: 'serve', unit: 'req/s', direction: 'higher-is-better' });
  });

  it('compares only what both have', () => {
    expect(pick(rows, 'f16_gflops')).toBeUndefined();
    expect(rows.filter((r) => r.prompt_tokens === 2048)).toEqual([]);
    expect(pick(rows, 'median_tpot_ms', 512)).toBeUndefined();
    expect(pick(rows, 'output_throughput')).toBeUndefined();
    // decode_of_read_beside: at 128 only (the 512 rows carry none).
    expect(rows.filter((r) => r.section === 'latency').map((r) => r.prompt_tokens)).toEqual([128, 128, 128, 128, 128, 128, 128, 128, 512, 512, 512]);
    expect(pick(rows, 'decode_of_read_beside', 512)).toBeUndefined();
  });

  it('a result against itself is the same everywhere', () => {
    const r = largeResult();
    const self = compareResults(r, r);
    // 7 roofs (the 8-bit-activation prefill GEMM the 7th) + 7 metrics at each of 4 prompt lengths.
    expect(self.length).toBe(7 + 4 * 7);
    expect(self.every((row) => row.better === 'same' && row.ratio === 1)).toBe(true);
  });
});

describe('comparison links', () => {
  it('carry both results, each trimmed to half the budget', async () => {
    const a = largeResult();
    const b = { ...largeResult(), created_at: '2026-02-03T04:05:06.000Z' };
    const fragment = await encodeComparison(a, b);
    expect(fragment).toMatch(/^#c=[A-Za-z0-9_-]+$/);
    expect(fragment.length).toBeLessThanOrEqual(LINK_BUDGET_CHARS);
    const decoded = await decodeComparison(fragment);
    expect(decoded.a).toEqual(await shareable(a, LINK_BUDGET_CHARS / 2));
    expect(decoded.b).toEqual(await shareable(b, LINK_BUDGET_CHARS / 2));
    expect(compareResults(decoded.a, decoded.b).length).toBe(7 + 4 * 7);
  });

  it('are refused when they carry something else', async () => {
    await expect(decodeComparison(await encodeReport(smallResult()))).rejects.toMatchObject({
      code: 'bad-input',
      message: expect.stringMatching(/does not carry a tokenscope comparison/),
    });
    const json = (doc: unknown) => `#c=${toBase64Url(deflateRawSync(Buffer.from(JSON.stringify(doc))))}`;
    await expect(decodeComparison(json([smallResult(), smallResult()]))).rejects.toMatchObject({
      code: 'bad-input',
      message: expect.stringMatching(/comparison must be an object/),
    });
    await expect(decodeComparison(json({ a: smallResult(), b: { ...smallResult(), schema_version: 7 } }))).rejects.toMatchObject({
      code: 'bad-input',
      message: expect.stringMatching(/^In the second result of the comparison: This result uses schema version 7/),
      hint: 'Open it with a newer tokenscope.',
    });
    await expect(decodeComparison(json({ b: smallResult() }))).rejects.toMatchObject({
      message: expect.stringMatching(/^In the first result of the comparison: Invalid result: result must be an object/),
    });
  });
});

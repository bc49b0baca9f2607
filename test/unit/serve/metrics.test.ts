import { describe, expect, it } from 'vitest';
import type { RequestTiming } from '../../../src/measure/metrics.ts';
import { isTokenscopeError } from '../../../src/errors.ts';
import { formatServeSummary } from '../../../src/measure/format.ts';
import type { RequestTrace, ServeTrace } from '../../../src/serve/trace.ts';
import {
  availabilityOfTrace,
  capacityFromSweep,
  errorRate,
  findCapacity,
  meetsSlo,
  mlperfCheck,
  parseSlo,
  prefixCacheOfTrace,
  requireSlaPercent,
  serveResult,
  sloAttainment,
  sweepRates,
} from '../../../src/serve/metrics.ts';

const t = (promptTokens: number, tSend: number, tTokens: number[], error?: string): RequestTiming =>
  error === undefined ? { promptTokens, tSend, tTokens } : { promptTokens, tSend, tTokens, error };

// Hand-made run of 2.5 s. TTFT / TPOT / E2EL (ms):
// r0 120 / 31.67 / 215 · r1 300 / 30 / 330 · r2 60 / — (one token) / 60 · r3 failed · r4 350 / 32.5 / 480.
const run = [t(12, 0, [120, 150, 185, 215]), t(30, 100, [400, 430]), t(7, 200, [260]), t(20, 300, [500], 'boom'), t(16, 350, [700, 725, 760, 790, 830])];
const slo = { ttft: 250, tpot: 35 };

describe('serveResult (vLLM keys)', () => {
  const result = serveResult(run, 2.5, slo);

  it('counts, totals and throughputs', () => {
    expect(result).toMatchObject({
      completed: 4,
      failed: 1,
      duration: 2.5,
      total_input_tokens: 65, // 12 + 30 + 7 + 16: the failed prompt is not counted
      total_output_tokens: 12, // 4 + 2 + 1 + 5
      request_throughput: 1.6, // 4 / 2.5
      output_throughput: 4.8, // 12 / 2.5
      total_token_throughput: 30.8, // 77 / 2.5
    });
  });

  it('goodput: r0 meets both SLOs, r2 has one token so its TPOT counts as 0; r1, r4 miss TTFT → 2 / 2.5 s', () => {
    expect(result.request_goodput).toBe(0.8);
    expect(serveResult(run, 2.5).request_goodput).toBeNull();
  });

  it('aggregates reuse the per-request definitions (values from numpy on the same data)', () => {
    expect(result.mean_ttft_ms).toBe(207.5);
    expect(result.std_ttft_ms).toBeCloseTo(120.7010770457331, 10);
    expect(result.p99_ttft_ms).toBeCloseTo(348.5, 10);
    expect(result.mean_tpot_ms).toBeCloseTo(31.388888888888903, 10);
    expect(result.p95_itl_ms).toBeCloseTo(38.25, 10);
    expect(result.median_e2el_ms).toBe(272.5);
  });

  it("per-request arrays in seconds, for every request, with vLLM's values for the failed one", () => {
    expect(result.input_lens).toEqual([12, 30, 7, 20, 16]);
    expect(result.output_lens).toEqual([4, 2, 1, 0, 5]);
    expect(result.ttfts).toEqual([0.12, 0.3, 0.06, 0.2, 0.35]);
    expect(result.latencies).toEqual([0.215, 0.33, 0.06, 0, 0.48]);
    expect(result.itls[0].map((x) => x * 1000)).toEqual([30, 35, 30]);
    expect(result.itls[2]).toEqual([]);
    expect(result.errors).toEqual(['', '', '', 'boom', '']);
  });

  it('rejects an empty run and a zero duration', () => {
    expect(() => serveResult([], 1)).toThrow(/no requests/);
    expect(() => serveResult(run, 0)).toThrow(/duration/);
  });
});

describe('SLOs', () => {
  it('limits are inclusive and only the given ones apply', () => {
    expect(meetsSlo(run[0], { ttft: 120 })).toBe(true);
    expect(meetsSlo(run[0], { ttft: 119.9 })).toBe(false);
    expect(meetsSlo(run[0], { e2el: 215, tpot: 95 / 3 })).toBe(true);
    expect(meetsSlo(run[3], {})).toBe(false); // failed requests are never good
  });

  it('attainment counts errors against it: 2 good of 5 requests; error rate 1/5', () => {
    expect(sloAttainment(run, slo)).toBe(0.4);
    expect(errorRate(run)).toBe(0.2);
  });

  it.each([
    ['ttft=500,tpot=50', { ttft: 500, tpot: 50 }],
    [' ttft:500 tpot:50 ', { ttft: 500, tpot: 50 }],
    ['E2EL=2000', { e2el: 2000 }],
    ['llama3.1-8b-interactive', { ttft: 500, tpot: 30 }],
    ['mixtral-8x7b', { ttft: 2000, tpot: 200 }],
  ])('parseSlo(%j)', (text, expected) => {
    expect(parseSlo(text)).toEqual(expected);
  });

  it.each([
    ['', /empty/],
    ['ttft', /not a metric=ms pair/],
    ['ttfb=5', /unknown SLO metric "ttfb"/],
    ['ttft=fast', /"fast" for ttft is not a non-negative number/],
    ['ttft=-1', /not a non-negative number/],
    ['ttft=', /not a non-negative number/],
    ['ttft=1,ttft=2', /given twice/],
  ])('parseSlo(%j) fails clearly', (text, message) => {
    try {
      parseSlo(text);
      expect.unreachable();
    } catch (e) {
      expect(isTokenscopeError(e, 'bad-input')).toBe(true);
      expect((e as Error).message).toMatch(message);
      expect((e as { hint: string }).hint).toMatch(/ttft=500,tpot=50.*llama3\.1-8b-interactive/);
    }
  });

  it('MLPerf check: nearest-rank p99 of 4 TTFTs is the max (350 ms); TPOTs 31.67, 30, 32.5 → 32.5', () => {
    expect(mlperfCheck(run, 'llama3.1-8b-interactive', 2.5)).toEqual({ p99TtftMs: 350, p99TpotMs: 32.5, withinLimits: false, longEnough: false });
    expect(mlperfCheck(run, 'llama3.1-8b', 600)).toEqual({ p99TtftMs: 350, p99TpotMs: 32.5, withinLimits: true, longEnough: true });
  });
});

describe('capacity', () => {
  // Attainment falls from 95% to 50% above 3.3 req/s.
  const step = async (rate: number) => (rate <= 3.3 ? 0.95 : 0.5);

  it('bisects to the highest rate meeting 90%: 1..9 → 5 ✗ 3 ✓ 4 ✗ 3.5 ✗ 3.25 ✓ 3.375 ✗', async () => {
    const c = await findCapacity(step, { lo: 1, hi: 9, iterations: 6 });
    expect(c).toMatchObject({ status: 'found', rate: 3.25, lo: 3.25, hi: 3.375 });
    expect(c.probes.map((p) => p.rate)).toEqual([1, 9, 5, 3, 4, 3.5, 3.25, 3.375]);
  });

  it('reports when the capacity lies outside the range', async () => {
    expect(await findCapacity(step, { lo: 4, hi: 9 })).toMatchObject({ status: 'below-range', rate: null });
    expect(await findCapacity(step, { lo: 1, hi: 2 })).toMatchObject({ status: 'above-range', rate: 2 });
    expect(await findCapacity(step, { lo: 1, hi: 9, target: 0.4 })).toMatchObject({ status: 'above-range', rate: 9 });
  });

  it('rejects an empty range', async () => {
    await expect(findCapacity(step, { lo: 2, hi: 2 })).rejects.toThrow(/0 < lo < hi/);
  });

  it('sweep: runs rates in increasing order; a lucky pass above the first miss does not count', async () => {
    const attainment: Record<number, number> = { 1: 1, 2: 0.95, 3: 0.85, 4: 0.92 };
    const order: number[] = [];
    const probes = await sweepRates(async (r) => (order.push(r), attainment[r]), [3, 1, 4, 2]);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(capacityFromSweep(probes)).toBe(2);
    expect(capacityFromSweep([{ rate: 1, attainment: 0.5 }])).toBeNull();
  });
});

describe('formatServeSummary', () => {
  // Generated by running vLLM serve.py's print statements ("{:<40} {:<10}" / "{:<40} {:<10.2f}" /
  // "{s:{c}^{n}}") with numpy on the same run.
  const head =
    '============ Serving Benchmark Result ============\n' +
    'Successful requests:                     4         \n' +
    'Failed requests:                         1         \n' +
    'Benchmark duration (s):                  2.50      \n' +
    'Total input tokens:                      65        \n' +
    'Total generated tokens:                  12        \n' +
    'Request throughput (req/s):              1.60      \n' +
    'Request goodput (req/s):                 0.80      \n' +
    'Output token throughput (tok/s):         4.80      \n' +
    'Total token throughput (tok/s):          30.80     \n';

  it('with E2EL and P90 + P99 selected', () => {
    expect(formatServeSummary(serveResult(run, 2.5, slo), { percentileMetrics: ['ttft', 'tpot', 'itl', 'e2el'], percentiles: [90, 99] })).toBe(
      head +
        '---------------Time to First Token----------------\n' +
        'Mean TTFT (ms):                          207.50    \n' +
        'Median TTFT (ms):                        210.00    \n' +
        'P90 TTFT (ms):                           335.00    \n' +
        'P99 TTFT (ms):                           348.50    \n' +
        '-----Time per Output Token (excl. 1st token)------\n' +
        'Mean TPOT (ms):                          31.39     \n' +
        'Median TPOT (ms):                        31.67     \n' +
        'P90 TPOT (ms):                           32.33     \n' +
        'P99 TPOT (ms):                           32.48     \n' +
        '---------------Inter-token Latency----------------\n' +
        'Mean ITL (ms):                           31.88     \n' +
        'Median ITL (ms):                         30.00     \n' +
        'P90 ITL (ms):                            36.50     \n' +
        'P99 ITL (ms):                            39.65     \n' +
        '----------------End-to-end Latency----------------\n' +
        'Mean E2EL (ms):                          271.25    \n' +
        'Median E2EL (ms):                        272.50    \n' +
        'P90 E2EL (ms):                           435.00    \n' +
        'P99 E2EL (ms):                           475.50    \n' +
        '==================================================\n',
    );
  });

  it('vLLM defaults: TTFT, TPOT, ITL with P99; no goodput row without SLOs', () => {
    const text = formatServeSummary(serveResult(run, 2.5));
    expect(text).toBe(
      head.replace('Request goodput (req/s):                 0.80      \n', '') +
        '---------------Time to First Token----------------\n' +
        'Mean TTFT (ms):                          207.50    \n' +
        'Median TTFT (ms):                        210.00    \n' +
        'P99 TTFT (ms):                           348.50    \n' +
        '-----Time per Output Token (excl. 1st token)------\n' +
        'Mean TPOT (ms):                          31.39     \n' +
        'Median TPOT (ms):                        31.67     \n' +
        'P99 TPOT (ms):                           32.48     \n' +
        '---------------Inter-token Latency----------------\n' +
        'Mean ITL (ms):                           31.88     \n' +
        'Median ITL (ms):                         30.00     \n' +
        'P99 ITL (ms):                            39.65     \n' +
        '==================================================\n',
    );
    expect(text.split('\n').every((line) => line.length === 0 || line.length === 50 || line.length === 51)).toBe(true);
  });
});

describe('availability and the error budget', () => {
  // 1000 requests: 996 completed, 1 rejected, 2 timeouts, 1 engine error; 10 degraded.
  const trace: ServeTrace = {
    tStart: 0,
    tEnd: 1000,
    steps: [],
    requests: Array.from({ length: 1000 }, (_, id): RequestTrace => {
      const r: RequestTrace = { id, promptTokens: 4, tArrival: 0, tTokens: [5], tFinish: 5 };
      const cause = ({ 0: 'rejected', 1: 'timeout', 2: 'timeout', 3: 'engine' } as const)[id];
      if (cause) Object.assign(r, { tTokens: [], error: cause, cause });
      if (id >= 990) r.degradedTo = 1;
      return r;
    }),
  };

  it('availability = successful / all; budget = (1 − sla) × requests; left = budget − failed, and its share', () => {
    const a = availabilityOfTrace(trace, 99.5);
    expect(a).toMatchObject({
      requests: 1000,
      successful: 996,
      failed: 4,
      errors_by_cause: { rejected: 1, timeout: 2, admission: 0, device_lost: 0, engine: 1 },
      availability: 0.996,
      meets_sla: true,
      degraded: 10,
      degradation_rate: 0.01,
    });
    expect(a.sla).toBeCloseTo(0.995, 12);
    expect(a.error_budget).toBeCloseTo(5, 9);
    expect(a.error_budget_left).toBeCloseTo(1, 9);
    expect(a.error_budget_left_share).toBeCloseTo(0.2, 9);
    // 99.9%: one failure allowed, four spent.
    const tight = availabilityOfTrace(trace, 99.9);
    expect(tight.meets_sla).toBe(false);
    expect(tight.error_budget_left).toBeCloseTo(-3, 9);
    expect(tight.error_budget_left_share).toBeCloseTo(-3, 9);
    // 100%: no failure allowed, so no share of a zero budget.
    expect(availabilityOfTrace(trace, 100)).toMatchObject({ error_budget: 0, error_budget_left: -4, error_budget_left_share: null, meets_sla: false });
  });

  it('refuses an SLA outside (0, 100] with a clear error', () => {
    for (const sla of [0, -1, 100.01, NaN, Infinity]) {
      expect(() => availabilityOfTrace(trace, sla)).toThrow(
        expect.objectContaining({ code: 'bad-input', message: expect.stringMatching(/SLA must be a percentage in \(0, 100\]/) }),
      );
      expect(() => requireSlaPercent(sla)).toThrow(/percentage/);
    }
  });
});

describe('prefix cache report', () => {
  it('hit rate = cached prompt tokens ÷ prompt tokens of the admitted requests; TTFT of hits and misses apart', () => {
    const r = (id: number, prompt: number, cached: number | undefined, ttft: number | null, admitted = true): RequestTrace => ({
      id,
      promptTokens: prompt,
      tArrival: 0,
      ...(admitted ? { tAdmit: 0 } : {}),
      tTokens: ttft === null ? [] : [ttft, ttft + 1],
      tFinish: 10,
      ...(cached === undefined ? {} : { cachedTokens: cached }),
    });
    const trace: ServeTrace = {
      tStart: 0,
      tEnd: 10,
      requests: [r(0, 80, 0, 40), r(1, 80, 64, 10), r(2, 80, 64, 20), r(3, 80, undefined, null, false)],
      steps: [],
    };
    const use = {
      capacity_blocks: 8,
      pool_bytes: 8 * 1024,
      block_bytes: 1024,
      blocks: 6,
      bytes: 6 * 1024,
      inserted: 7,
      evictions: 1,
      refused: 0,
      blocks_copied_in: 8,
      blocks_copied_out: 7,
      copy_bytes: 15 * 1024,
    };
    const p = prefixCacheOfTrace(trace, use, 16);
    // The rejected request (never admitted) is not looked up: 128 of 240 tokens.
    expect(p).toMatchObject({ enabled: true, prompt_tokens: 240, cached_tokens: 128, requests: 3, requests_with_hit: 2, blocks: 6, bytes: 6144 });
    expect(p.hit_rate).toBeCloseTo(128 / 240, 12);
    expect(p.ttft_hit).toMatchObject({ count: 2, median_ttft_ms: 15 });
    expect(p.ttft_miss).toMatchObject({ count: 1, median_ttft_ms: 40 });
    const off = prefixCacheOfTrace({ ...trace, requests: trace.requests.slice(0, 1) }, null, 16);
    expect(off).toMatchObject({ enabled: false, hit_rate: 0, ttft_hit: null, pool_bytes: null, evictions: null });
  });
});

describe("vLLM's --metric-percentiles and --percentile-metrics", () => {
  it('adds a p{n}_{metric}_ms key per asked percentile (numpy linear, as vLLM), beside p90/p95/p99', () => {
    const r = serveResult(run, 2.5, undefined, [50, 99.9]) as unknown as Record<string, number>;
    // numpy.percentile([120, 300, 60, 350], 99.9) = 349.85; of the E2ELs [215, 330, 60, 480]: 479.55.
    expect(r.p50_ttft_ms).toBe(210);
    expect(r['p99.9_ttft_ms']).toBeCloseTo(349.85, 9);
    expect(r['p99.9_e2el_ms']).toBeCloseTo(479.55, 9);
    expect(r.p99_ttft_ms).toBeCloseTo(348.5, 9);
    expect(Object.keys(serveResult(run, 2.5))).not.toContain('p50_ttft_ms');
  });

  it('prints mean, median, then P{n} for the chosen metrics only, as vLLM does', () => {
    const text = formatServeSummary(serveResult(run, 2.5, undefined, [50, 99.9]), { percentileMetrics: ['ttft', 'e2el'], percentiles: [50, 99.9] });
    expect(text.split('\n').slice(9)).toEqual([
      '---------------Time to First Token----------------',
      'Mean TTFT (ms):                          207.50    ',
      'Median TTFT (ms):                        210.00    ',
      'P50 TTFT (ms):                           210.00    ',
      'P99.9 TTFT (ms):                         349.85    ',
      '----------------End-to-end Latency----------------',
      'Mean E2EL (ms):                          271.25    ',
      'Median E2EL (ms):                        272.50    ',
      'P50 E2EL (ms):                           272.50    ',
      'P99.9 E2EL (ms):                         479.55    ',
      '==================================================',
      '',
    ]);
    // A percentile the result was not computed for reads "-" rather than a wrong number.
    expect(formatServeSummary(serveResult(run, 2.5), { percentileMetrics: ['ttft'], percentiles: [25] })).toContain(
      'P25 TTFT (ms):                           -',
    );
  });
});

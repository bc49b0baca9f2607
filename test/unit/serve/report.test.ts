import { describe, expect, it } from 'vitest';
import { serveSection, serveSchema } from '../../../src/measure/sections/serve.ts';
import { schedulerOptions, summarizeRun, type ServeSection, type ServeSettings } from '../../../src/serve/run.ts';
import { req, serve } from './scripted.ts';

const ROOFS = { read_bandwidth_gbps: 1, f32_gflops: 1, matmul_f32_gflops: 1 };

const settings: ServeSettings = {
  requests: 12,
  rate: Infinity,
  burstiness: 1,
  prompt: { kind: 'fixed', tokens: 2 },
  output: { kind: 'fixed', tokens: 4 },
  max_batch: 2,
  max_tokens_per_step: 16,
  chunk: 16,
  slo: { ttft: 100 },
  seed: 1,
  max_queue: 4,
  timeout_ms: 75,
  degrade_over: 2,
  sla_percent: 99,
};

/** Twelve requests at once on two slots with 10 ms steps: 6 rejected at the door, the tail of the queue times out. */
async function overloadedSection(): Promise<ServeSection> {
  const requests = Array.from({ length: 12 }, (_, i) => req(i, 0, 2, 4));
  const { trace } = await serve(requests, 2, schedulerOptions(settings));
  return { settings, run: summarizeRun(trace, null, settings, ROOFS), cost: null, batch_sweep: null, rate_sweep: null };
}

describe('the serving report of an overloaded run', () => {
  it('accounts for every request by cause, with availability against the SLA and the error budget', async () => {
    const s = await overloadedSection();
    const a = s.run.availability!;
    // Slots 2 + queue 4 take six; the other six are rejected at t = 0.
    expect(a.errors_by_cause.rejected).toBe(6);
    expect(a.successful + a.failed).toBe(12);
    expect(s.run.result.completed + s.run.result.failed).toBe(12);
    expect(a.failed).toBe(s.run.result.failed);
    expect(a.availability).toBeCloseTo(a.successful / 12, 12);
    expect(a.error_budget).toBeCloseTo(0.12, 12);
    expect(a.error_budget_left).toBeCloseTo(0.12 - a.failed, 12);
    expect(a.error_budget_left_share).toBeCloseTo((0.12 - a.failed) / 0.12, 9);
    expect(a.meets_sla).toBe(false);
    // The first admissions had 4 and 3 waiting behind them (> 2): capped to 2 tokens.
    expect(s.run.timeline.slice(0, 2).map((t) => t.degraded_to)).toEqual([2, 2]);
    expect(a.degraded).toBe(s.run.timeline.filter((t) => t.degraded_to !== null).length);
    expect(s.run.timeline.filter((t) => t.cause === 'rejected')).toHaveLength(6);
    // Steps ran 1 or 2 sequences; the histogram covers every step.
    expect(s.run.batch_histogram!.reduce((n, b) => n + b.steps, 0)).toBe(s.run.steps.length);
    expect(s.run.busy_share).toBe(1);
    expect(s.run.submit_busy_share).toBeNull();
  });

  it('passes the result schema, and the CLI block prints queue time, causes, the budget and the batch histogram', async () => {
    const s = await overloadedSection();
    const json = JSON.parse(JSON.stringify({ ...s, settings: { ...s.settings, rate: null } }));
    expect(() => serveSchema.check(json, 'serve')).not.toThrow();
    const text = serveSection.report(json);
    expect(text).toMatch(/-+Queue Time \(admission − arrival\)-+\nMean queue time \(ms\): +\d+\.\d\d/);
    expect(text).toMatch(
      /Availability: \d+\.\d% \(\d+ of 12 requests succeeded\)\. Failures by cause: rejected 6, timeout \d+, admission 0, device lost 0, engine 0\./,
    );
    expect(text).toMatch(/Against an SLA of 99%: missed; the error budget allows 0\.12 failures, overspent by/);
    expect(text).toMatch(/Degradation rate: \d+\.\d% \(\d+ requests admitted with their output capped\)/);
    expect(text).toMatch(/Batch sizes the scheduler ran \(sequences per step; mean \d\.\d\d\)\. Busy 100\.0% of the run's wall time/);
    expect(text).toMatch(/batch +steps +share +step ms/);
  });

  it('an older report without these fields still validates and prints', async () => {
    const s = await overloadedSection();
    const { availability, queue, batch_histogram, mean_batch, busy_share, submit_busy_share, ...old } = s.run;
    void [availability, queue, batch_histogram, mean_batch, busy_share, submit_busy_share];
    const json = JSON.parse(JSON.stringify({ run: { ...old, timeline: old.timeline.map(({ cause, degraded_to, ...t }) => (void [cause, degraded_to], t)) } }));
    expect(() => serveSchema.check(json, 'serve')).not.toThrow();
    expect(serveSection.report(json)).not.toMatch(/Availability/);
  });
});

describe('request classes in a run', () => {
  it('per-class throughput, goodput, attainment and token-attributed cost match the hand-worked run', async () => {
    // Two slots, 10 ms steps. A (class chat, 4-token prompt, 2 outputs) and B (class batch, 2-token prompt, 3 outputs) at 0.
    // Step 0 prefills both (6 tokens: chat 4/6 of 10 ms, batch 2/6); step 1 decodes both (5 ms each); step 2 decodes B (10 ms).
    // chat: 10·4/6 + 5 = 35/3 ms of 30 → 7/18; batch 11/18. At $3600/h the 30 ms run costs $0.03.
    const requests = [
      { ...req(0, 0, 4, 2), className: 'chat' },
      { ...req(1, 0, 2, 3), className: 'batch' },
    ];
    const classes = [
      { name: 'chat', share: 0.5, slo: { ttft: 10, tpot: 10 } },
      { name: 'batch', share: 0.5, slo: { ttft: 5 } },
      { name: 'idle', share: 0.1, slo: {} },
    ];
    const s = { ...settings, max_queue: undefined, timeout_ms: undefined, degrade_over: undefined, classes, dollars_per_hour: 3600 };
    const { trace } = await serve(requests, 2, schedulerOptions(s));
    const rows = summarizeRun(trace, null, s, ROOFS).classes!;
    expect(rows[0]).toMatchObject({ name: 'chat', requests: 1, completed: 1, failed: 0, slo_attainment: 1 });
    expect(rows[0].request_throughput).toBeCloseTo(1 / 0.03, 9);
    expect(rows[0].request_goodput).toBeCloseTo(1 / 0.03, 9);
    expect(rows[0].output_throughput).toBeCloseTo(2 / 0.03, 9);
    expect(rows[0].step_time_share).toBeCloseTo(7 / 18, 12);
    expect(rows[0].dollars_per_1k_output_tokens).toBeCloseTo(((0.03 * 7) / 18 / 2) * 1000, 9);
    // B's TTFT is 10 ms against a 5 ms SLO: no goodput.
    expect(rows[1]).toMatchObject({ name: 'batch', requests: 1, request_goodput: 0, slo_attainment: 0 });
    expect(rows[1].step_time_share).toBeCloseTo(11 / 18, 12);
    expect(rows[1].dollars_per_1k_output_tokens).toBeCloseTo(((0.03 * 11) / 18 / 3) * 1000, 9);
    // A class that drew no request: zeros, no SLO so no attainment, no tokens so no cost.
    expect(rows[2]).toMatchObject({ requests: 0, request_goodput: null, slo_attainment: null, step_time_share: 0, dollars_per_1k_output_tokens: null });
    // The shares of step time cover it all; the CLI prints one row per class.
    expect(rows.reduce((n, r) => n + r.step_time_share, 0)).toBeCloseTo(1, 12);
    const section = { settings: { ...s, rate: null }, run: summarizeRun(trace, null, s, ROOFS), cost: null, batch_sweep: null, rate_sweep: null };
    const json = JSON.parse(JSON.stringify(section));
    expect(() => serveSchema.check(json, 'serve')).not.toThrow();
    const text = serveSection.report(json);
    expect(text).toMatch(/class +SLO ms +requests/);
    expect(text).toMatch(/chat +ttft≤10 tpot≤10 +1 +0 +33\.33 +66\.7 +33\.33 +100\.0% +38\.9% +5\.83333/);
    expect(json.run.timeline.map((t: { class: string }) => t.class)).toEqual(['chat', 'batch']);
  });
});

describe('the prefix cache in a run', () => {
  it('reports hits, TTFT of hits vs misses and each request’s token ids in the schema, and the CLI block prints them', async () => {
    const prefixSettings: ServeSettings = {
      ...settings,
      max_queue: undefined,
      timeout_ms: undefined,
      degrade_over: undefined,
      shared_prefix: 16,
      prefix_cache: true,
    };
    const requests = Array.from({ length: 4 }, (_, i) => req(i, 0, 20, 3));
    // Every request after the first finds 16 of its 20 prompt tokens cached.
    const { trace } = await serve(requests, 1, schedulerOptions(prefixSettings), { cached: (seq) => (seq > 0 ? 16 : 0) });
    const use = {
      capacity_blocks: 8,
      pool_bytes: 8192,
      block_bytes: 1024,
      blocks: 1,
      bytes: 1024,
      inserted: 1,
      evictions: 0,
      refused: 0,
      blocks_copied_in: 3,
      blocks_copied_out: 1,
      copy_bytes: 4096,
    };
    const run = summarizeRun(trace, null, prefixSettings, ROOFS, use);
    expect(run.prefix_cache).toMatchObject({ enabled: true, prompt_tokens: 80, cached_tokens: 48, hit_rate: 0.6, requests_with_hit: 3, blocks: 1 });
    expect(run.prefix_cache!.ttft_hit!.count).toBe(3);
    expect(run.timeline.map((t) => t.token_ids)).toEqual(requests.map(() => [100, 101, 102]));
    expect(run.timeline.map((t) => t.cached_tokens)).toEqual([0, 16, 16, 16]);
    const json = JSON.parse(JSON.stringify({ settings: { ...prefixSettings, rate: null }, run, cost: null, batch_sweep: null, rate_sweep: null }));
    expect(() => serveSchema.check(json, 'serve')).not.toThrow();
    const text = serveSection.report(json);
    expect(text).toMatch(/-+Prefix Cache \(copy-on-hit, 16-token blocks\)-+/);
    expect(text).toMatch(/Hit rate \(cached \/ prompt tokens\): +60\.0% \(48 of 80\)/);
    expect(text).toMatch(/Requests with a hit: +3 of 4/);
    expect(text).toMatch(/TTFT hits p50\/p90\/p99 ms \(n\): +[\d.]+ \/ [\d.]+ \/ [\d.]+ \(3\)/);
    expect(text).toMatch(/Blocks held \/ pool: +1 \/ 8/);
    // A hostile link: a hit rate above 1 is refused, naming the field.
    const bad = { ...json, run: { ...json.run, prefix_cache: { ...json.run.prefix_cache, hit_rate: 2 } } };
    expect(() => serveSchema.check(bad, 'serve')).toThrow(/prefix_cache\.hit_rate/);
  });
});

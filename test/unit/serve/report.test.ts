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

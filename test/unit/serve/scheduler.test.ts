import { describe, expect, it } from 'vitest';
import { isTokenscopeError } from '../../../src/errors.ts';
import { runServe, type SchedulerOptions, type StepPlan } from '../../../src/serve/scheduler.ts';
import { requestTiming, throwIfFatal } from '../../../src/serve/trace.ts';
import {
  availabilityOfTrace,
  batchHistogramOfTrace,
  busyShareOfTrace,
  meanBatch,
  queueStatsOfTrace,
  serveResultOfTrace,
  sloAttainment,
} from '../../../src/serve/metrics.ts';
import { mulberry32 } from '../../../src/serve/workload.ts';
import { FakeClock, req, ScriptedEngine, serve, type Script } from './scripted.ts';

const shape = (plan: StepPlan) => ({
  decode: plan.decode.map((d) => d.seq),
  prefill: plan.prefill.map((p) => [p.seq, p.tokens.length]),
});

describe('continuous batching', () => {
  it('queues when the batch is full and admits FCFS by arrival', async () => {
    // maxBatch 2; requests 0, 2, 1 arrive at 0, 1, 2 ms; 4-token prompts, 3 output tokens; 10 ms steps.
    // Steps: [0..10] prefill 0 → t1 @10 · [10..20] prefill 2, decode 0 · [20..30] decode 0, 2 → 0 done @30 ·
    // then 1 is admitted at 30 and runs beside 2.
    const { trace, engine, byId } = await serve([req(0, 0, 4, 3), req(1, 2, 4, 3), req(2, 1, 4, 3)], 2, { maxTokensPerStep: 64, chunkSize: 32 });
    expect(engine.admitted).toEqual([0, 2, 1]);
    expect(engine.plans.map(shape)).toEqual([
      { decode: [], prefill: [[0, 4]] },
      { decode: [0], prefill: [[2, 4]] },
      { decode: [0, 2], prefill: [] },
      { decode: [2], prefill: [[1, 4]] },
      { decode: [1], prefill: [] },
      { decode: [1], prefill: [] },
    ]);
    expect(byId.get(0)).toMatchObject({ tArrival: 0, tAdmit: 0, tTokens: [10, 20, 30], tFinish: 30 });
    expect(byId.get(2)).toMatchObject({ tArrival: 1, tAdmit: 10, tTokens: [20, 30, 40], tFinish: 40 });
    // Request 1 waited 28 ms for a slot; TTFT counts it: 40 − 2 = 38 ms.
    expect(byId.get(1)).toMatchObject({ tArrival: 2, tAdmit: 30, tTokens: [40, 50, 60], tFinish: 60 });
    expect(trace.steps[3]).toMatchObject({ tStart: 30, tEnd: 40, running: 2, waiting: 0 });
    expect(trace.steps[1]).toMatchObject({ running: 2, waiting: 1 });
    expect(trace.tEnd).toBe(60);
    expect(engine.released).toEqual([0, 2, 1]);
  });

  it('chunked prefill splits a 100-token prompt into 32/32/32/4, sharing steps with decodes', async () => {
    // A (4-token prompt, 10 outputs) starts at 0; B (100-token prompt, 2 outputs) arrives at 5 ms.
    const { engine, byId } = await serve([req(0, 0, 4, 10), req(1, 5, 100, 2)], 4, { maxTokensPerStep: 64, chunkSize: 32 });
    expect(engine.plans.slice(0, 6).map(shape)).toEqual([
      { decode: [], prefill: [[0, 4]] },
      { decode: [0], prefill: [[1, 32]] },
      { decode: [0], prefill: [[1, 32]] },
      { decode: [0], prefill: [[1, 32]] },
      { decode: [0], prefill: [[1, 4]] },
      { decode: [0, 1], prefill: [] },
    ]);
    const chunks = engine.plans.flatMap((p) => p.prefill.filter((c) => c.seq === 1));
    expect(chunks.map((c) => [c.pos, c.last])).toEqual([
      [0, false],
      [32, false],
      [64, false],
      [96, true],
    ]);
    expect(chunks.flatMap((c) => c.tokens)).toEqual(req(1, 5, 100, 2).prompt);
    // B's first token comes with its last chunk (step 5 ends at 50 ms): TTFT = 50 − 5 = 45 ms.
    expect(byId.get(1)?.tTokens).toEqual([50, 60]);
    // A decodes its token at position prompt + outputs − 1, feeding back the id it got.
    expect(engine.plans[2].decode[0]).toEqual({ seq: 0, pos: 5, token: 101 });
  });

  it('decodes take the budget first; prefill gets what is left', async () => {
    // Budget 4: three 1-token prompts prefill together, then the three decodes leave 1 token a step for D.
    const { engine } = await serve([req(0, 0, 1, 5), req(1, 0, 1, 5), req(2, 0, 1, 5), req(3, 5, 3, 1)], 4, { maxTokensPerStep: 4, chunkSize: 32 });
    expect(engine.plans.slice(0, 4).map(shape)).toEqual([
      {
        decode: [],
        prefill: [
          [0, 1],
          [1, 1],
          [2, 1],
        ],
      },
      { decode: [0, 1, 2], prefill: [[3, 1]] },
      { decode: [0, 1, 2], prefill: [[3, 1]] },
      { decode: [0, 1, 2], prefill: [[3, 1]] },
    ]);
    // With a budget smaller than the running decodes, only the earliest admitted decode.
    const tight = await serve([req(0, 0, 1, 3), req(1, 0, 1, 3), req(2, 0, 1, 3)], 3, { maxTokensPerStep: 2, chunkSize: 8 });
    expect(tight.engine.plans.map(shape).slice(0, 3)).toEqual([
      {
        decode: [],
        prefill: [
          [0, 1],
          [1, 1],
        ],
      },
      { decode: [0, 1], prefill: [] },
      { decode: [0, 1], prefill: [] },
    ]);
  });

  it('chunking off prefills each prompt whole, in a step whose remaining budget holds it', async () => {
    // Budget 10: B's 10-token prompt cannot share a step with A's decode, so it waits until A is done.
    const { engine } = await serve([req(0, 0, 2, 3), req(1, 5, 10, 1)], 4, { maxTokensPerStep: 10 });
    expect(engine.plans.map(shape)).toEqual([
      { decode: [], prefill: [[0, 2]] },
      { decode: [0], prefill: [] },
      { decode: [0], prefill: [] },
      { decode: [], prefill: [[1, 10]] },
    ]);
  });

  it('chunking off rejects a prompt longer than the step budget up front', async () => {
    const clock = new FakeClock();
    await expect(runServe([req(0, 0, 11, 1)], new ScriptedEngine(1, clock), clock, { maxTokensPerStep: 10 })).rejects.toSatisfy((e: unknown) =>
      isTokenscopeError(e, 'bad-input'),
    );
  });

  it('stops at EOS when asked, counting the EOS token', async () => {
    // Seq 0 produces ids 7, 2, 9…; EOS = 2 ends it after two tokens although 10 were allowed.
    const script: Script = { token: (_, n) => [7, 2, 9][n] ?? 9 };
    const { byId } = await serve([req(0, 0, 3, 10)], 1, { maxTokensPerStep: 16, chunkSize: 16, eosToken: 2 }, script);
    expect(byId.get(0)?.tTokens).toEqual([10, 20]);
    const ignoring = await serve([req(0, 0, 3, 4)], 1, { maxTokensPerStep: 16, chunkSize: 16 }, script);
    expect(ignoring.byId.get(0)?.tTokens).toHaveLength(4);
  });
});

describe('failures', () => {
  it('an engine error fails the requests in that step with its message; the run continues', async () => {
    // A runs alone (steps 0–1); B arrives at 25 ms and its prefill step (index 2) throws; C arrives later and completes.
    const { trace, engine, byId } = await serve(
      [req(0, 0, 2, 2), req(1, 25, 2, 3), req(2, 40, 2, 1)],
      2,
      { maxTokensPerStep: 16, chunkSize: 16 },
      { failStep: { index: 2, message: 'GPU device lost' } },
    );
    expect(byId.get(1)).toMatchObject({ tAdmit: 25, tTokens: [], tFinish: 35, error: 'GPU device lost' });
    expect(byId.get(0)?.error).toBeUndefined();
    expect(byId.get(2)).toMatchObject({ tTokens: [50] });
    expect(trace.steps[2]).toMatchObject({ tStart: 25, tEnd: 35, error: 'GPU device lost', prefill: [{ seq: 1, tokens: 2 }] });
    expect(engine.released).toContain(1);
    const failed = trace.requests.filter((r) => r.error !== undefined).length;
    const completed = trace.requests.filter((r) => r.error === undefined).length;
    expect([completed, failed]).toEqual([2, 1]);
    expect(completed + failed).toBe(3);
  });

  it('a step error fails only the sequences in that step, keeping their tokens so far', async () => {
    // Budget 1: step 0 prefills A, step 1 decodes A only (B waits for budget); step 1 throws.
    const { byId } = await serve([req(0, 0, 1, 5), req(1, 0, 1, 2)], 2, { maxTokensPerStep: 1, chunkSize: 1 }, { failStep: { index: 1, message: 'timeout' } });
    expect(byId.get(0)).toMatchObject({ tTokens: [10], error: 'timeout' });
    expect(byId.get(1)).toMatchObject({ tTokens: [30, 40] });
    expect(byId.get(1)?.error).toBeUndefined();
  });

  it('a refused admission fails the request with the engine message (and its hint)', async () => {
    const { byId, engine } = await serve([req(0, 0, 8, 100), req(1, 0, 8, 8)], 2, { maxTokensPerStep: 16, chunkSize: 16 }, { maxContext: 64 });
    expect(byId.get(0)).toMatchObject({ error: 'context 108 exceeds 64 — Lower maxOutputTokens.', tFinish: 0 });
    expect(byId.get(0)?.tAdmit).toBeUndefined();
    expect(engine.admitted).toEqual([1]);
    expect(byId.get(1)?.tTokens).toHaveLength(8);
  });

  it('a token missing from the engine result fails that request', async () => {
    const { byId } = await serve([req(0, 0, 2, 3), req(1, 0, 2, 3)], 2, { maxTokensPerStep: 16, chunkSize: 16 }, { dropTokenOf: 1 });
    expect(byId.get(1)?.error).toBe('engine returned no token for sequence 1');
    expect(byId.get(0)?.tTokens).toEqual([10, 20, 30]);
  });

  it('rejects duplicate request ids', async () => {
    const clock = new FakeClock();
    await expect(runServe([req(0, 0, 1, 1), req(0, 1, 1, 1)], new ScriptedEngine(1, clock), clock, { maxTokensPerStep: 4 })).rejects.toThrow(/appears twice/);
  });
});

describe('goodput of a scheduled run', () => {
  it('matches the hand-worked numbers', async () => {
    // A (2-token prompt, 2 outputs) at 0: tokens at 10, 20 → TTFT 10, TPOT 10.
    // B at 25: its prefill step fails. C (2-token prompt, 1 output) at 40: token at 50 → TTFT 10, TPOT counts 0.
    // Run ends at 50 ms. SLO TTFT ≤ 10, TPOT ≤ 5: A misses TPOT, C is good → goodput 1 / 0.05 s = 20 req/s.
    const { trace } = await serve(
      [req(0, 0, 2, 2), req(1, 25, 2, 3), req(2, 40, 2, 1)],
      2,
      { maxTokensPerStep: 16, chunkSize: 16 },
      { failStep: { index: 2, message: 'GPU device lost' } },
    );
    const slo = { ttft: 10, tpot: 5 };
    const result = serveResultOfTrace(trace, slo);
    expect(result).toMatchObject({
      completed: 2,
      failed: 1,
      duration: 0.05,
      request_throughput: 40,
      request_goodput: 20,
      total_input_tokens: 4,
      total_output_tokens: 3,
      output_throughput: 60,
      total_token_throughput: 140,
      mean_ttft_ms: 10,
      mean_tpot_ms: 10,
      errors: ['', 'GPU device lost', ''],
    });
    // Attainment counts the failure: 1 good of 3.
    expect(sloAttainment(trace.requests.map(requestTiming), slo)).toBeCloseTo(1 / 3, 12);
  });
});

describe('requestTiming', () => {
  it('t_send is the arrival, so TTFT includes the queue', () => {
    expect(requestTiming({ id: 3, promptTokens: 4, tArrival: 2, tAdmit: 30, tTokens: [40, 50], tFinish: 50 })).toEqual({
      promptTokens: 4,
      tSend: 2,
      tTokens: [40, 50],
    });
    expect(requestTiming({ id: 3, promptTokens: 4, tArrival: 2, tTokens: [], tFinish: 9, error: 'x' }).error).toBe('x');
  });
});

describe('admission control', () => {
  it('--max-queue: an arrival finding the queue full beyond the free slots is rejected at once', async () => {
    // One slot, queue of 1: r0 takes the slot, r1 queues, r2 and r3 find the queue full at t = 0.
    const { engine, byId } = await serve([req(0, 0, 2, 2), req(1, 0, 2, 2), req(2, 0, 2, 2), req(3, 0, 2, 2)], 1, {
      maxTokensPerStep: 16,
      chunkSize: 16,
      maxQueue: 1,
    });
    expect(engine.admitted).toEqual([0, 1]);
    for (const id of [2, 3]) {
      expect(byId.get(id)).toMatchObject({ cause: 'rejected', tFinish: 0, tTokens: [] });
      expect(byId.get(id)?.error).toMatch(/rejected: 1 requests already queued \(queue limit 1\)/);
    }
    expect(byId.get(1)).toMatchObject({ tAdmit: 20, tTokens: [30, 40] });
    // A later arrival sees the queue as it stands then: r4 at 25 ms finds r1 running and nobody waiting.
    const later = await serve([req(0, 0, 2, 2), req(1, 0, 2, 2), req(2, 0, 2, 2), req(4, 25, 2, 1)], 1, { maxTokensPerStep: 16, chunkSize: 16, maxQueue: 1 });
    expect(later.byId.get(4)?.error).toBeUndefined();
    expect(later.byId.get(2)?.cause).toBe('rejected');
    // maxQueue 0: no waiting at all — only free slots admit.
    const none = await serve([req(0, 0, 2, 2), req(1, 0, 2, 2), req(2, 0, 2, 2)], 2, { maxTokensPerStep: 16, chunkSize: 16, maxQueue: 0 });
    expect(none.trace.requests.map((r) => r.cause ?? 'ok')).toEqual(['ok', 'ok', 'rejected']);
  });

  it('--timeout-ms: a queued request leaves at its deadline; a running one frees its slot and loses late tokens', async () => {
    // One slot, 10 ms steps, timeout 25 ms. r0 (2 outputs) is done at 20. r1 (arrived 0, deadline 25) is admitted
    // at 20; its first token comes at 30, after the deadline: dropped, and it times out at 25 holding no tokens.
    // r2 (arrived 2, deadline 27) is still queued at the 30 ms boundary: it timed out in the queue at 27.
    const { trace, engine, byId } = await serve([req(0, 0, 1, 2), req(1, 0, 1, 3), req(2, 2, 1, 1)], 1, {
      maxTokensPerStep: 16,
      chunkSize: 16,
      timeoutMs: 25,
    });
    expect(byId.get(0)).toMatchObject({ tTokens: [10, 20], tFinish: 20 });
    expect(byId.get(0)?.error).toBeUndefined();
    expect(byId.get(1)).toMatchObject({ tAdmit: 20, tTokens: [], tFinish: 25, cause: 'timeout', error: 'timed out: not finished 25 ms after arrival' });
    expect(byId.get(2)).toMatchObject({ tTokens: [], tFinish: 27, cause: 'timeout' });
    expect(byId.get(2)?.tAdmit).toBeUndefined();
    expect(engine.released).toEqual([0, 1]);
    expect(trace.steps).toHaveLength(3);
    const a = availabilityOfTrace(trace, 50);
    expect(a).toMatchObject({ requests: 3, successful: 1, failed: 2, errors_by_cause: { timeout: 2, rejected: 0 }, availability: 1 / 3 });
  });

  it('--degrade-over: requests admitted while the queue behind them is deeper than N get their output capped', async () => {
    // One slot, four requests of 4 outputs at 0. r0 is admitted with 3 behind it, r1 with 2: both > 1, capped to half.
    // r2 (1 behind) and r3 (none) run in full.
    const { trace, engine } = await serve(
      [0, 1, 2, 3].map((id) => req(id, 0, 1, 4)),
      1,
      { maxTokensPerStep: 16, chunkSize: 16, degrade: { overQueue: 1 } },
    );
    expect(trace.requests.map((r) => r.tTokens.length)).toEqual([2, 2, 4, 4]);
    expect(trace.requests.map((r) => r.degradedTo)).toEqual([2, 2, undefined, undefined]);
    expect(availabilityOfTrace(trace)).toMatchObject({ degraded: 2, degradation_rate: 0.5, successful: 4, sla: null, error_budget_left: null });
    // The cap is what the engine is asked to hold: prompt 1 + 2 outputs.
    expect(engine.plans[0].prefill[0].tokens).toHaveLength(1);
    // A stated cap; a cap at or above what a request asks for does not degrade it.
    const capped = await serve(
      [0, 1, 2].map((id) => req(id, 0, 1, 3)),
      1,
      { maxTokensPerStep: 16, chunkSize: 16, degrade: { overQueue: 0, outputTokens: 1 } },
    );
    expect(capped.trace.requests.map((r) => r.tTokens.length)).toEqual([1, 1, 3]);
    const loose = await serve(
      [0, 1, 2].map((id) => req(id, 0, 1, 3)),
      1,
      { maxTokensPerStep: 16, chunkSize: 16, degrade: { overQueue: 0, outputTokens: 8 } },
    );
    expect(availabilityOfTrace(loose.trace).degraded).toBe(0);
  });

  it('a refused admission counts as an admission failure', async () => {
    const { trace } = await serve([req(0, 0, 8, 100), req(1, 0, 8, 8)], 2, { maxTokensPerStep: 16, chunkSize: 16 }, { maxContext: 64 });
    expect(trace.requests[0].cause).toBe('admission');
    expect(availabilityOfTrace(trace).errors_by_cause).toEqual({ rejected: 0, timeout: 0, admission: 1, device_lost: 0, engine: 0 });
  });

  it('a lost device ends the run: every unfinished request fails with it, and the trace carries the error', async () => {
    // Step 1 (10–20 ms) loses the device: r0 and r1 were running, r2 queued, r3 not yet arrived (at 100 ms).
    const { trace, engine } = await serve(
      [req(0, 0, 1, 5), req(1, 0, 1, 5), req(2, 0, 1, 5), req(3, 100, 1, 5)],
      2,
      { maxTokensPerStep: 16, chunkSize: 16 },
      { failStep: { index: 1, message: 'The GPU device was lost', code: 'device-lost' } },
    );
    expect(trace.requests.map((r) => r.cause)).toEqual(['device-lost', 'device-lost', 'device-lost', 'device-lost']);
    expect(trace.requests.map((r) => r.tFinish)).toEqual([20, 20, 20, 100]);
    expect(engine.plans).toHaveLength(2);
    expect(engine.released).toEqual([0, 1]);
    expect(() => throwIfFatal(trace)).toThrow(/device was lost/);
    expect(availabilityOfTrace(trace, 99.9)).toMatchObject({ failed: 4, errors_by_cause: { device_lost: 4 }, availability: 0, meets_sla: false });
    // Non-finite output ends the run too, as an engine error.
    const nan = await serve(
      [req(0, 0, 1, 5)],
      1,
      { maxTokensPerStep: 16, chunkSize: 16 },
      { failStep: { index: 0, message: 'NaN logits', code: 'model-format' } },
    );
    expect(nan.trace.requests[0].cause).toBe('engine');
    expect(() => throwIfFatal(nan.trace)).toThrow(/NaN/);
  });

  it('hostile limits are refused up front with a clear error', async () => {
    const clock = new FakeClock();
    const bad: Partial<SchedulerOptions>[] = [
      { maxQueue: -1 },
      { maxQueue: 1.5 },
      { timeoutMs: 0 },
      { timeoutMs: -5 },
      { timeoutMs: NaN },
      { degrade: { overQueue: -1 } },
      { degrade: { overQueue: 1, outputTokens: 0 } },
    ];
    for (const b of bad) {
      await expect(runServe([req(0, 0, 1, 1)], new ScriptedEngine(1, clock), clock, { maxTokensPerStep: 4, ...b })).rejects.toSatisfy(
        (e: unknown) => isTokenscopeError(e, 'bad-input') && /maxQueue|timeoutMs|degrade/.test((e as Error).message),
      );
    }
  });
});

describe('accounting under overload (fake clock, scripted engine)', () => {
  it('an overloaded server never hangs, and completed + failed = requests, each slot released once', async () => {
    // 300 requests arriving 1 ms apart on an engine whose steps take 40 ms + 2 ms per token: far past capacity.
    const random = mulberry32(11);
    for (const options of [
      { maxQueue: 4, timeoutMs: 2000 },
      { timeoutMs: 500 },
      { maxQueue: 2 },
      { maxQueue: 3, timeoutMs: 300, degrade: { overQueue: 1 } },
      {},
    ] satisfies Partial<SchedulerOptions>[]) {
      const requests = Array.from({ length: 300 }, (_, i) => req(i, i, 1 + Math.floor(random() * 40), 1 + Math.floor(random() * 30)));
      const cost = (plan: StepPlan) => 40 + 2 * (plan.decode.length + plan.prefill.reduce((n, p) => n + p.tokens.length, 0));
      const { trace, engine } = await serve(requests, 4, { maxTokensPerStep: 32, chunkSize: 16, ...options }, { cost });
      const result = serveResultOfTrace(trace);
      const a = availabilityOfTrace(trace, 99.9);
      expect(result.completed + result.failed).toBe(300);
      expect(a.successful + a.failed).toBe(300);
      expect(Object.values(a.errors_by_cause).reduce((x, y) => x + y, 0)).toBe(result.failed);
      expect(a.error_budget_left).toBeCloseTo(0.3 - a.failed, 9);
      for (const r of trace.requests) {
        expect(Number.isFinite(r.tFinish)).toBe(true);
        expect(r.tFinish).toBeGreaterThanOrEqual(r.tArrival);
        expect(r.tTokens.length).toBeLessThanOrEqual(r.degradedTo ?? Infinity);
        if (r.error === undefined) expect(r.tTokens.length).toBeGreaterThan(0);
        if (options.timeoutMs !== undefined) expect(r.tTokens.every((t) => t <= r.tArrival + options.timeoutMs)).toBe(true);
      }
      expect([...engine.released].sort((x, y) => x - y)).toEqual([...engine.admitted].sort((x, y) => x - y));
      expect(new Set(engine.released).size).toBe(engine.released.length);
      if (options.maxQueue !== undefined) expect(a.errors_by_cause.rejected).toBeGreaterThan(0);
      if (options.timeoutMs !== undefined) expect(a.errors_by_cause.timeout).toBeGreaterThan(0);
      if (options.maxQueue === undefined && options.timeoutMs === undefined) expect(result.failed).toBe(0);
      // Each waiting count a step saw respects the queue limit.
      if (options.maxQueue !== undefined) expect(Math.max(...trace.steps.map((s) => s.waiting))).toBeLessThanOrEqual(options.maxQueue);
    }
  });
});

describe('queue time, batch sizes and busy share of a run', () => {
  it('match the hand-worked run', async () => {
    // The FCFS example above: queue times r0 0, r2 10 − 1 = 9, r1 30 − 2 = 28; steps ran 1, 2, 2, 2, 1, 1 sequences.
    const { trace } = await serve([req(0, 0, 4, 3), req(1, 2, 4, 3), req(2, 1, 4, 3)], 2, { maxTokensPerStep: 64, chunkSize: 32 });
    expect(queueStatsOfTrace(trace)).toMatchObject({ count: 3, mean_queue_ms: 37 / 3, median_queue_ms: 9, p99_queue_ms: 9 + 0.98 * 19 });
    const bins = batchHistogramOfTrace(trace);
    expect(bins).toEqual([
      { batch: 1, steps: 3, ms: 30 },
      { batch: 2, steps: 3, ms: 30 },
    ]);
    expect(meanBatch(bins)).toBe(1.5);
    expect(busyShareOfTrace(trace)).toBe(1);
    // Idle between two lone requests: steps 0–10 and 50–60 of a 60 ms run.
    const idle = await serve([req(0, 0, 1, 1), req(1, 50, 1, 1)], 1, { maxTokensPerStep: 4, chunkSize: 4 });
    expect(busyShareOfTrace(idle.trace)).toBeCloseTo(20 / 60, 12);
  });
});

describe('prefix-cache hits and conversations', () => {
  it('prefills only what the engine did not have cached, and chunks and budgets from there', async () => {
    // Request 1's 100-token prompt has 64 tokens cached: 36 to prefill, in chunks of 32 → 32 + 4.
    const { engine, byId } = await serve(
      [req(0, 0, 4, 2), req(1, 0, 100, 2)],
      2,
      { maxTokensPerStep: 64, chunkSize: 32 },
      { cached: (seq) => (seq === 1 ? 64 : 0) },
    );
    const chunks = engine.plans.flatMap((p) => p.prefill.filter((c) => c.seq === 1));
    expect(chunks.map((c) => [c.pos, c.tokens.length, c.last])).toEqual([
      [64, 32, false],
      [96, 4, true],
    ]);
    expect(chunks[0].tokens[0]).toBe(1000 + 64);
    expect(byId.get(1)).toMatchObject({ cachedTokens: 64, tokenIds: [100, 101] });
    expect(byId.get(0)).toMatchObject({ cachedTokens: 0 });
  });

  it('fails a request whose engine reports the whole prompt cached (the last token must be prefilled)', async () => {
    const { byId, engine } = await serve([req(0, 0, 32, 2)], 1, { maxTokensPerStep: 64 }, { cached: () => 32 });
    expect(byId.get(0)).toMatchObject({ cause: 'admission' });
    expect(byId.get(0)?.error).toMatch(/32 cached tokens of a 32-token prompt/);
    expect(engine.released).toEqual([0]);
  });

  it("sends a conversation's next turn when the previous completes: its prompt, its answer, the new message", async () => {
    const first = req(0, 0, 4, 3);
    const second = { ...req(1, 0, 2, 2), follows: 0 };
    const third = { ...req(2, 0, 2, 1), follows: 1 };
    const { trace, engine, byId } = await serve([first, second, third], 2, { maxTokensPerStep: 64, chunkSize: 32 });
    // Steps of 10 ms: turn 0 prefills at 10, decodes at 20, 30 (done) → turn 1 arrives at 30.
    expect(byId.get(0)).toMatchObject({ tFinish: 30, tokenIds: [100, 101, 102] });
    expect(engine.prompts.get(1)).toEqual([0, 1, 2, 3, 100, 101, 102, 1000, 1001]);
    expect(byId.get(1)).toMatchObject({ tArrival: 30, tAdmit: 30, promptTokens: 9 });
    expect(engine.prompts.get(2)).toEqual([0, 1, 2, 3, 100, 101, 102, 1000, 1001, 100, 101, 2000, 2001]);
    expect(trace.requests.every((r) => r.error === undefined)).toBe(true);
  });

  it("fails a conversation's later turns with its failed turn, so completed + failed = requests", async () => {
    const requests = [req(0, 0, 4, 3), { ...req(1, 0, 2, 2), follows: 0 }, { ...req(2, 0, 2, 2), follows: 1 }, req(3, 0, 4, 1)];
    const { trace, byId } = await serve(requests, 2, { maxTokensPerStep: 64, chunkSize: 32 }, { failStep: { index: 0, message: 'boom' } });
    expect(byId.get(1)).toMatchObject({ cause: 'engine' });
    expect(byId.get(2)?.error).toMatch(/previous turn \(request 1\) failed/);
    expect(trace.requests.every((r) => Number.isFinite(r.tFinish))).toBe(true);
  });

  it('refuses a turn that follows no earlier request, or two turns following one', async () => {
    const run = (requests: ReturnType<typeof req>[]) => runServe(requests, new ScriptedEngine(2, new FakeClock()), new FakeClock(), { maxTokensPerStep: 64 });
    await expect(run([{ ...req(0, 0, 4, 1), follows: 5 }])).rejects.toThrow(/not an earlier request/);
    await expect(run([req(0, 0, 4, 1), { ...req(1, 0, 4, 1), follows: 0 }, { ...req(2, 0, 4, 1), follows: 0 }])).rejects.toThrow(/followed by two/);
  });
});

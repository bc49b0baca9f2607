import { describe, expect, it } from 'vitest';
import { isTokenscopeError, TokenscopeError } from '../../../src/errors.ts';
import { requestTiming, runServe, type Clock, type SchedulerOptions, type ServingEngine, type StepPlan } from '../../../src/serve/scheduler.ts';
import { serveResultOfTrace, sloAttainment } from '../../../src/serve/metrics.ts';
import type { ServeRequest } from '../../../src/serve/workload.ts';

/** Time moves only when the engine works or the scheduler sleeps. */
class FakeClock implements Clock {
  t = 0;
  now(): number {
    return this.t;
  }
  async sleepUntil(t: number): Promise<void> {
    this.t = Math.max(this.t, t);
  }
}

interface Script {
  /** ms a step costs; default 10 ms flat. */
  cost?: (plan: StepPlan) => number;
  /** Throw this message from the step with this 0-based index. */
  failStep?: { index: number; message: string };
  /** Token id produced for a sequence's n-th output (0-based); default 100 + n. */
  token?: (seq: number, n: number) => number;
  /** Refuse admissions longer than this many positions. */
  maxContext?: number;
  /** Drop this sequence's token from every step result. */
  dropTokenOf?: number;
}

class ScriptedEngine implements ServingEngine {
  readonly plans: StepPlan[] = [];
  readonly admitted: number[] = [];
  readonly released: number[] = [];
  private readonly slots = new Set<number>();
  private readonly produced = new Map<number, number>();

  constructor(
    readonly maxBatch: number,
    private readonly clock: FakeClock,
    private readonly script: Script = {},
  ) {}

  admit(seq: number, contextTokens: number): void {
    if (this.slots.size >= this.maxBatch) throw new TokenscopeError('bad-input', 'no free KV slot');
    if (contextTokens > (this.script.maxContext ?? Infinity))
      throw new TokenscopeError('model-too-large', `context ${contextTokens} exceeds ${this.script.maxContext}`, 'Lower maxOutputTokens.');
    this.slots.add(seq);
    this.admitted.push(seq);
  }

  async step(plan: StepPlan): Promise<Map<number, number>> {
    for (const seq of [...plan.decode.map((d) => d.seq), ...plan.prefill.map((p) => p.seq)]) {
      if (!this.slots.has(seq)) throw new Error(`sequence ${seq} has no slot`);
    }
    const index = this.plans.length;
    this.plans.push(plan);
    this.clock.t += (this.script.cost ?? (() => 10))(plan);
    if (this.script.failStep?.index === index) throw new Error(this.script.failStep.message);
    const out = new Map<number, number>();
    for (const seq of [...plan.decode.map((d) => d.seq), ...plan.prefill.filter((p) => p.last).map((p) => p.seq)]) {
      if (seq === this.script.dropTokenOf) continue;
      const n = this.produced.get(seq) ?? 0;
      this.produced.set(seq, n + 1);
      out.set(seq, (this.script.token ?? ((_, k) => 100 + k))(seq, n));
    }
    return out;
  }

  release(seq: number): void {
    this.slots.delete(seq);
    this.released.push(seq);
  }
}

const req = (id: number, arrivalMs: number, promptLength: number, maxOutputTokens: number): ServeRequest => ({
  id,
  arrivalMs,
  prompt: Array.from({ length: promptLength }, (_, i) => 1000 * id + i),
  maxOutputTokens,
});

async function serve(requests: ServeRequest[], maxBatch: number, options: SchedulerOptions, script: Script = {}) {
  const clock = new FakeClock();
  const engine = new ScriptedEngine(maxBatch, clock, script);
  const trace = await runServe(requests, engine, clock, options);
  return { trace, engine, byId: new Map(trace.requests.map((r) => [r.id, r])) };
}

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

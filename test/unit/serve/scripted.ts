/** A fake clock and a scripted engine for scheduler tests: time moves only when a step runs or the scheduler sleeps. */
import { TokenscopeError, type ErrorCode } from '../../../src/errors.ts';
import { runServe, type Clock, type SchedulerOptions, type ServingEngine, type StepPlan } from '../../../src/serve/scheduler.ts';
import type { ServeRequest } from '../../../src/serve/workload.ts';

/** Time moves only when the engine works or the scheduler sleeps. */
export class FakeClock implements Clock {
  t = 0;
  now(): number {
    return this.t;
  }
  async sleepUntil(t: number): Promise<void> {
    this.t = Math.max(this.t, t);
  }
}

export interface Script {
  /** ms a step costs; default 10 ms flat. */
  cost?: (plan: StepPlan) => number;
  /** Throw this message from the step with this 0-based index (a TokenscopeError when a code is given). */
  failStep?: { index: number; message: string; code?: ErrorCode };
  /** Token id produced for a sequence's n-th output (0-based); default 100 + n. */
  token?: (seq: number, n: number) => number;
  /** Refuse admissions longer than this many positions. */
  maxContext?: number;
  /** Drop this sequence's token from every step result. */
  dropTokenOf?: number;
  /** Prompt tokens the engine reports cached at admission (a prefix-cache hit); default none. */
  cached?: (seq: number, prompt: readonly number[]) => number;
}

export class ScriptedEngine implements ServingEngine {
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

  readonly prompts = new Map<number, readonly number[]>();

  admit(seq: number, contextTokens: number, prompt: readonly number[]): number {
    if (this.slots.size >= this.maxBatch) throw new TokenscopeError('bad-input', 'no free KV slot');
    if (contextTokens > (this.script.maxContext ?? Infinity))
      throw new TokenscopeError('model-too-large', `context ${contextTokens} exceeds ${this.script.maxContext}`, 'Lower maxOutputTokens.');
    this.slots.add(seq);
    this.admitted.push(seq);
    this.prompts.set(seq, prompt);
    return this.script.cached?.(seq, prompt) ?? 0;
  }

  async step(plan: StepPlan): Promise<Map<number, number>> {
    for (const seq of [...plan.decode.map((d) => d.seq), ...plan.prefill.map((p) => p.seq)]) {
      if (!this.slots.has(seq)) throw new Error(`sequence ${seq} has no slot`);
    }
    const index = this.plans.length;
    this.plans.push(plan);
    this.clock.t += (this.script.cost ?? (() => 10))(plan);
    const fail = this.script.failStep;
    if (fail?.index === index) throw fail.code ? new TokenscopeError(fail.code, fail.message) : new Error(fail.message);
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

export const req = (id: number, arrivalMs: number, promptLength: number, maxOutputTokens: number): ServeRequest => ({
  id,
  arrivalMs,
  prompt: Array.from({ length: promptLength }, (_, i) => 1000 * id + i),
  maxOutputTokens,
});

export async function serve(requests: ServeRequest[], maxBatch: number, options: SchedulerOptions, script: Script = {}) {
  const clock = new FakeClock();
  const engine = new ScriptedEngine(maxBatch, clock, script);
  const trace = await runServe(requests, engine, clock, options);
  return { trace, engine, byId: new Map(trace.requests.map((r) => [r.id, r])) };
}

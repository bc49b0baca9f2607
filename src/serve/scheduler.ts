/**
 * Continuous-batching scheduler over an abstract engine and an injected clock.
 *
 * Policy (vLLM v1's chunked-prefill scheduler, simplified): requests queue FCFS by arrival; at most
 * `engine.maxBatch` sequences hold a KV slot; each step has a budget of `maxTokensPerStep` tokens.
 * Running decodes go first (one token each, in admission order), then the remaining budget goes to
 * prefill chunks of at most `chunkSize` tokens, in admission order — so a long prompt is prefilled
 * over several steps alongside the decodes. With chunking off a prompt is prefilled whole, in a
 * step whose remaining budget holds it, and a prompt that does not fit holds back the ones behind it.
 *
 * All times come from the clock (ms). Requests carry their arrival; TTFT is measured from it, so it
 * includes queueing, as vLLM measures it.
 *
 * Admission control (each optional): `maxQueue` rejects an arrival at once when that many requests
 * are already waiting beyond the free slots; `timeoutMs` cancels a request not finished that long
 * after its arrival (a queued one leaves the queue, a running one frees its slot at the end of the
 * step and the step's tokens after the deadline are dropped); `degrade` caps the output of requests
 * admitted while the queue behind them is deeper than a threshold. Every request ends completed or
 * failed with a {@link FailureCause}, so completed + failed = requests always.
 */
import { describeError, isTokenscopeError, TokenscopeError } from '../errors.ts';
import type { ServeRequest } from './workload.ts';
import type { FailureCause, RequestTrace, ServeTrace, StepRecord } from './trace.ts';

export interface Clock {
  /** ms. */
  now(): number;
  /** Resolve once now() ≥ t. */
  sleepUntil(t: number): Promise<void>;
}

/** Part of a prompt to prefill: `tokens` go to positions pos, pos + 1, …; `last` ends the prompt. */
export interface PrefillChunk {
  seq: number;
  pos: number;
  tokens: number[];
  last: boolean;
}

/** One decode: feed `token` (the sequence's latest output) at position `pos`. */
export interface DecodeEntry {
  seq: number;
  pos: number;
  token: number;
}

export interface StepPlan {
  prefill: PrefillChunk[];
  decode: DecodeEntry[];
}

/** What the scheduler needs from a model runner. The GPU engine implements this; tests script it. */
export interface ServingEngine {
  /** Sequences that can hold KV-cache slots at once. */
  readonly maxBatch: number;
  /**
   * Claim a slot for a sequence that will reach `contextTokens` positions (prompt + max output).
   * Throws a TokenscopeError when it cannot (no slot, or longer than the context); the request fails.
   * Returns how many of the prompt's first tokens are already in the slot's KV cache (a prefix-cache
   * hit; less than the prompt's length) — prefill starts there — or nothing for none.
   */
  admit(seq: number, contextTokens: number, prompt: readonly number[]): number | void;
  /**
   * Run one batched forward pass. Resolves with the token id sampled for every decode and for every
   * prefill whose `last` chunk ran. A rejection fails every request in the step and the run goes on,
   * except a `device-lost` or `model-format` (non-finite output) error, which ends the run.
   */
  step(plan: StepPlan): Promise<Map<number, number>>;
  /** Free the sequence's slot (after it finished or failed). */
  release(seq: number): void;
}

/** Output cap for requests admitted while the queue is deep. */
export interface DegradePolicy {
  /** Degrade a request admitted while more than this many requests wait behind it (≥ 0). */
  overQueue: number;
  /** Its output is capped at this many tokens (≥ 1); leave out to halve it (rounded up). */
  outputTokens?: number;
}

export interface SchedulerOptions {
  /** Token budget per step (vLLM's max_num_batched_tokens): decodes count 1, prefill chunks their length. */
  maxTokensPerStep: number;
  /** Largest prefill chunk per sequence and step; leave out to turn chunked prefill off. */
  chunkSize?: number;
  /** Also finish a request when it produces this id (counted as an output token); leave out to ignore EOS. */
  eosToken?: number;
  /** Reject an arrival when this many requests already wait beyond the free slots (≥ 0); leave out for an unbounded queue. */
  maxQueue?: number;
  /** Cancel a request not finished this many ms after its arrival (> 0); leave out for no timeout. */
  timeoutMs?: number;
  degrade?: DegradePolicy;
}

interface Sequence {
  request: ServeRequest;
  trace: RequestTrace;
  /** Prompt tokens already prefilled. */
  prefilled: number;
  lastToken: number;
  /** Output tokens it will get: asked for, or the degraded cap. */
  maxOutput: number;
  /** Arrival + timeout (Infinity without one). */
  deadline: number;
}

const positive = (name: string, x: number) => {
  if (!(Number.isInteger(x) && x >= 1)) throw new TokenscopeError('bad-input', `${name} must be an integer ≥ 1, got ${x}`);
};
const nonNegative = (name: string, x: number | undefined) => {
  if (x !== undefined && !(Number.isInteger(x) && x >= 0)) throw new TokenscopeError('bad-input', `${name} must be an integer ≥ 0, got ${x}`);
};

/** Refuse settings no run can honour (zero or negative budgets and limits), before anything runs. */
export function checkSchedulerOptions(options: SchedulerOptions): void {
  positive('maxTokensPerStep', options.maxTokensPerStep);
  if (options.chunkSize !== undefined) positive('chunkSize', options.chunkSize);
  nonNegative('maxQueue', options.maxQueue);
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0 && Number.isFinite(options.timeoutMs))) {
    throw new TokenscopeError('bad-input', `timeoutMs must be a number of ms > 0, got ${options.timeoutMs}`, 'Leave the timeout out for none.');
  }
  if (options.degrade) {
    nonNegative('degrade overQueue', options.degrade.overQueue);
    if (options.degrade.outputTokens !== undefined) positive('degrade outputTokens', options.degrade.outputTokens);
  }
}

function validate(requests: readonly ServeRequest[], engine: ServingEngine, options: SchedulerOptions): void {
  checkSchedulerOptions(options);
  positive('engine maxBatch', engine.maxBatch);
  const ids = new Set<number>();
  const followed = new Set<number>();
  for (const r of requests) {
    if (ids.has(r.id)) throw new TokenscopeError('bad-input', `request id ${r.id} appears twice`);
    ids.add(r.id);
    positive(`request ${r.id} prompt length`, r.prompt.length);
    positive(`request ${r.id} maxOutputTokens`, r.maxOutputTokens);
    if (r.follows !== undefined) {
      if (!ids.has(r.follows) || r.follows === r.id)
        throw new TokenscopeError('bad-input', `request ${r.id} follows request ${r.follows}, which is not an earlier request of the workload`);
      if (followed.has(r.follows)) throw new TokenscopeError('bad-input', `request ${r.follows} is followed by two requests`);
      followed.add(r.follows);
    }
    if (r.follows === undefined && options.chunkSize === undefined && r.prompt.length > options.maxTokensPerStep) {
      throw new TokenscopeError(
        'bad-input',
        `request ${r.id} has a ${r.prompt.length}-token prompt, over maxTokensPerStep ${options.maxTokensPerStep} with chunked prefill off`,
        'Raise maxTokensPerStep or set a chunkSize.',
      );
    }
  }
}

/** Decodes first (1 token each), then prefill chunks from the remaining budget; both in admission order. */
function planStep(running: readonly Sequence[], options: SchedulerOptions): StepPlan {
  let budget = options.maxTokensPerStep;
  const plan: StepPlan = { prefill: [], decode: [] };
  for (const s of running) {
    if (budget === 0) break;
    if (s.prefilled < s.request.prompt.length) continue;
    plan.decode.push({ seq: s.request.id, pos: s.prefilled + s.trace.tTokens.length - 1, token: s.lastToken });
    budget -= 1;
  }
  for (const s of running) {
    const remaining = s.request.prompt.length - s.prefilled;
    if (remaining === 0) continue;
    const n = options.chunkSize === undefined ? (remaining <= budget ? remaining : 0) : Math.min(remaining, options.chunkSize, budget);
    if (n === 0) break;
    plan.prefill.push({ seq: s.request.id, pos: s.prefilled, tokens: s.request.prompt.slice(s.prefilled, s.prefilled + n), last: n === remaining });
    budget -= n;
  }
  return plan;
}

/**
 * Serve `requests` (arrivals relative to the run's start) on `engine` until every request has
 * completed or failed. Failures — a rejected arrival, a timeout, a refused admission, a rejected
 * step, a missing token — are recorded on the request with their message and cause, and the run
 * continues; a lost device or non-finite output ends the run: every unfinished request fails with
 * it and the trace carries it as `fatal` (a run of failed requests is not a finished run).
 */
export async function runServe(requests: readonly ServeRequest[], engine: ServingEngine, clock: Clock, options: SchedulerOptions): Promise<ServeTrace> {
  validate(requests, engine, options);
  const tStart = clock.now();
  const traces = requests.map((r): RequestTrace => {
    const trace: RequestTrace = { id: r.id, promptTokens: r.prompt.length, tArrival: tStart + r.arrivalMs, tTokens: [], tFinish: NaN, tokenIds: [] };
    if (r.className !== undefined) trace.className = r.className;
    return trace;
  });
  const timeout = options.timeoutMs ?? Infinity;
  // FCFS queue order; the sort is stable, so simultaneous arrivals keep the order they were given in.
  const sequences = requests.map((request, i): Sequence => ({
    request,
    trace: traces[i],
    prefilled: 0,
    lastToken: -1,
    maxOutput: request.maxOutputTokens,
    deadline: traces[i].tArrival + timeout,
  }));
  // Later turns of a conversation are not in it: each arrives when its previous turn completes.
  const byArrival = sequences.filter((s) => s.request.follows === undefined).sort((a, b) => a.request.arrivalMs - b.request.arrivalMs);
  const steps: StepRecord[] = [];
  let waiting: Sequence[] = [];
  let running: Sequence[] = [];
  let arrived = 0;
  let fatal: unknown;

  // A conversation's next turn arrives when its previous turn completes (its prompt: that turn's
  // prompt, its answer and the turn's new message) and fails with it when it fails.
  const followerOf = new Map<number, Sequence>();
  for (const s of sequences) if (s.request.follows !== undefined) followerOf.set(s.request.follows, s);
  const released: Sequence[] = [];
  const finish = (s: Sequence, t: number, error?: string, cause?: FailureCause) => {
    s.trace.tFinish = t;
    if (error !== undefined) {
      s.trace.error = error;
      s.trace.cause = cause ?? 'engine';
    }
    const next = followerOf.get(s.request.id);
    if (next === undefined) return;
    if (error !== undefined) {
      next.trace.tArrival = t;
      finish(next, t, `the conversation's previous turn (request ${s.request.id}) failed: ${error}`, cause ?? 'engine');
      return;
    }
    const prompt = [...s.request.prompt, ...(s.trace.tokenIds ?? []), ...next.request.prompt];
    next.request = { ...next.request, prompt };
    next.trace.promptTokens = prompt.length;
    next.trace.tArrival = t;
    next.deadline = t + timeout;
    released.push(next);
  };
  const timedOut = `timed out: not finished ${timeout} ms after arrival`;
  /** Queued requests whose deadline passed before `t` leave the queue at their deadline. */
  const expireWaiting = (t: number) => {
    if (timeout === Infinity) return;
    for (const s of waiting) if (s.deadline < t) finish(s, s.deadline, timedOut, 'timeout');
    waiting = waiting.filter((s) => !(s.deadline < t));
  };
  const admit = (now: number) => {
    while (running.length < engine.maxBatch && waiting.length > 0) {
      const s = waiting.shift() as Sequence;
      const degrade = options.degrade;
      if (degrade && waiting.length > degrade.overQueue) {
        const cap = Math.min(s.request.maxOutputTokens, degrade.outputTokens ?? Math.ceil(s.request.maxOutputTokens / 2));
        if (cap < s.request.maxOutputTokens) {
          s.maxOutput = cap;
          s.trace.degradedTo = cap;
        }
      }
      try {
        const cached = engine.admit(s.request.id, s.request.prompt.length + s.maxOutput, s.request.prompt) ?? 0;
        if (!(Number.isInteger(cached) && cached >= 0 && cached < s.request.prompt.length))
          throw new TokenscopeError('bad-input', `The engine reports ${cached} cached tokens of a ${s.request.prompt.length}-token prompt.`);
        s.prefilled = cached;
        s.trace.cachedTokens = cached;
        s.trace.tAdmit = now;
        running.push(s);
      } catch (e) {
        engine.release(s.request.id);
        finish(s, now, describeError(e), 'admission');
      }
    }
  };

  for (;;) {
    const now = clock.now();
    // Arrivals since the last step, in order: each sees the queue as it stood when it arrived
    // (slots free only at step boundaries, so every running sequence still holds one).
    const arrivals: Sequence[] = [];
    while (arrived < byArrival.length && byArrival[arrived].trace.tArrival <= now) arrivals.push(byArrival[arrived++]);
    arrivals.push(...released.splice(0));
    for (const s of arrivals) {
      expireWaiting(s.trace.tArrival);
      if (options.chunkSize === undefined && s.request.prompt.length > options.maxTokensPerStep) {
        finish(
          s,
          s.trace.tArrival,
          `its ${s.request.prompt.length}-token prompt is over maxTokensPerStep ${options.maxTokensPerStep} with chunked prefill off`,
          'admission',
        );
        continue;
      }
      const beyondFreeSlots = waiting.length - (engine.maxBatch - running.length);
      if (options.maxQueue !== undefined && beyondFreeSlots >= options.maxQueue) {
        finish(s, s.trace.tArrival, `rejected: ${beyondFreeSlots} requests already queued (queue limit ${options.maxQueue})`, 'rejected');
      } else {
        waiting.push(s);
      }
    }
    expireWaiting(now);
    admit(now);
    if (running.length === 0) {
      if (released.length > 0) continue;
      if (arrived === byArrival.length) break;
      await clock.sleepUntil(byArrival[arrived].trace.tArrival);
      continue;
    }

    const plan = planStep(running, options);
    const record: StepRecord = {
      tStart: now,
      tEnd: now,
      decode: plan.decode.map((d) => d.seq),
      prefill: plan.prefill.map((p) => ({ seq: p.seq, tokens: p.tokens.length })),
      running: running.length,
      waiting: waiting.length,
    };
    let produced = new Map<number, number>();
    try {
      produced = await engine.step(plan);
    } catch (e) {
      record.error = describeError(e);
      // No later step can run on a lost device or a model that yields NaN: the run ends here.
      if (isTokenscopeError(e, 'device-lost') || isTokenscopeError(e, 'model-format')) fatal = e;
    }
    const tEnd = clock.now();
    record.tEnd = tEnd;
    steps.push(record);

    const done = new Set<Sequence>();
    const end = (s: Sequence, error?: string, cause?: FailureCause, t = tEnd) => {
      finish(s, t, error, cause);
      engine.release(s.request.id);
      done.add(s);
    };
    if (fatal !== undefined) {
      const cause: FailureCause = isTokenscopeError(fatal, 'device-lost') ? 'device-lost' : 'engine';
      for (const s of running) end(s, record.error, cause);
      for (const s of [...waiting, ...released.splice(0), ...byArrival.slice(arrived)]) finish(s, Math.max(tEnd, s.trace.tArrival), record.error, cause);
      break;
    }
    // A request past its deadline was cancelled then: what this step made for it came too late.
    for (const s of running) if (s.deadline < tEnd) end(s, timedOut, 'timeout', s.deadline);
    const bySeq = new Map(running.filter((s) => !done.has(s)).map((s) => [s.request.id, s]));
    if (record.error !== undefined) {
      for (const seq of [...record.decode, ...record.prefill.map((p) => p.seq)]) {
        const s = bySeq.get(seq);
        if (s) end(s, record.error, 'engine');
      }
    } else {
      for (const p of plan.prefill) {
        const s = bySeq.get(p.seq);
        if (s) s.prefilled += p.tokens.length;
      }
      for (const seq of [...record.decode, ...plan.prefill.filter((p) => p.last).map((p) => p.seq)]) {
        const s = bySeq.get(seq);
        if (!s) continue;
        const token = produced.get(seq);
        if (token === undefined) {
          end(s, `engine returned no token for sequence ${seq}`, 'engine');
          continue;
        }
        s.trace.tTokens.push(tEnd);
        s.trace.tokenIds?.push(token);
        s.lastToken = token;
        if (s.trace.tTokens.length >= s.maxOutput || token === options.eosToken) end(s);
      }
    }
    running = running.filter((s) => !done.has(s));
  }
  const trace: ServeTrace = { tStart, tEnd: clock.now(), requests: traces, steps };
  if (fatal !== undefined) trace.fatal = fatal;
  return trace;
}

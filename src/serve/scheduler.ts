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
 */
import type { RequestTiming } from '../measure/metrics.ts';
import { describeError, isTokenscopeError, TokenscopeError } from '../errors.ts';
import type { ServeRequest } from './workload.ts';

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
   */
  admit(seq: number, contextTokens: number): void;
  /**
   * Run one batched forward pass. Resolves with the token id sampled for every decode and for every
   * prefill whose `last` chunk ran. A rejection fails every request in the step and the run goes on,
   * except a `device-lost` or `model-format` (non-finite output) error, which ends the run.
   */
  step(plan: StepPlan): Promise<Map<number, number>>;
  /** Free the sequence's slot (after it finished or failed). */
  release(seq: number): void;
}

export interface SchedulerOptions {
  /** Token budget per step (vLLM's max_num_batched_tokens): decodes count 1, prefill chunks their length. */
  maxTokensPerStep: number;
  /** Largest prefill chunk per sequence and step; leave out to turn chunked prefill off. */
  chunkSize?: number;
  /** Also finish a request when it produces this id (counted as an output token); leave out to ignore EOS. */
  eosToken?: number;
}

/** What happened to one request. Times are clock ms. */
export interface RequestTrace {
  id: number;
  promptTokens: number;
  tArrival: number;
  /** When it got a KV slot; absent if it never did. */
  tAdmit?: number;
  /** When each output token became available. */
  tTokens: number[];
  /** When it completed or failed. */
  tFinish: number;
  error?: string;
}

/** One engine step, for the batch timeline. */
export interface StepRecord {
  tStart: number;
  tEnd: number;
  /** Sequences decoded. */
  decode: number[];
  /** Sequences prefilled and how many prompt tokens each. */
  prefill: { seq: number; tokens: number }[];
  /** Sequences holding a slot, and requests queued behind them, when the step was planned. */
  running: number;
  waiting: number;
  error?: string;
}

export interface ServeTrace {
  tStart: number;
  tEnd: number;
  /** In the order the requests were given. */
  requests: RequestTrace[];
  steps: StepRecord[];
}

/** The raw timing the metrics read: t_send = arrival, so TTFT includes time queued. */
export function requestTiming(trace: RequestTrace): RequestTiming {
  const timing: RequestTiming = { promptTokens: trace.promptTokens, tSend: trace.tArrival, tTokens: trace.tTokens };
  if (trace.error !== undefined) timing.error = trace.error;
  return timing;
}

interface Sequence {
  request: ServeRequest;
  trace: RequestTrace;
  /** Prompt tokens already prefilled. */
  prefilled: number;
  lastToken: number;
}

function validate(requests: readonly ServeRequest[], engine: ServingEngine, options: SchedulerOptions): void {
  const positive = (name: string, x: number) => {
    if (!(Number.isInteger(x) && x >= 1)) throw new TokenscopeError('bad-input', `${name} must be an integer ≥ 1, got ${x}`);
  };
  positive('maxTokensPerStep', options.maxTokensPerStep);
  if (options.chunkSize !== undefined) positive('chunkSize', options.chunkSize);
  positive('engine maxBatch', engine.maxBatch);
  const ids = new Set<number>();
  for (const r of requests) {
    if (ids.has(r.id)) throw new TokenscopeError('bad-input', `request id ${r.id} appears twice`);
    ids.add(r.id);
    positive(`request ${r.id} prompt length`, r.prompt.length);
    positive(`request ${r.id} maxOutputTokens`, r.maxOutputTokens);
    if (options.chunkSize === undefined && r.prompt.length > options.maxTokensPerStep) {
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
 * completed or failed. Failures — a refused admission, a rejected step, a missing token — are
 * recorded on the request with their message and the run continues; a lost device or non-finite
 * output fails the run instead (a run of failed requests is not a finished run).
 */
export async function runServe(requests: readonly ServeRequest[], engine: ServingEngine, clock: Clock, options: SchedulerOptions): Promise<ServeTrace> {
  validate(requests, engine, options);
  const tStart = clock.now();
  const traces = requests.map((r): RequestTrace => ({ id: r.id, promptTokens: r.prompt.length, tArrival: tStart + r.arrivalMs, tTokens: [], tFinish: NaN }));
  // FCFS queue order; the sort is stable, so simultaneous arrivals keep the order they were given in.
  const byArrival = requests
    .map((request, i) => ({ request, trace: traces[i], prefilled: 0, lastToken: -1 }))
    .sort((a, b) => a.request.arrivalMs - b.request.arrivalMs);
  const steps: StepRecord[] = [];
  const waiting: Sequence[] = [];
  let running: Sequence[] = [];
  let arrived = 0;

  const finish = (s: Sequence, t: number, error?: string) => {
    s.trace.tFinish = t;
    if (error !== undefined) s.trace.error = error;
  };

  for (;;) {
    const now = clock.now();
    while (arrived < byArrival.length && byArrival[arrived].trace.tArrival <= now) waiting.push(byArrival[arrived++]);
    while (running.length < engine.maxBatch && waiting.length > 0) {
      const s = waiting.shift() as Sequence;
      try {
        engine.admit(s.request.id, s.request.prompt.length + s.request.maxOutputTokens);
        s.trace.tAdmit = now;
        running.push(s);
      } catch (e) {
        finish(s, now, describeError(e));
      }
    }
    if (running.length === 0) {
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
      // No later step can run on a lost device or a model that yields NaN: the run fails, as a sweep does.
      if (isTokenscopeError(e, 'device-lost') || isTokenscopeError(e, 'model-format')) throw e;
      record.error = describeError(e);
    }
    const tEnd = clock.now();
    record.tEnd = tEnd;
    steps.push(record);

    const done = new Set<Sequence>();
    const end = (s: Sequence, error?: string) => {
      finish(s, tEnd, error);
      engine.release(s.request.id);
      done.add(s);
    };
    const bySeq = new Map(running.map((s) => [s.request.id, s]));
    if (record.error !== undefined) {
      for (const seq of [...record.decode, ...record.prefill.map((p) => p.seq)]) end(bySeq.get(seq) as Sequence, record.error);
    } else {
      for (const p of plan.prefill) (bySeq.get(p.seq) as Sequence).prefilled += p.tokens.length;
      for (const seq of [...record.decode, ...plan.prefill.filter((p) => p.last).map((p) => p.seq)]) {
        const s = bySeq.get(seq) as Sequence;
        const token = produced.get(seq);
        if (token === undefined) {
          end(s, `engine returned no token for sequence ${seq}`);
          continue;
        }
        s.trace.tTokens.push(tEnd);
        s.lastToken = token;
        if (s.trace.tTokens.length >= s.request.maxOutputTokens || token === options.eosToken) end(s);
      }
    }
    running = running.filter((s) => !done.has(s));
  }
  return { tStart, tEnd: clock.now(), requests: traces, steps };
}

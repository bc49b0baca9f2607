/**
 * Seeded synthetic serving workloads: arrival times as vLLM `bench serve` draws them, and prompt /
 * output lengths from simple distributions. Everything is a pure function of the spec and its seed.
 */
import { TokenscopeError } from '../errors.ts';
import { mulberry32, type Random } from '../random.ts';

export { mulberry32, type Random };

/** One request of a workload, as the scheduler receives it. */
export interface ServeRequest {
  id: number;
  /** ms after the start of the run. */
  arrivalMs: number;
  /** Prompt token ids. */
  prompt: number[];
  /** Target output length; the request finishes there (or earlier at EOS when the scheduler stops at EOS). */
  maxOutputTokens: number;
  /** Its request class, when the workload has classes. */
  className?: string;
  /**
   * A conversation's later turn: the id of its previous turn. It arrives when that turn completes
   * (`arrivalMs` is ignored) and its prompt is then that turn's prompt + its answer + `prompt` (the
   * new message).
   */
  follows?: number;
}

/**
 * A request class (interactive chat, batch summarisation…): its share of the requests, its own SLOs
 * (ms) and, optionally, its own length distributions (else the workload's).
 */
export interface RequestClass {
  name: string;
  /** Share of the requests, > 0; the shares are normalised to sum to 1. */
  share: number;
  slo: { ttft?: number; tpot?: number; e2el?: number };
  prompt?: LengthDistribution;
  output?: LengthDistribution;
}

/** Token-length distributions; every draw is an integer ≥ 1. */
export type LengthDistribution =
  | { kind: 'fixed'; tokens: number }
  /** Uniform over the integers min..max, both included. */
  | { kind: 'uniform'; min: number; max: number }
  /** round(median · e^(σ·Z)), Z ~ N(0, 1), clamped to [1, max]. */
  | { kind: 'lognormal'; median: number; sigma: number; max: number };

export interface WorkloadSpec {
  requests: number;
  /** Requests per second; `Infinity` sends every request at t = 0. */
  rate: number;
  /** Gamma shape of the inter-arrival gaps: 1 = Poisson, < 1 burstier, `Infinity` = evenly spaced. Default 1. */
  burstiness?: number;
  prompt: LengthDistribution;
  output: LengthDistribution;
  /** Prompt ids are drawn uniformly from 0..vocabSize − 1. */
  vocabSize: number;
  /** Any integer; streams use it mod 2³². */
  seed: number;
  /** Each request's class is drawn by share from its own stream; leave out for one class. */
  classes?: readonly RequestClass[];
  /** Every request (every conversation's first turn) starts with the same system prompt of this many tokens, from its own stream. */
  sharedPrefix?: number;
  /**
   * Multi-turn chat: `count` conversations of `turns` turns each (count × turns requests, replacing
   * `requests`). First turns arrive by the arrival process; each later turn arrives when the one
   * before completes, its prompt that turn's prompt + answer + a new message drawn from `prompt`.
   */
  conversations?: { count: number; turns: number };
}

/** Longest draw a length distribution can give. */
export function longestOf(dist: LengthDistribution): number {
  return dist.kind === 'fixed' ? dist.tokens : dist.max;
}

/** Standard normal by Box–Muller: √(−2 ln U₁) · cos(2π U₂), with U₁ ∈ (0, 1]. */
export function sampleNormal(random: Random): number {
  const u1 = 1 - random();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * random());
}

/**
 * Gamma(shape k, scale θ) by Marsaglia & Tsang (2000): for k ≥ 1, d = k − 1/3, c = 1/√(9d);
 * draw Z ~ N(0, 1), v = (1 + cZ)³, accept d·v when v > 0 and ln U < Z²/2 + d − d·v + d·ln v
 * (squeeze U < 1 − 0.0331·Z⁴ first). For k < 1, Gamma(k) = Gamma(k + 1) · U^(1/k).
 */
export function sampleGamma(random: Random, shape: number, scale: number): number {
  if (!(shape > 0 && scale > 0)) {
    throw new TokenscopeError('bad-input', `gamma needs shape > 0 and scale > 0, got ${shape} and ${scale}`);
  }
  if (shape < 1) return sampleGamma(random, shape + 1, scale) * (1 - random()) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const z = sampleNormal(random);
    const v = (1 + c * z) ** 3;
    if (v <= 0) continue;
    const u = 1 - random();
    if (u < 1 - 0.0331 * z ** 4 || Math.log(u) < (z * z) / 2 + d - d * v + d * Math.log(v)) return d * v * scale;
  }
}

function requireInteger(name: string, value: number, min: number): void {
  if (!(Number.isInteger(value) && value >= min)) {
    throw new TokenscopeError('bad-input', `${name} must be an integer ≥ ${min}, got ${value}`);
  }
}

/** One draw from a length distribution (see {@link LengthDistribution}). */
export function sampleLength(random: Random, dist: LengthDistribution): number {
  switch (dist.kind) {
    case 'fixed':
      requireInteger('fixed length', dist.tokens, 1);
      return dist.tokens;
    case 'uniform':
      requireInteger('uniform min', dist.min, 1);
      requireInteger('uniform max', dist.max, dist.min);
      return dist.min + Math.floor(random() * (dist.max - dist.min + 1));
    case 'lognormal':
      requireInteger('lognormal max', dist.max, 1);
      if (!(dist.median > 0 && dist.sigma >= 0)) {
        throw new TokenscopeError('bad-input', `lognormal needs median > 0 and sigma ≥ 0, got ${dist.median} and ${dist.sigma}`);
      }
      return Math.min(dist.max, Math.max(1, Math.round(dist.median * Math.exp(dist.sigma * sampleNormal(random)))));
  }
}

/**
 * Arrival times (ms from the start) of n requests, with vLLM's `get_request` semantics:
 * rate = ∞ → all at 0; burstiness = ∞ → gaps of exactly 1/rate; otherwise gaps (s) are drawn
 * i.i.d. from Gamma(shape = burstiness, scale = 1 / (rate · burstiness)) — mean 1/rate, CV² = 1/burstiness —
 * and the first request also waits one gap. The cumulative times are then multiplied by
 * (n / rate) / (their last value), so the last request arrives at exactly n / rate seconds
 * (vLLM does this to remove the 1–2% seed-to-seed spread in total duration).
 */
export function arrivalTimesMs(n: number, rate: number, burstiness: number, random: Random): number[] {
  requireInteger('request count', n, 1);
  if (!(rate > 0) || !(burstiness > 0)) {
    throw new TokenscopeError('bad-input', `rate and burstiness must be > 0, got ${rate} and ${burstiness}`, 'Use rate Infinity to send everything at once.');
  }
  if (rate === Infinity) return new Array<number>(n).fill(0);
  const times: number[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += burstiness === Infinity ? 1 / rate : sampleGamma(random, burstiness, 1 / (rate * burstiness));
    times.push(t);
  }
  const factor = (1000 * (n / rate)) / t;
  return times.map((x) => x * factor);
}

/** Refuse classes no workload can draw from: none, unnamed or repeated names, shares ≤ 0, negative SLOs. */
export function checkClasses(classes: readonly RequestClass[]): void {
  if (classes.length === 0) throw new TokenscopeError('bad-input', 'the workload lists no request classes', 'Give at least one class, or none at all.');
  const names = new Set<string>();
  for (const c of classes) {
    if (!/^[\w.-]{1,64}$/.test(c.name)) throw new TokenscopeError('bad-input', `request class name "${c.name}" is not 1–64 letters, digits, '_', '.' or '-'`);
    if (names.has(c.name)) throw new TokenscopeError('bad-input', `request class "${c.name}" is listed twice`);
    names.add(c.name);
    if (!(c.share > 0 && Number.isFinite(c.share))) throw new TokenscopeError('bad-input', `request class "${c.name}" has share ${c.share}; it must be > 0`);
    for (const [k, v] of Object.entries(c.slo)) {
      if (v !== undefined && !(v >= 0 && Number.isFinite(v)))
        throw new TokenscopeError('bad-input', `request class "${c.name}" has ${k} SLO ${v}; it must be ≥ 0 ms`);
    }
  }
}

/**
 * The workload of a spec. Arrivals, prompt lengths, output lengths, prompt ids and classes each use
 * their own mulberry32 stream (seed + k·0x9E3779B9), so changing one distribution leaves the others'
 * draws unchanged (and a workload without classes is the same as before classes existed).
 */
export function generateWorkload(spec: WorkloadSpec): ServeRequest[] {
  requireInteger('vocabulary size', spec.vocabSize, 1);
  if (!Number.isInteger(spec.seed)) throw new TokenscopeError('bad-input', `seed must be an integer, got ${spec.seed}`);
  if (spec.classes) checkClasses(spec.classes);
  if (spec.sharedPrefix !== undefined) requireInteger('shared prefix', spec.sharedPrefix, 1);
  if (spec.conversations) {
    requireInteger('conversation count', spec.conversations.count, 1);
    requireInteger('turns per conversation', spec.conversations.turns, 1);
  }
  const stream = (k: number) => mulberry32(spec.seed + k * 0x9e3779b9);
  const [arrivals, promptLengths, outputLengths, promptIds, classDraws, prefixIds] = [0, 1, 2, 3, 4, 5].map(stream);
  const system = Array.from({ length: spec.sharedPrefix ?? 0 }, () => Math.floor(prefixIds() * spec.vocabSize));
  const conv = spec.conversations;
  const firsts = arrivalTimesMs(conv ? conv.count : spec.requests, spec.rate, spec.burstiness ?? 1, arrivals);
  // Turn t of conversation c is request c·turns + t; a later turn's arrival is its first turn's (a lower bound; it follows the turn before).
  const times = conv ? firsts.flatMap((t) => new Array<number>(conv.turns).fill(t)) : firsts;
  const classes = spec.classes ?? [];
  const total = classes.reduce((n, c) => n + c.share, 0);
  const pick = (): RequestClass | undefined => {
    if (classes.length === 0) return undefined;
    let u = classDraws() * total;
    for (const c of classes) if ((u -= c.share) < 0) return c;
    return classes[classes.length - 1];
  };
  return times.map((arrivalMs, id) => {
    const c = pick();
    const message = Array.from({ length: sampleLength(promptLengths, c?.prompt ?? spec.prompt) }, () => Math.floor(promptIds() * spec.vocabSize));
    const later = conv !== undefined && id % conv.turns > 0;
    const request: ServeRequest = {
      id,
      arrivalMs,
      prompt: later ? message : [...system, ...message],
      maxOutputTokens: sampleLength(outputLengths, c?.output ?? spec.output),
    };
    if (later) request.follows = id - 1;
    if (c) request.className = c.name;
    return request;
  });
}

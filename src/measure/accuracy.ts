/**
 * Accuracy beside speed, the pure part: how far the engine's next-token distributions lie from the
 * CPU reference's on the same weights (KL divergence, top-1 agreement), the fixed token sequence
 * both are fed, how long that sequence may be for a model of a given size, and which arithmetic the
 * engine's linear layers ran (read from the recorded program's dispatch labels). The run itself is
 * accuracy-run.ts; docs/METRICS.md gives the definitions.
 */
import { LINEAR_BODIES } from '../kernels/variant-table.ts';
import { mulberry32 } from '../random.ts';
import { percentile } from './stats.ts';

/** How one position compares: KL(reference ‖ engine) in nats and both top-1 tokens. */
export interface PositionAccuracy {
  kld: number;
  referenceTop1: number;
  engineTop1: number;
}

export interface AccuracySummary {
  /** Positions compared. */
  positions: number;
  /** Mean of the per-position KL(reference ‖ engine), nats. */
  kld_mean: number;
  /** 99th percentile (numpy's linear) of the per-position KL divergences, nats. */
  kld_p99: number;
  /** Share of positions whose top-1 token is the reference's. */
  top1_agreement: number;
  /** First position (0-based, in the sequence) whose top-1 differs from the reference's; null when none does. */
  first_disagreement: number | null;
}

/**
 * A second reference beside the f32 CPU one (`--agreement llama.cpp`: cli/llama-cpp-reference.ts):
 * another implementation's next-token distribution after each prefix of the same ids.
 */
export interface SecondReference {
  name: 'llama.cpp';
  /** Its version, as it reports it. */
  version: string;
  /** How it ran (KV cache type, build). */
  settings: string;
  /** Logits (or log-probabilities: the same after log-softmax) after each prefix of `ids`, `vocabSize` values each. */
  logits(ids: readonly number[], vocabSize: number): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}

/** Activation precision a linear layer's kernel multiplies in. */
export type ActivationPrecision = 'int8' | 'f16' | 'f32';

export interface LinearArithmetic {
  /** Weight format of the matrices (q4_0, q8_0, f32, …). */
  format: string;
  /**
   * What X was rounded to before the products: int8 (linear_q8dot*: llama.cpp's Q8_0 — 32 inputs per
   * f16 scale — for q4_0 and q8_0, its Q8_K — 256 per f32 scale — for the K-quants), f16 or f32.
   */
  precision: ActivationPrecision;
  /** Linear dispatches of one decode step with this format and precision. */
  linears: number;
}

/** log-softmax of `logits` in float64: x − max − log Σ exp(x − max). */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const logZ = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - logZ;
  return out;
}

/**
 * KL(P ‖ Q) = Σᵢ pᵢ (log pᵢ − log qᵢ) in nats, P = softmax(reference), Q = softmax(engine), in
 * float64 (llama-perplexity --kl-divergence's direction: the reference's distribution weighs the
 * terms). Terms where pᵢ underflows to 0 add nothing. Never negative (clamped at 0 against rounding).
 */
export function klDivergence(reference: ArrayLike<number>, engine: ArrayLike<number>): number {
  if (reference.length !== engine.length) throw new RangeError(`Logits of ${reference.length} and ${engine.length} tokens cannot be compared.`);
  const logP = logSoftmax(reference);
  const logQ = logSoftmax(engine);
  let kld = 0;
  for (let i = 0; i < logP.length; i++) {
    const p = Math.exp(logP[i]);
    if (p > 0) kld += p * (logP[i] - logQ[i]);
  }
  return Math.max(0, kld);
}

/** Index of the largest value; ties go to the lowest index (as the engine's argmax and the reference's). */
export function top1(logits: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/** One position: the KL divergence and both top-1 tokens. Non-finite engine logits are the caller's to refuse first. */
export function comparePosition(reference: ArrayLike<number>, engine: ArrayLike<number>): PositionAccuracy {
  return { kld: klDivergence(reference, engine), referenceTop1: top1(reference), engineTop1: top1(engine) };
}

/** The section's figures from the positions in sequence order. */
export function summarizeAccuracy(positions: readonly PositionAccuracy[]): AccuracySummary {
  if (positions.length === 0) throw new RangeError('Accuracy needs at least one position.');
  const klds = positions.map((p) => p.kld);
  const agree = positions.filter((p) => p.engineTop1 === p.referenceTop1).length;
  const first = positions.findIndex((p) => p.engineTop1 !== p.referenceTop1);
  return {
    positions: positions.length,
    kld_mean: klds.reduce((a, b) => a + b, 0) / klds.length,
    kld_p99: percentile(klds, 99),
    top1_agreement: agree / positions.length,
    first_disagreement: first < 0 ? null : first,
  };
}

/** Longest sequence the pass feeds (positions compared) and the shortest it cuts a large model to. */
export const MAX_POSITIONS = 64;
export const MIN_POSITIONS = 8;
/** The reference's work budget per pass: 2 FLOPs per parameter per position (≈ 8 s of f64-accumulated JS at ~1 GFLOP/s). */
export const REFERENCE_FLOP_BUDGET = 8e9;
/** `auto` measures models under this many parameters; above it, on request (`on`). */
export const AUTO_MAX_PARAMETERS = 100e6;
/** The reference holds every weight in f32: above this many bytes it is not built (a page's heap would not hold it). */
export const MAX_REFERENCE_BYTES = 2 ** 31;

/**
 * Positions of the pass for a model of `parameters` with a KV cache of `maxSeq`: the reference must
 * run every position (its KV cache), so the sequence itself is what is bounded —
 * clamp(⌊REFERENCE_FLOP_BUDGET / (2 · parameters)⌋, MIN_POSITIONS, MAX_POSITIONS), and no longer than the cache.
 */
export function accuracyPositions(parameters: number, maxSeq: number): number {
  const byBudget = Math.floor(REFERENCE_FLOP_BUDGET / (2 * Math.max(1, parameters)));
  return Math.max(1, Math.min(maxSeq, Math.max(MIN_POSITIONS, Math.min(MAX_POSITIONS, byBudget))));
}

/** The default seed of the accuracy sequence. */
export const ACCURACY_SEED = 7;

/**
 * The teacher-forced sequence: BOS, then `length − 1` ids drawn uniformly (mulberry32 from `seed`)
 * from the ordinary tokens — those `isOrdinary` accepts (a file's NORMAL token type), never BOS or
 * EOS — so every engine on the same model reads the same ids.
 */
export function accuracySequence(
  length: number,
  seed: number,
  vocab: { vocabSize: number; bosId: number; eosId: number },
  isOrdinary: (id: number) => boolean = () => true,
): number[] {
  const pool: number[] = [];
  for (let id = 0; id < vocab.vocabSize; id++) if (id !== vocab.bosId && id !== vocab.eosId && isOrdinary(id)) pool.push(id);
  if (pool.length === 0) throw new RangeError('The vocabulary has no ordinary token to draw.');
  const random = mulberry32(seed);
  return [vocab.bosId, ...Array.from({ length: length - 1 }, () => pool[Math.floor(random() * pool.length)])];
}

const LINEAR_BODY_NAMES = new Set(Object.keys(LINEAR_BODIES));

/**
 * The activation precision of every linear dispatch among `labels` (kernel.ts's `owner:variant:entry{constants}`,
 * a linear variant being `<body>+<format>` of variant-table.ts's LINEAR_BODIES, or `<body>+<a>+<b>`
 * for two matrices in one dispatch, which counts for each format), counted per format and precision:
 * linear_q8dot* round X to int8, matmul_tiled_f16 and every kernel on f16 weights (linear_io.wgsl's
 * X_F16) to f16, the rest multiply in f32.
 */
export function linearArithmetic(labels: readonly string[]): LinearArithmetic[] {
  const counts = new Map<string, LinearArithmetic>();
  for (const label of labels) {
    const variant = label.split(':')[1] ?? '';
    const [body, ...formats] = variant.split('+');
    if (!formats.length || !LINEAR_BODY_NAMES.has(body)) continue;
    for (const format of formats) {
      const precision: ActivationPrecision = body.startsWith('linear_q8dot') ? 'int8' : body === 'matmul_tiled_f16' || format === 'f16' ? 'f16' : 'f32';
      const key = `${format}/${precision}`;
      const entry = counts.get(key) ?? { format, precision, linears: 0 };
      entry.linears++;
      counts.set(key, entry);
    }
  }
  return [...counts.values()].sort((a, b) => (a.format === b.format ? a.precision.localeCompare(b.precision) : a.format.localeCompare(b.format)));
}

/** Whether a run measures accuracy: `auto` (the default) on models under AUTO_MAX_PARAMETERS, `on` on any real model, `off` never. */
export type AccuracyMode = 'auto' | 'on' | 'off';

/**
 * Why a run of this model does not measure accuracy, or null when it does. Synthetic weights have
 * no file for the reference to read (and make no sense to compare); `auto` skips large models,
 * whose reference would cost tens of seconds; no mode builds a reference too large for memory.
 */
export function accuracySkipReason(model: { synthetic: boolean; parameters: number }, mode: AccuracyMode): string | null {
  if (mode === 'off') return 'turned off for this run (accuracy: off)';
  if (model.synthetic) return 'synthetic weights: speed only (the CPU reference needs the weights of a model file)';
  const millions = (model.parameters / 1e6).toFixed(0);
  const referenceBytes = 4 * model.parameters;
  if (referenceBytes > MAX_REFERENCE_BYTES) {
    return `the CPU reference would hold ${(referenceBytes / 2 ** 30).toFixed(1)} GiB of f32 weights for ${millions} M parameters (at most ${MAX_REFERENCE_BYTES / 2 ** 30} GiB)`;
  }
  if (mode === 'auto' && model.parameters >= AUTO_MAX_PARAMETERS) {
    return `${millions} M parameters: measured by default below ${AUTO_MAX_PARAMETERS / 1e6} M; ask for it with --accuracy on (a job's accuracy: 'on')`;
  }
  return null;
}

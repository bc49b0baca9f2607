/**
 * The accuracy pass: the fixed sequence (accuracy.ts) teacher-forced through the engine one
 * single-token decode step per position — the kernels greedy decoding runs — reading each step's
 * logits back, and through the CPU reference (model/reference.ts: the same weights dequantized to
 * f32, sums in float64) position by position — in a page in a worker, beside the engine's steps
 * (reference-thread.ts); then each position's KL divergence and top-1 tokens.
 * It writes the engine's KV cache slot 0, so it runs after the timed phases.
 */
import { TokenscopeError } from '../errors.ts';
import { parameterCount } from '../model/catalog.ts';
import type { Engine } from '../model/engine.ts';
import { nonFinite } from '../model/generate.ts';
import { metaInts } from '../model/gguf/metadata.ts';
import type { OpenModel } from '../model/open.ts';
import type { Quantization } from '../model/recipes.ts';
import { TokenType } from '../model/tokenizer/index.ts';
import {
  ACCURACY_SEED,
  accuracyPositions,
  accuracySequence,
  comparePosition,
  linearArithmetic,
  summarizeAccuracy,
  type AccuracySummary,
  type LinearArithmetic,
  type PositionAccuracy,
  type SecondReference,
} from './accuracy.ts';
import { throwIfCancelled } from './protocol.ts';
import { startReference, type ReferenceThread } from './reference-thread.ts';

export interface AccuracyMeasurement extends AccuracySummary {
  /** The reference's arithmetic: weights dequantized to f32, every sum in float64 (model/reference.ts). */
  reference: 'cpu-f32';
  /** The teacher-forced sequence: BOS then seeded ordinary token ids. */
  sequence: { seed: number; token_ids: number[] };
  /** Per-position KL(reference ‖ engine), nats, in sequence order (left out of a trimmed link). */
  kld_per_position?: number[];
  /** Which arithmetic the engine ran: each decode step's linear layers by weight format, and the KV cache's element type. */
  arithmetic: { linears: LinearArithmetic[]; kv_cache: 'f16' | 'f32' };
  /**
   * What the pass cost: all of it, reading and dequantizing the reference's weights, the
   * reference's forward passes, the engine's steps and readbacks. In a worker the reference's
   * passes overlap the engine's steps, so wall_ms may be less than the parts' sum.
   */
  wall_ms: number;
  reference_load_ms: number;
  reference_ms: number;
  engine_ms: number;
  /** Where the reference ran: a page's worker, or the calling thread (Node). Absent in results from before it could be a worker. */
  reference_thread?: ReferenceThread;
  /** `--agreement llama.cpp`: the same ids through a second implementation, beside the f32 reference. */
  agreement?: AgreementMeasurement;
}

/** A second reference's figures: it against the f32 reference, and the engine against it. */
export interface AgreementMeasurement {
  with: SecondReference['name'];
  version: string;
  settings: string;
  /** KL(f32 reference ‖ it) and top-1 agreement: what its own arithmetic costs. */
  against_reference: AccuracySummary;
  /** KL(it ‖ engine) and top-1 agreement: how far the engine lies from it. */
  engine_against_it: AccuracySummary;
  wall_ms: number;
}

/** The section where nothing was measured, and why (synthetic weights, a model too large for `auto`, …). */
export interface AccuracySkipped {
  skipped: string;
}

export type AccuracyResult = AccuracyMeasurement | AccuracySkipped;

export interface AccuracyOptions {
  /** Positions to compare (default: accuracyPositions of the model's size and the engine's cache). */
  positions?: number;
  seed?: number;
  /** How the engine re-encoded an F32/F16 file on load (the reference rounds its matrices the same way). */
  quant?: Quantization;
  signal?: AbortSignal;
  onProgress?: (step: string, fraction: number) => void;
  /** A second reference to run the same ids through (`--agreement llama.cpp`); disposed by the caller. */
  second?: SecondReference;
  /** Where the CPU reference runs (default: a worker in a page, else this thread). */
  referenceThread?: ReferenceThread;
  /** Tests: the worker to run the reference in. */
  createWorker?: () => Worker;
}

/** Ordinary tokens of the file's vocabulary: its NORMAL token type where it lists types, else every id. */
function ordinaryTokens(model: OpenModel): (id: number) => boolean {
  const types = metaInts(model.gguf.metadata, 'tokenizer.ggml.token_type');
  return types ? (id) => id < types.length && types[id] === TokenType.NORMAL : () => true;
}

export async function measureAccuracy(engine: Engine, model: OpenModel, opts: AccuracyOptions = {}): Promise<AccuracyMeasurement> {
  const t0 = performance.now();
  const config = model.config;
  const length = opts.positions ?? accuracyPositions(parameterCount(config), engine.shape.maxSeq);
  if (length < 1 || length > engine.shape.maxSeq) {
    throw new TokenscopeError(
      'bad-input',
      `The accuracy pass cannot run ${length} positions in a KV cache of ${engine.shape.maxSeq}.`,
      'Ask for fewer positions.',
    );
  }
  const seed = opts.seed ?? ACCURACY_SEED;
  const ids = accuracySequence(length, seed, config, ordinaryTokens(model));
  opts.onProgress?.('reading the reference weights', 0);
  const reference = await startReference({ model, ids, quant: opts.quant, thread: opts.referenceThread, signal: opts.signal, createWorker: opts.createWorker });
  let engineMs = 0;
  const positions: PositionAccuracy[] = [];
  // Kept only for a second reference: positions × vocabulary floats, twice.
  const kept: { reference: Float32Array; engine: Float32Array }[] = [];
  try {
    for (let pos = 0; pos < length; pos++) {
      throwIfCancelled(opts.signal);
      const te = performance.now();
      await engine.submit({ rows: [{ slot: 0, pos }], tokens: [ids[pos]], sample: [0] });
      const logits = await engine.readLogits(0);
      engineMs += performance.now() - te;
      const bad = logits.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) throw nonFinite(`in the logits of accuracy position ${pos} (token ${bad} is ${logits[bad]})`);
      const expected = await reference.logits(pos);
      positions.push(comparePosition(expected, logits));
      if (opts.second) kept.push({ reference: Float32Array.from(expected), engine: Float32Array.from(logits) });
      opts.onProgress?.('comparing logits with the CPU reference', (pos + 1) / length);
    }
  } finally {
    reference.dispose();
  }
  // The decode programs the steps ran (cached: built above); their linears are the same at every context class.
  const labels: string[] = [];
  for (const keys of new Set([1, length])) {
    const program = await engine.program(1, 1, 'distinct', 'greedy', keys, true);
    labels.push(...[...program.body, ...program.head].map((d) => d.label));
  }
  const agreement = opts.second ? await measureAgreement(opts.second, ids, kept, config.vocabSize, opts) : undefined;
  return {
    reference: 'cpu-f32',
    sequence: { seed, token_ids: ids },
    ...summarizeAccuracy(positions),
    kld_per_position: positions.map((p) => p.kld),
    arithmetic: { linears: linearArithmetic([...new Set(labels)]), kv_cache: engine.memory.kvElement },
    wall_ms: performance.now() - t0,
    reference_load_ms: reference.loadMs,
    reference_ms: reference.forwardMs,
    engine_ms: engineMs,
    reference_thread: reference.thread,
    ...(agreement ? { agreement } : {}),
  };
}

async function measureAgreement(
  second: SecondReference,
  ids: readonly number[],
  kept: readonly { reference: Float32Array; engine: Float32Array }[],
  vocabSize: number,
  opts: AccuracyOptions,
): Promise<AgreementMeasurement> {
  const t0 = performance.now();
  opts.onProgress?.(`running the same ids through ${second.name}`, 1);
  throwIfCancelled(opts.signal);
  const theirs = await second.logits(ids, vocabSize);
  if (theirs.length !== ids.length)
    throw new TokenscopeError('io', `${second.name} returned ${theirs.length} positions for ${ids.length} ids.`, 'Drop --agreement.');
  return {
    with: second.name,
    version: second.version,
    settings: second.settings,
    against_reference: summarizeAccuracy(kept.map((k, pos) => comparePosition(k.reference, theirs[pos]))),
    engine_against_it: summarizeAccuracy(kept.map((k, pos) => comparePosition(theirs[pos], k.engine))),
    wall_ms: performance.now() - t0,
  };
}

/**
 * The scheduler's ServingEngine on the real GPU engine: each sequence holds a KV-cache slot; a
 * step's decodes and prefill chunks become one batched step of rows (slot, pos), one submission,
 * and one readback of the sampled ids. Batched decode turns matrix-vector into a small matmul —
 * the kernels' cost models say so, and `stepCosts` records it per step for the roofline.
 */
import { TokenscopeError } from '../errors.ts';
import { explainFailure } from '../gpu/device.ts';
import type { Cost } from '../kernels/kernel.ts';
import type { RowDesc } from '../kernels/rows.ts';
import type { Engine, StepRequest } from '../model/engine.ts';
import { nonFinite } from '../model/generate.ts';
import type { Clock, ServingEngine, StepPlan } from './scheduler.ts';

/** What one step did on the GPU, for the batching roofline. */
export interface StepWork {
  decodeRows: number;
  prefillRows: number;
  cost: Cost;
  /** Host ms from submit to the ids on the host. */
  ms: number;
}

export class GpuServingEngine implements ServingEngine {
  readonly maxBatch: number;
  private readonly slotOf = new Map<number, number>();
  private readonly free: number[];
  /** Every step run so far. */
  readonly work: StepWork[] = [];

  constructor(
    private readonly engine: Engine,
    maxBatch = engine.shape.slots,
  ) {
    if (maxBatch > engine.shape.slots) throw new RangeError(`maxBatch ${maxBatch} exceeds the engine's ${engine.shape.slots} KV slots.`);
    this.maxBatch = maxBatch;
    this.free = Array.from({ length: maxBatch }, (_, i) => maxBatch - 1 - i);
  }

  admit(seq: number, contextTokens: number): void {
    if (contextTokens - 1 > this.engine.shape.maxSeq) {
      throw new TokenscopeError(
        'bad-input',
        `Request ${seq} needs ${contextTokens - 1} positions; the context holds ${this.engine.shape.maxSeq}.`,
        'Use shorter prompts/outputs or a longer context.',
      );
    }
    const slot = this.free.pop();
    if (slot === undefined) throw new TokenscopeError('bad-input', `No free KV-cache slot for request ${seq}.`, 'Raise --max-batch.');
    this.slotOf.set(seq, slot);
  }

  release(seq: number): void {
    const slot = this.slotOf.get(seq);
    if (slot === undefined) return;
    this.slotOf.delete(seq);
    this.free.push(slot);
  }

  /** The step as engine rows: decodes first, then each prefill chunk's tokens; sampled rows in that order. */
  toRequest(plan: StepPlan): { req: StepRequest; sampledSeqs: number[] } {
    const rows: RowDesc[] = [];
    const tokens: number[] = [];
    const sample: number[] = [];
    const sampledSeqs: number[] = [];
    const slot = (seq: number) => {
      const s = this.slotOf.get(seq);
      if (s === undefined) throw new TokenscopeError('bad-input', `Sequence ${seq} was not admitted.`);
      return s;
    };
    for (const d of plan.decode) {
      sample.push(rows.length);
      sampledSeqs.push(d.seq);
      rows.push({ slot: slot(d.seq), pos: d.pos });
      tokens.push(d.token);
    }
    for (const p of plan.prefill) {
      p.tokens.forEach((t, i) => {
        rows.push({ slot: slot(p.seq), pos: p.pos + i });
        tokens.push(t);
      });
      if (p.last) {
        sample.push(rows.length - 1);
        sampledSeqs.push(p.seq);
      }
    }
    // Padded to the engine's row buckets: a few programs, all built in the warm-up, serve every step.
    return { req: { rows, tokens, sample, pad: true }, sampledSeqs };
  }

  async step(plan: StepPlan): Promise<Map<number, number>> {
    const { req, sampledSeqs } = this.toRequest(plan);
    if (req.rows.length > this.engine.shape.maxRows) {
      throw new TokenscopeError(
        'bad-input',
        `A step of ${req.rows.length} tokens exceeds the engine's ${this.engine.shape.maxRows} rows.`,
        'Lower --max-tokens-per-step.',
      );
    }
    let outcome;
    try {
      outcome = await this.engine.submit(req, { phase: 'serve' });
    } catch (e) {
      throw await explainFailure(this.engine.ctx, e);
    }
    // The GPU argmax finds no maximum among NaN logits and returns its "none" id.
    const bad = outcome.tokens.find((t) => !(t < this.engine.config.vocabSize));
    if (bad !== undefined) throw nonFinite(`in the logits of a serving step (no token could be chosen)`);
    const { total } = this.engine.stepCost(req);
    this.work.push({ decodeRows: plan.decode.length, prefillRows: req.rows.length - plan.decode.length, cost: total, ms: outcome.tDone - outcome.tSubmit });
    return new Map(sampledSeqs.map((seq, j) => [seq, outcome.tokens[j]]));
  }
}

/** The host clock (ms) the scheduler runs on. */
export const realClock: Clock = {
  now: () => performance.now(),
  sleepUntil: (t: number) => new Promise((ok) => setTimeout(ok, Math.max(0, t - performance.now()))),
};

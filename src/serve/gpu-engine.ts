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
import type { Engine, KvBlockCopy, PrefixPool, StepRequest } from '../model/engine.ts';
import { nonFinite } from '../model/generate.ts';
import { BLOCK_TOKENS, blockKey, PrefixCache, ROOT_KEY, type CachedBlock } from './prefix-cache.ts';
import type { Clock, ServingEngine, StepPlan } from './scheduler.ts';

/** What one step did on the GPU, for the batching roofline. */
export interface StepWork {
  decodeRows: number;
  prefillRows: number;
  cost: Cost;
  /** Host ms from submit to the ids on the host. */
  ms: number;
  /** Prefix-cache blocks copied in the step: pool → slot (hits) and slot → pool (new blocks). */
  blocksToSlot: number;
  blocksToPool: number;
}

/** A sequence's KV slot and what the prefix cache knows of it. */
interface SeqState {
  slot: number;
  /** The token whose K and V are at each position of the slot (so far). */
  written: number[];
  /** Blocks it hit whose copy into its slot is not recorded yet (referenced until it is). */
  pending: CachedBlock[];
  /** Full blocks of `written` offered to the cache so far, and the key of the last one. */
  offered: number;
  parent: string;
}

/** The prefix cache as a run reports it. */
export interface PrefixCacheUse {
  /** Blocks this run's cache holds at most, and the pool's bytes on the device (K and V, every layer). */
  capacity_blocks: number;
  pool_bytes: number;
  /** Bytes of one block. */
  block_bytes: number;
  /** Blocks cached at the end of the run, and their bytes. */
  blocks: number;
  bytes: number;
  inserted: number;
  evictions: number;
  /** New blocks not cached because every block was in use. */
  refused: number;
  /** Blocks copied pool → slot (hits) and slot → pool (new blocks), and their bytes. */
  blocks_copied_in: number;
  blocks_copied_out: number;
  copy_bytes: number;
}

export class GpuServingEngine implements ServingEngine {
  readonly maxBatch: number;
  private readonly seqs = new Map<number, SeqState>();
  private readonly free: number[];
  /** Every step run so far. */
  readonly work: StepWork[] = [];
  /** The prefix cache's index (null with prefix caching off); its blocks live in `pool`. */
  readonly cache: PrefixCache | null;

  /**
   * Serve on `engine` with at most `maxBatch` sequences. With a `pool` (Engine.prefixPool), prefix
   * caching is on: a fresh, empty index over the pool's blocks (each run starts cold).
   */
  constructor(
    private readonly engine: Engine,
    maxBatch = engine.shape.slots,
    private readonly pool: PrefixPool | null = null,
    /** Blocks of the pool this run's cache uses (the engine's pool may be larger, kept from an earlier run). */
    blocks = pool?.blocks ?? 0,
  ) {
    if (maxBatch > engine.shape.slots) throw new RangeError(`maxBatch ${maxBatch} exceeds the engine's ${engine.shape.slots} KV slots.`);
    if (pool && pool.blockTokens !== BLOCK_TOKENS) throw new RangeError(`The prefix pool's blocks hold ${pool.blockTokens} tokens, not ${BLOCK_TOKENS}.`);
    this.maxBatch = maxBatch;
    this.free = Array.from({ length: maxBatch }, (_, i) => maxBatch - 1 - i);
    if (pool && !(blocks >= 1 && blocks <= pool.blocks)) throw new RangeError(`A cache of ${blocks} blocks does not fit a pool of ${pool.blocks}.`);
    this.cache = pool ? new PrefixCache(blocks) : null;
  }

  /**
   * With prefix caching: a pool of `blocks` blocks (default: as many positions as `maxBatch` slots
   * hold), allocated on the engine (or reused) and checked against the device.
   */
  static async withPrefixCache(engine: Engine, maxBatch = engine.shape.slots, blocks?: number): Promise<GpuServingEngine> {
    const n = blocks ?? Math.max(1, Math.floor((maxBatch * engine.shape.maxSeq) / BLOCK_TOKENS));
    return new GpuServingEngine(engine, maxBatch, await engine.prefixPool(n, BLOCK_TOKENS), n);
  }

  /** What the prefix cache holds and did; null with it off. */
  prefixCacheUse(): PrefixCacheUse | null {
    if (!this.cache || !this.pool) return null;
    const stats = this.cache.stats;
    const copiedIn = this.work.reduce((n, w) => n + w.blocksToSlot, 0);
    const copiedOut = this.work.reduce((n, w) => n + w.blocksToPool, 0);
    return {
      capacity_blocks: this.cache.capacity,
      // The device bytes the pool holds (an earlier run's larger pool is kept and reused).
      pool_bytes: this.pool.bytes,
      block_bytes: this.pool.blockBytes,
      blocks: stats.blocks,
      bytes: stats.blocks * this.pool.blockBytes,
      inserted: stats.inserted,
      evictions: stats.evictions,
      refused: stats.refused,
      blocks_copied_in: copiedIn,
      blocks_copied_out: copiedOut,
      copy_bytes: (copiedIn + copiedOut) * this.pool.blockBytes,
    };
  }

  /**
   * Claim a slot; with prefix caching, look the prompt up: the cached full blocks it starts with
   * (leaving at least its last token to prefill, whose logits give the first output token) are
   * referenced and copied into the slot with the sequence's first prefill chunk. Returns the prompt
   * tokens cached (the scheduler prefills from there).
   */
  admit(seq: number, contextTokens: number, prompt?: readonly number[]): number {
    if (contextTokens - 1 > this.engine.shape.maxSeq) {
      throw new TokenscopeError(
        'bad-input',
        `Request ${seq} needs ${contextTokens - 1} positions; the context holds ${this.engine.shape.maxSeq}.`,
        'Use shorter prompts/outputs or a longer context.',
      );
    }
    const slot = this.free.pop();
    if (slot === undefined) throw new TokenscopeError('bad-input', `No free KV-cache slot for request ${seq}.`, 'Raise --max-batch.');
    const state: SeqState = { slot, written: [], pending: [], offered: 0, parent: ROOT_KEY };
    this.seqs.set(seq, state);
    if (!this.cache || !prompt || prompt.length < 2) return 0;
    const hit = this.cache.match(prompt, Math.floor((prompt.length - 1) / BLOCK_TOKENS));
    this.cache.acquire(hit);
    state.pending = hit;
    state.offered = hit.length;
    state.parent = hit.length ? hit[hit.length - 1].key : ROOT_KEY;
    state.written = prompt.slice(0, hit.length * BLOCK_TOKENS);
    return hit.length * BLOCK_TOKENS;
  }

  release(seq: number): void {
    const state = this.seqs.get(seq);
    if (state === undefined) return;
    this.cache?.release(state.pending);
    this.seqs.delete(seq);
    this.free.push(state.slot);
  }

  private state(seq: number): SeqState {
    const s = this.seqs.get(seq);
    if (s === undefined) throw new TokenscopeError('bad-input', `Sequence ${seq} was not admitted.`);
    return s;
  }

  /**
   * The step's prefix-cache copies: hits of sequences prefilled in this step into their slots
   * (their references end: the copy is recorded before anything can overwrite the block), and
   * every full block the step completes (prompt or generated tokens) into the pool. The new blocks
   * are returned so a failed step can forget them.
   */
  private kvCopies(plan: StepPlan): { toSlot: KvBlockCopy[]; toPool: KvBlockCopy[]; fresh: CachedBlock[]; read: CachedBlock[] } {
    const toSlot: KvBlockCopy[] = [];
    const toPool: KvBlockCopy[] = [];
    const fresh: CachedBlock[] = [];
    const read: CachedBlock[] = [];
    const cache = this.cache;
    if (!cache) return { toSlot, toPool, fresh, read };
    for (const p of plan.prefill) {
      const s = this.state(p.seq);
      s.pending.forEach((b, i) => toSlot.push({ slot: s.slot, pos: i * BLOCK_TOKENS, index: b.index }));
      read.push(...s.pending);
      s.pending = [];
    }
    const touched = new Set<number>();
    for (const d of plan.decode) {
      this.state(d.seq).written[d.pos] = d.token;
      touched.add(d.seq);
    }
    for (const p of plan.prefill) {
      const s = this.state(p.seq);
      p.tokens.forEach((t, i) => (s.written[p.pos + i] = t));
      touched.add(p.seq);
    }
    for (const seq of touched) {
      const s = this.state(seq);
      for (;;) {
        const start = s.offered * BLOCK_TOKENS;
        const tokens = s.written.slice(start, start + BLOCK_TOKENS);
        if (tokens.length < BLOCK_TOKENS || tokens.some((t) => t === undefined)) break;
        const got = cache.insert(s.parent, tokens);
        if (got?.fresh) {
          toPool.push({ slot: s.slot, pos: start, index: got.block.index });
          fresh.push(got.block);
        }
        s.parent = got ? got.block.key : blockKey(s.parent, tokens);
        s.offered++;
      }
    }
    return { toSlot, toPool, fresh, read };
  }

  /** The step as engine rows: decodes first, then each prefill chunk's tokens; sampled rows in that order. */
  toRequest(plan: StepPlan): { req: StepRequest; sampledSeqs: number[] } {
    const rows: RowDesc[] = [];
    const tokens: number[] = [];
    const sample: number[] = [];
    const sampledSeqs: number[] = [];
    const slot = (seq: number) => this.state(seq).slot;
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
    const copies = this.kvCopies(plan);
    if (this.cache) req.kvCopies = copies;
    this.cache?.release(copies.read);
    let outcome;
    try {
      outcome = await this.engine.submit(req, { phase: 'serve' });
    } catch (e) {
      // Blocks this step was to fill hold nothing: forget them.
      for (const b of copies.fresh) this.cache?.drop(b);
      throw await explainFailure(this.engine.ctx, e);
    }
    // The GPU argmax finds no maximum among NaN logits and returns its "none" id.
    const bad = outcome.tokens.find((t) => !(t < this.engine.config.vocabSize));
    if (bad !== undefined) throw nonFinite(`in the logits of a serving step (no token could be chosen)`);
    const { total } = this.engine.stepCost(req);
    this.work.push({
      decodeRows: plan.decode.length,
      prefillRows: req.rows.length - plan.decode.length,
      cost: total,
      ms: outcome.tDone - outcome.tSubmit,
      blocksToSlot: copies.toSlot.length,
      blocksToPool: copies.toPool.length,
    });
    return new Map(sampledSeqs.map((seq, j) => [seq, outcome.tokens[j]]));
  }
}

/** The host clock (ms) the scheduler runs on. */
export const realClock: Clock = {
  now: () => performance.now(),
  sleepUntil: (t: number) => new Promise((ok) => setTimeout(ok, Math.max(0, t - performance.now()))),
};

/**
 * The WGSL engine: weights uploaded once; activations and KV cache allocated once for a context
 * size; a step of R rows recorded from a cached program into one submission; each generated
 * token read back as one 4-byte id. The same code runs in the page and in Node (Dawn).
 *
 * A step is described by its rows (slot, pos) — one mechanism for prefill, prefill chunks,
 * single-stream decode and batched decode (see kernels/rows.ts).
 *
 * Programs are cached in two bounded LRUs: bodies by (rows, layout), heads by (sampled rows,
 * sampler). Serving pads its steps to row buckets (buckets.ts, StepRequest.pad), so a few
 * programs — all built in its warm-up — serve every step; the latency run keeps exact sizes.
 */
import { TokenscopeError } from '../errors.ts';
import { readBuffer, storageBuffer, storageBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import type { GpuTimer } from '../gpu/timer.ts';
import type { RowLayout } from '../kernels/attention.ts';
import { encodeDispatches, releaseDispatches, type Dispatch } from '../kernels/kernel.ts';
import { rowTableBuffer, writeRowTable, type RowDesc } from '../kernels/rows.ts';
import { decodeAttentionClass, kvBytesPerElement } from '../kernels/select.ts';
import type { LinearShape } from '../kernels/linear-shapes.ts';
import type { ModelConfig } from './config.ts';
import type { SamplingParams } from '../kernels/sampling.ts';
import { bucketOf, buckets, LruCache } from './buckets.ts';
import {
  buildBody,
  buildHead,
  dispatchCount,
  weightPlanOf,
  type BodyProgram,
  type HeadProgram,
  type Sampler,
  type StepBuffers,
  type StepProgram,
} from './forward.ts';
import { costOfStep, type StepCost, type WeightPlan } from './step.ts';
import { ropeInvFreq } from './variants.ts';
import { destroyWeights, type GpuWeights } from './gpu-weights.ts';
import type { EngineShape, MemoryPlan } from './memory.ts';

export interface StepRequest {
  rows: readonly RowDesc[];
  /** Input token per row, or 'device': row 0 takes the token the previous step sampled (no host round trip). */
  tokens: readonly number[] | 'device';
  /** Rows whose next token is wanted (indices into rows), in order. */
  sample: readonly number[];
  /** How to pick them: greedy (argmax) when absent or at temperature 0, else drawn on the GPU. */
  sampling?: SamplingParams;
  /**
   * Run the step as its bucket (buckets.ts): the rows rounded up with padding rows that repeat the
   * last row exactly (token, slot, pos), the sampled rows rounded up by repeating the last one. A
   * few programs then serve every step size (serving); without it the step runs its exact size
   * (latency, where padding would be measured as the model's work).
   */
  pad?: boolean;
  /**
   * KV blocks copied inside the step's submission (prefix caching, see {@link Engine.prefixPool}):
   * `toSlot` from the pool to a sequence's slot before the step's dispatches (a cache hit), `toPool`
   * from a slot to the pool after them (a block the step completed).
   */
  kvCopies?: { toSlot: readonly KvBlockCopy[]; toPool: readonly KvBlockCopy[] };
}

/** One block of K and V (every layer) between positions pos… of `slot` and block `index` of the prefix pool. */
export interface KvBlockCopy {
  slot: number;
  pos: number;
  index: number;
}

/** The prefix cache's block pool: per layer a K and a V buffer of `blocks` × `blockTokens` positions. */
export interface PrefixPool {
  blocks: number;
  blockTokens: number;
  /** Bytes of one block, K and V of every layer. */
  blockBytes: number;
  /** Bytes the pool holds on the device (blocks × blockBytes). */
  bytes: number;
  k: GPUBuffer[];
  v: GPUBuffer[];
}

export interface StepTiming {
  /** Host clock (ms) when the step was submitted and when its token ids were back on the host. */
  tSubmit: number;
  tDone: number;
}

export interface StepOutcome extends StepTiming {
  /** Sampled token per `sample` row. */
  tokens: number[];
}

export interface TimingOptions {
  timer?: GpuTimer | null;
  /** Phase of the step's timed passes (e.g. "prefill", "decode"). */
  phase?: string;
  /** Which step of the phase (a prefill chunk's or a decode token's index), carried by its timer tags. */
  step?: number;
  /** One timed pass per dispatch (profile mode; perturbs timing). */
  perKernel?: boolean;
}

const READBACK_RING = 4;

/** Programs kept per engine: bodies (per rows and layout) and heads (per sampled rows and sampler). */
export interface ProgramCapacity {
  bodies: number;
  heads: number;
}

/** Room for every bucket in both layouts and both samplers, and as many exact sizes besides. */
export function defaultCapacity(shape: EngineShape): ProgramCapacity {
  return { bodies: 4 * buckets(shape.maxRows).length, heads: 4 * buckets(headRowsOf(shape), 0).length };
}

export class Engine {
  private readonly bodies: LruCache<BodyProgram>;
  private readonly heads: LruCache<HeadProgram>;
  /** Programs the caches dropped, freed once no submit is between looking one up and submitting it. */
  private retired: (BodyProgram | HeadProgram)[] = [];
  private recording = 0;
  private readonly readback: GPUBuffer[];
  private readonly readbackBusy: (Promise<void> | null)[];
  private ring = 0;
  private destroyed = false;
  private pool: PrefixPool | null = null;
  /** The weights as step.ts's ops see them (formats and shapes, no buffers). */
  readonly plan: WeightPlan;

  private constructor(
    readonly ctx: GpuContext,
    readonly config: ModelConfig,
    readonly weights: GpuWeights,
    readonly shape: EngineShape,
    readonly memory: MemoryPlan,
    private readonly buffers: StepBuffers,
    capacity: ProgramCapacity,
    /** Tuned linear shapes by linearProblemKey (autotune.ts's tuneLinears); problems not here run linear-shapes.ts's static choice. */
    readonly tuned: Readonly<Record<string, LinearShape>>,
  ) {
    const retire = (p: BodyProgram | HeadProgram) => {
      this.retired.push(p);
      this.freeRetired();
    };
    this.bodies = new LruCache<BodyProgram>(capacity.bodies, retire);
    this.heads = new LruCache<HeadProgram>(capacity.heads, retire);
    this.readback = Array.from({ length: READBACK_RING }, (_, i) =>
      ctx.device.createBuffer({
        label: `Engine.readback${i}`,
        size: Math.max(16, headRowsOf(shape) * 4),
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      }),
    );
    this.readbackBusy = this.readback.map(() => null);
    this.plan = weightPlanOf(weights);
  }

  /**
   * Allocate activations and the KV cache for `weights` (already on the GPU). The caller has
   * checked `plan` against the device before uploading anything (see load.ts).
   */
  static create(
    ctx: GpuContext,
    config: ModelConfig,
    weights: GpuWeights,
    shape: EngineShape,
    plan: MemoryPlan,
    tuned: Readonly<Record<string, LinearShape>> = {},
    capacity = defaultCapacity(shape),
  ): Engine {
    const qDim = config.nHeads * config.headDim;
    const kvDim = config.nKvHeads * config.headDim;
    const R = shape.maxRows;
    const H = headRowsOf(shape);
    const d = ctx.device;
    // The decode partials were sized with the plan (decodeScratchSize on this device), once for the largest step.
    const scratch = plan.attentionScratch;
    // 4-byte elements: f32 activations, u32 token ids.
    const f32 = (label: string, n: number) => storageBuffer(d, `Engine.${label}`, n * 4);
    // The cache's element type was decided with the plan (kvElement of the device's capabilities).
    const kvLayerBytes = shape.slots * shape.maxSeq * kvDim * kvBytesPerElement(plan.kvElement);
    // One token buffer in and out (see StepBuffers.tokensOut): room for the larger of the two.
    const tokensIn = f32('tokens', Math.max(R, H));
    const buffers: StepBuffers = {
      tokensIn,
      rows: rowTableBuffer(d, 'Engine.rows', R),
      x: f32('x', R * config.dim),
      qkv: f32('qkv', R * (qDim + 2 * kvDim)),
      q: f32('q', R * qDim),
      att: f32('att', R * qDim),
      hb: f32('hb', R * config.hiddenDim),
      hb2: f32('hb2', R * config.hiddenDim),
      proj: config.postNorms ? f32('proj', R * config.dim) : undefined,
      projNormed: config.postNorms ? f32('projNormed', R * config.dim) : undefined,
      kCache: Array.from({ length: config.nLayers }, (_, l) => storageBuffer(d, `Engine.kCache${l}`, kvLayerBytes)),
      vCache: Array.from({ length: config.nLayers }, (_, l) => storageBuffer(d, `Engine.vCache${l}`, kvLayerBytes)),
      kvElement: plan.kvElement,
      invFreq: Array.from({ length: config.nLayers }, (_, l) => storageBufferWith(d, `Engine.invFreq${l}`, ropeInvFreq(config, l))),
      headIn: f32('headIn', H * config.dim),
      logits: f32('logits', H * config.vocabSize),
      tokensOut: tokensIn,
      // At least one element each: a step that never splits still binds them.
      attnScratch: { partAcc: f32('attnPartAcc', Math.max(scratch.partAcc, 16) / 4), partMl: f32('attnPartMl', Math.max(scratch.partMl, 16) / 4) },
    };
    return new Engine(ctx, config, weights, shape, plan, buffers, capacity, tuned);
  }

  /** Bytes of one layer's K (or V) for one position. */
  get kvPositionBytes(): number {
    return this.config.nKvHeads * this.config.headDim * kvBytesPerElement(this.memory.kvElement);
  }

  /**
   * The prefix cache's pool of `blocks` blocks of `blockTokens` positions: per layer one K and one V
   * buffer, apart from the KV cache (WebGPU copies only between distinct buffers). Allocated once
   * per engine and reused while a run asks for no more blocks; a larger pool replaces it. Refused
   * with a clear error when a buffer exceeds the device's maxBufferSize or the device is out of memory.
   */
  async prefixPool(blocks: number, blockTokens: number): Promise<PrefixPool> {
    this.checkAlive();
    if (!(Number.isInteger(blocks) && blocks >= 1)) throw new RangeError(`A prefix pool holds ≥ 1 block, not ${blocks}.`);
    if (this.pool && this.pool.blockTokens === blockTokens && this.pool.blocks >= blocks) return this.pool;
    const layerBytes = blocks * blockTokens * this.kvPositionBytes;
    const { device } = this.ctx;
    const max = device.limits.maxBufferSize;
    if (layerBytes > max) {
      throw new TokenscopeError(
        'limit-too-low',
        `A prefix cache of ${blocks} blocks needs ${layerBytes} bytes per layer buffer; this device allows at most ${max} per buffer.`,
        'Lower --max-batch or --context (the pool holds as many positions as the KV cache), or run with --prefix-cache off.',
      );
    }
    this.releasePool();
    device.pushErrorScope('out-of-memory');
    const make = (kind: string, l: number) =>
      device.createBuffer({ label: `Engine.prefix${kind}${l}`, size: layerBytes, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const k = Array.from({ length: this.config.nLayers }, (_, l) => make('K', l));
    const v = Array.from({ length: this.config.nLayers }, (_, l) => make('V', l));
    const oom = await device.popErrorScope();
    if (oom) {
      for (const b of [...k, ...v]) b.destroy();
      throw new TokenscopeError(
        'model-too-large',
        `The device has no room for a prefix cache of ${blocks} blocks (${2 * this.config.nLayers * layerBytes} bytes): ${oom.message}`,
        'Lower --max-batch or --context, or run with --prefix-cache off.',
      );
    }
    // Dawn zero-fills a buffer lazily, on its first use: without this, the first hits of a timed run
    // paid for clearing every pool buffer (20–34 ms steps on lavapipe against 2–9 ms without a cache).
    const encoder = device.createCommandEncoder({ label: 'Engine.prefixPool clear' });
    for (const b of [...k, ...v]) encoder.clearBuffer(b);
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    const blockBytes = 2 * this.config.nLayers * blockTokens * this.kvPositionBytes;
    this.pool = { blocks, blockTokens, blockBytes, bytes: blocks * blockBytes, k, v };
    return this.pool;
  }

  private releasePool(): void {
    if (!this.pool) return;
    for (const b of [...this.pool.k, ...this.pool.v]) b.destroy();
    this.pool = null;
  }

  /** Record a step's block copies in `encoder`, every layer's K and V. */
  private encodeKvCopies(encoder: GPUCommandEncoder, copies: readonly KvBlockCopy[], toPool: boolean): void {
    if (copies.length === 0) return;
    const pool = this.pool;
    if (!pool) throw new RangeError('KV block copies need a prefix pool (Engine.prefixPool).');
    const posBytes = this.kvPositionBytes;
    const blockSize = pool.blockTokens * posBytes;
    for (const c of copies) {
      if (c.index < 0 || c.index >= pool.blocks || c.slot < 0 || c.slot >= this.shape.slots || c.pos < 0 || c.pos + pool.blockTokens > this.shape.maxSeq)
        throw new RangeError(`KV block copy (slot ${c.slot}, pos ${c.pos}, block ${c.index}) is outside the cache or the pool.`);
    }
    // Runs of blocks adjacent in the slot and in the pool go as one copy per buffer (each copy has a fixed cost).
    const runs: { slot: number; pos: number; index: number; blocks: number }[] = [];
    for (const c of copies) {
      const last = runs[runs.length - 1];
      if (last && last.slot === c.slot && last.pos + last.blocks * pool.blockTokens === c.pos && last.index + last.blocks === c.index) last.blocks++;
      else runs.push({ ...c, blocks: 1 });
    }
    for (const c of runs) {
      const slotOffset = (c.slot * this.shape.maxSeq + c.pos) * posBytes;
      const poolOffset = c.index * blockSize;
      const size = c.blocks * blockSize;
      for (let l = 0; l < this.config.nLayers; l++) {
        for (const [cache, pooled] of [
          [this.buffers.kCache[l], pool.k[l]],
          [this.buffers.vCache[l], pool.v[l]],
        ]) {
          if (toPool) encoder.copyBufferToBuffer(cache, slotOffset, pooled, poolOffset, size);
          else encoder.copyBufferToBuffer(pooled, poolOffset, cache, slotOffset, size);
        }
      }
    }
  }

  /**
   * The cached program for a step of exactly R rows with `headRows` sampled rows whose rows attend
   * at most `keys` keys each (default: any number). Decode programs are built per context class
   * (select.ts's decodeAttentionClass: short contexts run attention as one pass), so `keys` only
   * picks between a few programs. A `direct` head reads the first headRows rows of x in place (the
   * step samples exactly rows 0…headRows−1: decode), so body and head record as one pass.
   */
  async program(R: number, headRows: number, layout: RowLayout, sampler: Sampler = 'greedy', keys = Infinity, direct = false): Promise<StepProgram> {
    if (R < 1 || R > this.shape.maxRows) throw new RangeError(`A step has 1…${this.shape.maxRows} rows, not ${R}.`);
    if (headRows > R || headRows > headRowsOf(this.shape))
      throw new RangeError(`Cannot sample ${headRows} of ${R} rows (at most ${headRowsOf(this.shape)} per step).`);
    // One row is a sequence of its own whatever the layout, so both share a program.
    const bodyLayout = R > 1 ? layout : 'distinct';
    const c = this.config;
    // Prefill chunks attend through the prefill kernel, whatever their context.
    const cls = bodyLayout === 'one-slot' ? Infinity : decodeAttentionClass(this.ctx.caps, c, R, keys);
    const [body, head] = await Promise.all([
      this.bodies.get(`${R}/${bodyLayout}/${cls}`, () =>
        buildBody(this.ctx, c, this.weights, this.plan, this.buffers, this.shape, { R, layout: bodyLayout, keys: cls }, this.tuned),
      ),
      this.headProgram(headRows, sampler, direct),
    ]);
    return { ...body, ...head };
  }

  private headProgram(headRows: number, sampler: Sampler, direct: boolean): Promise<HeadProgram> {
    return this.heads.get(`${headRows}/${sampler}/${direct ? 'x' : 'gathered'}`, () =>
      buildHead(this.ctx, this.config, this.weights, this.plan, this.buffers, headRows, sampler, direct, this.tuned),
    );
  }

  /** Programs held now: bodies and heads. */
  get programsHeld(): { bodies: number; heads: number } {
    return { bodies: this.bodies.size, heads: this.heads.size };
  }

  /**
   * Build every program a padded step (`pad: true`) of at most `maxRows` rows sampling at most
   * `maxSampled` of them can use, so none is built — and no pipeline compiled — inside a measured step.
   */
  async warmBuckets(
    maxRows: number,
    maxSampled: number,
    layouts: readonly RowLayout[] = ['one-slot', 'distinct', 'any'],
    sampler: Sampler = 'greedy',
  ): Promise<void> {
    const top = bucketOf(Math.min(maxRows, this.shape.maxRows), this.shape.maxRows);
    const headTop = bucketOf(Math.min(maxSampled, headRowsOf(this.shape)), headRowsOf(this.shape));
    for (const R of buckets(this.shape.maxRows).filter((b) => b <= top)) {
      // Decode steps have a program per context class (short contexts attend in one pass).
      const classes = [...new Set([decodeAttentionClass(this.ctx.caps, this.config, R, 1), Infinity])];
      for (const layout of layouts) {
        for (const keys of layout === 'one-slot' ? [Infinity] : classes) await this.program(R, 0, layout, sampler, keys);
      }
    }
    for (const h of buckets(headRowsOf(this.shape), 0).filter((b) => b <= headTop)) {
      for (const direct of [false, true]) await this.headProgram(h, sampler, direct);
    }
  }

  /** The rows, tokens and sampled rows a request runs as (its bucket when `pad`, see StepRequest). */
  private shapeOf(req: StepRequest): { rows: readonly RowDesc[]; tokens: readonly number[] | 'device'; sample: readonly number[] } {
    const R = req.rows.length;
    if (!req.pad || R === 0) return req;
    const rows = padTo(req.rows, bucketOf(R, this.shape.maxRows));
    const sample = req.sample.length > 0 ? padTo(req.sample, bucketOf(req.sample.length, headRowsOf(this.shape))) : req.sample;
    if (req.tokens === 'device') {
      if (rows.length > R) throw new RangeError(`'device' tokens feed one row; a padded step of ${R} rows needs its tokens.`);
      return { rows, tokens: 'device', sample };
    }
    return { rows, tokens: padTo(req.tokens, rows.length), sample };
  }

  /**
   * Dispatches one step records (counted from the recorded programs): a prefill chunk of
   * `prefillRows` rows of one slot, and a single-sequence decode step attending `decodeKeys` keys
   * (default: right after that chunk), each sampling one row.
   */
  async dispatchesPerStep(prefillRows: number, decodeKeys = prefillRows + 1): Promise<{ prefill: number; decode: number }> {
    const R = Math.max(1, Math.min(prefillRows, this.shape.maxRows));
    return {
      prefill: dispatchCount(await this.program(R, 1, 'one-slot')),
      decode: dispatchCount(await this.program(1, 1, 'distinct', 'greedy', decodeKeys, true)),
    };
  }

  /**
   * FLOPs and bytes of a step at its positions (step.ts's costOfStep over these weights): the work
   * the GPU does, padding rows included. Needs no program and no GPU.
   */
  stepCost(req: StepRequest): StepCost {
    const step = this.shapeOf(req);
    return costOfStep(this.config, this.plan, {
      rows: step.rows,
      headRows: step.sample.length,
      sampler: samplerOf(req),
      sampling: req.sampling,
      kv: this.memory.kvElement,
    });
  }

  /**
   * Submit one step (one submission) and resolve when its sampled token ids are on the host.
   * Steps may be submitted before earlier ones resolve: the queue orders them, so decode can run
   * ahead of the host by a step.
   */
  async submit(req: StepRequest, timing: TimingOptions = {}): Promise<StepOutcome> {
    this.checkAlive();
    for (const row of req.rows) {
      if (row.slot >= this.shape.slots || row.pos >= this.shape.maxSeq || row.slot < 0 || row.pos < 0) {
        throw new TokenscopeError(
          'bad-input',
          `Row (slot ${row.slot}, pos ${row.pos}) is outside the KV cache (${this.shape.slots} slots × ${this.shape.maxSeq} positions).`,
          'Use a shorter prompt/output or a longer context.',
        );
      }
    }
    if (req.tokens !== 'device' && req.tokens.length !== req.rows.length)
      throw new RangeError(`${req.rows.length} rows need ${req.rows.length} tokens, got ${req.tokens.length}.`);
    const sampled = req.sample.length;
    const { device } = this.ctx;
    const b = this.buffers;
    const slot = this.ring++ % READBACK_RING;
    // Padding rows repeat the last row: same token, slot and pos, so the same computation stores
    // the same K/V bytes where the last row stores them, and their outputs are never read (the
    // head gathers only real rows; its padding rows repeat the last sampled one).
    const step = this.shapeOf(req);
    let tSubmit: number;
    this.recording++;
    try {
      // Sampling rows 0…H−1 (decode), the head reads them in x, in the body's pass: no gather.
      const direct = step.sample.every((r, j) => r === j);
      const program = await this.program(step.rows.length, step.sample.length, rowLayoutOf(step.rows), samplerOf(req), maxKeys(step.rows), direct);
      await this.readbackBusy[slot];
      this.checkAlive();
      if (req.sampling) program.sampler?.write(req.sampling);
      writeRowTable(device.queue, b.rows, step.rows);
      if (step.tokens !== 'device') device.queue.writeBuffer(b.tokensIn, 0, Uint32Array.from(step.tokens));
      const phase = timing.phase ?? 'step';
      const encoder = device.createCommandEncoder({ label: phase });
      const record = (list: Dispatch[]) => encodeDispatches(encoder, list, { timer: timing.timer, phase, step: timing.step, perKernel: timing.perKernel });
      if (req.kvCopies) this.encodeKvCopies(encoder, req.kvCopies.toSlot, false);
      if (sampled > 0 && program.direct) record([...program.body, ...program.head]);
      else {
        record(program.body);
        if (sampled > 0) {
          const rowBytes = this.config.dim * 4;
          step.sample.forEach((r, j) => encoder.copyBufferToBuffer(b.x, r * rowBytes, b.headIn, j * rowBytes, rowBytes));
          record(program.head);
        }
      }
      if (req.kvCopies) this.encodeKvCopies(encoder, req.kvCopies.toPool, true);
      // The sampled tokens (which row 0's next step reads where they are: tokensOut is tokensIn) to the host.
      if (sampled > 0) encoder.copyBufferToBuffer(b.tokensOut, 0, this.readback[slot], 0, sampled * 4);
      const commands = encoder.finish();
      tSubmit = performance.now();
      device.queue.submit([commands]);
    } finally {
      this.recording--;
      this.freeRetired();
    }
    const staging = this.readback[slot];
    const done = (sampled > 0 ? staging.mapAsync(GPUMapMode.READ, 0, sampled * 4) : device.queue.onSubmittedWorkDone()).then(() => {
      const tDone = performance.now();
      let tokens: number[] = [];
      if (sampled > 0) {
        tokens = Array.from(new Uint32Array(staging.getMappedRange(0, sampled * 4)));
        staging.unmap();
      }
      return { tokens, tSubmit, tDone };
    });
    this.readbackBusy[slot] = done.then(
      () => undefined,
      () => undefined,
    );
    try {
      return await done;
    } catch (cause) {
      this.checkAlive();
      throw cause;
    }
  }

  /** The logits of sampled row `j` of the last step that sampled (for tests and top-token views). */
  async readLogits(j = 0): Promise<Float32Array> {
    const bytes = this.config.vocabSize * 4;
    return new Float32Array(await readBuffer(this.ctx.device, this.buffers.logits, j * bytes, bytes));
  }

  /**
   * Free the programs the caches dropped — only while no submit is between looking up its program
   * and submitting it, so no dropped program is recorded after its buffers are gone. (Work already
   * submitted may still use them: WebGPU keeps a destroyed buffer alive for it.)
   */
  private freeRetired(): void {
    if (this.recording > 0 || this.retired.length === 0) return;
    for (const p of this.retired) releaseDispatches('body' in p ? p.body : p.head);
    this.retired = [];
  }

  private checkAlive(): void {
    if (this.destroyed) throw new TokenscopeError('bad-input', 'This engine was released.', 'Load the model again.');
    this.ctx.assertAlive();
  }

  /** Free every GPU buffer the engine and its weights hold. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.allSettled(this.readbackBusy);
    this.retired.push(...(await this.bodies.clear()), ...(await this.heads.clear()));
    this.freeRetired();
    const b = this.buffers;
    for (const buf of [
      b.tokensIn, // also tokensOut
      b.rows,
      b.x,
      b.qkv,
      b.q,
      b.att,
      b.hb,
      b.hb2,
      b.headIn,
      b.logits,
      b.attnScratch.partAcc,
      b.attnScratch.partMl,
      ...b.kCache,
      ...b.vCache,
      ...b.invFreq,
    ])
      buf.destroy();
    b.proj?.destroy();
    b.projNormed?.destroy();
    for (const r of this.readback) r.destroy();
    this.releasePool();
    destroyWeights(this.weights);
  }
}

/** `items` followed by copies of its last item, to `length` in all. */
function padTo<T>(items: readonly T[], length: number): T[] {
  return [...items, ...Array.from({ length: length - items.length }, () => items[items.length - 1])];
}

function samplerOf(req: StepRequest): Sampler {
  return req.sampling && req.sampling.temperature > 0 ? 'sample' : 'greedy';
}

/** Rows one step can sample: one per sequence slot. */
export function headRowsOf(shape: EngineShape): number {
  return Math.min(shape.slots, shape.maxRows);
}

/**
 * How a step's rows relate (attention.ts's RowLayout): 'one-slot' when several rows share one slot
 * (a prefill chunk: the tiled prefill attention), 'distinct' when every row is a sequence of its
 * own — a row that repeats an earlier one exactly (slot and position: a padding row) recomputes and
 * stores the same values, so it counts as that row — else 'any'.
 */
export function rowLayoutOf(rows: readonly RowDesc[]): RowLayout {
  if (rows.length > 1 && rows.every((r) => r.slot === rows[0].slot && r.pos === rows[0].pos)) return 'distinct';
  if (rows.every((r) => r.slot === rows[0].slot)) return rows.length > 1 ? 'one-slot' : 'distinct';
  const posOf = new Map<number, number>();
  for (const r of rows) {
    const seen = posOf.get(r.slot);
    if (seen !== undefined && seen !== r.pos) return 'any';
    posOf.set(r.slot, r.pos);
  }
  return 'distinct';
}

/** The most keys a row of the step attends (a row at position p attends p + 1). */
function maxKeys(rows: readonly RowDesc[]): number {
  return rows.reduce((most, r) => Math.max(most, r.pos + 1), 0);
}

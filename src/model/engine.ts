/**
 * The WGSL engine: weights uploaded once; activations and KV cache allocated once for a context
 * size; a step of R rows recorded from a cached program into one submission; each generated
 * token read back as one 4-byte id. The same code runs in the page and in Node (Dawn).
 *
 * A step is described by its rows (slot, pos) — one mechanism for prefill, prefill chunks,
 * single-stream decode and batched decode (see kernels/rows.ts).
 */
import { TokenscopeError } from '../errors.ts';
import { readBuffer, storageBuffer, storageBufferWith } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import type { GpuTimer } from '../gpu/timer.ts';
import type { RowLayout } from '../kernels/attention.ts';
import { addCost, encodeDispatches, releaseDispatches, totalCost, ZERO_COST, type Cost, type Dispatch, type KernelClass } from '../kernels/kernel.ts';
import { rowTableBuffer, writeRowTable, type RowDesc } from '../kernels/rows.ts';
import { kvBytesPerElement } from '../kernels/select.ts';
import type { ModelConfig } from './config.ts';
import type { SamplingParams } from '../kernels/sampling.ts';
import { buildStep, dispatchCount, type Sampler, type StepBuffers, type StepProgram } from './forward.ts';
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

export class Engine {
  private readonly programs = new Map<string, Promise<StepProgram>>();
  private readonly readback: GPUBuffer[];
  private readonly readbackBusy: (Promise<void> | null)[];
  private ring = 0;
  private destroyed = false;

  private constructor(
    readonly ctx: GpuContext,
    readonly config: ModelConfig,
    readonly weights: GpuWeights,
    readonly shape: EngineShape,
    readonly memory: MemoryPlan,
    private readonly buffers: StepBuffers,
  ) {
    this.readback = Array.from({ length: READBACK_RING }, (_, i) =>
      ctx.device.createBuffer({ label: `Engine.readback${i}`, size: Math.max(16, headRowsOf(shape) * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
    );
    this.readbackBusy = this.readback.map(() => null);
  }

  /**
   * Allocate activations and the KV cache for `weights` (already on the GPU). The caller has
   * checked `plan` against the device before uploading anything (see load.ts).
   */
  static create(ctx: GpuContext, config: ModelConfig, weights: GpuWeights, shape: EngineShape, plan: MemoryPlan): Engine {
    const qDim = config.nHeads * config.headDim;
    const kvDim = config.nKvHeads * config.headDim;
    const R = shape.maxRows;
    const H = headRowsOf(shape);
    const d = ctx.device;
    // 4-byte elements: f32 activations, u32 token ids.
    const f32 = (label: string, n: number) => storageBuffer(d, `Engine.${label}`, n * 4);
    // The cache's element type was decided with the plan (kvElement of the device's capabilities).
    const kvLayerBytes = shape.slots * shape.maxSeq * kvDim * kvBytesPerElement(plan.kvElement);
    const buffers: StepBuffers = {
      tokensIn: f32('tokensIn', R),
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
      tokensOut: f32('tokensOut', H),
    };
    return new Engine(ctx, config, weights, shape, plan, buffers);
  }

  /** The cached program for a step of R rows with `headRows` sampled rows. */
  program(R: number, headRows: number, layout: RowLayout, sampler: Sampler = 'greedy'): Promise<StepProgram> {
    if (R < 1 || R > this.shape.maxRows) throw new RangeError(`A step has 1…${this.shape.maxRows} rows, not ${R}.`);
    if (headRows > R || headRows > headRowsOf(this.shape)) throw new RangeError(`Cannot sample ${headRows} of ${R} rows (at most ${headRowsOf(this.shape)} per step).`);
    const key = `${R}/${headRows}/${layout}/${sampler}`;
    let p = this.programs.get(key);
    if (!p) {
      p = buildStep(this.ctx, this.config, this.weights, this.buffers, this.shape, R, headRows, layout, sampler);
      this.programs.set(key, p);
      p.catch(() => this.programs.delete(key));
    }
    return p;
  }

  /**
   * Dispatches one step records (counted from the recorded programs): a prefill chunk of
   * `prefillRows` rows of one slot and a single-sequence decode step, each sampling one row.
   */
  async dispatchesPerStep(prefillRows: number): Promise<{ prefill: number; decode: number }> {
    const R = Math.max(1, Math.min(prefillRows, this.shape.maxRows));
    return { prefill: dispatchCount(await this.program(R, 1, 'one-slot')), decode: dispatchCount(await this.program(1, 1, 'one-slot')) };
  }

  /** FLOPs and bytes of a step from the kernels' cost models, at the step's positions. */
  async stepCost(req: StepRequest): Promise<{ body: Cost; head: Cost; total: Cost; byKind: Partial<Record<KernelClass, Cost>> }> {
    const program = await this.program(req.rows.length, req.sample.length, layoutOf(req.rows), samplerOf(req));
    for (const a of program.attention) a.setRows(req.rows);
    const body = totalCost(program.body);
    const head = totalCost(program.head);
    const byKind: Partial<Record<KernelClass, Cost>> = {};
    for (const d of [...program.body, ...program.head]) byKind[d.kind] = addCost(byKind[d.kind] ?? ZERO_COST, d.cost);
    return { body, head, total: addCost(body, head), byKind };
  }

  /**
   * Submit one step (one submission) and resolve when its sampled token ids are on the host.
   * Steps may be submitted before earlier ones resolve: the queue orders them, so decode can run
   * ahead of the host by a step.
   */
  async submit(req: StepRequest, timing: TimingOptions = {}): Promise<StepOutcome> {
    this.checkAlive();
    const R = req.rows.length;
    for (const row of req.rows) {
      if (row.slot >= this.shape.slots || row.pos >= this.shape.maxSeq || row.slot < 0 || row.pos < 0) {
        throw new TokenscopeError('bad-input', `Row (slot ${row.slot}, pos ${row.pos}) is outside the KV cache (${this.shape.slots} slots × ${this.shape.maxSeq} positions).`, 'Use a shorter prompt/output or a longer context.');
      }
    }
    const program = await this.program(R, req.sample.length, layoutOf(req.rows), samplerOf(req));
    // Costs are not needed to run a step (stepCost sets them when asked), so nothing per token here.
    if (req.sampling) program.sampler?.write(req.sampling);
    const { device } = this.ctx;
    const b = this.buffers;
    const slot = this.ring++ % READBACK_RING;
    await this.readbackBusy[slot];

    writeRowTable(device.queue, b.rows, req.rows);
    if (req.tokens !== 'device') {
      if (req.tokens.length !== R) throw new RangeError(`${R} rows need ${R} tokens, got ${req.tokens.length}.`);
      device.queue.writeBuffer(b.tokensIn, 0, Uint32Array.from(req.tokens));
    }
    const encoder = device.createCommandEncoder({ label: timing.phase ?? 'step' });
    const phase = timing.phase ?? 'step';
    const record = (list: Dispatch[]) => encodeDispatches(encoder, list, { timer: timing.timer, phase, step: timing.step, perKernel: timing.perKernel });
    record(program.body);
    if (req.sample.length > 0) {
      const rowBytes = this.config.dim * 4;
      req.sample.forEach((r, j) => encoder.copyBufferToBuffer(b.x, r * rowBytes, b.headIn, j * rowBytes, rowBytes));
      record(program.head);
      // The sampled token of row 0 becomes the next step's input on the GPU.
      encoder.copyBufferToBuffer(b.tokensOut, 0, b.tokensIn, 0, 4);
      encoder.copyBufferToBuffer(b.tokensOut, 0, this.readback[slot], 0, req.sample.length * 4);
    }
    const commands = encoder.finish();
    const tSubmit = performance.now();
    device.queue.submit([commands]);
    const staging = this.readback[slot];
    const done = (req.sample.length > 0 ? staging.mapAsync(GPUMapMode.READ, 0, req.sample.length * 4) : device.queue.onSubmittedWorkDone()).then(() => {
      const tDone = performance.now();
      let tokens: number[] = [];
      if (req.sample.length > 0) {
        tokens = Array.from(new Uint32Array(staging.getMappedRange(0, req.sample.length * 4)));
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

  private checkAlive(): void {
    if (this.destroyed) throw new TokenscopeError('bad-input', 'This engine was released.', 'Load the model again.');
    this.ctx.assertAlive();
  }

  /** Free every GPU buffer the engine and its weights hold. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.allSettled(this.readbackBusy);
    for (const p of this.programs.values()) {
      const program = await p.catch(() => null);
      if (program) releaseDispatches([...program.body, ...program.head]);
    }
    this.programs.clear();
    const b = this.buffers;
    for (const buf of [b.tokensIn, b.rows, b.x, b.qkv, b.q, b.att, b.hb, b.hb2, b.headIn, b.logits, b.tokensOut, ...b.kCache, ...b.vCache, ...b.invFreq]) buf.destroy();
    b.proj?.destroy();
    b.projNormed?.destroy();
    for (const r of this.readback) r.destroy();
    destroyWeights(this.weights);
  }
}

function samplerOf(req: StepRequest): Sampler {
  return req.sampling && req.sampling.temperature > 0 ? 'sample' : 'greedy';
}

/** Rows one step can sample: one per sequence slot. */
export function headRowsOf(shape: EngineShape): number {
  return Math.min(shape.slots, shape.maxRows);
}

/** Rows that all belong to one slot can use the tiled prefill attention. */
export function layoutOf(rows: readonly RowDesc[]): RowLayout {
  return rows.every((r) => r.slot === rows[0].slot) ? 'one-slot' : 'any';
}

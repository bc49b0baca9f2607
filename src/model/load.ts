/**
 * From a model choice to a ready engine: plan the memory and refuse what cannot fit (before any
 * allocation), upload or synthesise the weights, allocate the engine, compile the pipelines of
 * the common step shapes — timing each cold-start stage apart.
 */
import { parameterCount } from './catalog.ts';
import { checkContext, configOf, plannedMatrices, type ModelChoice } from './choice.ts';
import { withErrorScopes } from '../gpu/buffers.ts';
import type { GpuContext } from '../gpu/device.ts';
import { tuneLinears, type LinearProblem, type TuneCache, type TuneReport } from '../kernels/autotune.ts';
import { decodeScratchSize } from '../kernels/attention.ts';
import { kvElement, type KvElement } from '../kernels/select.ts';
import { hasLinearPair } from '../kernels/variant-table.ts';
import { type LinearShape } from '../kernels/linear-shapes.ts';
import type { WeightTensor } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';
import { Engine } from './engine.ts';
import { loadGgufWeights, syntheticWeights, type GpuWeights } from './gpu-weights.ts';
import { checkFits, planMemory, type EngineShape, type MemoryPlan } from './memory.ts';

/** What a result says about the model it measured. */
export interface ModelInfo {
  id: string;
  name: string;
  architecture: string;
  parameters: number;
  /** Bytes of the weight matrices as the kernels read them (quantized data + scales). */
  weight_bytes: number;
  quantization: string;
  synthetic: boolean;
  /** "synthetic weights — speed only" or "real weights". */
  label: string;
  /** The KV cache's element type (kvElement in kernels/select.ts); absent in results written before f16 caches. */
  kv_cache?: KvElement;
  config: ModelConfig;
}

export interface KernelShapes {
  /** "autotuned" (timed now or read from the cache) or "static" (select.ts's defaults). */
  source: 'autotuned' | 'static';
  /** linearProblemKey → shape, for the problems tuned. */
  linear: Record<string, LinearShape>;
  note?: string;
}

export interface ColdStart {
  /** Parsing the file header (0 for presets). */
  parse_ms: number;
  /** Reading, converting and uploading (or generating) the weights. */
  upload_ms: number;
  /** Building the pipelines and bind groups of the common step shapes. */
  compile_ms: number;
  /** Timing the candidate shapes of the linear layers (0 when skipped; absent in older results). */
  autotune_ms?: number;
}

export interface LoadedModel {
  engine: Engine;
  /** The linear shapes in use, by problem (`kernel_shapes` in the result): tuned, or the static defaults with the reason. */
  kernelShapes: KernelShapes;
  info: ModelInfo;
  cold: ColdStart;
  plan: MemoryPlan;
}

export interface LoadOptions {
  shape: EngineShape;
  /** Refuse plans over this many bytes (WebGPU cannot tell how much memory the device has). */
  budgetBytes?: number;
  onProgress?: (step: string, fraction: number) => void;
  /** Step shapes to compile up front: [rows, sampled rows]. Default: decode and a full prefill chunk. */
  warmShapes?: [number, number][];
  parseMs?: number;
  /** Tune the linear layers' shapes on this device before compiling (cached per adapter and model shape). */
  autotune?: AutotuneOptions;
}

export interface AutotuneOptions {
  cache: TuneCache;
  /** Wall-time budget of the whole tuning (ms). Default 3000. */
  budgetMs?: number;
  /** Tune on CPU adapters too (default: skipped there, select.ts's static shapes run). */
  onCpu?: boolean;
  /** The shapes to try per step size, the default first (default: select.ts's linearShapes). */
  candidates?: (R: number) => LinearShape[];
}

/** A problem's identity when collecting them (the step size is added by tuneLinears). */
const problemKey = (p: LinearProblem) => `${p.format} ${p.rows}x${p.cols}`;

/** Every weight matrix in `weights`, found by shape (format, rows, cols, shards), whatever the structure holding them. */
function linearProblems(weights: unknown, out = new Map<string, LinearProblem>()): LinearProblem[] {
  if (weights && typeof weights === 'object') {
    const w = weights as Partial<WeightTensor>;
    if (typeof w.format === 'string' && typeof w.rows === 'number' && typeof w.cols === 'number' && Array.isArray(w.shards)) {
      const p = { format: w.format, rows: w.rows, cols: w.cols };
      out.set(problemKey(p), p);
    } else {
      for (const v of Object.values(weights))
        if (v && typeof v === 'object' && !ArrayBuffer.isView(v) && !(typeof GPUBuffer !== 'undefined' && v instanceof GPUBuffer)) linearProblems(v, out);
    }
  }
  return [...out.values()];
}

/**
 * Two matrices one dispatch reads (linear.ts's linearPair: Q4_K_M's Q|K and V) as the problem its
 * shape is planned for: the second's format over both matrices' rows (forward.ts looks it up so).
 */
function pairProblems(weights: GpuWeights): LinearProblem[] {
  return weights.layers.flatMap((L) => {
    if (L.qkv.length !== 2) return [];
    const [a, b] = L.qkv;
    return hasLinearPair(a.format, b.format) ? [{ format: b.format, rows: a.rows + b.rows, cols: b.cols }] : [];
  });
}

/** Tune the shapes of every linear problem of `weights` for the step sizes `Rs` (see tuneLinears). */
async function autotuneModel(ctx: GpuContext, weights: GpuWeights, Rs: number[], opts: AutotuneOptions): Promise<TuneReport> {
  if (ctx.caps.cpuLike && !opts.onCpu) {
    return { ms: 0, shapes: {}, skipped: "CPU adapter: tuning every layer would take tens of seconds; select.ts's static shapes run" };
  }
  const problems = new Map([...linearProblems(weights), ...pairProblems(weights)].map((p) => [problemKey(p), p]));
  return tuneLinears(ctx, opts.cache, [...problems.values()], Rs, opts.budgetMs ?? 3000, opts.candidates);
}

/**
 * The memory plan of `choice` at `shape`, refused with a typed error when it cannot fit this
 * device's limits or the budget: nothing is allocated, so jobs call it before measuring anything.
 */
export function checkModelFits(caps: GpuContext['caps'], choice: ModelChoice, shape: EngineShape, budgetBytes?: number): MemoryPlan {
  const config = configOf(choice);
  const plan = planMemory(config, plannedMatrices(choice), shape, kvElement(caps), decodeScratchSize(caps, config, shape.maxRows));
  checkFits(plan, caps, config.name, budgetBytes);
  checkContext(config, shape.maxSeq);
  return plan;
}

export async function loadModel(ctx: GpuContext, choice: ModelChoice, opts: LoadOptions): Promise<LoadedModel> {
  const config = configOf(choice);
  const plan = checkModelFits(ctx.caps, choice, opts.shape, opts.budgetBytes);
  const progress = opts.onProgress ?? (() => {});
  const t0 = performance.now();
  const weights: GpuWeights = await withErrorScopes(ctx.device, `Uploading ${config.name}`, () =>
    choice.kind === 'preset'
      ? syntheticWeights(ctx, config, choice.quant, choice.seed ?? 1, (f) => progress('generating weights on the GPU', f))
      : loadGgufWeights(ctx, choice.model, { quant: choice.quant, onProgress: (f) => progress('uploading weights', f) }),
  );
  await ctx.device.queue.onSubmittedWorkDone();
  const t1 = performance.now();
  const shapes = opts.warmShapes ?? [
    [1, 1],
    [Math.min(opts.shape.maxRows, 64), 1],
  ];
  let tuned: TuneReport = { ms: 0, shapes: {}, skipped: 'not requested' };
  if (opts.autotune) {
    progress('tuning kernel shapes', 0);
    tuned = await withErrorScopes(ctx.device, `Tuning ${config.name}`, () => autotuneModel(ctx, weights, [...new Set(shapes.map(([R]) => R))], opts.autotune!));
  }
  const engine = Engine.create(ctx, config, weights, opts.shape, plan, tuned.shapes);
  const t1t = performance.now();
  progress('compiling pipelines', 0);
  await withErrorScopes(ctx.device, `Compiling ${config.name}`, async () => {
    for (const [R, head] of shapes) await engine.program(R, head, 'one-slot');
  });
  const t2 = performance.now();
  const id = choice.kind === 'preset' ? choice.preset.id : choice.id;
  return {
    engine,
    plan,
    cold: { parse_ms: opts.parseMs ?? 0, upload_ms: t1 - t0, compile_ms: t2 - t1t, autotune_ms: tuned.ms },
    kernelShapes: tuned.skipped ? { source: 'static', linear: {}, note: tuned.skipped } : { source: 'autotuned', linear: tuned.shapes },
    info: {
      id,
      name: config.name,
      architecture: config.architecture,
      parameters: parameterCount(config),
      weight_bytes: weights.matrixBytes,
      quantization: weights.quantization,
      synthetic: weights.synthetic,
      label: weights.synthetic ? 'synthetic weights — speed only' : 'real weights',
      kv_cache: plan.kvElement,
      config,
    },
  };
}

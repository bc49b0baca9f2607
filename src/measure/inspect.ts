/**
 * What a GGUF is, from its header alone — before the weights are downloaded: the architecture,
 * the parameter count, each tensor type's share of the bytes, the memory the engine would need
 * against the device's limits, and the decode speed the measured read roof allows. Everything here
 * is a pure function of the header (plus the device's limits and roof, and the few bytes of
 * rope_freqs.weight, whose values a run checks too).
 */
import { describeError } from '../errors.ts';
import { decodeCeilingTokensPerS } from './roofline.ts';
import { readModelConfig, type ModelConfig } from '../model/config.ts';
import { metaString } from '../model/gguf/metadata.ts';
import { readGGUF, type GGUF } from '../model/gguf/reader.ts';
import type { ByteSource } from '../model/gguf/source.ts';
import { elementCount, ggmlTypeName } from '../model/gguf/types.ts';
import { checkContext, plannedMatrices } from '../model/choice.ts';
import { ropeFreqValues } from '../model/open.ts';
import { checkFits, planMemory, type EngineShape, type MemoryPlan } from '../model/memory.ts';
import type { KvElement } from '../kernels/select.ts';
import { modelTensors } from '../model/tensors.ts';
import { costOfStep, weightPlan } from '../model/step.ts';

/** One GGML tensor type in a file: how many tensors have it and what share of the tensor bytes. */
export interface TypeShare {
  /** The GGML type name from the type table (e.g. "Q4_K", "F32"). */
  type: string;
  tensors: number;
  elements: number;
  bytes: number;
  /** bytes / all tensor bytes, 0..1. */
  share: number;
}

export interface DeviceLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
}

export interface InspectOptions {
  /** The device's limits; null when no device is known (then nothing is checked against it). */
  limits?: DeviceLimits | null;
  /** Refuse plans over this many bytes (the same budget `--memory-gib` sets for a run). */
  budgetBytes?: number;
  /** The measured streaming-read roof (GB/s, 1e9 bytes/s); null when none has been measured. */
  readRoofGBs?: number | null;
  /** The KV cache's element type on the device (kvElement of its capabilities); f32 when no device is known. */
  kvElement?: KvElement;
  /** KV-cache positions the memory plan reserves (default: the model's context, capped at 4096). */
  context?: number;
  /** Context depth at which the decode prediction counts KV-cache reads (default 0: the first token). */
  depth?: number;
}

export interface MemoryVerdict {
  /** The engine's plan (src/model/memory.ts) for one sequence of `context` positions. */
  plan: MemoryPlan;
  context: number;
  /** Why the plan cannot run on this device, or null when it fits (or no device is known). */
  problem: string | null;
  /** Whether limits were known to check against. */
  checked: boolean;
}

export interface DecodeEstimate {
  /**
   * Bytes one decode step reads and writes at `depth` (step.ts's costOfStep over the matrices as
   * they will be uploaded): every matrix once, an untied embedding table only gathered (one row),
   * the KV cache at `depth`, the activations.
   */
  bytesPerToken: number;
  depth: number;
  readRoofGBs: number | null;
  /** read roof / bytes per token; null when no roof has been measured. */
  tokensPerS: number | null;
}

export interface ModelInspection {
  /** The file name or URL. */
  source: string;
  fileBytes: number;
  /** Where tensor data starts: everything before it is the header that was read. */
  headerBytes: number;
  ggufVersion: number;
  /** general.architecture (any value: inspection does not need to run it). */
  architecture: string;
  name: string | null;
  /** Elements of every tensor in the file. */
  parameters: number;
  tensorBytes: number;
  /** Largest share first. */
  types: TypeShare[];
  contextLength: number | null;
  /** Null when tokenscope can run this file; otherwise why not (the memory plan is then absent). */
  unsupported: string | null;
  memory: MemoryVerdict | null;
  /** Null when the model cannot be planned (its reason is in `unsupported`). */
  decode: DecodeEstimate | null;
}

const DEFAULT_CONTEXT_CAP = 4096;
/** Rows one prefill step holds: the engine's default prefill chunk. */
const PREFILL_CHUNK = 512;

/** A source that counts what is read through it (the inspection shows how little that is). */
export function countingSource(source: ByteSource): { source: ByteSource; stats: { bytes: number; reads: number } } {
  const stats = { bytes: 0, reads: 0 };
  return {
    stats,
    source: {
      size: source.size,
      name: source.name,
      read(offset, length) {
        stats.bytes += length;
        stats.reads++;
        return source.read(offset, length);
      },
    },
  };
}

/** Read a source's header (only the header: tensor data is never touched) and inspect it. */
export async function inspectSource(source: ByteSource, options: InspectOptions = {}): Promise<ModelInspection> {
  const gguf = await readGGUF(source);
  return inspectModel(gguf, options, await ropeFreqValues(gguf));
}

/**
 * The inspection of a header. `ropeFreqs` (rope_freqs.weight's values, read by inspectSource) are
 * checked as a run checks them; every check a run makes before allocating — the config, the tensor
 * roles, the matrices' formats, the context — fails here with the run's message, in `unsupported`.
 */
export function inspectModel(gguf: GGUF, options: InspectOptions = {}, ropeFreqs?: Float32Array): ModelInspection {
  const types = typeShares(gguf);
  const tensorBytes = types.reduce((sum, t) => sum + t.bytes, 0);
  const architecture = metaString(gguf.metadata, 'general.architecture') ?? 'unknown';

  let config: ModelConfig | null = null;
  let unsupported: string | null = null;
  let memory: MemoryVerdict | null = null;
  let decode: DecodeEstimate | null = null;
  const depth = options.depth ?? 0;
  const roof = options.readRoofGBs ?? null;
  try {
    config = readModelConfig(gguf, ropeFreqs);
    const model = { gguf, config, tensors: modelTensors(gguf, config) };
    if (options.context !== undefined) checkContext(config, options.context);
    const context = Math.max(1, Math.min(options.context ?? DEFAULT_CONTEXT_CAP, config.contextLength));
    const shape: EngineShape = { maxSeq: context, slots: 1, maxRows: Math.min(context, PREFILL_CHUNK) };
    const matrices = plannedMatrices({ kind: 'gguf', model, id: gguf.source.name });
    const kv = options.kvElement ?? 'f32';
    const plan = planMemory(config, matrices, shape, kv);
    memory = { plan, context, ...fitProblem(plan, config.name, options) };
    // A step at position depth attends depth + 1 keys: the ones before it and its own.
    const bytesPerToken = costOfStep(config, weightPlan(config, matrices), { rows: [{ slot: 0, pos: depth }], headRows: 1, kv }).total.bytes;
    decode = { bytesPerToken, depth, readRoofGBs: roof, tokensPerS: roof !== null && roof > 0 ? decodeCeilingTokensPerS(roof * 1e9, bytesPerToken) : null };
  } catch (e) {
    unsupported = describeError(e);
  }

  return {
    source: gguf.source.name,
    fileBytes: gguf.source.size,
    headerBytes: gguf.dataOffset,
    ggufVersion: gguf.version,
    architecture,
    name: metaString(gguf.metadata, 'general.name') ?? null,
    parameters: gguf.tensors.reduce((sum, t) => sum + elementCount(t.dims), 0),
    tensorBytes,
    types,
    contextLength: config?.contextLength ?? null,
    unsupported,
    memory,
    decode,
  };
}

/** Each tensor type's share of the tensor bytes, named from GGML's type table; largest first. */
export function typeShares(gguf: Pick<GGUF, 'tensors'>): TypeShare[] {
  const byType = new Map<number, TypeShare>();
  let total = 0;
  for (const t of gguf.tensors) {
    const entry = byType.get(t.type) ?? { type: ggmlTypeName(t.type) ?? `type ${t.type}`, tensors: 0, elements: 0, bytes: 0, share: 0 };
    entry.tensors++;
    entry.elements += elementCount(t.dims);
    entry.bytes += t.byteSize;
    total += t.byteSize;
    byType.set(t.type, entry);
  }
  const shares = [...byType.values()];
  for (const s of shares) s.share = total > 0 ? s.bytes / total : 0;
  return shares.sort((a, b) => b.bytes - a.bytes || a.type.localeCompare(b.type));
}

function fitProblem(plan: MemoryPlan, what: string, options: InspectOptions): { problem: string | null; checked: boolean } {
  const limits = options.limits ?? null;
  if (!limits && options.budgetBytes === undefined) return { problem: null, checked: false };
  // Without limits only the budget is checked: limits that cannot be exceeded stand in for them.
  const effective = limits ?? { maxBufferSize: Infinity, maxStorageBufferBindingSize: Infinity };
  try {
    checkFits(plan, { limits: effective }, what, options.budgetBytes);
    return { problem: null, checked: true };
  } catch (e) {
    return { problem: describeError(e), checked: true };
  }
}

/**
 * Which of WebLLM's prebuilt models this device can run: a pure function of WebLLM's
 * `prebuiltAppConfig.model_list` and our capability record, so it runs in Node and in tests
 * without the WebLLM runtime. Only types come from '@mlc-ai/web-llm' here; the list itself is
 * imported lazily by `listWebLLMModels` in adapter.ts.
 */
import type { ModelRecord } from '@mlc-ai/web-llm';
import type { Capabilities } from '../gpu/capabilities.ts';
import { PRESETS, type ModelPreset } from '../model/catalog.ts';
import type { ModelInfo } from '../model/load.ts';

/** Why a model cannot run here, as the error code loading it would raise. */
export type ExclusionCode = 'feature-missing' | 'model-too-large' | 'model-unsupported';

interface ModelFacts {
  /** WebLLM's model_id, e.g. "Qwen2.5-0.5B-Instruct-q4f32_1-MLC". */
  id: string;
  /** The model without its role, quantization and packaging words, e.g. "Qwen2.5-0.5B". */
  family: string;
  /** MLC quantization code, e.g. "q4f32_1" (4-bit weights, f32 model dtype, variant 1). */
  quantization: string;
  /** WebLLM's own estimate of the GPU memory the model needs, MB. */
  vramMB: number;
  /** WebLLM marks the model as suitable for limited devices (phones). */
  lowResource: boolean;
  /** The context window the prebuilt library was compiled or configured for, when stated. */
  contextWindow: number | null;
}

/** A prebuilt model; `reason` and `code` are set exactly when it cannot run on this device. */
export type WebLLMModel = ModelFacts & ({ reason?: undefined; code?: undefined } | { reason: string; code: ExclusionCode });

/** What the catalog reads from a device: our `Capabilities` satisfies it. */
export interface CatalogCapabilities {
  shaderF16: boolean;
  limits: Pick<Capabilities['limits'], 'maxStorageBufferBindingSize'>;
}

export interface CatalogOptions {
  /** GPU memory the visitor allows (browsers cannot read it), MB; no limit when absent. */
  vramBudgetMB?: number;
}

/** `<name>-<quantization>-MLC[-<variant>]`, e.g. "gemma-2-2b-it-q4f16_1-MLC-1k". */
const MODEL_ID = /^(.+?)-(q\d+b?f\d+(?:_\d+)?)-MLC(?:-.+)?$/;
/** Name segments that say how the model was tuned, not which model it is. */
const ROLE_WORDS = new Set(['instruct', 'it', 'chat', 'hf']);
/** WebLLM's `ModelType.embedding`, written out: importing the enum would pull in the runtime. */
const EMBEDDING_MODEL = 1;

/** Family and quantization from a model id; `null` when the id does not follow MLC's naming. */
export function parseModelId(id: string): { family: string; quantization: string } | null {
  const m = MODEL_ID.exec(id);
  if (!m) return null;
  const family = m[1]
    .split('-')
    .filter((word) => !ROLE_WORDS.has(word.toLowerCase()))
    .join('-');
  return { family, quantization: m[2] };
}

/** Letters and digits only, so "Qwen2.5-0.5B" and "qwen2.5-0.5b" compare equal. */
const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The tokenscope preset of a WebLLM model family, e.g. "Qwen2.5-0.5B" → qwen2.5-0.5b. */
export function matchingPreset(family: string): ModelPreset | undefined {
  return PRESETS.find((p) => squash(p.title) === squash(family));
}

/** Our model is the WebLLM model's family (a preset of it, or a file whose name says so). */
export function sameFamily(ours: Pick<ModelInfo, 'id' | 'name'>, family: string): boolean {
  return [ours.id, ours.name].some((s) => squash(s).includes(squash(family)));
}

/** f16 model dtype (q4f16_1, q0f16, q3f16_1): WebLLM's shaders then need `shader-f16`. */
export function needsShaderF16(record: Pick<ModelRecord, 'model_id' | 'required_features'>): boolean {
  const quantization = parseModelId(record.model_id)?.quantization ?? '';
  return (record.required_features ?? []).includes('shader-f16') || /f16/.test(quantization);
}

function exclusion(record: ModelRecord, caps: CatalogCapabilities | null, options: CatalogOptions): { reason: string; code: ExclusionCode } | null {
  if (record.model_type === EMBEDDING_MODEL) {
    return { code: 'model-unsupported', reason: 'an embedding model: it produces vectors, not tokens' };
  }
  if (!parseModelId(record.model_id)) {
    return { code: 'model-unsupported', reason: `"${record.model_id}" does not follow MLC's <name>-<quantization>-MLC naming` };
  }
  if (!caps) return null;
  if (needsShaderF16(record) && !caps.shaderF16) {
    return { code: 'feature-missing', reason: 'needs the shader-f16 feature, which this GPU or browser does not offer' };
  }
  const unknown = (record.required_features ?? []).filter((f) => f !== 'shader-f16');
  if (unknown.length > 0) {
    return { code: 'feature-missing', reason: `needs ${unknown.join(', ')}, which tokenscope does not check for` };
  }
  const binding = caps.limits.maxStorageBufferBindingSize;
  if (record.buffer_size_required_bytes !== undefined && record.buffer_size_required_bytes > binding) {
    return {
      code: 'model-too-large',
      reason: `needs storage buffers of ${mib(record.buffer_size_required_bytes)} MiB; this device binds at most ${mib(binding)} MiB`,
    };
  }
  const vram = record.vram_required_MB ?? 0;
  if (options.vramBudgetMB !== undefined && vram > options.vramBudgetMB) {
    return { code: 'model-too-large', reason: `needs about ${Math.ceil(vram)} MB of GPU memory; the budget is ${options.vramBudgetMB} MB` };
  }
  return null;
}

const mib = (bytes: number) => Math.floor(bytes / 2 ** 20);

/**
 * One model record as a catalog entry. Checks: embedding models out; f16 models (by
 * `required_features` or, since the list omits the feature for many of them, by the f16
 * quantization code) need shader-f16; `buffer_size_required_bytes` against
 * maxStorageBufferBindingSize; `vram_required_MB` against the optional budget. Without
 * capabilities only the device-independent checks run.
 */
export function catalogEntry(record: ModelRecord, caps: CatalogCapabilities | null, options: CatalogOptions = {}): WebLLMModel {
  const parsed = parseModelId(record.model_id);
  const facts: ModelFacts = {
    id: record.model_id,
    family: parsed?.family ?? record.model_id,
    quantization: parsed?.quantization ?? 'unknown',
    vramMB: record.vram_required_MB ?? 0,
    lowResource: record.low_resource_required ?? false,
    contextWindow: record.overrides?.context_window_size ?? null,
  };
  const why = exclusion(record, caps, options);
  return why ? { ...facts, ...why } : facts;
}

/** Every model of `modelList`, in its order, with why those that cannot run here are excluded. */
export function webllmCatalog(modelList: readonly ModelRecord[], caps: CatalogCapabilities, options: CatalogOptions = {}): WebLLMModel[] {
  return modelList.map((record) => catalogEntry(record, caps, options));
}

import { TokenscopeError } from '../errors.ts';

/** A compute shader to compile: WGSL text, entry point, pipeline-overridable constants. */
export interface ShaderSpec {
  /** Short stable name of the WGSL module: a kernel file ("rmsnorm") or a variant ("matvec+q4_0"). Part of the label. */
  name: string;
  code: string;
  entryPoint?: string;
  constants?: Record<string, number>;
}

/** A compiled module and its pipelines by label (entry point + constants). */
interface ModuleEntry {
  module: GPUShaderModule;
  pipelines: Map<string, Promise<GPUComputePipeline>>;
}

interface DeviceCache {
  /**
   * By the WGSL text itself (the whole text, not a hash of it: no collision is possible): two specs
   * with one name but different code never share a pipeline, and the label stays short.
   */
  modules: Map<string, ModuleEntry>;
  /** Pipelines this cache has asked the device to create. */
  created: number;
}

/** One cache per device; dropped with the device. */
const caches = new WeakMap<GPUDevice, DeviceCache>();

function cacheFor(device: GPUDevice): DeviceCache {
  let cache = caches.get(device);
  if (!cache) {
    cache = { modules: new Map(), created: 0 };
    caches.set(device, cache);
  }
  return cache;
}

/** How many pipelines `device`'s cache has created (compiled) so far: a step that adds to it compiled inside itself. */
export function pipelinesCreated(device: GPUDevice): number {
  return caches.get(device)?.created ?? 0;
}

/** The cache key, which doubles as the pipeline's label: "name:entry{k=v,…}". */
export function pipelineKey(spec: ShaderSpec): string {
  const constants = Object.entries(spec.constants ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return `${spec.name}:${spec.entryPoint ?? 'main'}{${constants}}`;
}

async function compileErrorText(module: GPUShaderModule): Promise<string> {
  const info = await module.getCompilationInfo();
  return info.messages
    .filter((m) => m.type === 'error')
    .map((m) => `line ${m.lineNum}:${m.linePos}: ${m.message}`)
    .join('\n');
}

/**
 * A compute pipeline (layout 'auto'), compiled once per device and spec.
 * A WGSL error becomes a typed `shader-compile` error with the compiler's messages.
 */
export function getPipeline(device: GPUDevice, spec: ShaderSpec): Promise<GPUComputePipeline> {
  const cache = cacheFor(device);
  const key = pipelineKey(spec);
  let entry = cache.modules.get(spec.code);
  if (!entry) {
    entry = { module: device.createShaderModule({ code: spec.code, label: spec.name }), pipelines: new Map() };
    cache.modules.set(spec.code, entry);
  }
  const hit = entry.pipelines.get(key);
  if (hit) return hit;

  const { module, pipelines } = entry;
  cache.created++;
  const created = device
    .createComputePipelineAsync({
      label: key,
      layout: 'auto',
      compute: { module, entryPoint: spec.entryPoint ?? 'main', constants: spec.constants ?? {} },
    })
    .catch(async (cause: unknown) => {
      pipelines.delete(key);
      const details = await compileErrorText(module).catch(() => '');
      throw new TokenscopeError(
        'shader-compile',
        `Could not build GPU pipeline ${key}: ${details || String(cause)}`,
        'This is a bug in tokenscope or the WebGPU implementation; please report it with the device details.',
        { cause },
      );
    });
  pipelines.set(key, created);
  return created;
}

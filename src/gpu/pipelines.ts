import { TokenscopeError } from '../errors.ts';

/** A compute shader to compile: WGSL text, entry point, pipeline-overridable constants. */
export interface ShaderSpec {
  /** Short stable name of the WGSL file, e.g. "matvec_q4_0". Part of the label. */
  name: string;
  code: string;
  entryPoint?: string;
  constants?: Record<string, number>;
}

interface DeviceCache {
  modules: Map<string, GPUShaderModule>;
  pipelines: Map<string, Promise<GPUComputePipeline>>;
}

/** One cache per device; dropped with the device. */
const caches = new WeakMap<GPUDevice, DeviceCache>();

function cacheFor(device: GPUDevice): DeviceCache {
  let cache = caches.get(device);
  if (!cache) {
    cache = { modules: new Map(), pipelines: new Map() };
    caches.set(device, cache);
  }
  return cache;
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
  const hit = cache.pipelines.get(key);
  if (hit) return hit;

  let module = cache.modules.get(spec.code);
  if (!module) {
    module = device.createShaderModule({ code: spec.code, label: spec.name });
    cache.modules.set(spec.code, module);
  }
  const shaderModule = module;
  const created = device
    .createComputePipelineAsync({
      label: key,
      layout: 'auto',
      compute: { module: shaderModule, entryPoint: spec.entryPoint ?? 'main', constants: spec.constants ?? {} },
    })
    .catch(async (cause: unknown) => {
      cache.pipelines.delete(key);
      const details = await compileErrorText(shaderModule).catch(() => '');
      throw new TokenscopeError(
        'shader-compile',
        `Could not build GPU pipeline ${key}: ${details || String(cause)}`,
        'This is a bug in tokenscope or the WebGPU implementation; please report it with the device details.',
        { cause },
      );
    });
  cache.pipelines.set(key, created);
  return created;
}

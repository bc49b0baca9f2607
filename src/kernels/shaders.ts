/**
 * The WGSL modules kernels compile, by name, and their uniforms packed by field name. The text and
 * the layouts come from shaders.generated.ts (`npm run shaders`): a kernel's own file of shaders/,
 * or a variant of variant-table.ts written whole to shaders/variants/ — nothing is joined at run
 * time. In the Node CLI the `?raw` imports load through cli/raw-hooks.mjs.
 */
import { uniformBufferWith } from '../gpu/buffers.ts';
import type { ShaderSpec } from '../gpu/pipelines.ts';
import { packUniform, type UniformValue } from '../gpu/uniforms.ts';
import { SHADER_GROUP, SHADER_GROUPS, UNIFORMS } from './shaders.generated.ts';

export { UNIFORMS };

/** A module's name: a kernel file (`copy`) or a variant (`matvec_wide+q4_k`). */
export type ShaderName = keyof typeof SHADER_GROUP;

/** Modules that declare a uniform (their Params struct). */
export type UniformShader = keyof typeof UNIFORMS;

/** The fields of `N`'s uniform that a kernel writes: every field but padding (`_…`). */
export type ParamsOf<N extends UniformShader> = {
  [F in Exclude<keyof (typeof UNIFORMS)[N]['fields'], `_${string}`>]: UniformValue;
};

/** A pipeline to build: a module by name (its text loaded on demand, see shaderCode), its entry point and constants. */
export type KernelSpec = Omit<ShaderSpec, 'code'> & { code?: string };

/** A module by name, for a KernelSpec (`{ ...shader('rmsnorm'), constants }`); makeDispatch loads its text. */
export function shader<N extends ShaderName>(name: N): { name: N } {
  return { name };
}

const loadedGroups = new Map<string, Promise<Readonly<Record<string, string>>>>();

/**
 * The WGSL text of `name`: its group (a weight format's variants, or the format-independent core)
 * is loaded on first use, once, so the page downloads the kernels of the formats a model uses.
 */
export async function shaderCode(name: ShaderName): Promise<string> {
  const group = SHADER_GROUP[name];
  if (group === undefined) throw new RangeError(`No WGSL module is named ${name}.`);
  let loading = loadedGroups.get(group);
  if (!loading) {
    loading = SHADER_GROUPS[group]();
    loadedGroups.set(group, loading);
    // A failed load (e.g. the page lost its network) is tried again next time.
    loading.catch(() => loadedGroups.delete(group));
  }
  const code = (await loading)[name];
  if (code === undefined) throw new RangeError(`The WGSL group ${group} has no module ${name}.`);
  return code;
}

/** Every module's text by name (loads every group: tests and tools, never the page's run path). */
export async function allShaderCode(): Promise<Record<ShaderName, string>> {
  const names = Object.keys(SHADER_GROUP) as ShaderName[];
  const texts = await Promise.all(names.map(shaderCode));
  return Object.fromEntries(names.map((n, i) => [n, texts[i]])) as Record<ShaderName, string>;
}

/**
 * `name`'s uniform with `values` written at the offsets reflected from its WGSL: an unknown or
 * missing field fails to type-check, and throws at run time (packUniform).
 */
export function packParams<N extends UniformShader>(name: N, values: ParamsOf<N>): ArrayBuffer {
  return packUniform(UNIFORMS[name], values);
}

/** A uniform buffer holding `name`'s Params (packParams). */
export function paramsBuffer<N extends UniformShader>(device: GPUDevice, label: string, name: N, values: ParamsOf<N>): GPUBuffer {
  return uniformBufferWith(device, label, packParams(name, values));
}

/**
 * The WGSL modules kernels compile, by name, and their uniforms packed by field name. The text and
 * the layouts come from shaders.generated.ts (`npm run shaders`): a kernel's own file of shaders/,
 * or a variant of variant-table.ts written whole to shaders/variants/ — nothing is joined at run
 * time. In the Node CLI the `?raw` imports load through cli/raw-hooks.mjs.
 */
import { uniformBufferWith } from '../gpu/buffers.ts';
import { packUniform, type UniformValue } from '../gpu/uniforms.ts';
import { SHADERS, UNIFORMS } from './shaders.generated.ts';

export { SHADERS, UNIFORMS };

/** A module's name: a kernel file (`copy`) or a variant (`matvec_wide+q4_k`). */
export type ShaderName = keyof typeof SHADERS;

/** Modules that declare a uniform (their Params struct). */
export type UniformShader = keyof typeof UNIFORMS;

/** The fields of `N`'s uniform that a kernel writes: every field but padding (`_…`). */
export type ParamsOf<N extends UniformShader> = {
  [F in Exclude<keyof (typeof UNIFORMS)[N]['fields'], `_${string}`>]: UniformValue;
};

/** The name and text of a module, for a ShaderSpec (`{ ...shader('rmsnorm'), constants }`). */
export function shader<N extends ShaderName>(name: N): { name: N; code: string } {
  return { name, code: SHADERS[name] };
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

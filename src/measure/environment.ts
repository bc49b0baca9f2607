import type { GpuContext } from '../gpu/device.ts';
import type { Fallbacks } from '../gpu/capabilities.ts';
import type { Environment } from './schema.ts';

/** The environment a run was made in, from the device's capability record. */
export function describeEnvironment(ctx: GpuContext, disabled: Fallbacks = new Set()): Environment {
  const nav = (globalThis as { navigator?: { userAgent?: string } }).navigator;
  const proc = (globalThis as { process?: { version?: string; platform?: string; arch?: string } }).process;
  const userAgent =
    ctx.runtime === 'browser'
      ? (nav?.userAgent ?? 'unknown browser')
      : `Node ${proc?.version ?? '?'} (${proc?.platform ?? '?'}-${proc?.arch ?? '?'}; webgpu package, Dawn)`;
  return {
    runtime: ctx.runtime,
    user_agent: userAgent,
    adapter: ctx.caps.adapter,
    features: ctx.caps.features,
    limits: { ...ctx.caps.limits },
    disabled_features: [...disabled].sort(),
    wgsl_language_features: ctx.caps.packedDot ? ['packed_4x8_integer_dot_product'] : [],
    cpu_adapter: ctx.caps.cpuLike,
    timestamp_quantization: ctx.timestamps,
  };
}

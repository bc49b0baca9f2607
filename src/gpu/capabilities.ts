/**
 * What the adapter/device can do, read once into a typed record.
 *
 * Every capability-based choice in the code base reads this record (see `src/kernels/select.ts`);
 * `Fallbacks` can force any optional capability off so the fallback paths are testable.
 */

/** Optional features we use when present. */
export type OptionalFeature = 'timestamp-query' | 'shader-f16' | 'subgroups';
export const OPTIONAL_FEATURES: readonly OptionalFeature[] = ['timestamp-query', 'shader-f16', 'subgroups'];

/** Limits we read and request at the adapter's maximum. */
export const REQUESTED_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'maxUniformBufferBindingSize',
] as const;
export type RequestedLimit = (typeof REQUESTED_LIMITS)[number];

export interface AdapterDescription {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
}

export interface Capabilities {
  adapter: AdapterDescription;
  /** Every feature the device was created with (sorted). */
  features: string[];
  timestampQuery: boolean;
  shaderF16: boolean;
  subgroups: boolean;
  /** Subgroup size range reported by the adapter (0 when unknown). */
  subgroupMinSize: number;
  subgroupMaxSize: number;
  limits: Record<RequestedLimit, number>;
  /** A CPU implementation (SwiftShader, lavapipe, WARP): kernels prefer few long workgroups. */
  cpuLike: boolean;
}

/** Capabilities a caller forces off (URL `?disable=shader-f16,subgroups`, CLI `--disable`). */
export type Fallbacks = ReadonlySet<OptionalFeature>;

export function parseFallbacks(list: string | undefined | null): Set<OptionalFeature> {
  const out = new Set<OptionalFeature>();
  for (const raw of (list ?? '').split(',')) {
    const name = raw.trim();
    if (!name) continue;
    if (!(OPTIONAL_FEATURES as readonly string[]).includes(name)) {
      throw new Error(`Unknown feature "${name}" to disable; choose from ${OPTIONAL_FEATURES.join(', ')}.`);
    }
    out.add(name as OptionalFeature);
  }
  return out;
}

export function describeAdapter(adapter: GPUAdapter): AdapterDescription {
  const info = (adapter.info ?? {}) as Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean };
  const legacyFallback = (adapter as unknown as { isFallbackAdapter?: boolean }).isFallbackAdapter;
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
    isFallbackAdapter: Boolean(info.isFallbackAdapter ?? legacyFallback ?? false),
  };
}

const CPU_PATTERN = /swiftshader|llvmpipe|lavapipe|warp|cpu/i;

export function readCapabilities(adapter: GPUAdapter, device: GPUDevice): Capabilities {
  const desc = describeAdapter(adapter);
  const info = (adapter.info ?? {}) as { subgroupMinSize?: number; subgroupMaxSize?: number };
  const limits = {} as Record<RequestedLimit, number>;
  for (const name of REQUESTED_LIMITS) limits[name] = Number(device.limits[name]);
  const text = `${desc.vendor} ${desc.architecture} ${desc.device} ${desc.description}`;
  return {
    adapter: desc,
    features: [...device.features].sort(),
    timestampQuery: device.features.has('timestamp-query'),
    shaderF16: device.features.has('shader-f16'),
    subgroups: device.features.has('subgroups'),
    subgroupMinSize: info.subgroupMinSize ?? 0,
    subgroupMaxSize: info.subgroupMaxSize ?? 0,
    limits,
    cpuLike: desc.isFallbackAdapter || CPU_PATTERN.test(text),
  };
}

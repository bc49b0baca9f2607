/**
 * What the adapter/device can do, read once into a typed record.
 *
 * Every capability-based choice in the code base reads this record (see `src/kernels/select.ts`);
 * `Fallbacks` can force any optional capability off so the fallback paths are testable.
 */

/** Optional features we use when present. */
export type OptionalFeature = 'timestamp-query' | 'shader-f16' | 'subgroups';
export const OPTIONAL_FEATURES: readonly OptionalFeature[] = ['timestamp-query', 'shader-f16', 'subgroups'];

/**
 * WGSL language features we use when the GPU object reports them (`navigator.gpu.wgslLanguageFeatures`):
 * no device request, a shader just uses them. Dawn reports packed_4x8_integer_dot_product in Node
 * (lavapipe) and in Chromium (SwiftShader).
 */
export type LanguageFeature = 'packed_4x8_integer_dot_product';
export const LANGUAGE_FEATURES: readonly LanguageFeature[] = ['packed_4x8_integer_dot_product'];

/** Anything a caller can force off: a device feature or a WGSL language feature. */
export type Fallback = OptionalFeature | LanguageFeature;

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

/**
 * Which implementation runs the kernels, where select.ts's fastest shapes differ between them: the two
 * CPU adapters measured here ('swiftshader': Chromium's, and Dawn on its ICD; 'lavapipe': Mesa's
 * llvmpipe Vulkan), any other CPU adapter ('cpu'), and real GPUs ('gpu').
 */
export type AdapterKind = 'swiftshader' | 'lavapipe' | 'cpu' | 'gpu';

export interface Capabilities {
  adapter: AdapterDescription;
  /** Every feature the device was created with (sorted). */
  features: string[];
  timestampQuery: boolean;
  shaderF16: boolean;
  subgroups: boolean;
  /** WGSL's dot4I8Packed, pack4xI8 and friends (language feature packed_4x8_integer_dot_product). */
  packedDot: boolean;
  /** Subgroup size range reported by the adapter (0 when unknown). */
  subgroupMinSize: number;
  subgroupMaxSize: number;
  limits: Record<RequestedLimit, number>;
  /** A CPU implementation (SwiftShader, lavapipe, WARP): kernels prefer few long workgroups. */
  cpuLike: boolean;
  /** Which implementation (see AdapterKind); 'gpu' exactly when not cpuLike. */
  kind: AdapterKind;
}

/** Capabilities a caller forces off (URL `?disable=shader-f16,subgroups`, CLI `--disable`). */
export type Fallbacks = ReadonlySet<Fallback>;

export function parseFallbacks(list: string | undefined | null): Set<Fallback> {
  const out = new Set<Fallback>();
  const known: readonly Fallback[] = [...OPTIONAL_FEATURES, ...LANGUAGE_FEATURES];
  for (const raw of (list ?? '').split(',')) {
    const name = raw.trim();
    if (!name) continue;
    if (!(known as readonly string[]).includes(name)) {
      throw new Error(`Unknown feature "${name}" to disable; choose from ${known.join(', ')}.`);
    }
    out.add(name as Fallback);
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

/** The adapter's kind from its description (vendor, architecture, device, description) and whether it is a CPU adapter. */
export function adapterKind(desc: AdapterDescription, cpuLike: boolean): AdapterKind {
  if (!cpuLike) return 'gpu';
  const text = `${desc.vendor} ${desc.architecture} ${desc.device} ${desc.description}`;
  if (/swiftshader/i.test(text)) return 'swiftshader';
  if (/llvmpipe|lavapipe/i.test(text)) return 'lavapipe';
  return 'cpu';
}

/** `languageFeatures`: the GPU object's wgslLanguageFeatures, less any the caller disabled. */
export function readCapabilities(adapter: GPUAdapter, device: GPUDevice, languageFeatures: ReadonlySet<string> = new Set()): Capabilities {
  const desc = describeAdapter(adapter);
  const info = (adapter.info ?? {}) as { subgroupMinSize?: number; subgroupMaxSize?: number };
  const limits = {} as Record<RequestedLimit, number>;
  for (const name of REQUESTED_LIMITS) limits[name] = Number(device.limits[name]);
  const text = `${desc.vendor} ${desc.architecture} ${desc.device} ${desc.description}`;
  const cpuLike = desc.isFallbackAdapter || CPU_PATTERN.test(text);
  return {
    adapter: desc,
    features: [...device.features].sort(),
    timestampQuery: device.features.has('timestamp-query'),
    shaderF16: device.features.has('shader-f16'),
    subgroups: device.features.has('subgroups'),
    packedDot: languageFeatures.has('packed_4x8_integer_dot_product'),
    subgroupMinSize: info.subgroupMinSize ?? 0,
    subgroupMaxSize: info.subgroupMaxSize ?? 0,
    limits,
    cpuLike,
    kind: adapterKind(desc, cpuLike),
  };
}

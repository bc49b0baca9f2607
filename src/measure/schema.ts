/**
 * The versioned result schema shared by the page, the CLI, permalinks and imports.
 * Later parts (model runs, serving) add optional top-level sections; `schema_version`
 * changes only when an existing field changes meaning.
 */
import type { AdapterDescription } from '../gpu/capabilities.ts';
import type { ClockKind, TimestampQuantization } from '../gpu/timer.ts';

export const SCHEMA_VERSION = 1;
export const TOOL_NAME = 'tokenscope';
export const TOOL_VERSION = '0.1.0';

export interface Environment {
  runtime: 'browser' | 'node';
  /** navigator.userAgent in the page; "Node vX (webgpu Dawn)" in Node. */
  user_agent: string;
  adapter: AdapterDescription;
  features: string[];
  limits: Record<string, number>;
  /** Capability fallbacks forced by the user (e.g. ["shader-f16"]). */
  disabled_features: string[];
  /** Heuristic: the adapter is a CPU implementation (SwiftShader, lavapipe, WARP). */
  cpu_adapter: boolean;
  /**
   * How finely GPU timestamps resolve, probed at start (absent in older results; null without
   * timestamp-query). Quantized (Dawn's 65.536 µs without developer features): kernels shorter
   * than a quantum read 0 or one quantum, so per-kernel times are means over many passes.
   */
  timestamp_quantization?: TimestampQuantization | null;
}

/** One measured roof with the samples behind it. */
export interface CeilingMeasurement {
  /** Median of `samples`. */
  value: number;
  unit: 'GB/s' | 'GFLOP/s';
  min: number;
  max: number;
  /** Per-repetition values in `unit` (a shared link may keep only a few; `n` stays the count measured). */
  samples: number[];
  /** Repetitions measured. */
  n: number;
  clock: ClockKind;
  /** Bytes moved (read + written) or FLOPs done per repetition. */
  work_per_rep: number;
  /** The kernel shape chosen for this device (e.g. "64 workgroups × 256"). */
  shape: string;
  /** What the kernel computed was checked against the CPU. */
  verified: boolean;
}

export const CEILING_KEYS = [
  'read_bandwidth_gbps',
  'copy_bandwidth_gbps',
  'copy_buffer_to_buffer_gbps',
  'f32_gflops',
  'matmul_f32_gflops',
  'f16_gflops',
] as const;
export type CeilingKey = (typeof CEILING_KEYS)[number];

/**
 * GB/s are 1e9 bytes per second, counting bytes read + bytes written.
 * f16_gflops is null when the device has no shader-f16.
 */
export type Ceilings = { [K in CeilingKey]: number | null } & {
  read_bandwidth_gbps: number;
  copy_bandwidth_gbps: number;
  copy_buffer_to_buffer_gbps: number;
  f32_gflops: number;
  matmul_f32_gflops: number;
  working_set_bytes: number;
  measurements: { [K in CeilingKey]: CeilingMeasurement | null };
};

export interface BenchResult {
  schema_version: number;
  tool: { name: string; version: string };
  /** ISO 8601. */
  created_at: string;
  environment: Environment;
  ceilings?: Ceilings;
  /** Free-form notes (e.g. "samples trimmed for the permalink"). */
  notes?: string[];
  [section: string]: unknown;
}

export function newResult(environment: Environment): BenchResult {
  return {
    schema_version: SCHEMA_VERSION,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    created_at: new Date().toISOString(),
    environment,
  };
}

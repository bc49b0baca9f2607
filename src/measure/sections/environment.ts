/** The `environment` and `ceilings` sections: where a result was measured, and the device's roofs. */
import type { AdapterDescription } from '../../gpu/capabilities.ts';
import { array, bool, nullable, num, object, oneOf, optional, record, SchemaError, str, type Agrees, type Infer } from '../schema-kit.ts';
import { bytes, count, gbps, gflops, work } from './units.ts';

const adapter = object({
  vendor: str(512),
  architecture: str(512),
  device: str(512),
  description: str(512),
  isFallbackAdapter: bool(),
});
const adapterAgrees: Agrees<Infer<typeof adapter>, AdapterDescription> = true;
void adapterAgrees;

export const environmentSchema = object({
  runtime: oneOf(['browser', 'node'] as const),
  user_agent: str(4096).describe('navigator.userAgent in the page; "Node vX (webgpu Dawn)" in Node.'),
  adapter,
  features: array(str(128), 256),
  limits: record(num(0, Number.MAX_SAFE_INTEGER), { maxKeys: 256 }),
  disabled_features: array(str(64), 16).describe('Capability fallbacks forced by the user (e.g. ["shader-f16"]).'),
  wgsl_language_features: optional(array(str(128), 64)).describe(
    'WGSL language features the kernels use here (reported by the GPU object and not disabled), e.g. packed_4x8_integer_dot_product (absent in older results).',
  ),
  cpu_adapter: bool().describe('Heuristic: the adapter is a CPU implementation (SwiftShader, lavapipe, WARP).'),
  timestamp_quantization: optional(
    nullable(
      object({
        quantized: bool(),
        quantum_ns: num(1, 1e9).describe("The largest power of two (ns) dividing every timestamp read: 1–512 when unquantized, 65536 under Dawn's rounding."),
      }),
    ),
  ).describe('How finely GPU timestamps resolve (absent in older results; null without timestamp-query).'),
});
export type Environment = Omit<Infer<typeof environmentSchema>, 'limits'> & { limits: Record<string, number> };

export const CEILING_KEYS = [
  'read_bandwidth_gbps',
  'copy_bandwidth_gbps',
  'copy_buffer_to_buffer_gbps',
  'f32_gflops',
  'matmul_f32_gflops',
  'f16_gflops',
] as const;
export type CeilingKey = (typeof CEILING_KEYS)[number];

const roof = () => num(0, 1e7);

/** One measured roof with the samples behind it. */
const measurementSchema = object({
  value: roof().describe('Median of `samples`.'),
  unit: oneOf(['GB/s', 'GFLOP/s'] as const),
  min: roof(),
  max: roof(),
  samples: array(roof(), 10_000).describe('Per-repetition values in `unit` (a shared link may keep only a few; `n` stays the count measured).'),
  n: count().describe('Repetitions measured.'),
  clock: oneOf(['gpu-timestamp', 'host'] as const),
  work_per_rep: work().describe('Bytes moved (read + written) or FLOPs done per repetition.'),
  shape: str(256).describe('The kernel shape chosen for this device (e.g. "64 workgroups × 256").'),
  verified: bool().describe('What the kernel computed was checked against the CPU.'),
});
export type CeilingMeasurement = Infer<typeof measurementSchema>;

export const ceilingsSchema = object(
  {
    read_bandwidth_gbps: gbps(),
    copy_bandwidth_gbps: gbps(),
    copy_buffer_to_buffer_gbps: gbps(),
    f32_gflops: gflops(),
    matmul_f32_gflops: gflops(),
    f16_gflops: nullable(gflops()).describe('null when the device has no shader-f16.'),
    working_set_bytes: bytes(),
    measurements: object({
      read_bandwidth_gbps: measurementSchema,
      copy_bandwidth_gbps: measurementSchema,
      copy_buffer_to_buffer_gbps: measurementSchema,
      f32_gflops: measurementSchema,
      matmul_f32_gflops: measurementSchema,
      f16_gflops: nullable(measurementSchema),
    }),
  },
  {
    refine: (c, path) => {
      if (c.f16_gflops === null && (c.measurements as Record<string, unknown>).f16_gflops !== null) {
        throw new SchemaError(`${path}.measurements.f16_gflops`, 'must be null when the value is null');
      }
    },
  },
).describe('GB/s are 10⁹ bytes per second, counting bytes read + bytes written.');
export type Ceilings = Infer<typeof ceilingsSchema>;

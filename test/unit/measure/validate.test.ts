import { describe, expect, it } from 'vitest';
import { newResult, prefillGemmRoof, SCHEMA_VERSION, type Ceilings, type CeilingMeasurement } from '../../../src/measure/schema.ts';
import { formatCeilings } from '../../../src/measure/sections/environment.ts';
import { decodeReport, encodeReport } from '../../../src/share/permalink.ts';
import { validateResult } from '../../../src/measure/validate.ts';
import { workingSetBytes } from '../../../src/measure/ceilings.ts';

const measurement = (value: number, unit: CeilingMeasurement['unit']): CeilingMeasurement => ({
  value,
  unit,
  min: value * 0.9,
  max: value * 1.1,
  samples: [value * 0.9, value, value * 1.1],
  n: 3,
  clock: 'gpu-timestamp',
  work_per_rep: 1e6,
  shape: '64 workgroups',
  verified: true,
});

function sample() {
  const r = newResult({
    runtime: 'node',
    user_agent: 'Node',
    adapter: { vendor: 'v', architecture: 'a', device: 'd', description: 'x', isFallbackAdapter: false },
    features: ['timestamp-query'],
    limits: { maxBufferSize: 1024 },
    disabled_features: [],
    cpu_adapter: false,
  });
  const ceilings: Ceilings = {
    read_bandwidth_gbps: 10,
    copy_bandwidth_gbps: 8,
    copy_buffer_to_buffer_gbps: 12,
    f32_gflops: 100,
    matmul_f32_gflops: 50,
    f16_gflops: null,
    working_set_bytes: 1 << 20,
    measurements: {
      read_bandwidth_gbps: measurement(10, 'GB/s'),
      copy_bandwidth_gbps: measurement(8, 'GB/s'),
      copy_buffer_to_buffer_gbps: measurement(12, 'GB/s'),
      f32_gflops: measurement(100, 'GFLOP/s'),
      matmul_f32_gflops: measurement(50, 'GFLOP/s'),
      f16_gflops: null,
    },
  };
  r.ceilings = ceilings;
  return JSON.parse(JSON.stringify(r));
}

describe('validateResult', () => {
  it('accepts a well-formed result', () => {
    expect(validateResult(sample()).schema_version).toBe(SCHEMA_VERSION);
  });
  it.each([
    ['wrong version', (r: any) => (r.schema_version = 99), /schema version 99/],
    ['missing environment', (r: any) => delete r.environment, /environment must be an object/],
    ['string roof', (r: any) => (r.ceilings.read_bandwidth_gbps = '10'), /read_bandwidth_gbps must be a finite number/],
    ['negative sample', (r: any) => (r.ceilings.measurements.f32_gflops.samples[0] = -1), /samples\[0\] must be ≥ 0/],
    ['bad clock', (r: any) => (r.ceilings.measurements.f32_gflops.clock = 'sundial'), /clock must be/],
    ['huge string', (r: any) => (r.environment.adapter.vendor = 'x'.repeat(10_000)), /longer than 512/],
    ['bad date', (r: any) => (r.created_at = 'yesterday'), /ISO date/],
    ['not an object', (r: any) => (r.environment.limits = [1]), /limits must be an object/],
  ])('rejects %s with a clear message', (_name, mutate, message) => {
    const r = sample();
    mutate(r);
    expect(() => validateResult(r)).toThrow(message);
  });
  it('accepts and renders a result from before the 8-bit prefill GEMM roof (no matmul_q8_gflops), read as not measured', async () => {
    const old = sample();
    expect('matmul_q8_gflops' in old.ceilings).toBe(false);
    const r = validateResult(old);
    expect(prefillGemmRoof(r.ceilings!)).toEqual({ key: 'matmul_f32_gflops', gflops: 50 });
    const report = formatCeilings(r.ceilings!);
    expect(report).toMatch(/prefill GEMM \(8-bit act\.\)\s+n\/a.*not measured \(an older result\)/);
    expect(report).toMatch(/the prefill GEMM \(f32\) reaches 50% of that peak/);
    // Its permalink (the same codec) decodes and validates too.
    expect((await decodeReport(await encodeReport(r))).ceilings).toEqual(r.ceilings);
  });
  it('rejects non-objects', () => {
    expect(() => validateResult(null)).toThrow(/result must be an object/);
    expect(() => validateResult('x')).toThrow(/result must be an object/);
  });
});

describe('workingSetBytes', () => {
  const MiB = 1024 * 1024;
  it.each([
    [{ maxBufferSize: 4096 * MiB, maxStorageBufferBindingSize: 128 * MiB }, 1024 * MiB, 128 * MiB],
    [{ maxBufferSize: 256 * MiB, maxStorageBufferBindingSize: 1024 * MiB }, 1024 * MiB, 256 * MiB],
    [{ maxBufferSize: 4096 * MiB, maxStorageBufferBindingSize: 4096 * MiB }, 1024 * MiB, 1024 * MiB],
    [{ maxBufferSize: 200.5 * MiB, maxStorageBufferBindingSize: 4096 * MiB }, 1024 * MiB, 200 * MiB],
    [{ maxBufferSize: 1000, maxStorageBufferBindingSize: 1000 }, 1024 * MiB, MiB],
  ])('sizes from the limits %j under a cap', (limits, cap, want) => {
    expect(workingSetBytes(limits, cap)).toBe(want);
  });
});

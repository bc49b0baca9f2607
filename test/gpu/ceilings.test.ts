import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureCeilings } from '../../src/measure/ceilings.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { probeShapes } from '../../src/kernels/select.ts';
import { linearShape, q8dotTokens } from '../../src/kernels/linear-shapes.ts';
import { prefillGemmRoof } from '../../src/measure/schema.ts';
import { inBrowser, testGpu } from './context.ts';

const MiB = 1024 * 1024;

describe('measured roofs', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  it('measures every roof with verified kernels and positive numbers', async () => {
    // Two grid candidates and both read shapes: the selection logic runs without SwiftShader
    // paying for thousands of workgroups (the CLI and page tests run the device defaults).
    const c = await measureCeilings(ctx, {
      maxWorkingSetBytes: 8 * MiB,
      protocol: { warmup: 1, minReps: 3, maxReps: 3, minDurationMs: 0 },
      shapes: { bandwidthWorkgroups: [16, 64], readRuns: [1, 4] },
    });
    expect(c.working_set_bytes).toBe(8 * MiB);
    for (const key of ['read_bandwidth_gbps', 'copy_bandwidth_gbps', 'copy_buffer_to_buffer_gbps', 'f32_gflops', 'matmul_f32_gflops'] as const) {
      const m = c.measurements[key]!;
      expect(m.verified).toBe(true);
      expect(m.samples).toHaveLength(3);
      expect(c[key]).toBeGreaterThan(0);
      expect(m.min).toBeLessThanOrEqual(m.value);
      expect(m.max).toBeGreaterThanOrEqual(m.value);
      expect(m.clock).toBe(ctx.caps.timestampQuery ? 'gpu-timestamp' : 'host');
    }
    if (ctx.caps.shaderF16) expect(c.f16_gflops).toBeGreaterThan(0);
    else expect(c.f16_gflops).toBeNull();
    // The 8-bit-activation prefill GEMM: measured (and verified against the dequantized q4_0 weights)
    // exactly where select.ts runs Q4_0 prefill with 8-bit activations: CPU adapters with
    // packed_4x8_integer_dot_product (lavapipe in Node, SwiftShader in Chromium).
    const { matmulSize: n, matmulTokens: tokens } = probeShapes(ctx.caps);
    const q8 = q8dotTokens(linearShape(ctx.caps, tokens, 'q4_0', n), 'q4_0', tokens) > 0;
    expect(q8).toBe(ctx.caps.cpuLike && ctx.caps.packedDot);
    if (!inBrowser) expect(q8).toBe(true);
    if (q8) {
      const m = c.measurements.matmul_q8_gflops!;
      expect(m.verified).toBe(true);
      expect(m.samples).toHaveLength(3);
      expect(m.shape).toMatch(/q4_0 weights.*8-bit activations/);
      expect(c.matmul_q8_gflops).toBe(m.value);
      expect(c.matmul_q8_gflops).toBeGreaterThan(0);
    } else {
      expect(c.matmul_q8_gflops).toBeNull();
      expect(c.measurements.matmul_q8_gflops).toBeNull();
    }
    expect(prefillGemmRoof(c).gflops).toBe(Math.max(c.matmul_f32_gflops, c.matmul_q8_gflops ?? 0));
    expect(ctx.uncaptured).toEqual([]);
  });

  it('falls back to the host clock without timestamp-query', async () => {
    const plain = await testGpu(new Set(['timestamp-query', 'shader-f16', 'packed_4x8_integer_dot_product']));
    try {
      const c = await measureCeilings(plain, {
        maxWorkingSetBytes: 4 * MiB,
        protocol: { warmup: 0, minReps: 2, maxReps: 2, minDurationMs: 0 },
        shapes: { bandwidthWorkgroups: [64], readRuns: [1], matmulSize: 128 },
      });
      expect(c.measurements.read_bandwidth_gbps!.clock).toBe('host');
      expect(c.f16_gflops).toBeNull();
      // Without dot4I8Packed, Q4_0 prefill runs the f32 kernels: no 8-bit roof, the f32 one is the prefill roof.
      expect(c.matmul_q8_gflops).toBeNull();
      expect(c.measurements.matmul_q8_gflops).toBeNull();
      expect(prefillGemmRoof(c)).toEqual({ key: 'matmul_f32_gflops', gflops: c.matmul_f32_gflops });
    } finally {
      plain.destroy();
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { Capabilities } from '../../../src/gpu/capabilities.ts';
import { linearShape, linearShapes, MATVEC_MAX_TOKENS } from '../../../src/kernels/select.ts';

function caps(over: Partial<Capabilities>): Capabilities {
  return {
    adapter: { vendor: 'v', architecture: 'a', device: 'd', description: '', isFallbackAdapter: false },
    features: [],
    timestampQuery: true,
    shaderF16: false,
    subgroups: false,
    subgroupMinSize: 0,
    subgroupMaxSize: 0,
    limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 32768 } as Capabilities['limits'],
    cpuLike: false,
    ...over,
  };
}

const lavapipe = caps({ cpuLike: true, shaderF16: true, subgroups: true, subgroupMinSize: 8, subgroupMaxSize: 8 });
const gpu = caps({ shaderF16: true, subgroups: true, subgroupMinSize: 32, subgroupMaxSize: 32 });

describe('linear shape selection', () => {
  it('uses the matvec up to MATVEC_MAX_TOKENS rows, the matmul beyond', () => {
    for (const c of [lavapipe, gpu, caps({})]) {
      expect(linearShape(c, 1).kernel).toBe('matvec');
      expect(linearShape(c, MATVEC_MAX_TOKENS).kernel).toBe('matvec');
      expect(linearShape(c, MATVEC_MAX_TOKENS + 1).kernel).toBe('matmul');
    }
  });

  it('makes a subgroup matvec workgroup exactly one subgroup of the smallest size', () => {
    expect(linearShape(lavapipe, 1)).toEqual({ kernel: 'matvec', subgroups: true, lanes: 8, rowBlock: 8, rowsPerWorkgroup: 32 });
    expect(linearShape(gpu, 1)).toEqual({ kernel: 'matvec', subgroups: true, lanes: 32, rowBlock: 2, rowsPerWorkgroup: 2 });
    expect(linearShape(caps({ subgroups: true, subgroupMinSize: 0 }), 1)).toMatchObject({ subgroups: false, lanes: 64 });
  });

  it('gives CPU adapters fewer rows per invocation as the token count grows', () => {
    expect([1, 2, 3, 8].map((R) => (linearShape(lavapipe, R) as { rowBlock: number }).rowBlock)).toEqual([8, 4, 2, 1]);
  });

  it('prefers f16 tiles on GPUs with shader-f16, f32 on CPU adapters and without it', () => {
    expect(linearShape(gpu, 512)).toEqual({ kernel: 'matmul', f16: true, tileM: 64, tileN: 64 });
    expect(linearShape(lavapipe, 512)).toMatchObject({ f16: false });
    expect(linearShape(caps({}), 512)).toMatchObject({ f16: false });
    expect(linearShapes(caps({}), 512).some((s) => s.kernel === 'matmul' && s.f16)).toBe(false);
  });

  it('offers valid, distinct candidates', () => {
    for (const c of [lavapipe, gpu, caps({})]) {
      for (const R of [1, 3, 8, 100]) {
        const all = linearShapes(c, R).map((s) => JSON.stringify(s));
        expect(new Set(all).size).toBe(all.length);
        for (const s of linearShapes(c, R)) {
          if (s.kernel === 'matvec') expect(s.rowsPerWorkgroup % s.rowBlock).toBe(0);
        }
      }
    }
  });
});

/**
 * The memory plan (src/model/memory.ts): every byte the engine allocates, counted before anything
 * is allocated — the attention scratch of split decode included — and refused when it cannot fit.
 */
import { describe, expect, it } from 'vitest';
import type { Capabilities } from '../../../src/gpu/capabilities.ts';
import { decodeScratchSize } from '../../../src/kernels/attention.ts';
import { weightBytes } from '../../../src/kernels/weights.ts';
import { isTokenscopeError } from '../../../src/errors.ts';
import { findPreset } from '../../../src/model/catalog.ts';
import { matricesUnder } from '../../../src/model/choice.ts';
import { checkFits, planMemory } from '../../../src/model/memory.ts';

const limits = { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 32768 } as Capabilities['limits'];
const base = {
  adapter: { vendor: 'v', architecture: 'a', device: 'd', description: '', isFallbackAdapter: false },
  features: [],
  timestampQuery: true,
  limits,
};
const gpu: Capabilities = { ...base, packedDot: true, shaderF16: true, subgroups: true, subgroupMinSize: 32, subgroupMaxSize: 32, cpuLike: false, kind: 'gpu' };
const cpu: Capabilities = { ...base, packedDot: false, shaderF16: false, subgroups: false, subgroupMinSize: 0, subgroupMaxSize: 0, cpuLike: true, kind: 'cpu' };

const config = findPreset('llama-3.2-1b')!.config;
const matrices = matricesUnder(config, 'q4_0');
const shape = { maxSeq: 1024, slots: 4, maxRows: 64 };

describe('planMemory', () => {
  it('adds up weights, norm vectors, the KV cache, activations and the attention scratch', () => {
    const scratch = decodeScratchSize(gpu, config, shape.maxRows);
    const plan = planMemory(config, matrices, shape, 'f16', scratch);
    expect(plan.weightBytes).toBe(matrices.reduce((n, m) => n + weightBytes(m.format, m.rows, m.cols), 0));
    // 2 (K, V) · layers · slots · positions · kv_heads · head_dim · 2 bytes (f16).
    expect(plan.kvCacheBytes).toBe(2 * 16 * 4 * 1024 * 8 * 64 * 2);
    expect(plan.attentionScratch).toEqual(scratch);
    expect(plan.totalBytes).toBe(plan.weightBytes + plan.vectorBytes + plan.kvCacheBytes + plan.activationBytes + scratch.partAcc + scratch.partMl);
  });

  it("split decode attention's partials are counted on GPUs, where they exist, and are none on CPU adapters (one pass)", () => {
    const onGpu = decodeScratchSize(gpu, config, shape.maxRows);
    expect(onGpu.partAcc).toBeGreaterThan(0);
    // Per (row, part, head): headDim floats of partial output, and a (max, sum) pair.
    expect(onGpu.partAcc / onGpu.partMl).toBe((4 * config.headDim) / 8);
    const onCpu = decodeScratchSize(cpu, config, shape.maxRows);
    const without = planMemory(config, matrices, shape, 'f32', onCpu);
    expect(planMemory(config, matrices, shape, 'f32', onGpu).totalBytes - without.totalBytes).toBe(onGpu.partAcc + onGpu.partMl - onCpu.partAcc - onCpu.partMl);
  });

  it('refuses a plan over the budget, naming its parts and what to change', () => {
    const plan = planMemory(config, matrices, shape, 'f16', decodeScratchSize(gpu, config, shape.maxRows));
    let error: unknown;
    try {
      checkFits(plan, { limits: { maxBufferSize: 2 ** 40, maxStorageBufferBindingSize: 2 ** 40 } }, config.name, plan.totalBytes - 1);
    } catch (e) {
      error = e;
    }
    expect(isTokenscopeError(error, 'model-too-large')).toBe(true);
    expect((error as Error).message).toMatch(/weights .* KV cache .* of f16, activations .*budget/);
    expect(() => checkFits(plan, { limits: { maxBufferSize: 2 ** 40, maxStorageBufferBindingSize: 2 ** 40 } }, config.name, plan.totalBytes)).not.toThrow();
  });
});

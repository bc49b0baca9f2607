import { describe, expect, it } from 'vitest';
import { findPreset, parameterCount } from '../../../src/model/catalog.ts';
import {
  attentionFlopsPerPosition,
  decodeShapeOf,
  BYTES_PER_WEIGHT,
  computeBoundBatch,
  DEVICE_PRESETS,
  kvBytesPerPosition,
  predictDecode,
  predictOverContext,
  type DecodeScenario,
} from '../../../src/measure/what-if.ts';
import { decodeCeilingTokensPerS, kvCacheBytesRead } from '../../../src/measure/roofline.ts';
import { isTokenscopeError } from '../../../src/errors.ts';

// Llama-3.2-1B's shape: 16 layers, 32 heads, 8 KV heads of 64; f32 KV cache.
const shape = { layers: 16, heads: 32, kvHeads: 8, headDim: 64, kvBytesPerElement: 4 };
const base: DecodeScenario = { bandwidthGBps: 100, computeGflops: null, parameters: 1e9, bytesPerWeight: BYTES_PER_WEIGHT.q4_0, batch: 1, context: 0, shape };

describe('what-if decode predictions', () => {
  it('bytes per weight: f32 4, f16 2, q8_0 34/32, q4_0 18/32', () => {
    expect(BYTES_PER_WEIGHT).toEqual({ f32: 4, f16: 2, q8_0: 1.0625, q4_0: 0.5625 });
  });

  it('KV bytes per position agree with the roofline module; attention FLOPs are 4 · layers · heads · head_dim', () => {
    expect(kvBytesPerPosition(shape)).toBe(kvCacheBytesRead(16, 8, 64, 4, 1));
    expect(kvBytesPerPosition(shape)).toBe(2 * 16 * 8 * 64 * 4);
    expect(attentionFlopsPerPosition(shape)).toBe(4 * 16 * 32 * 64);
  });

  it('at context 0 and batch 1 the ceiling is bandwidth / weight bytes', () => {
    const p = predictDecode(base);
    expect(p.weightBytes).toBe(0.5625e9);
    expect(p.kvBytes).toBe(0);
    expect(p.tokensPerS).toBeCloseTo(decodeCeilingTokensPerS(100e9, 0.5625e9), 9);
    expect(p.perSequenceTokensPerS).toBeCloseTo(p.tokensPerS, 12);
    expect(p.bound).toBe('memory');
    expect(p.computeMs).toBeNull();
    // 2 FLOPs per weight over 18/32 bytes.
    expect(p.intensity).toBeCloseTo(2 / 0.5625, 9);
  });

  it('the KV cache adds bytes with context, so the ceiling falls', () => {
    const p = predictDecode({ ...base, context: 4096 });
    expect(p.kvBytes).toBe(4096 * 2 * 16 * 8 * 64 * 4);
    expect(p.tokensPerS).toBeCloseTo(100e9 / (0.5625e9 + p.kvBytes), 9);
    const curve = predictOverContext(base, [0, 1024, 4096]);
    expect(curve.map((c) => c.context)).toEqual([0, 1024, 4096]);
    expect(curve[0].tokensPerS).toBeGreaterThan(curve[1].tokensPerS);
    expect(curve[1].tokensPerS).toBeGreaterThan(curve[2].tokensPerS);
  });

  it('a batch shares the weight reads: throughput grows about B-fold while memory-bound', () => {
    const one = predictDecode(base);
    const eight = predictDecode({ ...base, batch: 8 });
    expect(eight.tokensPerS).toBeCloseTo(8 * one.tokensPerS, 6);
    expect(eight.perSequenceTokensPerS).toBeCloseTo(one.perSequenceTokensPerS, 6);
    expect(eight.intensity).toBeCloseTo(8 * one.intensity, 6);
  });

  it('the compute roof caps a large batch', () => {
    // 1 TFLOP/s: 2 GFLOP per token → at most 500 tokens/s however large the batch.
    const s = { ...base, computeGflops: 1000 };
    const big = predictDecode({ ...s, batch: 1024 });
    expect(big.bound).toBe('compute');
    expect(big.tokensPerS).toBeCloseTo(500, 6);
    // Memory time 5.625 ms per step; compute time 2 ms × B: the switch is at B = 3.
    const b = computeBoundBatch(s)!;
    expect(b).toBe(3);
    expect(predictDecode({ ...s, batch: b - 1 }).bound).toBe('memory');
    expect(predictDecode({ ...s, batch: b }).bound).toBe('compute');
    expect(computeBoundBatch(base)).toBeNull();
  });

  it('a model config gives the weights a step reads (an untied embedding table is only looked up) and its shape', () => {
    const tied = findPreset('llama-3.2-1b')!.config;
    expect(decodeShapeOf(tied)).toEqual({ parameters: parameterCount(tied), shape: { layers: 16, heads: 32, kvHeads: 8, headDim: 64, kvBytesPerElement: 4 } });
    const untied = findPreset('llama-3.1-8b')!.config;
    expect(decodeShapeOf(untied, 2).parameters).toBe(parameterCount(untied) - 128256 * 4096);
    expect(decodeShapeOf(untied, 2).shape.kvBytesPerElement).toBe(2);
  });

  it('rejects non-positive inputs with a typed error', () => {
    for (const bad of [{ bandwidthGBps: 0 }, { parameters: -1 }, { batch: 0 }, { computeGflops: 0 }]) {
      let error: unknown;
      try {
        predictDecode({ ...base, ...bad });
      } catch (e) {
        error = e;
      }
      expect(isTokenscopeError(error, 'bad-input')).toBe(true);
    }
  });
});

describe('device presets', () => {
  it('spec-sheet figures that teach batching: Llama 3.2 1B q4_0 decode is memory-bound at batch 1 and compute-bound at a large batch on every preset', () => {
    const { parameters, shape } = decodeShapeOf(findPreset('llama-3.2-1b')!.config);
    expect(new Set(DEVICE_PRESETS.map((d) => d.id)).size).toBe(DEVICE_PRESETS.length);
    for (const d of DEVICE_PRESETS) {
      expect(d.bandwidthGBps).toBeGreaterThan(10);
      // The ridge sits right of q4_0 decode's ~3.6 FLOP/byte on every one of them.
      expect(d.computeGflops / d.bandwidthGBps).toBeGreaterThan(2 / BYTES_PER_WEIGHT.q4_0);
      const s: DecodeScenario = {
        bandwidthGBps: d.bandwidthGBps,
        computeGflops: d.computeGflops,
        parameters,
        bytesPerWeight: BYTES_PER_WEIGHT.q4_0,
        batch: 1,
        context: 0,
        shape,
      };
      expect(predictDecode(s).bound).toBe('memory');
      const at = computeBoundBatch(s)!;
      expect(at).toBeGreaterThan(1);
      expect(predictDecode({ ...s, batch: at }).bound).toBe('compute');
    }
  });
});

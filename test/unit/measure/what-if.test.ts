import { describe, expect, it } from 'vitest';
import { findPreset } from '../../../src/model/catalog.ts';
import { matricesUnder } from '../../../src/model/choice.ts';
import { weightBytes } from '../../../src/kernels/weights.ts';
import {
  closestQuantization,
  computeBoundBatch,
  DEVICE_PRESETS,
  planWeightBytes,
  predictDecode,
  predictOverContext,
  weightsUnder,
  type DecodeScenario,
} from '../../../src/measure/what-if.ts';
import { decodeCeilingTokensPerS } from '../../../src/measure/roofline.ts';
import { isTokenscopeError } from '../../../src/errors.ts';

// Llama-3.2-1B: 16 layers, 32 heads, 8 KV heads of 64, tied embeddings; an f32 KV cache.
const config = findPreset('llama-3.2-1b')!.config;
const weights = weightsUnder(config, 'q4_0');
const base: DecodeScenario = { bandwidthGBps: 100, computeGflops: null, config, weights, kv: 'f32', batch: 1, context: 1 };
const matrixBytes = matricesUnder(config, 'q4_0').reduce((n, m) => n + weightBytes(m.format, m.rows, m.cols), 0);

describe('what-if decode predictions', () => {
  it('a plan under a quantization holds the bytes of its matrices, joined or not', () => {
    expect(planWeightBytes(weights)).toBe(matrixBytes);
    // Tied: the LM head is the embedding table.
    expect(weights.output).toBe(weights.tokenEmbd);
    expect(planWeightBytes(weightsUnder(config, 'f16'))).toBeGreaterThan(3 * matrixBytes);
  });

  it("at batch 1 and one position the ceiling is bandwidth / the step's bytes: every matrix once, plus activations", () => {
    const p = predictDecode(base);
    // A tied table is read whole as the LM head and once more for the embedding's row.
    expect(p.weightBytes).toBeGreaterThan(matrixBytes);
    expect(p.weightBytes).toBeLessThan(1.01 * matrixBytes);
    expect(p.tokensPerS).toBeCloseTo(decodeCeilingTokensPerS(100e9, p.bytesPerStep), 9);
    expect(p.perSequenceTokensPerS).toBeCloseTo(p.tokensPerS, 12);
    expect(p.bound).toBe('memory');
    expect(p.computeMs).toBeNull();
    expect(p.intensity).toBeCloseTo(p.flopsPerStep / p.bytesPerStep, 12);
  });

  it('the KV cache adds 2 · layers · kv_heads · head_dim · element bytes per attended position, so the ceiling falls', () => {
    const one = predictDecode(base);
    const deep = predictDecode({ ...base, context: 4097 });
    expect(deep.kvBytes - one.kvBytes).toBe(4096 * 2 * 16 * 8 * 64 * 4);
    const half = predictDecode({ ...base, kv: 'f16', context: 4097 });
    expect(half.kvBytes - predictDecode({ ...base, kv: 'f16' }).kvBytes).toBe(4096 * 2 * 16 * 8 * 64 * 2);
    const curve = predictOverContext(base, [1, 1024, 4096]);
    expect(curve.map((c) => c.context)).toEqual([1, 1024, 4096]);
    expect(curve[0].tokensPerS).toBeGreaterThan(curve[1].tokensPerS);
    expect(curve[1].tokensPerS).toBeGreaterThan(curve[2].tokensPerS);
  });

  it('a batch shares the weight reads: FLOPs grow B-fold, bytes far less, throughput about B-fold while memory-bound', () => {
    const one = predictDecode(base);
    const eight = predictDecode({ ...base, batch: 8 });
    expect(eight.flopsPerStep).toBeCloseTo(8 * one.flopsPerStep, 0);
    expect(eight.bytesPerStep).toBeLessThan(1.05 * one.bytesPerStep);
    expect(eight.tokensPerS / one.tokensPerS).toBeGreaterThan(7.5);
    expect(eight.tokensPerS / one.tokensPerS).toBeLessThan(8);
    expect(eight.intensity / one.intensity).toBeGreaterThan(7.5);
  });

  it('the compute roof caps a large batch, and computeBoundBatch finds the switch', () => {
    // About 2 FLOPs per weight per sequence: 2.5 GFLOP per token for Llama-3.2-1B.
    expect(predictDecode(base).flopsPerStep / 2.47e9).toBeGreaterThan(0.99);
    expect(predictDecode(base).flopsPerStep / 2.47e9).toBeLessThan(1.05);
    const s = { ...base, computeGflops: 1000 };
    const big = predictDecode({ ...s, batch: 1024 });
    expect(big.bound).toBe('compute');
    expect(big.tokensPerS).toBeCloseTo(1000e9 / (big.flopsPerStep / 1024), 6);
    const b = computeBoundBatch(s)!;
    expect(b).toBeGreaterThan(1);
    expect(predictDecode({ ...s, batch: b - 1 }).bound).toBe('memory');
    expect(predictDecode({ ...s, batch: b }).bound).toBe('compute');
    expect(computeBoundBatch(base)).toBeNull();
  });

  it('a measured model starts on its own quantization, else the mix whose planned bytes come closest', () => {
    expect(closestQuantization(config, 'q8_0', 1)).toBe('q8_0');
    const km = planWeightBytes(weightsUnder(config, 'q4_k_m'));
    expect(closestQuantization(config, 'mixed (q4_k, q6_k)', km)).toBe('q4_k_m');
    expect(closestQuantization(config, 'mixed (q8_0, f32)', planWeightBytes(weightsUnder(config, 'f32')) + 1)).toBe('f32');
  });

  it('rejects non-positive inputs with a typed error', () => {
    for (const bad of [{ bandwidthGBps: 0 }, { batch: 0 }, { computeGflops: 0 }]) {
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
    expect(new Set(DEVICE_PRESETS.map((d) => d.id)).size).toBe(DEVICE_PRESETS.length);
    for (const d of DEVICE_PRESETS) {
      expect(d.bandwidthGBps).toBeGreaterThan(10);
      const s: DecodeScenario = { ...base, bandwidthGBps: d.bandwidthGBps, computeGflops: d.computeGflops };
      // The ridge sits right of q4_0 decode's ~3.6 FLOP/byte on every one of them.
      expect(d.computeGflops / d.bandwidthGBps).toBeGreaterThan(predictDecode(s).intensity);
      expect(predictDecode(s).bound).toBe('memory');
      const at = computeBoundBatch(s)!;
      expect(at).toBeGreaterThan(1);
      expect(predictDecode({ ...s, batch: at }).bound).toBe('compute');
    }
  });
});

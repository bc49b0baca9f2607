import { describe, expect, it } from 'vitest';
import {
  accuracyPositions,
  accuracySkipReason,
  accuracySequence,
  comparePosition,
  klDivergence,
  linearArithmetic,
  logSoftmax,
  summarizeAccuracy,
  top1,
} from '../../../src/measure/accuracy.ts';
import { accuracyHeadline, accuracySchema, accuracySection } from '../../../src/measure/sections/accuracy.ts';

describe('KL(reference ‖ engine) over softmax of logits, float64', () => {
  it('is 0 for the same logits and for logits shifted by a constant (softmax ignores the shift)', () => {
    const x = [1.5, -2, 0.25, 3];
    expect(klDivergence(x, x)).toBe(0);
    expect(
      klDivergence(
        x,
        x.map((v) => v + 100),
      ),
    ).toBeLessThan(1e-15);
  });

  it('matches the closed form on two tokens', () => {
    // P = softmax([0, 0]) = (½, ½); Q = softmax([log 3, 0]) = (¾, ¼):
    // KL(P‖Q) = ½ log(½ / ¾) + ½ log(½ / ¼) = ½ log(4/3) ≈ 0.143841.
    expect(klDivergence([0, 0], [Math.log(3), 0])).toBeCloseTo(0.5 * Math.log(4 / 3), 12);
    // The other direction differs: KL(Q‖P) = ¾ log(3/2) + ¼ log(1/2) ≈ 0.130812.
    expect(klDivergence([Math.log(3), 0], [0, 0])).toBeCloseTo(0.75 * Math.log(1.5) + 0.25 * Math.log(0.5), 12);
  });

  it('stays finite for large logits in f32 (no overflow: the max is subtracted first)', () => {
    const ref = Float32Array.from([1000, 999, -1000]);
    const eng = Float32Array.from([999, 1000, -1000]);
    const kld = klDivergence(ref, eng);
    // P ≈ (e/(1+e), 1/(1+e)), Q swapped: KL = (p − q)(log p − log q) with p − q = (e−1)/(e+1), log p − log q = 1.
    expect(kld).toBeCloseTo((Math.E - 1) / (Math.E + 1), 10);
  });

  it('ignores tokens the reference gives probability 0 (underflow) and refuses different vocabularies', () => {
    expect(klDivergence([0, -1e6], [0, 0])).toBeCloseTo(Math.log(2), 12);
    expect(() => klDivergence([0, 1], [0, 1, 2])).toThrow(RangeError);
  });

  it('log-softmax sums to one in probability', () => {
    const l = logSoftmax([3, 1, -2, 0.5]);
    expect(Array.from(l, Math.exp).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
  });
});

describe('top-1 and the summary over positions', () => {
  it('top-1 takes the lowest index on ties, as the engine’s argmax does', () => {
    expect(top1([1, 3, 3, 2])).toBe(1);
  });

  it('counts agreement, finds the first disagreement and the p99 of the KL divergences', () => {
    const same = comparePosition([0, 2, 1], [0, 2, 1]);
    const near = comparePosition([0, 2, 1], [0, 2, 1.5]);
    const parted = comparePosition([0, 2, 1], [0, 1, 2]);
    expect(near.kld).toBeGreaterThan(0);
    expect(parted.engineTop1).toBe(2);
    const s = summarizeAccuracy([same, near, parted, same]);
    expect(s.positions).toBe(4);
    expect(s.top1_agreement).toBe(0.75);
    expect(s.first_disagreement).toBe(2);
    expect(s.kld_mean).toBeCloseTo((near.kld + parted.kld) / 4, 15);
    // numpy linear p99 over [0, 0, near, parted]: h = 3·0.99 = 2.97 → near + 0.97·(parted − near).
    expect(s.kld_p99).toBeCloseTo(near.kld + 0.97 * (parted.kld - near.kld), 15);
    expect(summarizeAccuracy([same, same]).first_disagreement).toBeNull();
    expect(() => summarizeAccuracy([])).toThrow(RangeError);
  });
});

describe('the sequence and its length', () => {
  it('is BOS then seeded ordinary ids, the same for the same seed, never BOS/EOS or a non-ordinary id', () => {
    const vocab = { vocabSize: 50, bosId: 1, eosId: 2 };
    const ordinary = (id: number) => id >= 10;
    const a = accuracySequence(32, 7, vocab, ordinary);
    expect(a).toHaveLength(32);
    expect(a[0]).toBe(1);
    expect(a.slice(1).every((id) => id >= 10 && id < 50)).toBe(true);
    expect(accuracySequence(32, 7, vocab, ordinary)).toEqual(a);
    expect(accuracySequence(32, 8, vocab, ordinary)).not.toEqual(a);
    expect(() => accuracySequence(4, 7, vocab, () => false)).toThrow(RangeError);
  });

  it('is bounded by the reference’s work (2 FLOPs per parameter per position) and the KV cache', () => {
    expect(accuracyPositions(260e3, 512)).toBe(64); // stories260K: the whole default
    expect(accuracyPositions(100e6, 512)).toBe(40); // 8e9 / 2e8
    expect(accuracyPositions(1.2e9, 512)).toBe(8); // never under 8
    expect(accuracyPositions(260e3, 20)).toBe(20); // no longer than the cache
  });
});

describe('which arithmetic the linears ran, from dispatch labels', () => {
  it('counts linear dispatches per weight format and activation precision, and skips the other kernels', () => {
    const labels = [
      'blk.0.attn_qkv:linear_q8dot_wide+q4_0:main{LANES=64}',
      'blk.0.attn_output:linear_q8dot_rows+q4_0:main{LANES=8}',
      'blk.0.ffn_down:matvec+f32:main{LANES=32}',
      // f16 weights take f16 inputs in every kernel (linear_io.wgsl's X_F16), as in llama.cpp's CPU backend.
      'blk.1.ffn_down:linear_rows+f16:main{LANES=8}',
      'blk.0.attn:attention_decode+kv_load_f16:main{}',
      'embedding:embedding+q4_0:main{}',
      'output:linear_q8dot_swar+q8_0:main{}',
      'prefill:matmul_tiled_f16+q4_0:main{}',
      'head.argmax:argmax+argmax_tree:main{}',
      // Q4_K_M's Q|K beside V in one dispatch: it counts for both formats.
      'layer1.qkv:linear_q8dot_wide+q4_k+q6_k:main{LANES=128}',
    ];
    expect(linearArithmetic(labels)).toEqual([
      { format: 'f16', precision: 'f16', linears: 1 },
      { format: 'f32', precision: 'f32', linears: 1 },
      { format: 'q4_0', precision: 'f16', linears: 1 },
      { format: 'q4_0', precision: 'int8', linears: 2 },
      { format: 'q4_k', precision: 'int8', linears: 1 },
      { format: 'q6_k', precision: 'int8', linears: 1 },
      { format: 'q8_0', precision: 'int8', linears: 1 },
    ]);
  });
});

describe('the accuracy section', () => {
  const measured = {
    reference: 'cpu-f32' as const,
    sequence: { seed: 7, token_ids: [1, 300, 301] },
    positions: 3,
    kld_mean: 2.2e-6,
    kld_p99: 1.5e-5,
    top1_agreement: 1,
    first_disagreement: null,
    kld_per_position: [1e-6, 2e-6, 3.6e-6],
    arithmetic: { linears: [{ format: 'q4_0', precision: 'int8' as const, linears: 16 }], kv_cache: 'f16' as const },
    wall_ms: 459,
    reference_load_ms: 40,
    reference_ms: 60,
    engine_ms: 348,
  };

  it('accepts the measured and the skipped form, and refuses a share above 1 or a negative KLD', () => {
    expect(() => accuracySchema.check(measured, 'accuracy')).not.toThrow();
    expect(() => accuracySchema.check({ skipped: 'synthetic weights: speed only' }, 'accuracy')).not.toThrow();
    expect(() => accuracySchema.check({ ...measured, top1_agreement: 1.5 }, 'accuracy')).toThrow(/top1_agreement/);
    expect(() => accuracySchema.check({ ...measured, kld_mean: -1 }, 'accuracy')).toThrow(/kld_mean/);
    expect(() => accuracySchema.check({ skipped: 3 }, 'accuracy')).toThrow(/skipped/);
  });

  it('reports a short table, the arithmetic and the cost, or why nothing was measured', () => {
    const report = accuracySection.report;
    const text = report(measured);
    expect(text).toMatch(/KLD mean\s+KLD p99\s+same top-1\s+first disagreement/);
    expect(text).toContain('2.20e-6');
    expect(text).toContain('100.0%');
    expect(text).toContain('none');
    expect(text).toContain('q4_0 weights × int8 activations (16 linears); KV cache f16');
    expect(text).toContain('459 ms');
    expect(report({ skipped: 'synthetic weights: speed only' })).toBe('Accuracy: not measured — synthetic weights: speed only.');
  });

  it('says where the reference ran: a worker beside the engine, between its steps, or nothing for older results', () => {
    expect(accuracySection.report({ ...measured, reference_thread: 'worker' })).toContain("; the reference ran in a worker, beside the engine's steps.");
    expect(accuracySection.report({ ...measured, reference_thread: 'main' })).toContain('; the reference ran between the engine steps.');
    expect(accuracySection.report(measured)).toContain('engine 348 ms).');
    expect(accuracyHeadline({ ...measured, reference_thread: 'worker' }).detail).toMatch(/The pass took 0\.5 s; the reference ran in a worker/);
    expect(() => accuracySchema.check({ ...measured, reference_thread: 'gpu' }, 'accuracy')).toThrow(/reference_thread/);
  });

  it('gives the verdict card its figure and sentence: what the fast kernels cost, or why not measured', () => {
    const h = accuracyHeadline({ ...measured, first_disagreement: 26, top1_agreement: 0.984375 });
    expect(h.figure).toBe('KLD 2.20e-6');
    expect(h.words).toContain('the fast kernels (q4_0 × int8; f16 KV) cost in accuracy');
    expect(h.words).toContain('98.4%');
    expect(h.detail).toContain('first parts from the reference at position 26');
    expect(h.detail).toContain('KLD p99');
    const f32 = accuracyHeadline({ ...measured, arithmetic: { linears: [{ format: 'f32', precision: 'f32', linears: 21 }], kv_cache: 'f32' } });
    expect(f32.words).toContain('f32 arithmetic (f32 KV) cost in accuracy');
    expect(f32.detail).toContain('never parts from the reference');
    expect(accuracyHeadline({ skipped: 'synthetic weights: speed only' })).toEqual({
      figure: '—',
      words: 'accuracy not measured: synthetic weights: speed only',
    });
  });

  it('--agreement llama.cpp: the schema takes the second reference, the table gives three rows, the card one clause', () => {
    const summary = (kld: number, first: number | null) => ({
      positions: 3,
      kld_mean: kld,
      kld_p99: kld * 2,
      top1_agreement: first === null ? 1 : 2 / 3,
      first_disagreement: first,
    });
    const withAgreement = {
      ...measured,
      agreement: {
        with: 'llama.cpp' as const,
        version: 'llama.cpp from node-llama-cpp 3.21.1 (prebuilt, CPU)',
        settings: 'CPU build, default F16 KV cache',
        against_reference: summary(8.04e-4, null),
        engine_against_it: summary(1.2e-3, 2),
        wall_ms: 4249,
      },
    };
    expect(() => accuracySchema.check(withAgreement, 'accuracy')).not.toThrow();
    expect(() => accuracySchema.check({ ...withAgreement, agreement: { ...withAgreement.agreement, with: 'vllm' } }, 'accuracy')).toThrow(/with/);
    const text = accuracySection.report(withAgreement);
    expect(text).toContain('Agreement with llama.cpp from node-llama-cpp 3.21.1 (prebuilt, CPU) — CPU build, default F16 KV cache:');
    expect(text).toMatch(/tokenscope vs f32 reference\s+2\.20e-6/);
    expect(text).toMatch(/llama\.cpp vs f32 reference\s+8\.04e-4\s+0\.00161\s+100\.0%\s+none/);
    expect(text).toMatch(/tokenscope vs llama\.cpp\s+0\.00120\s+0\.00240\s+66\.7%\s+position 2/);
    expect(accuracySection.report(measured)).not.toContain('Agreement');
    const words = accuracyHeadline(withAgreement).agreement;
    expect(accuracyHeadline(measured).agreement).toBeUndefined();
    expect(words).toContain(
      'Against llama.cpp from node-llama-cpp 3.21.1 (prebuilt, CPU) on the same file: its own arithmetic lies KLD 8.04e-4 from the f32 reference (never parts)',
    );
    expect(words).toContain('ours lies 0.00120 from it (same top-1 66.7%, first parts at position 2).');
  });

  it('drops the per-position KLDs for a link and compares only measured sections', () => {
    const trimmed = accuracySection.trim['per-token'].trim(measured);
    expect(trimmed).not.toHaveProperty('kld_per_position');
    expect(accuracySection.trim['per-token'].trim({ skipped: 'x' })).toBeNull();
    const rows = accuracySection.compare.rows(measured, { ...measured, kld_mean: 4.4e-6 });
    expect(rows.find((r) => r.key === 'kld_mean')).toMatchObject({ ratio: 2, better: 'a' });
    expect(accuracySection.compare.rows(measured, { skipped: 'x' })).toEqual([]);
  });
});

describe('when a run measures accuracy', () => {
  it('auto: real models under 100 M parameters; on: any real model the reference can hold; off: none; synthetic weights never', () => {
    expect(accuracySkipReason({ synthetic: false, parameters: 260e3 }, 'auto')).toBeNull();
    expect(accuracySkipReason({ synthetic: false, parameters: 360e6 }, 'auto')).toMatch(/360 M parameters.*--accuracy on/);
    expect(accuracySkipReason({ synthetic: false, parameters: 360e6 }, 'on')).toBeNull();
    expect(accuracySkipReason({ synthetic: false, parameters: 1.2e9 }, 'on')).toMatch(/4\.5 GiB of f32 weights/);
    expect(accuracySkipReason({ synthetic: true, parameters: 15e6 }, 'on')).toMatch(/^synthetic weights: speed only/);
    expect(accuracySkipReason({ synthetic: false, parameters: 260e3 }, 'off')).toMatch(/turned off/);
  });
});

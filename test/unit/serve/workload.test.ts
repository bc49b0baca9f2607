import { describe, expect, it } from 'vitest';
import { mean, stdPopulation } from '../../../src/measure/stats.ts';
import { isTokenscopeError } from '../../../src/errors.ts';
import { arrivalTimesMs, generateWorkload, mulberry32, sampleGamma, sampleLength, type WorkloadSpec } from '../../../src/serve/workload.ts';

const spec: WorkloadSpec = {
  requests: 50,
  rate: 4,
  burstiness: 1,
  seed: 42,
  vocabSize: 32000,
  prompt: { kind: 'uniform', min: 16, max: 256 },
  output: { kind: 'lognormal', median: 64, sigma: 0.5, max: 512 },
};

const gaps = (times: number[]) => times.map((t, i) => t - (i === 0 ? 0 : times[i - 1]));
const cv = (xs: number[]) => stdPopulation(xs) / mean(xs);

describe('mulberry32', () => {
  it('is deterministic per seed and stays in [0, 1)', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const draws = Array.from({ length: 1000 }, () => a());
    expect(draws).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    expect(mean(draws)).toBeCloseTo(0.5, 1);
    expect(mulberry32(8)()).not.toBe(mulberry32(7)());
  });
});

describe('Marsaglia–Tsang gamma', () => {
  // Gamma(k, θ): mean kθ, CV² = 1/k.
  it.each([[0.25], [0.5], [1], [4]])('shape %d: mean kθ and CV² = 1/k over 50k draws', (k) => {
    const random = mulberry32(1);
    const theta = 1 / (3 * k); // rate 3 req/s, burstiness k
    const xs = Array.from({ length: 50_000 }, () => sampleGamma(random, k, theta));
    expect(Math.abs(mean(xs) - 1 / 3) / (1 / 3)).toBeLessThan(0.03);
    expect(Math.abs(cv(xs) ** 2 - 1 / k) * k).toBeLessThan(0.06);
  });
});

describe('arrivals (vLLM get_request semantics)', () => {
  it('rate = Infinity sends everything at 0', () => {
    expect(arrivalTimesMs(5, Infinity, 1, mulberry32(1))).toEqual([0, 0, 0, 0, 0]);
  });

  it('the last arrival lands at exactly N / rate, and the mean gap is 1 / rate', () => {
    const times = arrivalTimesMs(200, 5, 1, mulberry32(3));
    expect(times[199]).toBeCloseTo(40_000, 9); // 200 / 5 req/s = 40 s
    expect(mean(gaps(times))).toBeCloseTo(200, 9); // 1 / 5 s
    expect(times[0]).toBeGreaterThan(0); // the first request also waits one gap
  });

  it('burstiness sets the CV of the gaps: CV² = 1 / burstiness (rescaling does not change it)', () => {
    for (const [b, expected] of [
      [0.25, 2],
      [1, 1],
      [4, 0.5],
    ]) {
      const g = gaps(arrivalTimesMs(20_000, 10, b, mulberry32(11)));
      expect(Math.abs(cv(g) - expected) / expected).toBeLessThan(0.05);
    }
  });

  it('burstiness = Infinity spaces requests evenly', () => {
    expect(arrivalTimesMs(4, 2, Infinity, mulberry32(1))).toEqual([500, 1000, 1500, 2000]);
  });

  it('rejects a non-positive rate or burstiness', () => {
    for (const [rate, b] of [
      [0, 1],
      [-1, 1],
      [1, 0],
    ]) {
      try {
        arrivalTimesMs(3, rate, b, mulberry32(1));
        expect.unreachable();
      } catch (e) {
        expect(isTokenscopeError(e, 'bad-input')).toBe(true);
      }
    }
  });
});

describe('lengths', () => {
  it('fixed, uniform (both ends included) and clamped log-normal', () => {
    const random = mulberry32(5);
    expect(sampleLength(random, { kind: 'fixed', tokens: 128 })).toBe(128);
    const uniform = Array.from({ length: 5000 }, () => sampleLength(random, { kind: 'uniform', min: 3, max: 6 }));
    expect(new Set(uniform)).toEqual(new Set([3, 4, 5, 6]));
    const logn = Array.from({ length: 5001 }, () => sampleLength(random, { kind: 'lognormal', median: 100, sigma: 1, max: 400 }));
    const sorted = [...logn].sort((a, b) => a - b);
    expect(Math.abs(sorted[2500] - 100)).toBeLessThanOrEqual(5);
    expect(Math.max(...logn)).toBe(400);
    expect(Math.min(...logn)).toBeGreaterThanOrEqual(1);
  });

  it('rejects an empty uniform range', () => {
    expect(() => sampleLength(mulberry32(1), { kind: 'uniform', min: 5, max: 4 })).toThrow(/uniform max/);
  });
});

describe('generateWorkload', () => {
  it('is a pure function of the spec and seed', () => {
    expect(generateWorkload(spec)).toEqual(generateWorkload(spec));
    expect(generateWorkload({ ...spec, seed: 43 })).not.toEqual(generateWorkload(spec));
  });

  it('gives ids in arrival order, prompt ids inside the vocabulary, lengths inside their ranges', () => {
    const w = generateWorkload(spec);
    expect(w.map((r) => r.id)).toEqual([...Array(50).keys()]);
    expect(w[49].arrivalMs).toBeCloseTo(12_500, 9); // 50 / 4 req/s
    for (const r of w) {
      expect(r.prompt.length).toBeGreaterThanOrEqual(16);
      expect(r.prompt.length).toBeLessThanOrEqual(256);
      expect(r.prompt.every((t) => Number.isInteger(t) && t >= 0 && t < 32000)).toBe(true);
      expect(r.maxOutputTokens).toBeGreaterThanOrEqual(1);
    }
  });

  it('changing the output distribution leaves arrivals and prompts unchanged', () => {
    const a = generateWorkload(spec);
    const b = generateWorkload({ ...spec, output: { kind: 'fixed', tokens: 10 } });
    expect(b.map((r) => [r.arrivalMs, r.prompt])).toEqual(a.map((r) => [r.arrivalMs, r.prompt]));
    expect(b.every((r) => r.maxOutputTokens === 10)).toBe(true);
  });
});

describe('request classes', () => {
  const classes = [
    { name: 'chat', share: 0.7, slo: { ttft: 500, tpot: 50 } },
    { name: 'batch', share: 0.3, slo: {}, prompt: { kind: 'fixed', tokens: 300 } as const, output: { kind: 'fixed', tokens: 7 } as const },
  ];

  it('draws each request’s class by share, seeded, with the class’s own lengths where it has them', () => {
    const w = generateWorkload({ ...spec, requests: 2000, classes });
    expect(generateWorkload({ ...spec, requests: 2000, classes })).toEqual(w);
    const batch = w.filter((r) => r.className === 'batch');
    expect(w.every((r) => r.className === 'chat' || r.className === 'batch')).toBe(true);
    // Binomial(2000, 0.3): sd ≈ 20.5, so ±100 is about 5 sd.
    expect(Math.abs(batch.length - 600)).toBeLessThan(100);
    expect(batch.every((r) => r.prompt.length === 300 && r.maxOutputTokens === 7)).toBe(true);
    expect(w.filter((r) => r.className === 'chat').every((r) => r.prompt.length <= 256)).toBe(true);
    // Shares need not sum to 1: they are normalised.
    const scaled = generateWorkload({ ...spec, requests: 2000, classes: classes.map((c) => ({ ...c, share: c.share * 10 })) });
    expect(scaled.map((r) => r.className)).toEqual(w.map((r) => r.className));
  });

  it('classes without lengths of their own leave arrivals, prompts and outputs as they were', () => {
    const plain = generateWorkload(spec);
    const classed = generateWorkload({ ...spec, classes: [classes[0], { ...classes[1], prompt: undefined, output: undefined }] });
    expect(classed.map(({ className, ...r }) => (void className, r))).toEqual(plain);
    expect(plain.every((r) => r.className === undefined)).toBe(true);
  });

  it('refuses hostile classes with a clear error', () => {
    const bad = [
      [],
      [{ name: 'a', share: 0, slo: {} }],
      [{ name: 'a', share: -1, slo: {} }],
      [{ name: 'a', share: NaN, slo: {} }],
      [{ name: '', share: 1, slo: {} }],
      [{ name: 'a b', share: 1, slo: {} }],
      [
        { name: 'a', share: 1, slo: {} },
        { name: 'a', share: 1, slo: {} },
      ],
      [{ name: 'a', share: 1, slo: { ttft: -5 } }],
    ];
    for (const c of bad) expect(() => generateWorkload({ ...spec, classes: c })).toThrow(expect.objectContaining({ code: 'bad-input' }));
  });
});

describe('prefix workloads', () => {
  const base: WorkloadSpec = {
    requests: 6,
    rate: Infinity,
    prompt: { kind: 'fixed', tokens: 8 },
    output: { kind: 'fixed', tokens: 4 },
    vocabSize: 500,
    seed: 7,
  };

  it('a shared prefix starts every request with the same seeded system prompt, and leaves the rest of the draws as they were', () => {
    const plain = generateWorkload(base);
    const shared = generateWorkload({ ...base, sharedPrefix: 20 });
    const system = shared[0].prompt.slice(0, 20);
    for (const [i, r] of shared.entries()) {
      expect(r.prompt.length).toBe(28);
      expect(r.prompt.slice(0, 20)).toEqual(system);
      expect(r.prompt.slice(20)).toEqual(plain[i].prompt);
    }
    expect(generateWorkload({ ...base, sharedPrefix: 20 })).toEqual(shared);
    expect(generateWorkload({ ...base, sharedPrefix: 20, seed: 8 })[0].prompt.slice(0, 20)).not.toEqual(system);
  });

  it('conversations: C × T requests, each later turn following the one before with a new message', () => {
    const w = generateWorkload({ ...base, rate: 10, sharedPrefix: 4, conversations: { count: 2, turns: 3 } });
    expect(w.map((r) => r.follows)).toEqual([undefined, 0, 1, undefined, 3, 4]);
    // First turns carry the system prompt; later turns only their new message.
    expect(w.map((r) => r.prompt.length)).toEqual([12, 8, 8, 12, 8, 8]);
    expect(w[3].prompt.slice(0, 4)).toEqual(w[0].prompt.slice(0, 4));
    expect(w[1].arrivalMs).toBe(w[0].arrivalMs);
    expect(w[3].arrivalMs).toBeGreaterThan(w[0].arrivalMs);
  });

  it('refuses a prefix or conversation count below 1', () => {
    const refused = (spec: Partial<WorkloadSpec>) => {
      try {
        generateWorkload({ ...base, ...spec });
      } catch (e) {
        return isTokenscopeError(e, 'bad-input') ? (e as Error).message : 'other error';
      }
      return 'accepted';
    };
    expect(refused({ sharedPrefix: 0 })).toMatch(/shared prefix must be an integer ≥ 1/);
    expect(refused({ conversations: { count: 2, turns: 0 } })).toMatch(/turns per conversation/);
    expect(refused({ conversations: { count: -1, turns: 2 } })).toMatch(/conversation count/);
  });
});

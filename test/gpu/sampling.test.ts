import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { argmax, sample, type SamplingParams } from '../../src/kernels/sampling.ts';
import { argmax as argmaxRef } from '../../src/model/reference.ts';
import { testGpu } from './context.ts';
import { gpuCase, randn, readU32, seeded, submit, type GpuScope } from './harness.ts';
import { sampleTwin } from './sampling-reference.ts';

/** R rows of `vocab` logits with the row maximum planted at several indices (ties). */
function logitsWithTies(rand: () => number, R: number, vocab: number): Float32Array {
  const data = randn(rand, R * vocab, 3);
  for (let r = 0; r < R; r++) {
    const row = data.subarray(r * vocab, (r + 1) * vocab);
    const top = row.reduce((m, v) => Math.max(m, v), -Infinity) + 1;
    for (let n = 0; n < 3; n++) row[Math.floor(rand() * vocab)] = top;
  }
  return data;
}

/** 99.9th percentile of chi-square with k degrees of freedom (Wilson–Hilferty, z = 3.09). */
function chiSquare999(k: number): number {
  const a = 2 / (9 * k);
  return k * (1 - a + 3.09 * Math.sqrt(a)) ** 3;
}

function rowsOf(data: Float32Array, vocab: number): Float32Array[] {
  return Array.from({ length: data.length / vocab }, (_, r) => data.subarray(r * vocab, (r + 1) * vocab));
}

async function draw(s: GpuScope, logits: GPUBuffer, R: number, vocab: number, steps: SamplingParams[]): Promise<Uint32Array[]> {
  const tokens = s.keep(storageBuffer(s.ctx.device, 'tokens', 4 * R));
  const kernel = await sample(s.ctx, 'test.sample', logits, tokens, R, vocab, steps[0]);
  s.track(kernel.dispatch);
  const out: Uint32Array[] = [];
  for (const p of steps) {
    kernel.write(p);
    submit(s.ctx, [kernel.dispatch]);
    out.push(await readU32(s.ctx, tokens, R));
  }
  return out;
}

// 'two passes' forces the GPU path (chunk winners, then a merge per row) with awkward chunk sizes:
// a row of 32,003 logits in chunks of 700 ends on a partial chunk, and a 7-logit row in chunks of
// 3 has more chunks than some rows have logits.
for (const variant of ['default', 'no subgroups', 'two passes'] as const) {
  describe(`argmax (${variant})`, () => {
    let ctx: GpuContext;
    const chunkFor = (vocab: number) => (variant === 'two passes' ? (vocab < 100 ? 3 : 700) : undefined);
    beforeAll(async () => {
      ctx = await testGpu(variant === 'no subgroups' ? new Set(['subgroups']) : undefined);
    });
    afterAll(() => ctx?.destroy());

    for (const [R, vocab] of [
      [1, 1],
      [3, 7],
      [17, 1000],
      [2, 32003],
    ] as const) {
      it(`(${R}, ${vocab}) is exact, ties → lowest index`, async () => {
        await gpuCase(ctx, 'argmax', async (s) => {
          const data = logitsWithTies(seeded(R * vocab), R, vocab);
          const tokens = s.keep(storageBuffer(ctx.device, 'tokens', 4 * R));
          const ds = s.track(await argmax(ctx, 'test.argmax', s.upload('logits', data), tokens, R, vocab, chunkFor(vocab)));
          if (variant === 'two passes') expect(ds).toHaveLength(2);
          submit(ctx, ds);
          expect(Array.from(await readU32(ctx, tokens, R))).toEqual(rowsOf(data, vocab).map(argmaxRef));
        });
      });
    }

    it('handles rows of −inf and a single finite logit', async () => {
      await gpuCase(ctx, 'argmax −inf', async (s) => {
        const vocab = 300;
        const data = new Float32Array(2 * vocab).fill(-Infinity);
        data[vocab + 257] = -1e30;
        const tokens = s.keep(storageBuffer(ctx.device, 'tokens', 8));
        submit(ctx, s.track(await argmax(ctx, 'test.argmax', s.upload('logits', data), tokens, 2, vocab, chunkFor(vocab))));
        expect(Array.from(await readU32(ctx, tokens, 2))).toEqual([0, 257]);
      });
    });
  });
}

describe('sample', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  const PARAMS: Omit<SamplingParams, 'seed' | 'step'>[] = [
    { temperature: 0, topK: 0, topP: 1 },
    { temperature: 1, topK: 0, topP: 1 },
    { temperature: 0.7, topK: 40, topP: 1 },
    { temperature: 1.3, topK: 0, topP: 0.9 },
    { temperature: 0.8, topK: 50, topP: 0.8 },
    { temperature: 1, topK: 1, topP: 1 },
    { temperature: 1, topK: 0, topP: 0 },
  ];

  it('matches its CPU twin token for token (same RNG, same thresholds)', async () => {
    await gpuCase(ctx, 'sample vs twin', async (s) => {
      const [R, vocab] = [17, 1003];
      const data = logitsWithTies(seeded(11), R, vocab);
      const rows = rowsOf(data, vocab);
      const logits = s.upload('logits', data);
      const steps = PARAMS.flatMap((p, i) => [0, 1, 2].map((step) => ({ ...p, seed: 1234 + i, step })));
      const got = await draw(s, logits, R, vocab, steps);
      let close = 0;
      steps.forEach((p, i) => {
        rows.forEach((row, r) => {
          const twin = sampleTwin(row, r, p);
          expect(twin.kept).toContain(got[i][r]);
          // f32 (GPU) vs f64 (twin) mass sums differ by ~1e-6 relative: only a call that close may differ.
          if (twin.margin < 1e-5) close++;
          else expect(got[i][r], `step ${i} row ${r} ${JSON.stringify(p)}`).toBe(twin.token);
        });
      });
      expect(close).toBeLessThan(steps.length * R * 0.01);
    });
  });

  it('temperature 0 is argmax with ties → lowest index', async () => {
    await gpuCase(ctx, 'sample greedy', async (s) => {
      const [R, vocab] = [3, 515];
      const data = logitsWithTies(seeded(3), R, vocab);
      const [tokens] = await draw(s, s.upload('logits', data), R, vocab, [{ temperature: 0, topK: 5, topP: 0.5, seed: 9, step: 4 }]);
      expect(Array.from(tokens)).toEqual(rowsOf(data, vocab).map(argmaxRef));
    });
  });

  it('draws with the softmax frequencies inside the kept set and never outside it', async () => {
    await gpuCase(ctx, 'sample statistics', async (s) => {
      // 256 rows of the same 40 logits per step (the row is part of the hash): 16 steps (4096
      // draws) over all 40 tokens, 4 steps (1024 draws, ≥ 5 expected per kept token) with filters.
      const [R, vocab] = [256, 40];
      const row = randn(seeded(21), vocab, 1.5);
      const data = new Float32Array(R * vocab);
      for (let r = 0; r < R; r++) data.set(row, r * vocab);
      const logits = s.upload('logits', data);
      for (const [p, stepCount] of [
        [{ temperature: 1, topK: 0, topP: 1 }, 16],
        [{ temperature: 0.9, topK: 8, topP: 1 }, 4],
        [{ temperature: 1.1, topK: 20, topP: 0.7 }, 4],
      ] as const) {
        const steps = Array.from({ length: stepCount }, (_, step) => ({ ...p, seed: 77, step }));
        const counts = new Array<number>(vocab).fill(0);
        for (const tokens of await draw(s, logits, R, vocab, steps)) for (const t of tokens) counts[t]++;
        const kept = sampleTwin(row, 0, steps[0]).kept;
        const weights = kept.map((i) => Math.exp((row[i] - Math.max(...row)) / p.temperature));
        const total = weights.reduce((a, b) => a + b, 0);
        const n = R * stepCount;
        counts.forEach((c, i) => {
          if (!kept.includes(i)) expect(c, `token ${i} is outside the kept set`).toBe(0);
        });
        // Pearson chi-square over the kept set against its 99.9th percentile (a false alarm 1 in 1000).
        const chi2 = kept.reduce((x, i, j) => {
          const expected = (n * weights[j]) / total;
          return x + (counts[i] - expected) ** 2 / expected;
        }, 0);
        expect(chi2, JSON.stringify(p)).toBeLessThan(chiSquare999(kept.length - 1));
        expect(Math.min(...weights) / total, 'every kept token expects ≥ 5 draws').toBeGreaterThan(5 / n);
        expect(kept.length).toBeLessThanOrEqual(p.topK || vocab);
      }
    });
  });
});

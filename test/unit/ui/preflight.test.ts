import { describe, expect, it } from 'vitest';
import { checkPresetFits, contextFor } from '../../../src/jobs/job-spec.ts';
import { isTokenscopeError } from '../../../src/errors.ts';
import { modelFloorSeconds, phasePlan, preflight, stepOf } from '../../../src/ui/preflight.ts';
import { defaultSetup, jobOf, type RunSetup } from '../../../src/ui/setup.ts';
import type { Quantization } from '../../../src/model/recipes.ts';

const cpu = { cpuLike: true };

describe('preflight', () => {
  it('llama-bench with the CPU default model (stories15M, 256 positions) is refused up front, offering pp256 · tg128', () => {
    const setup: RunSetup = { ...defaultSetup(cpu), mode: 'llama-bench' };
    expect(setup.model).toMatchObject({ kind: 'preset', id: 'stories15m' });
    const p = preflight(setup)!;
    expect(p.problem).toMatch(/pp512 · tg128 needs 512 positions; TinyStories stories15M holds 256/);
    expect(p.fix!.label).toBe('Use pp256 · tg128 instead');
    expect(preflight(p.fix!.setup)).toBeNull();
    const { job } = jobOf(p.fix!.setup);
    expect(job.llamaBench).toEqual({ nPrompt: 256, nGen: 128 });
    expect(() => checkPresetFits(job)).not.toThrow();
    expect(contextFor(job, 256)).toBe(256);
  });

  it('the job itself refuses the same setup before measuring anything (the CLI path)', () => {
    const { job } = jobOf({ ...defaultSetup(cpu), mode: 'llama-bench' });
    let error: unknown;
    try {
      checkPresetFits(job);
    } catch (e) {
      error = e;
    }
    expect(isTokenscopeError(error, 'bad-input')).toBe(true);
    expect((error as Error).message).toMatch(/needs 512 positions; TinyStories stories15M holds 256/);
    expect((error as { hint: string }).hint).toMatch(/pp256 and tg128/);
    expect((error as { hint: string }).hint).not.toMatch(/--/);
  });

  it('a latency sweep past the context keeps the prompts that fit; a serving workload is shortened', () => {
    const latency: RunSetup = { ...defaultSetup(cpu), sweep: { promptLengths: [16, 64, 250], gen: 16, reps: 2, profile: false } };
    const p = preflight(latency)!;
    expect(p.problem).toMatch(/250-token prompt plus 16 output tokens needs 265 positions/);
    expect(p.fix!.setup.sweep.promptLengths).toEqual([16, 64]);
    expect(preflight(p.fix!.setup)).toBeNull();
    const serve = defaultSetup(cpu);
    const big: RunSetup = {
      ...serve,
      mode: 'serve',
      serve: { ...serve.serve, prompt: { kind: 'fixed', tokens: 200 }, output: { kind: 'fixed', tokens: 100 } },
    };
    const q = preflight(big)!;
    expect(q.problem).toMatch(/299 positions/);
    expect(preflight(q.fix!.setup)).toBeNull();
  });

  it('what fits passes, and roofs only never needs a model', () => {
    expect(preflight(defaultSetup(cpu))).toBeNull();
    expect(preflight({ ...defaultSetup(cpu), mode: 'roofs', llamaBench: { nPrompt: 99999, nGen: 1 } })).toBeNull();
  });
});

describe('phase plan and duration floor', () => {
  it('steps k of n follow the job’s progress labels', () => {
    const plan = phasePlan(defaultSetup(cpu));
    expect(plan).toEqual(['roofs', 'model', 'latency']);
    expect(stepOf(plan, 'roofs: streaming read')).toBe(1);
    expect(stepOf(plan, 'model: uploading')).toBe(2);
    expect(stepOf(plan, 'latency: prompt 16, rep 1')).toBe(3);
    expect(stepOf(plan, 'starting')).toBe(0);
    expect(phasePlan({ ...defaultSetup(cpu), mode: 'roofs' })).toEqual(['roofs']);
  });

  it('the model phases’ floor follows the roofs: half the bandwidth, twice the decode floor', () => {
    const setup = { ...defaultSetup(cpu), sweep: { promptLengths: [16], gen: 65, reps: 1, profile: false } };
    const fast = modelFloorSeconds(setup, { bandwidthGBps: 100, computeGflops: 1e6, matmulGflops: 1e6 })!;
    const slow = modelFloorSeconds(setup, { bandwidthGBps: 50, computeGflops: 1e6, matmulGflops: 1e6 })!;
    expect(slow / fast).toBeCloseTo(2, 6);
    expect(modelFloorSeconds({ ...setup, mode: 'roofs' }, { bandwidthGBps: 1, computeGflops: 1, matmulGflops: 1 })).toBeNull();
  });

  it('reads the bytes of the formats a quantization gives each matrix (a llama-quantize mix too)', () => {
    const roofs = { bandwidthGBps: 100, computeGflops: 1e9, matmulGflops: 1e9 };
    const floor = (quant: Quantization) => {
      const setup = {
        ...defaultSetup(cpu),
        model: { kind: 'preset' as const, id: 'llama-3.2-1b', quant },
        sweep: { promptLengths: [1], gen: 101, reps: 0, profile: false },
      };
      return modelFloorSeconds(setup, roofs)!;
    };
    // Bandwidth-bound at these roofs: the floor scales with bytes per weight. Q4_0 is 18/32 bytes,
    // F16 2, and Q4_K_M (Q4_K 144/256 with a Q6_K LM head and Q6_K attn_v/ffn_down in some layers)
    // lies between Q4_0 and Q8_0 — never the 4 bytes of f32 it was taken for.
    expect(floor('f16') / floor('q4_0')).toBeCloseTo(2 / (18 / 32), 1);
    expect(floor('q4_k_m')).toBeGreaterThan(floor('q4_0'));
    expect(floor('q4_k_m')).toBeLessThan(floor('q8_0'));
  });
});

describe("preflight: the work bound (the CLI's --yes)", () => {
  it('refuses a sweep past the bound, offers "Run it anyway", and asks again when the work grows', () => {
    const base = defaultSetup(cpu);
    const sweep = (reps: number): RunSetup => ({ ...base, sweep: { ...base.sweep, promptLengths: [16, 64, 128, 200], gen: 16, reps } });
    expect(preflight(sweep(100))).toBeNull();
    const p = preflight(sweep(1000))!;
    // 1001 requests (reps + the warm-up) per length × (16 + 64 + 128 + 200 + 4 × 16) tokens.
    expect(p.problem).toBe(
      'This run would process about 472,472 tokens (prompt + output, every repetition), more than the 250,000 allowed without confirmation; lower Repetitions per length, Prompt lengths, Output tokens, or run it anyway.',
    );
    expect(p.fix!.label).toBe('Run it anyway');
    const confirmed = p.fix!.setup;
    expect(preflight(confirmed)).toBeNull();
    expect(jobOf(confirmed).job.latency!.reps).toBe(1000);
    expect(preflight({ ...confirmed, sweep: { ...confirmed.sweep, gen: 17 } })?.fix?.label).toBe('Run it anyway');
  });

  it('refuses serving arrivals spread over more than an hour', () => {
    const base = defaultSetup(cpu);
    const p = preflight({ ...base, mode: 'serve', serve: { ...base.serve, rate: 0.001 } })!;
    expect(p.problem).toMatch(
      /^16 requests at 0.001 req\/s take 16,000 s to arrive, more than the 3600 s allowed without confirmation; raise Arrival rate, lower Requests/,
    );
    expect(p.fix!.label).toBe('Run it anyway');
    // Past a week no confirmation is offered.
    const never = preflight({ ...base, mode: 'serve', serve: { ...base.serve, rate: 0.001, requests: 1000 } })!;
    expect(never.problem).toMatch(/waits at most 604,800 s \(a week\) for its arrivals: raise Arrival rate or lower Requests\.$/);
    expect(never.fix).toBeNull();
  });
});

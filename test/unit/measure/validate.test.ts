import { describe, expect, it } from 'vitest';
import { newResult, prefillGemmRoof, SCHEMA_VERSION, type Ceilings, type CeilingMeasurement } from '../../../src/measure/schema.ts';
import { formatCeilings } from '../../../src/measure/sections/environment.ts';
import { decodeReport, encodeReport } from '../../../src/share/permalink.ts';
import {
  arrivalLimitProblem,
  listProblem,
  MAX_UNCONFIRMED_TOKENS,
  plannedTokens,
  rangeProblem,
  SETTING_RANGES,
  validateResult,
  workProblem,
  type SettingName,
} from '../../../src/measure/validate.ts';
import { withReadDrift, workingSetBytes } from '../../../src/measure/ceilings.ts';
import { readRoofDrift } from '../../../src/measure/roof-checks.ts';
import { linkRounded } from '../../../src/share/codec.ts';

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
    expect((await decodeReport(await encodeReport(r))).ceilings).toEqual(linkRounded(r.ceilings));
  });
  it('names the compute roof and reads the ridge point against it: f32 without shader-f16, f16 where that is faster', () => {
    const c = validateResult(sample()).ceilings!;
    expect(formatCeilings(c)).toContain(
      'Compute roof: the f32 FMA peak. Ridge point (compute roof / read roof): 10.00 FLOP/byte; the prefill GEMM (f32) reaches 50% of that peak.',
    );
    const f16 = { ...c, f16_gflops: 400, measurements: { ...c.measurements, f16_gflops: measurement(400, 'GFLOP/s') } };
    expect(formatCeilings(f16)).toContain(
      'Compute roof: the f16 FMA peak (the faster of the two FMA peaks). Ridge point (compute roof / read roof): 40.00 FLOP/byte; the prefill GEMM (f32) reaches 13% of that peak.',
    );
  });
  it('states the read roof after the model phases as one sentence, with or without its drift warning', () => {
    const c = validateResult(sample()).ceilings!;
    const steady = formatCeilings({ ...c, drift: readRoofDrift(10, 9.5) });
    expect(steady).toContain('Read roof after the model phases: 9.50 GB/s (×0.95 of the roof in use), within ±15%.');
    const drifted = formatCeilings({ ...c, drift: readRoofDrift(10, 8) });
    expect(drifted).toMatch(
      /Read roof after the model phases: 8\.00 GB\/s \(×0\.80 of the roof in use\)\. Warning: The streaming read moved from 10\.0 to 8\.00 GB\/s .*carry that much doubt\.$/m,
    );
  });
  it('a read roof raised at the end of a run: the later measurement is the roof, its checks redone, the first kept in the drift', () => {
    const c = validateResult(sample()).ceilings!;
    // A first read of 3 GB/s, below the copy kernel's read half (4 GB/s); raised to 12 it passes that check.
    const low = { ...c, read_bandwidth_gbps: 3, measurements: { ...c.measurements, read_bandwidth_gbps: measurement(3, 'GB/s') } };
    const after = { ...measurement(12, 'GB/s'), shape: '16 workgroups' };
    const raised = withReadDrift(low, after, false);
    expect(raised.read_bandwidth_gbps).toBe(12);
    expect(raised.measurements.read_bandwidth_gbps).toEqual(after);
    expect(raised.drift).toMatchObject({ read_after_gbps: 12, ratio: 4, raised_from_gbps: 3 });
    expect(raised.consistency!.read_of_copy_read_half).toBeCloseTo(12 / 4, 12);
    expect(raised.consistency!.warnings).toEqual([]);
    expect(validateResult({ ...sample(), ceilings: raised }).ceilings!.drift!.raised_from_gbps).toBe(3);
    expect(formatCeilings(raised)).toMatch(/Read roof after the model phases: 12\.0 GB\/s, ×4\.00 the 3\.00 GB\/s measured first: the roof in use\./);
    // A roof that fell stays (the best the device sustained) and is flagged.
    const fell = withReadDrift(c, measurement(5, 'GB/s'), false);
    expect(fell.read_bandwidth_gbps).toBe(10);
    expect(fell.drift!.raised_from_gbps).toBeUndefined();
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

describe('settings: one table of ranges', () => {
  it.each([
    ['reps', '0', '--reps must be an integer from 1 to 1000, got 0'],
    ['reps', '100000', '--reps must be an integer from 1 to 1000, got 100000'],
    ['reps', '2.5', '--reps must be an integer from 1 to 1000, got 2.5'],
    ['gen', '0', '--gen must be an integer from 1 to 4096, got 0'],
    ['warmup', '1000000', '--warmup must be an integer from 0 to 100, got 1000000'],
    ['rate', '1e-9', '--rate must be a number from 0.001 to 1000000 or inf, got 1e-9'],
    ['rate', 'abc', '--rate must be a number from 0.001 to 1000000 or inf, got "abc"'],
    ['rate', '1e9', '--rate must be a number from 0.001 to 1000000 or inf, got 1e9'],
    ['burstiness', '1e-300', '--burstiness must be a number from 0.01 to 1000, got 1e-300'],
    ['requests', '1000000', '--requests must be an integer from 1 to 10000, got 1000000'],
    ['requests', '0', '--requests must be an integer from 1 to 10000, got 0'],
    ['probe-mib', '0', '--probe-mib must be an integer from 1 to 4096, got 0'],
    ['top-p', '-5', '--top-p must be a number above 0 and at most 1, got -5'],
    ['top-p', '0', '--top-p must be a number above 0 and at most 1, got 0'],
    ['context', '0', '--context must be an integer from 1 to 16777216, got 0'],
    ['max-tokens-per-step', '0', '--max-tokens-per-step must be an integer from 1 to 32768, got 0'],
    ['dollars-per-hour', '-1e308', '--dollars-per-hour must be a number above 0 and at most 100000, got -1e308'],
    ['watts', 'NaN', '--watts must be a number above 0 and at most 1000000, got "NaN"'],
    ['memory-gib', '', '--memory-gib must be a number above 0 and at most 1024, got ""'],
    ['temperature', 'Infinity', '--temperature must be a number from 0 to 100, got Infinity'],
  ] as [SettingName, string, string][])("--%s %s is refused in the user's words", (name, raw, message) => {
    expect(rangeProblem(name, raw)).toBe(message);
  });

  it.each([
    ['reps', '1'],
    ['reps', 1000],
    ['warmup', 0],
    ['top-p', 1],
    ['rate', '0.5'],
    ['burstiness', 0.01],
    ['seed', 2 ** 32 - 1],
    ['dollars-per-hour', 2.5],
  ] as [SettingName, number | string][])('--%s %s is accepted', (name, value) => {
    expect(rangeProblem(name, value)).toBeNull();
  });

  it('names the setting as each surface spells it', () => {
    expect(rangeProblem('reps', 0, '?reps=')).toBe('?reps= must be an integer from 1 to 1000, got 0');
    expect(rangeProblem('gen', 5000, 'Output tokens')).toBe('Output tokens must be an integer from 1 to 4096, got 5000');
  });

  it('every range is a real interval', () => {
    for (const [name, r] of Object.entries(SETTING_RANGES)) {
      expect(r.min, name).toBeLessThan(r.max);
      expect(rangeProblem(name as SettingName, r.max)).toBeNull();
    }
  });

  it('lists: at most 16 values, each in range', () => {
    expect(listProblem('prompt-lengths', [16, 64])).toBeNull();
    expect(
      listProblem(
        'prompt-lengths',
        Array.from({ length: 1000 }, (_, i) => i + 1),
      ),
    ).toBe('--prompt-lengths takes at most 16 values, got 1000');
    expect(
      listProblem(
        'prompt-lengths',
        Array.from({ length: 60000 }, () => 8),
      ),
    ).toBe('--prompt-lengths takes at most 16 values, got 60000');
    expect(listProblem('prompt-lengths', ['16', '0'])).toBe('each value of --prompt-lengths must be an integer from 1 to 32768, got 0');
    expect(listProblem('sweep-batch', [])).toBe('--sweep-batch needs at least one value');
  });
});

describe('settings: the work bound', () => {
  const sweep = (reps: number) => ({ latency: { promptLengths: [16, 64, 256, 1024], gen: 64, reps, warmup: 1 } });
  it('counts prompt + output tokens of every repetition and warm-up', () => {
    expect(plannedTokens(sweep(5))).toBe(6 * (16 + 64 + 256 + 1024 + 4 * 64));
    expect(plannedTokens({ serve: { requests: 16, rate: Infinity, longestPrompt: 256, longestOutput: 128, runs: 1 } })).toBe(16 * 384);
    // The defaults are far inside the bound.
    expect(plannedTokens(sweep(5)) * 20).toBeLessThan(MAX_UNCONFIRMED_TOKENS);
  });
  it('refuses more work than the bound, saying what to lower and how to confirm', () => {
    expect(workProblem(sweep(5), 'add --yes')).toBeNull();
    expect(workProblem(sweep(1000), 'add --yes')).toBe(
      'This run would process about 1,617,616 tokens (prompt + output, every repetition), more than the 250,000 allowed without confirmation; lower --reps, --prompt-lengths, --gen, or add --yes',
    );
    expect(workProblem({ serve: { requests: 10000, rate: 1e6, longestPrompt: 256, longestOutput: 128, runs: 1 } }, 'add --yes')).toMatch(
      /about 3,840,000 tokens .* lower --requests, --prompt-len, --output-len, or add --yes$/,
    );
  });
  it('refuses arrivals spread over more than an hour', () => {
    const slow = { serve: { requests: 16, rate: 0.001, longestPrompt: 32, longestOutput: 16, runs: 1 } };
    expect(workProblem(slow, 'add --yes')).toBe(
      '16 requests at 0.001 req/s take 16,000 s to arrive, more than the 3600 s allowed without confirmation; raise --rate, lower --requests, or add --yes',
    );
    expect(workProblem({ serve: { ...slow.serve, rate: 1 } }, 'add --yes')).toBeNull();
  });
  it('refuses arrivals over a week even when confirmed (no timer waits that long)', () => {
    const serve = { requests: 10000, rate: 0.001, longestPrompt: 32, longestOutput: 16, runs: 1 };
    expect(arrivalLimitProblem({ serve })).toBe(
      '10000 requests at 0.001 req/s take 10,000,000 s to arrive; a run waits at most 604,800 s (a week) for its arrivals: raise --rate or lower --requests',
    );
    expect(arrivalLimitProblem({ serve: { ...serve, requests: 600 } })).toBeNull();
    expect(arrivalLimitProblem({ serve: { ...serve, rate: Infinity } })).toBeNull();
    expect(arrivalLimitProblem(sweep(5))).toBeNull();
  });
});

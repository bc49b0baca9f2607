import { describe, expect, it } from 'vitest';
import { defaultJob } from '../../../src/jobs/job-spec.ts';
import { defaultSetup, jobOf, parseLengths, parsePageParams, setupProblem, type RunSetup } from '../../../src/ui/setup.ts';

const cpu = { cpuLike: true };
const gpu = { cpuLike: false };

describe('page setup', () => {
  it('without parameters the setup is defaultJob(caps): one click runs it', () => {
    for (const caps of [cpu, gpu]) {
      const { job } = jobOf(defaultSetup(caps));
      const expected = defaultJob(caps);
      expect(job.probe).toBe(true);
      expect(job.model).toEqual(expected.model);
      expect(job.latency).toEqual({ ...expected.latency, profile: false });
      expect(job.probeMiB).toBeUndefined();
      expect(job.protocol).toBeUndefined();
      expect(job.probeShapes).toBeUndefined();
    }
  });

  it('URL parameters override the defaults (the tests keep SwiftShader runs short this way)', () => {
    const { params, problems } = parsePageParams(
      '?preset=stories260k&quant=q8_0&lengths=8,16&gen=8&reps=2&profile=1&probe-mib=4&probe-reps=2&probe-grids=16,64',
    );
    expect(problems).toEqual([]);
    const { job } = jobOf(defaultSetup(cpu, params));
    expect(job.model).toEqual({ preset: 'stories260k', quant: 'q8_0' });
    expect(job.latency).toEqual({ promptLengths: [8, 16], gen: 8, reps: 2, profile: true });
    expect(job.probeMiB).toBe(4);
    expect(job.protocol).toEqual({ warmup: 1, minReps: 2, maxReps: 2, minDurationMs: 0 });
    expect(job.probeShapes).toEqual({ bandwidthWorkgroups: [16, 64] });
  });

  it('bad parameters are reported and ignored, never fatal', () => {
    const { params, problems } = parsePageParams('?mode=warp&preset=<img>&quant=q2&lengths=8,x&gen=0&reps=1e9&probe-mib=-1&probe-grids=0');
    expect(params).toEqual({});
    expect(problems).toHaveLength(8);
    expect(problems.join(' ')).toContain('?preset=<img> is not a known preset');
    expect(defaultSetup(cpu, params).sweep.promptLengths).toEqual(defaultJob(cpu).latency!.promptLengths);
  });

  it('each mode and model source becomes the job it names', () => {
    const base = defaultSetup(cpu);
    const roofs = jobOf({ ...base, mode: 'roofs' }).job;
    expect(roofs.model).toBeUndefined();
    expect(roofs.latency).toBeUndefined();
    const llama = jobOf({ ...base, mode: 'llama-bench' }).job;
    expect(llama.llamaBench).toEqual({ nPrompt: 512, nGen: 128 });
    expect(llama.latency).toBeUndefined();
    expect(jobOf({ ...base, model: { kind: 'known', id: 'stories260k-gguf', quant: null } }).job.model?.url).toMatch(/stories260K\.gguf$/);
    expect(jobOf({ ...base, model: { kind: 'url', url: ' https://x.test/m.gguf ', quant: 'q4_0' } }).job.model).toEqual({
      url: 'https://x.test/m.gguf',
      quant: 'q4_0',
    });
    // The URL field takes llama.cpp's hf:// form too.
    expect(jobOf({ ...base, model: { kind: 'url', url: 'hf://org/repo/m-Q4_K_M.gguf', quant: null } }).job.model?.url).toBe(
      'https://huggingface.co/org/repo/resolve/main/m-Q4_K_M.gguf',
    );
    const file = new File([new Uint8Array(4)], 'm.gguf');
    const local = jobOf({ ...base, model: { kind: 'file', file, quant: null } });
    expect(local.file).toBe(file);
    expect(local.job.model).toEqual({ quant: undefined });
  });

  it('says what is missing before a run can start', () => {
    const base = defaultSetup(cpu);
    const with_ = (s: Partial<RunSetup>) => setupProblem({ ...base, ...s });
    expect(with_({})).toBeNull();
    expect(with_({ model: { kind: 'url', url: 'ftp://nope', quant: null } })).toMatch(/address of a GGUF/);
    expect(with_({ model: { kind: 'url', url: 'hf://org/repo', quant: null } })).toMatch(/hf:\/\/ORG\/REPO\/FILE\.gguf/);
    expect(with_({ model: { kind: 'url', url: 'hf://org/repo/m.gguf', quant: null } })).toBeNull();
    expect(with_({ model: { kind: 'file', file: null, quant: null } })).toMatch(/Choose a GGUF file/);
    expect(with_({ mode: 'roofs', model: { kind: 'file', file: null, quant: null } })).toBeNull();
    expect(parseLengths('8, 16 32')).toEqual([8, 16, 32]);
    expect(parseLengths('8,,0')).toBeNull();
    expect(parseLengths('')).toBeNull();
  });
});

describe("page settings: the CLI's ranges (validate.ts)", () => {
  it('URL parameters out of range are named with the range, and ignored', () => {
    const many = Array.from({ length: 17 }, (_, i) => i + 1).join(',');
    const { params, problems } = parsePageParams(`?reps=0&gen=5000&probe-mib=0&lengths=${many}&mode=serve&rate=1e-9&requests=100000&max-batch=65`);
    expect(problems).toEqual([
      '?lengths= takes at most 16 values, got 17; using the default.',
      '?gen= must be an integer from 1 to 4096, got 5000; using the default.',
      '?reps= must be an integer from 1 to 1000, got 0; using the default.',
      '?probe-mib= must be an integer from 1 to 4096, got 0; using the default.',
      '?requests= must be an integer from 1 to 10000, got 100000; using the default.',
      '?max-batch= must be an integer from 1 to 64, got 65; using the default.',
      '?rate= must be a number from 0.001 to 1000000 or inf, got 1e-9; using the default.',
    ]);
    expect(params).toEqual({ mode: 'serve' });
  });

  it("the form refuses what the CLI refuses, in the form's words", () => {
    const base = defaultSetup(cpu);
    const sweep = (s: Partial<RunSetup['sweep']>): RunSetup => ({ ...base, sweep: { ...base.sweep, ...s } });
    expect(setupProblem(sweep({ reps: 0 }))).toBe('Repetitions per length must be an integer from 1 to 1000, got 0.');
    expect(setupProblem(sweep({ reps: 100000 }))).toBe('Repetitions per length must be an integer from 1 to 1000, got 100000.');
    expect(setupProblem(sweep({ gen: 0 }))).toBe('Output tokens must be an integer from 1 to 4096, got 0.');
    expect(setupProblem(sweep({ promptLengths: [16, 40000] }))).toBe('each value of Prompt lengths must be an integer from 1 to 32768, got 40000.');
    const serve = (s: Partial<RunSetup['serve']>): RunSetup => ({ ...base, mode: 'serve', serve: { ...base.serve, ...s } });
    expect(setupProblem(serve({ requests: 1e6 }))).toBe('Requests must be an integer from 1 to 10000, got 1000000.');
    expect(setupProblem(serve({ rate: 1e-9 }))).toBe('Arrival rate must be a number from 0.001 to 1000000 or inf, got 1e-9.');
    expect(setupProblem(serve({ rate: Infinity }))).toBeNull();
  });
});

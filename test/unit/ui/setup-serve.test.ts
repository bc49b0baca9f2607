import { describe, expect, it } from 'vitest';
import { defaultServe, jobOf, defaultSetup, parsePageParams, setupProblem, type RunSetup } from '../../../src/ui/setup.ts';

const cpu = { cpuLike: true };

describe('page setup: serving and WebLLM', () => {
  it('serving defaults are the CLI’s, and ?mode=serve runs them', () => {
    expect(defaultServe(true)).toMatchObject({
      requests: 16,
      rate: Infinity,
      burstiness: 1,
      prompt: { kind: 'fixed', tokens: 32 },
      output: { kind: 'fixed', tokens: 16 },
      max_batch: 4,
      max_tokens_per_step: 64,
      chunk: 32,
      slo: {},
      seed: 42,
    });
    expect(defaultServe(false)).toMatchObject({ prompt: { tokens: 256 }, output: { tokens: 128 }, max_tokens_per_step: 512 });
    const { job } = jobOf(defaultSetup(cpu, parsePageParams('?mode=serve').params));
    expect(job.serve).toEqual(defaultServe(true));
    expect(job.latency).toBeUndefined();
  });

  it('URL parameters override the serving settings', () => {
    const { params, problems } = parsePageParams(
      '?mode=serve&requests=6&max-batch=3&rate=20&prompt-len=8&output-len=4&sweep-batch=1,2&sweep-rate=1&slo=ttft=500,tpot=50&chunk=0',
    );
    expect(problems).toEqual([]);
    const { job } = jobOf(defaultSetup(cpu, params));
    expect(job.serve).toMatchObject({
      requests: 6,
      max_batch: 3,
      rate: 20,
      prompt: { kind: 'fixed', tokens: 8 },
      output: { kind: 'fixed', tokens: 4 },
      sweep_batch: [1, 2],
      sweep_rate: true,
      slo: { ttft: 500, tpot: 50 },
      chunk: null,
    });
  });

  it('bad serving parameters are reported and ignored', () => {
    const { params, problems } = parsePageParams('?mode=serve&rate=-1&sweep-batch=0,x&slo=fast&max-batch=999');
    expect(problems).toHaveLength(4);
    expect(defaultSetup(cpu, params).serve).toEqual(defaultServe(true));
  });

  it('URL parameters carry prefix caching, its workloads and the admission settings; bad ones are named', () => {
    const { params, problems } = parsePageParams(
      '?mode=serve&prefix-cache=off&shared-prefix=64&conversations=3&turns=4&max-queue=0&timeout-ms=2000&degrade-over=2&degrade-to=8&sla=99.9',
    );
    expect(problems).toEqual([]);
    const setup = defaultSetup(cpu, params);
    expect(setupProblem(setup)).toBeNull();
    expect(jobOf(setup).job.serve).toMatchObject({
      prefix_cache: false,
      shared_prefix: 64,
      conversations: 3,
      turns: 4,
      requests: 12,
      max_queue: 0,
      timeout_ms: 2000,
      degrade_over: 2,
      degrade_to: 8,
      sla_percent: 99.9,
    });
    const bad = parsePageParams('?mode=serve&prefix-cache=maybe&shared-prefix=0&turns=-2&sla=0');
    expect(bad.problems.join(' ')).toMatch(/prefix-cache= must be on or off.*shared-prefix= must be an integer from 1.*turns= must be.*sla= must be/);
    expect(defaultSetup(cpu, bad.params).serve).toEqual(defaultServe(true));
  });

  it('the form refuses zero prefixes, turns without conversations and a prefix past every context', () => {
    const setup = defaultSetup(cpu, parsePageParams('?mode=serve').params);
    const problem = (serve: Partial<RunSetup['serve']>) => setupProblem({ ...setup, serve: { ...setup.serve, ...serve } });
    expect(problem({ shared_prefix: 0 })).toMatch(/Shared prefix tokens must be an integer from 1/);
    expect(problem({ turns: 3 })).toMatch(/need a number of conversations/);
    expect(problem({ shared_prefix: 32768 })).toMatch(/needs 32815 positions/);
    expect(problem({ max_queue: 0, degrade_over: 0, shared_prefix: 64 })).toBeNull();
  });

  it('a rate sweep needs an SLO', () => {
    const setup = defaultSetup(cpu, parsePageParams('?mode=serve&sweep-rate=1').params);
    expect(setupProblem(setup)).toMatch(/needs at least one SLO/);
    expect(setupProblem({ ...setup, serve: { ...setup.serve, slo: { ttft: 100 } } })).toBeNull();
  });

  it('a WebLLM model runs engine webllm, with our preset of its family only for a side-by-side', () => {
    const base = defaultSetup(cpu);
    const pick = (sideBySide: boolean): RunSetup => ({ ...base, model: { kind: 'webllm', id: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC', quant: null, sideBySide } });
    expect(jobOf(pick(true)).job).toMatchObject({
      engine: 'webllm',
      webllm: { model: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' },
      model: { preset: 'qwen2.5-0.5b', quant: 'q4_0' },
      latency: { promptLengths: [16, 64] },
    });
    expect(jobOf(pick(false)).job.model).toBeUndefined();
    expect(setupProblem({ ...pick(false), mode: 'serve' })).toMatch(/latency sweep only/);
  });
});

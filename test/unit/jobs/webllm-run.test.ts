/**
 * WebLLM's sweep under our protocol, through the real adapter's token path with a scripted engine
 * on a fake clock: what is run (warm-ups, reps, exact prompt ids), what is stored (records, rows,
 * verdicts with and without a cost model), where WebLLM's own numbers are flagged, the
 * side-by-side with our sweep, the job's refusals, the report and the section validators.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Capabilities } from '../../../src/gpu/capabilities.ts';
import { runJob } from '../../../src/jobs/job.ts';
import { sweepPrompt } from '../../../src/measure/latency.ts';
import { latencyRow, type LengthCosts } from '../../../src/measure/latency-summary.ts';
import { formatSection } from '../../../src/jobs/report.ts';
import { newResult } from '../../../src/measure/schema.ts';
import { sideBySide } from '../../../src/jobs/side-by-side.ts';
import { runWebLLMLatency, type WebLLMCostModel, type WebLLMSection, type WebLLMSettings } from '../../../src/jobs/webllm-run.ts';
import type { GpuContext } from '../../../src/gpu/device.ts';
import { validateResult } from '../../../src/measure/validate.ts';
import { adapterFor, loadWebLLM, type WebLlmLoadOptions, type WebLLMEngine } from '../../../src/webllm/adapter.ts';
import type { WebLLMModel } from '../../../src/webllm/catalog.ts';
import { describeDifferences } from '../../../src/webllm/differences.ts';
import { environment, latency, MODEL, ROOFS } from '../share/fixtures.ts';

// The job imports the adapter lazily; its loadWebLLM here hands over a scripted engine.
vi.mock('../../../src/webllm/adapter.ts', async (original) => ({
  ...(await original<typeof import('../../../src/webllm/adapter.ts')>()),
  loadWebLLM: vi.fn(),
}));

let now = 0;
beforeEach(() => {
  now = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
});
afterEach(() => vi.restoreAllMocks());

const LLAMA: WebLLMModel = {
  id: 'Llama-3.2-1B-Instruct-q4f32_1-MLC',
  family: 'Llama-3.2-1B',
  quantization: 'q4f32_1',
  vramMB: 1128.8,
  lowResource: true,
  contextWindow: 4096,
};

/** WebLLM's rates off by these factors from what our clock sees (1: they agree). */
interface Skew {
  prefill: number;
  decode: number;
}

/**
 * The token path of WebLLM's engine: a prefill takes 0.5 ms per prompt token + 10 ms, a decode
 * step 4 ms; runtimeStatsText reports the last request's rates times `skew`.
 */
class ScriptedEngine implements WebLLMEngine {
  prompts: number[][] = [];
  private decodes = 0;
  constructor(private readonly skew: Skew = { prefill: 1, decode: 1 }) {}
  chat = { completions: { create: () => Promise.reject(new Error('the sweep uses the token path')) } };
  async resetChat() {
    this.decodes = 0;
  }
  async forwardTokensAndSample(ids: number[], isPrefill: boolean) {
    if (isPrefill) this.prompts.push(ids);
    else this.decodes++;
    now += isPrefill ? prefillMs(ids.length) : DECODE_MS;
    return 7;
  }
  async runtimeStatsText() {
    const P = this.prompts[this.prompts.length - 1].length;
    const decode = this.decodes > 0 ? ((1000 / DECODE_MS) * this.skew.decode).toFixed(4) : 'NaN';
    return `prefill: ${((P / prefillMs(P)) * 1000 * this.skew.prefill).toFixed(4)} tokens/sec, decoding: ${decode} tokens/sec`;
  }
  interruptGenerate() {}
  async unload() {}
}

const prefillMs = (P: number) => 0.5 * P + 10;
const DECODE_MS = 4;

const SETTINGS: WebLLMSettings = { prompt_lengths: [16, 64], output_tokens: 8, reps: 3, warmup: 2, cooldown_ms: 0, seed: 42, vocab_size: 128256, bos_id: 1 };

const costsOf = (P: number): LengthCosts => ({
  prefill: { flops: 2.4e9 * P, bytes: 7e8 + 3e5 * P },
  decodeStep: { flops: 2.4e9, bytes: 7e8 + 32768 * (P + 4) },
});
const COST_MODEL: WebLLMCostModel = { model_id: 'llama-3.2-1b', quantization: 'q4_0', costsAt: costsOf, roofs: ROOFS };

async function sweep(
  options: { engine?: ScriptedEngine; settings?: Partial<WebLLMSettings>; costModel?: WebLLMCostModel; visible?: () => Promise<boolean> } = {},
) {
  const engine = options.engine ?? new ScriptedEngine();
  const updates: number[] = [];
  const progress: number[] = [];
  const section = await runWebLLMLatency(
    adapterFor(engine, LLAMA),
    { ...SETTINGS, ...options.settings },
    { onRequest: (s) => updates.push(s.requests.length), onProgress: (_step, f) => progress.push(f), waitUntilVisible: options.visible },
    options.costModel,
  );
  return { engine, section, updates, progress };
}

describe('runWebLLMLatency: the protocol', () => {
  it('runs the warm-ups untimed, then reps per length, each prompt the exact ids our engine gets', async () => {
    const { engine, section, updates, progress } = await sweep();
    // 2 lengths × (2 warm-ups + 3 reps).
    expect(engine.prompts.map((p) => p.length)).toEqual([16, 16, 16, 16, 16, 64, 64, 64, 64, 64]);
    const reps = [-1, -2, 0, 1, 2];
    expect(engine.prompts).toEqual([16, 64].flatMap((P) => reps.map((rep) => sweepPrompt(P, rep, 42, 128256, 1))));
    for (const ids of engine.prompts) {
      expect(ids[0]).toBe(1);
      expect(Math.max(...ids)).toBeLessThan(128256);
    }
    expect(section.requests.map((r) => [r.prompt_tokens, r.rep, r.path])).toEqual([
      [16, 0, 'tokens'],
      [16, 1, 'tokens'],
      [16, 2, 'tokens'],
      [64, 0, 'tokens'],
      [64, 1, 'tokens'],
      [64, 2, 'tokens'],
    ]);
    // After each timed request and each finished row.
    expect(updates).toEqual([1, 2, 3, 3, 4, 5, 6, 6]);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(1);
  });

  it('pauses between requests for the cool-down', async () => {
    const timeout = vi.spyOn(globalThis, 'setTimeout');
    await sweep({ settings: { prompt_lengths: [4], reps: 2, warmup: 1, cooldown_ms: 3 } });
    expect(timeout.mock.calls.filter(([, ms]) => ms === 3).length).toBe(3);
  });

  it('leaves requests run while the tab was hidden out of the rows', async () => {
    let calls = 0;
    const { section } = await sweep({ settings: { prompt_lengths: [16], warmup: 1 }, visible: async () => ++calls === 3 });
    expect(section.requests.map((r) => r.disturbed)).toEqual([false, true, false]);
    expect(section.rows[0].n).toBe(2);
  });

  it('refuses a length that overflows the context window before running anything', async () => {
    const engine = new ScriptedEngine();
    await expect(sweep({ engine, settings: { prompt_lengths: [16, 4090] } })).rejects.toMatchObject({
      code: 'bad-input',
      message: expect.stringMatching(/4090 .* 4096-position/),
    });
    expect(engine.prompts).toEqual([]);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const run = runWebLLMLatency(adapterFor(new ScriptedEngine(), LLAMA), SETTINGS, { signal: controller.signal });
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
  });
});

describe('runWebLLMLatency: rows', () => {
  it('has our timing fields and null cost fields without a cost model', async () => {
    const { section } = await sweep();
    expect(section.cost_source).toBeNull();
    expect(section.verdicts).toEqual([]);
    const [row] = section.rows;
    expect(row).toMatchObject({
      prompt_tokens: 16,
      output_tokens: 8,
      n: 3,
      prefill_tokens_per_s: 16 / 0.018,
      prefill_flops: null,
      decode_bandwidth_gbps: null,
      decode_ceiling_tokens_per_s: null,
      gpu_decode_ms: null,
    });
    expect(row.ttft.p50).toBe(18);
    expect(row.tpot!.p50).toBe(4);
    expect(row.decode_tokens_per_s).toBe(250);
  });

  it('is our latencyRow on the stand-in cost model, with its verdicts', async () => {
    const { section } = await sweep({ costModel: COST_MODEL });
    expect(section.cost_source).toEqual({ model_id: 'llama-3.2-1b', quantization: 'q4_0' });
    for (const P of [16, 64]) {
      const row = section.rows.find((r) => r.prompt_tokens === P);
      expect(row).toEqual(
        latencyRow(
          section.requests.filter((r) => r.prompt_tokens === P),
          costsOf(P),
          ROOFS,
        ),
      );
    }
    expect(section.rows[1].decode_bandwidth_gbps).toBeCloseTo(costsOf(64).decodeStep.bytes / 0.004 / 1e9, 9);
    expect(section.verdicts.map((v) => [v.prompt_tokens, v.decode?.bound])).toEqual([
      [16, 'overhead-bound'],
      [64, 'overhead-bound'],
    ]);
  });
});

describe('runWebLLMLatency: our clock against WebLLM’s', () => {
  it('flags nothing when WebLLM’s rates match our clock', async () => {
    const { section } = await sweep();
    expect(section.comparisons.length).toBe(6);
    expect(section.comparisons.map((c) => c.flagged)).toEqual(new Array(6).fill([]));
    expect(section.flagged_count).toBe(0);
    expect(section.comparisons[0]).toMatchObject({ prompt_tokens: 16, rep: 0, ours: { ttft_ms: 18, tpot_ms: 4 } });
  });

  it('flags a decode rate 30% above ours on every request, but not a prefill rate 10% above', async () => {
    const { section } = await sweep({ engine: new ScriptedEngine({ prefill: 1.1, decode: 1.3 }) });
    expect(section.flagged_count).toBe(6);
    for (const c of section.comparisons) {
      expect(c.flagged).toEqual(['tpot_ms', 'decode_tokens_per_s']);
      expect(c.disagreement.decode_tokens_per_s).toBeCloseTo(1 / 1.3 - 1, 4);
      expect(c.disagreement.prefill_tokens_per_s).toBeCloseTo(1 / 1.1 - 1, 4);
    }
  });
});

describe('sideBySide', () => {
  it('pairs rows by prompt length with WebLLM ÷ tokenscope ratios, differences and roofline points', async () => {
    const ours = latency([16, 64, 256], 3, 8);
    const { section } = await sweep({ costModel: COST_MODEL });
    const s = sideBySide({ latency: ours, model: MODEL }, section);
    expect(s.tokenscope_model).toBe('llama-3.2-1b');
    expect(s.webllm_model).toBe(LLAMA.id);
    expect(s.rows.map((r) => r.prompt_tokens)).toEqual([16, 64]);
    const [row] = s.rows;
    expect(row.webllm).toEqual({ ttft_ms: 18, tpot_ms: 4, prefill_tokens_per_s: 16 / 0.018, decode_tokens_per_s: 250 });
    expect(row.tokenscope.ttft_ms).toBe(ours.rows[0].ttft.p50);
    expect(row.ratio.ttft_ms).toBeCloseTo(18 / ours.rows[0].ttft.p50, 12);
    expect(row.ratio.decode_tokens_per_s).toBeCloseTo(250 / ours.rows[0].decode_tokens_per_s!, 12);
    expect(s.differences).toEqual(describeDifferences(MODEL, LLAMA));
    // Prefill and decode at each length: ours at three lengths, WebLLM's (estimated) at two.
    expect(s.points.filter((p) => !p.estimate).map((p) => p.engine)).toEqual(new Array(6).fill('tokenscope'));
    const webllmDecode = s.points.filter((p) => p.estimate && p.phase === 'decode');
    expect(webllmDecode.map((p) => p.prompt_tokens)).toEqual([16, 64]);
    expect(webllmDecode[1].gbps).toBeCloseTo(section.rows[1].decode_bandwidth_gbps!, 9);
  });
});

describe('runJob with engine webllm', () => {
  const caps = {
    adapter: environment().adapter,
    features: [],
    shaderF16: false,
    limits: { maxStorageBufferBindingSize: 2 ** 30 },
    cpuLike: false,
  } as unknown as Capabilities;
  const ctx = (runtime: 'node' | 'browser') => ({ runtime, caps }) as GpuContext;

  it('in the browser loads the model with the device capabilities, runs the sweep and unloads', async () => {
    const engine = new ScriptedEngine();
    const unload = vi.spyOn(engine, 'unload');
    let options: WebLlmLoadOptions | undefined;
    vi.mocked(loadWebLLM).mockImplementation(async (_id, o) => {
      options = o;
      return adapterFor(engine, LLAMA);
    });
    const partials: number[] = [];
    const job = { probe: false, engine: 'webllm' as const, webllm: { model: LLAMA.id }, latency: { promptLengths: [16], gen: 8, reps: 2, cooldownMs: 0 } };
    const result = await runJob(ctx('browser'), job, new Set(), {
      onPartial: (r) => partials.push((r.webllm as WebLLMSection | undefined)?.requests.length ?? -1),
    });
    expect(loadWebLLM).toHaveBeenCalledWith(LLAMA.id, expect.anything());
    expect(options?.capabilities).toBe(caps);
    const section = result.webllm as WebLLMSection;
    // Llama-3.2-1B's preset gives the vocabulary; warm-up 1 and cool-down 0 as asked.
    expect(section.settings).toEqual({ prompt_lengths: [16], output_tokens: 8, reps: 2, warmup: 1, cooldown_ms: 0, seed: 42, vocab_size: 128256, bos_id: 1 });
    expect(section.requests.length).toBe(2);
    // No tokenscope model ran: no cost model, no side-by-side.
    expect(section.cost_source).toBeNull();
    expect(result.side_by_side).toBeUndefined();
    expect(partials).toEqual([1, 2, 2, 2]);
    expect(unload).toHaveBeenCalledOnce();
    expect(() => validateResult(JSON.parse(JSON.stringify(result)))).not.toThrow();
  });

  it('refuses Node before touching the GPU', async () => {
    const job = { probe: true, engine: 'webllm' as const, webllm: { model: LLAMA.id }, latency: { promptLengths: [16], gen: 8, reps: 1 } };
    await expect(runJob(ctx('node'), job, new Set())).rejects.toMatchObject({
      code: 'bad-input',
      message: 'WebLLM runs in the browser runtime only.',
      hint: 'Use --runtime browser.',
    });
  });

  it('refuses a family without a tokenscope preset (no vocabulary for the prompt ids)', async () => {
    const job = {
      probe: true,
      engine: 'webllm' as const,
      webllm: { model: 'Phi-3.5-mini-instruct-q4f16_1-MLC' },
      latency: { promptLengths: [16], gen: 8, reps: 1 },
    };
    await expect(runJob(ctx('browser'), job, new Set())).rejects.toMatchObject({ code: 'bad-input', message: expect.stringMatching(/Phi-3\.5-mini/) });
  });
});

describe('the webllm and side_by_side sections', () => {
  async function result(engine = new ScriptedEngine(), reps = SETTINGS.reps) {
    const { section } = await sweep({ engine, costModel: COST_MODEL, settings: { reps } });
    const r = newResult(environment());
    r.model = MODEL;
    r.latency = latency([16, 64], 3, 8);
    r.webllm = section;
    r.side_by_side = sideBySide({ latency: r.latency as ReturnType<typeof latency>, model: MODEL }, section);
    return JSON.parse(JSON.stringify(r)) as typeof r & { webllm: WebLLMSection };
  }

  it('validate as written, with or without a cost model', async () => {
    expect(validateResult(await result()).webllm).toBeDefined();
    const { section } = await sweep();
    expect(() => validateResult({ ...newResult(environment()), webllm: JSON.parse(JSON.stringify(section)) })).not.toThrow();
  });

  it.each<[string, (r: Awaited<ReturnType<typeof result>>) => void, RegExp]>([
    ['an unknown flagged metric', (r) => (r.webllm.comparisons[0].flagged = ['bogus' as 'ttft_ms']), /webllm\.comparisons\[0\]\.flagged\[0\]/],
    ['a request of another engine', (r) => ((r.webllm.requests[0] as { engine: string }).engine = 'tokenscope'), /webllm\.requests\[0\]\.engine/],
    [
      'a negative ratio',
      (r) => ((r.side_by_side as { rows: { ratio: { tpot_ms: number } }[] }).rows[0].ratio.tpot_ms = -1),
      /side_by_side\.rows\[0\]\.ratio\.tpot_ms/,
    ],
    [
      'a null cost field in our own rows',
      (r) => ((r.latency as unknown as { rows: { prefill_flops: null }[] }).rows[0].prefill_flops = null),
      /latency\.rows\[0\]\.prefill_flops/,
    ],
  ])('reject %s', async (_label, spoil, path) => {
    const r = await result();
    spoil(r);
    expect(() => validateResult(r)).toThrow(path);
  });

  it('print the rows, the disagreements and what differs', async () => {
    const text = formatSection(await result(new ScriptedEngine({ prefill: 1, decode: 1.3 }), 5), 'webllm');
    expect(text).toMatch(/WebLLM Llama-3\.2-1B-Instruct-q4f32_1-MLC \(q4f32_1/);
    expect(text).toMatch(/decode GB\/s is an estimate: .* llama-3\.2-1b \(q4_0\)/);
    expect(text).toMatch(/disagree with our clock by more than 15% on 10 of 10 requests/);
    expect(text).toMatch(/prompt 16, repetition 1: tpot_ms 4\.00 vs 3\.08 \(\+30\.0%\)/);
    expect(text).toMatch(/prompt 64, repetition 3: /);
    expect(text).not.toMatch(/prompt 64, repetition 4: /);
    expect(text).toMatch(/… and 2 more/);
    expect(text).toMatch(/Side by side, tokenscope llama-3\.2-1b vs WebLLM/);
    expect(text).toContain(`  - ${describeDifferences(MODEL, LLAMA)[0]}`);
  });
});

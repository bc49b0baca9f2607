/**
 * A job that runs our engine on a preset and then WebLLM on a model of the same family: WebLLM's
 * rows get the preset's cost model and the result a side-by-side. WebLLM itself is a scripted
 * engine (no downloads here) behind the real adapter; our engine runs for real. Node only: there
 * the context is re-labelled 'browser', since runJob refuses WebLLM in Node.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runJob } from '../../src/jobs/job.ts';
import type { LatencySection } from '../../src/measure/latency.ts';
import type { SideBySide } from '../../src/jobs/side-by-side.ts';
import type { WebLLMSection } from '../../src/jobs/webllm-run.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import type { ModelInfo } from '../../src/model/load.ts';
import { validateResult } from '../../src/measure/validate.ts';
import { adapterFor, loadWebLLM, type WebLLMEngine } from '../../src/webllm/adapter.ts';
import type { WebLLMModel } from '../../src/webllm/catalog.ts';
import { inBrowser, testGpu } from './context.ts';

vi.mock('../../src/webllm/adapter.ts', async (original) => ({ ...(await original<typeof import('../../src/webllm/adapter.ts')>()), loadWebLLM: vi.fn() }));

const SMOLLM: WebLLMModel = {
  id: 'SmolLM2-135M-Instruct-q0f32-MLC',
  family: 'SmolLM2-135M',
  quantization: 'q0f32',
  vramMB: 629.4,
  lowResource: true,
  contextWindow: 4096,
};

/** WebLLM's token path on the host clock: 5 ms a prefill, 2 ms a decode step, stats to match. */
const engine: WebLLMEngine = {
  chat: { completions: { create: () => Promise.reject(new Error('token path only')) } },
  resetChat: async () => {},
  forwardTokensAndSample: async (_ids, isPrefill) => {
    const until = performance.now() + (isPrefill ? 5 : 2);
    while (performance.now() < until);
    return 7;
  },
  runtimeStatsText: async () => 'prefill: 1600.0000 tokens/sec, decoding: 500.0000 tokens/sec',
  interruptGenerate: () => {},
  unload: async () => {},
};

describe.skipIf(inBrowser)('a WebLLM run beside our engine on the same family', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    ctx = await testGpu();
  });
  afterAll(() => ctx?.destroy());

  it('gives WebLLM our cost model and the result a side-by-side', async () => {
    vi.mocked(loadWebLLM).mockResolvedValue(adapterFor(engine, SMOLLM));
    const asBrowser = Object.create(ctx, { runtime: { value: 'browser' } }) as GpuContext;
    const result = await runJob(
      asBrowser,
      {
        probe: true,
        probeMiB: 4,
        protocol: { warmup: 1, minReps: 2, maxReps: 2, minDurationMs: 0 },
        model: { preset: 'smollm2-135m', quant: 'q4_0' },
        latency: { promptLengths: [8], gen: 4, reps: 2, cooldownMs: 0 },
        engine: 'webllm',
        webllm: { model: SMOLLM.id },
      },
      new Set(),
    );
    const checked = validateResult(JSON.parse(JSON.stringify(result)));
    const ours = checked.latency as LatencySection;
    const webllm = checked.webllm as WebLLMSection;
    expect(webllm.cost_source).toEqual({ model_id: 'smollm2-135m', quantization: (checked.model as ModelInfo).quantization });
    // The same cost model on both sides: the bytes per decode step agree.
    expect(webllm.rows[0].decode_bytes_per_token).toBe(ours.rows[0].decode_bytes_per_token);
    expect(webllm.rows[0].prefill_flops).toBe(ours.rows[0].prefill_flops);
    expect(webllm.verdicts).toHaveLength(1);
    const s = checked.side_by_side as SideBySide;
    expect(s.rows.map((r) => r.prompt_tokens)).toEqual([8]);
    expect(s.rows[0].ratio.tpot_ms).toBeCloseTo(webllm.rows[0].tpot!.p50 / ours.rows[0].tpot!.p50, 9);
    expect(s.points.filter((p) => p.estimate).every((p) => p.engine === 'webllm')).toBe(true);
    expect(s.differences.some((d) => d.startsWith('Different models'))).toBe(false);
  });
});

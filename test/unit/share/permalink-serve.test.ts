import { describe, expect, it } from 'vitest';
import type { BenchResult } from '../../../src/measure/schema.ts';
import { decodeReport, encodeReport, LINK_BUDGET_CHARS, shareable } from '../../../src/share/permalink.ts';
import { serveResult } from '../../../src/serve/metrics.ts';
import type { ServeSection } from '../../../src/serve/run.ts';
import { mulberry32 } from '../../../src/serve/workload.ts';
import { smallResult } from './fixtures.ts';
import { linkRounded } from '../../../src/share/codec.ts';

/** A serving section as the job writes it (vLLM's result in run.result, with the run's records). */
function section(requests: number): ServeSection {
  const random = mulberry32(9);
  const timings = Array.from({ length: requests }, (_, i) => {
    const tSend = i * 20;
    const tTokens = [tSend + 60 + 30 * random()];
    for (let t = 1; t < 128; t++) tTokens.push(tTokens[t - 1] + 8 + 4 * random());
    return { promptTokens: 256, tSend, tTokens };
  });
  const result = serveResult(timings, 10, { ttft: 100 });
  return {
    settings: {
      requests,
      rate: 10,
      burstiness: 1,
      prompt: { kind: 'fixed', tokens: 256 },
      output: { kind: 'fixed', tokens: 128 },
      max_batch: 4,
      max_tokens_per_step: 512,
      chunk: 32,
      slo: { ttft: 100 },
      seed: 42,
    },
    run: {
      result,
      slo_attainment: 0.5,
      error_rate: 0,
      timeline: timings.map((t, i) => ({
        id: i,
        prompt_tokens: 256,
        output_tokens: 128,
        arrival_ms: t.tSend,
        admit_ms: t.tSend + 1,
        first_token_ms: t.tTokens[0],
        finish_ms: t.tTokens[127],
        error: null,
      })),
      steps: Array.from({ length: requests * 32 }, (_, i) => ({ start_ms: 8 * i, end_ms: 8 * i + 7.5, decode: 4, prefill_tokens: 0, running: 4, waiting: 3 })),
      decode_roofline: [],
    },
    cost: null,
    batch_sweep: null,
    rate_sweep: null,
  };
}

describe('a serving section in a link', () => {
  it('is trimmed where its bulk is (ITLs and steps, then per-request arrays and the timeline); its summary stays exact', async () => {
    const { latency: _l, ...withoutLatency } = smallResult();
    const r: BenchResult = JSON.parse(JSON.stringify({ ...withoutLatency, serve: section(400) }));
    const fragment = await encodeReport(r);
    expect(fragment.length).toBeLessThanOrEqual(LINK_BUDGET_CHARS);
    const decoded = (await decodeReport(fragment)).serve as ServeSection;
    const original = r.serve as ServeSection;
    expect(decoded.run.steps).toEqual([]);
    expect(decoded.run.timeline).toEqual([]);
    expect(decoded.run.result.itls).toEqual([]);
    const scalars = (x: object) => Object.fromEntries(Object.entries(x).filter(([, v]) => !Array.isArray(v)));
    expect(scalars(decoded.run.result)).toEqual(linkRounded(scalars(original.run.result)));
    expect(decoded.settings).toEqual(original.settings);
  });

  it('keeps the timeline when dropping the per-token records is enough', async () => {
    const { latency: _l, ...withoutLatency } = smallResult();
    const r: BenchResult = JSON.parse(JSON.stringify({ ...withoutLatency, serve: section(8) }));
    const whole = (await encodeReport(r, Infinity)).length;
    const shared = (await shareable(r, whole - 1)).serve as ServeSection;
    expect(shared.run.steps).toEqual([]);
    expect(shared.run.result.itls).toEqual(new Array(8).fill([]));
    expect(shared.run.timeline).toHaveLength(8);
  });
});

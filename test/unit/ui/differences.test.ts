import { describe, expect, it } from 'vitest';
import type { LatencySection } from '../../../src/measure/latency.ts';
import { compareResults } from '../../../src/share/compare.ts';
import { browserOf, differences, modeOf, noiseCall, spreadOf } from '../../../src/ui/differences.ts';
import { smallResult } from '../share/fixtures.ts';

describe('what differs between two reports', () => {
  it('nothing for the same report; each changed field by name', () => {
    const a = smallResult();
    expect(differences(a, structuredClone(a))).toEqual([]);
    const b = structuredClone(a);
    (b.model as { quantization: string }).quantization = 'q8_0';
    b.environment.user_agent = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
    b.environment.adapter = { ...b.environment.adapter, description: 'Apple M2' };
    (b.latency as LatencySection).settings = { ...(b.latency as LatencySection).settings, reps: 9 };
    delete b.ceilings;
    const d = differences(a, b);
    expect(d.map((x) => x.what)).toEqual(['quantization', 'mode', 'settings', 'device', 'browser']);
    expect(d.find((x) => x.what === 'browser')).toMatchObject({ a: 'Chrome 131', b: 'Firefox 133' });
    expect(d.find((x) => x.what === 'mode')).toMatchObject({ a: 'roofs + latency sweep', b: 'latency sweep' });
  });

  it('reads browsers and modes', () => {
    expect(browserOf('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36')).toBe(
      'Headless Chrome 131',
    );
    expect(browserOf('Node v20.20.2 (webgpu Dawn)')).toBe('Node 20');
    const r = smallResult();
    r.llama_bench = [];
    expect(modeOf(r)).toBe('roofs + latency sweep + llama-bench');
  });
});

describe('within noise', () => {
  const base = smallResult();
  const row = (key: string) => compareResults(base, base).find((r) => r.key === key)!;

  it('a difference inside both runs’ min–max reads as within noise, not a winner', () => {
    const r = { ...row('read_bandwidth_gbps'), better: 'b' as const };
    expect(noiseCall(r, { lo: 90, hi: 110 }, { lo: 100, hi: 130 })).toBe('within noise');
    expect(noiseCall(r, { lo: 90, hi: 110 }, { lo: 200, hi: 230 })).toBe('b');
    expect(noiseCall(r, null, { lo: 100, hi: 130 })).toBe('b');
    expect(noiseCall({ ...r, better: 'same' }, { lo: 1, hi: 2 }, { lo: 5, hi: 6 })).toBe('same');
  });

  it('takes a roof’s spread from its repetitions and a latency row’s from its TTFT/TPOT range (rates inverted)', () => {
    const c = base.ceilings!;
    expect(spreadOf(base, row('read_bandwidth_gbps'))).toEqual({ lo: c.measurements.read_bandwidth_gbps!.min, hi: c.measurements.read_bandwidth_gbps!.max });
    const lr = (base.latency as LatencySection).rows[0];
    const ttft = compareResults(base, base).find((r) => r.key === 'median_ttft_ms')!;
    expect(spreadOf(base, ttft)).toEqual({ lo: lr.ttft.min, hi: lr.ttft.max });
    const prefill = compareResults(base, base).find((r) => r.key === 'prefill_tokens_per_s')!;
    expect(spreadOf(base, prefill)).toEqual({ lo: (1000 * lr.prompt_tokens) / lr.ttft.max, hi: (1000 * lr.prompt_tokens) / lr.ttft.min });
  });
});

import { describe, expect, it } from 'vitest';
import { percentile } from '../../../src/measure/stats.ts';
import { cohorts, spreadOf } from '../../../src/ui/cohorts.ts';
import { smallResult, largeResult } from '../share/fixtures.ts';
import { variant } from './cohort-fixtures.ts';

describe('many results grouped', () => {
  it('groups by device, model, format and runtime, fastest median decode first, with n and medians', () => {
    const base = smallResult();
    const items = [
      ...[10, 12, 11].map((decode) => variant(base, { device: 'Intel UHD 620', decode })),
      ...[50, 60].map((decode) => variant(base, { device: 'Apple M2', decode })),
      variant(base, { device: 'Apple M2', decode: 55, quant: 'q8_0' }),
      variant(base, { device: 'Apple M2', decode: 40, runtime: 'node' }),
    ].map((result, i) => ({ label: `r${i}`, result }));
    const view = cohorts(items);
    expect(view.groups.map((g) => [g.device, g.format, g.runtime, g.n])).toEqual([
      ['Apple M2', 'q4_0', 'browser · tokenscope', 2],
      ['Apple M2', 'q8_0', 'browser · tokenscope', 1],
      ['Apple M2', 'q4_0', 'Node · tokenscope', 1],
      ['Intel UHD 620', 'q4_0', 'browser · tokenscope', 3],
    ]);
    const intel = view.groups[3];
    expect(intel.decode_tokens_per_s).toBeCloseTo(11, 9);
    expect(intel.tpot_p50_ms).toBeCloseTo(1000 / 11, 1);
    expect(view.prompt_tokens).toBe(16);
    expect(intel.ttft_ms).not.toBeNull();
    expect(view.mine).toBeNull();
  });

  it('spread: p10–p90 from 5 runs on, min–max below (and says which)', () => {
    expect(spreadOf([3, 1, 2])).toEqual({ lo: 1, hi: 3, kind: 'min–max' });
    expect(spreadOf([null, 4])).toEqual({ lo: 4, hi: 4, kind: 'min–max' });
    expect(spreadOf([null])).toBeNull();
    const five = [10, 20, 30, 40, 100];
    expect(spreadOf(five)).toEqual({ lo: percentile(five, 10), hi: percentile(five, 90), kind: 'p10–p90' });
    expect(spreadOf(five)!.lo).toBeCloseTo(14, 9);
    expect(spreadOf(five)!.hi).toBeCloseTo(76, 9);
  });

  it('TTFT is read at the prompt length most runs share; a run without it reads —', () => {
    const small = smallResult(); // P = 16
    const large = largeResult(); // P = 16, 64, 256, 1024
    const onlyLong = structuredClone(large);
    onlyLong.latency!.rows = onlyLong.latency!.rows.filter((r) => r.prompt_tokens === 1024);
    const view = cohorts(
      [variant(small, { device: 'A', decode: 5 }), variant(large, { device: 'B', decode: 6 }), variant(onlyLong, { device: 'C', decode: 7 })].map(
        (result, i) => ({
          label: String(i),
          result,
        }),
      ),
    );
    expect(view.prompt_tokens).toBe(16);
    expect(view.groups.find((g) => g.device === 'C')!.ttft_ms).toBeNull();
    expect(view.groups.find((g) => g.device === 'B')!.ttft_ms).toBeCloseTo(
      large.latency!.rows[0].ttft.p50 / (6 / large.latency!.rows[0].decode_tokens_per_s!),
      6,
    );
  });

  it('ranks your newest run among all runs and within its group', () => {
    const base = smallResult();
    const items = [
      { label: 'a', result: variant(base, { device: 'X', decode: 30 }) },
      { label: 'b', result: variant(base, { device: 'X', decode: 10 }) },
      { label: 'c', result: variant(base, { device: 'Y', decode: 50 }) },
      { label: 'old mine', result: variant(base, { device: 'X', decode: 40, created_at: '2026-01-01T00:00:00Z' }), mine: true },
      { label: 'mine', result: variant(base, { device: 'X', decode: 20, created_at: '2026-02-01T00:00:00Z' }), mine: true },
    ];
    const { mine } = cohorts(items);
    expect(mine).toMatchObject({ rank: 4, of: 5, groupRank: 3, groupOf: 4 });
    expect(mine!.run.label).toBe('mine');
    expect(mine!.group.device).toBe('X');
  });

  it('a WebLLM section is its own run (runtime "browser · WebLLM"); roofs-only results are counted, not grouped', () => {
    const r = smallResult();
    const rows = r.latency!.rows;
    const faster = 2 * rows[0].decode_tokens_per_s!;
    r.webllm = {
      model: { id: 'Llama-3.2-1B-Instruct-q4f16_1-MLC', family: 'llama', quantization: 'q4f16_1', vramMB: 900 },
      rows: rows.map((row) => ({ ...row, decode_tokens_per_s: faster })),
    } as never;
    const roofsOnly = smallResult();
    delete roofsOnly.latency;
    const view = cohorts([
      { label: 'both', result: r },
      { label: 'roofs', result: roofsOnly },
    ]);
    expect(view.groups.map((g) => g.runtime)).toEqual(['browser · WebLLM', 'browser · tokenscope']);
    expect(view.groups[0]).toMatchObject({ model: 'Llama-3.2-1B-Instruct-q4f16_1-MLC', format: 'q4f16_1', decode_tokens_per_s: faster });
    expect(view.without_rows).toBe(1);
  });
});

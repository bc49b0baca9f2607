import { describe, expect, it } from 'vitest';
import { CEILING_KEYS, type BenchResult } from '../../../src/measure/schema.ts';
import { LINK_DIGITS, linkRounded, MAX_FRAGMENT_CHARS } from '../../../src/share/codec.ts';
import { CEILING_SAMPLES_KEPT } from '../../../src/measure/sections/environment.ts';
import { decodeReport, encodeReport, LINK_BUDGET_CHARS, shareable } from '../../../src/share/permalink.ts';
import { serveResult } from '../../../src/serve/metrics.ts';
import { mulberry32 } from '../../../src/serve/workload.ts';
import { largeResult, latency, latencyOf, smallResult } from './fixtures.ts';

const NOTE_PER_TOKEN = /Raw per-token samples were trimmed/;

describe('a small result', () => {
  it('is shared untrimmed and decodes identical', async () => {
    const r = smallResult();
    const fragment = await encodeReport(r);
    expect(fragment).toMatch(/^#r=[A-Za-z0-9_-]+$/);
    expect(fragment.length).toBeLessThan(LINK_BUDGET_CHARS);
    expect(await shareable(r)).toEqual(linkRounded(r));
    expect(await decodeReport(fragment)).toEqual(linkRounded(r));
    expect((await decodeReport(fragment)).trimmed).toBeUndefined();
  });

  it(`keeps every number to ${LINK_DIGITS} significant digits: a clock difference's residue goes, nothing else`, async () => {
    const r = smallResult();
    const request = latencyOf(r).requests[0];
    request.token_ms = [121.09999999962747, 0.30000000000000004, 7, 1e-12 / 3];
    request.gpu_prefill_ms = 44.647138;
    const decoded = latencyOf(await decodeReport(await encodeReport(r))).requests[0];
    expect(decoded.token_ms).toEqual([121.1, 0.3, 7, 3.33333333e-13]);
    expect(decoded.gpu_prefill_ms).toBe(44.647138);
    // Everything else is within half a unit in the ninth digit of what was measured.
    const numbers = (v: unknown): number[] => (typeof v === 'number' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(numbers) : []);
    const [before, after] = [numbers(r), numbers(await decodeReport(await encodeReport(r)))];
    expect(after).toHaveLength(before.length);
    before.forEach((x, i) => expect(Math.abs(after[i] - x)).toBeLessThanOrEqual(Math.abs(x) * 5 * 10 ** -LINK_DIGITS));
  });

  it('decodes without the leading #', async () => {
    const r = smallResult();
    expect(await decodeReport((await encodeReport(r)).slice(1))).toEqual(linkRounded(r));
  });
});

describe('a large result', () => {
  const large = largeResult();
  const exact = linkRounded(large);

  it('trims under the budget, keeping rows and ceiling values (to the link’s nine digits)', async () => {
    const fragment = await encodeReport(large);
    expect(JSON.stringify(large).length).toBeGreaterThan(400_000);
    expect(fragment.length).toBeLessThanOrEqual(LINK_BUDGET_CHARS);
    const decoded = await decodeReport(fragment);
    expect(decoded).toEqual(await shareable(large));
    const l = latencyOf(decoded);
    expect(l.rows).toEqual(latencyOf(exact).rows);
    for (const key of CEILING_KEYS) {
      expect(decoded.ceilings![key]).toBe(exact.ceilings![key]);
      const { samples: _a, ...kept } = decoded.ceilings!.measurements[key]!;
      const { samples: _b, ...original } = exact.ceilings!.measurements[key]!;
      expect(kept).toEqual(original);
      expect(decoded.ceilings!.measurements[key]!.samples).toHaveLength(CEILING_SAMPLES_KEPT);
    }
    expect(l.requests).toEqual([]);
    expect(l.depth_curve).toHaveLength(latencyOf(large).depth_curve.length);
    expect(l.verdicts.map((v) => v.prefill.sentence)).toEqual(latencyOf(large).verdicts.map((v) => v.prefill.sentence));
    expect(l.kernels).toHaveLength(latencyOf(large).kernels!.length);
    expect(decoded.trimmed).toBe(true);
    expect(l.trimmed).toBe(true);
    expect(decoded.notes![0]).toMatch(NOTE_PER_TOKEN);
    expect(decoded.notes![1]).toMatch(/Per-request records were left out/);
    expect(decoded.notes![2]).toMatch(/Ceiling samples were cut to 5/);
    expect(decoded.notes!.join('\n')).not.toMatch(/latency rows were rounded/);
  });

  it('does not change the result it was given', async () => {
    const before = JSON.stringify(large);
    await shareable(large);
    expect(JSON.stringify(large)).toBe(before);
  });

  it('trims in order and stops as soon as the link fits', async () => {
    const r = await shareable(large, 100_000);
    expect(r.notes).toEqual([expect.stringMatching(NOTE_PER_TOKEN)]);
    const l = latencyOf(r);
    expect(l.requests).toHaveLength(latencyOf(large).requests.length);
    expect(l.requests.every((q) => q.token_ms.length === 0 && q.gpu_decode_ms !== null && q.gpu_decode_ms.length === 0)).toBe(true);
    expect(l.requests.map((q) => q.prompt_tokens)).toEqual(latencyOf(large).requests.map((q) => q.prompt_tokens));
    expect(r.ceilings).toEqual(exact.ceilings);
  });

  it('trims a sweep that stopped early (requests and rows only)', async () => {
    const { requests, rows } = latencyOf(large);
    const stopped = { ...large, latency: { requests, rows } };
    const decoded = await decodeReport(await encodeReport(stopped));
    expect(decoded.latency).toEqual({ requests: [], rows: latencyOf(exact).rows, trimmed: true });
  });

  it("drops a real prompt's token ids with the requests", async () => {
    const l = latencyOf(large);
    const withPrompt = { ...large, latency: { ...l, settings: { ...l.settings, prompt_ids: Array.from({ length: 4000 }, (_, i) => (i * 7919) % 32000) } } };
    const shared = latencyOf(await shareable(withPrompt));
    expect(shared.settings).toEqual(l.settings);
  });

  it('trims a serving run: per-token, then per-request arrays; its summary stays', async () => {
    const random = mulberry32(5);
    const timings = Array.from({ length: 400 }, (_, i) => {
      const tSend = i * 50;
      const tTokens = [tSend + 80 + 40 * random()];
      for (let t = 1; t < 64; t++) tTokens.push(tTokens[t - 1] + 10 + 5 * random());
      return { promptTokens: 200 + i, tSend, tTokens };
    });
    const serve = serveResult(timings, 30);
    const { latency: _l, ...withoutLatency } = smallResult();
    const r: BenchResult = JSON.parse(JSON.stringify({ ...withoutLatency, serve }));
    const onlyItls = await shareable(r, 40_000);
    expect(onlyItls.notes).toEqual([expect.stringMatching(NOTE_PER_TOKEN)]);
    expect(onlyItls.serve).toEqual({ ...(linkRounded(r).serve as object), itls: new Array(400).fill([]) });
    const decoded = await decodeReport(await encodeReport(r));
    const perRequestCleared = Object.fromEntries(Object.entries(serve).map(([k, v]) => [k, Array.isArray(v) ? [] : v]));
    expect(decoded.serve).toEqual(linkRounded(perRequestCleared));
  });

  it('re-sharing a shared result changes nothing', async () => {
    const once = await shareable(large);
    expect(await shareable(once)).toEqual(once);
  });

  it('rounds the rows last, for sweeps with many prompt lengths', async () => {
    const many = { ...large, latency: latency([8, 16, 32, 64, 128, 256, 512], 4, 32) };
    const fragment = await encodeReport(many);
    expect(fragment.length).toBeLessThanOrEqual(LINK_BUDGET_CHARS);
    const decoded = await decodeReport(fragment);
    expect(decoded.notes).toHaveLength(5);
    expect(decoded.notes![3]).toMatch(/depth curve, summary, verdicts, decode waterfall and kernel breakdown were rounded to 6 significant digits/);
    expect(decoded.notes![4]).toMatch(/latency rows were rounded to 6 significant digits/);
    expect(latencyOf(decoded).verdicts[0].prefill.efficiency).toBe(Number(latencyOf(many).verdicts[0].prefill.efficiency.toPrecision(6)));
    const [row] = latencyOf(decoded).rows;
    const [original] = latencyOf(many).rows;
    expect(row.ttft.p50).not.toBe(original.ttft.p50);
    expect(row.ttft.p50).toBe(Number(original.ttft.p50.toPrecision(6)));
  });

  it('shares a result over the budget after every step, as long as links can hold it', async () => {
    const lengths = Array.from({ length: 24 }, (_, i) => 8 * (i + 1));
    const fragment = await encodeReport({ ...large, latency: latency(lengths, 2, 16) });
    expect(fragment.length).toBeGreaterThan(LINK_BUDGET_CHARS);
    expect(fragment.length).toBeLessThan(MAX_FRAGMENT_CHARS);
    expect(latencyOf(await decodeReport(fragment)).rows).toHaveLength(24);
  });

  it('refuses a result too large for any link', async () => {
    const random = mulberry32(3);
    const noise = () => Array.from({ length: 1000 }, () => String.fromCharCode(33 + Math.floor(random() * 90))).join('');
    const r: BenchResult = { ...smallResult(), notes: Array.from({ length: 100 }, noise) };
    await expect(encodeReport(r)).rejects.toMatchObject({ code: 'bad-input', message: expect.stringMatching(new RegExp(`links hold ${MAX_FRAGMENT_CHARS}`)) });
  });
});

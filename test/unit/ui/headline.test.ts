import { describe, expect, it } from 'vitest';
import type { LatencySection } from '../../../src/measure/latency.ts';
import { verdict } from '../../../src/measure/roofline.ts';
import { bindingComputeRoof, headline, humanDate, reportTitle, roofsOf, sideOfRidge } from '../../../src/ui/headline.ts';
import { largeResult, smallResult } from '../share/fixtures.ts';

describe('verdict card content', () => {
  it('uses the roofline’s roofs: read bandwidth and the faster FMA peak, with the matmul kernel beside', () => {
    const r = largeResult();
    const c = r.ceilings!;
    const h = headline(r);
    expect(h.roofs).toEqual(roofsOf(c));
    expect(h.roofs!.bandwidthGBps).toBe(c.read_bandwidth_gbps);
    // This device's f16 chains run faster than its f32 ones (a GPU): f16 is the compute roof.
    expect(c.f16_gflops).toBeGreaterThan(c.f32_gflops);
    expect(h.roofs!.computeName).toBe('f16 FMA peak');
    expect(h.roofs!.computeGflops).toBe(c.f16_gflops);
    expect(h.roofs!.ridge).toBeCloseTo(c.f16_gflops! / c.read_bandwidth_gbps, 9);
  });

  it('takes the f32 FMA peak as the compute roof where f16 is slower (a CPU adapter) or absent', () => {
    const c = largeResult().ceilings!;
    expect(roofsOf({ ...c, f16_gflops: c.f32_gflops / 4 })).toMatchObject({ computeName: 'f32 FMA peak', computeGflops: c.f32_gflops });
    expect(roofsOf({ ...c, f16_gflops: null })).toMatchObject({ computeName: 'f32 FMA peak', computeGflops: c.f32_gflops });
  });

  it('takes the larger prefill GEMM roof as the matmul roof: the 8-bit-activation one where it is faster, the f32 one where it is absent', () => {
    const c = largeResult().ceilings!;
    expect(c.matmul_q8_gflops).toBeLessThan(c.matmul_f32_gflops);
    expect(roofsOf(c).matmulGflops).toBe(c.matmul_f32_gflops);
    expect(roofsOf({ ...c, matmul_q8_gflops: 2 * c.matmul_f32_gflops }).matmulGflops).toBe(2 * c.matmul_f32_gflops);
    const { matmul_q8_gflops: _dropped, ...older } = c;
    expect(roofsOf(older).matmulGflops).toBe(c.matmul_f32_gflops);
  });

  it('decode tok/s from the shortest prompt with its share of the ceiling; prefill from the longest as a share of both compute roofs', () => {
    const r = largeResult();
    const rows = [...(r.latency as LatencySection).rows].sort((a, b) => a.prompt_tokens - b.prompt_tokens);
    const h = headline(r);
    expect(h.decode).toEqual({ tokensPerS: rows[0].decode_tokens_per_s, ofCeiling: rows[0].decode_efficiency, promptTokens: rows[0].prompt_tokens });
    const last = rows[rows.length - 1];
    expect(h.prefill!.promptTokens).toBe(last.prompt_tokens);
    expect(h.prefill!.ofCompute).toBeCloseTo(last.prefill_gflops / r.ceilings!.f16_gflops!, 12);
    expect(h.prefill!.ofMatmul).toBeCloseTo(last.prefill_gflops / r.ceilings!.matmul_f32_gflops, 12);
  });

  it('one table row per phase and prompt length, with time, floor, share of roof and bound from the verdicts', () => {
    const r = largeResult();
    const l = r.latency as LatencySection;
    const h = headline(r);
    expect(h.rows.filter((x) => x.phase === 'prefill').length).toBe(l.verdicts.length);
    const v = l.verdicts[0];
    const row = h.rows.find((x) => x.phase === 'prefill' && x.promptTokens === v.prompt_tokens)!;
    expect(row.floorMs).toBe(v.prefill.floorMs);
    expect(row.ofRoof).toBe(v.prefill.efficiency);
    expect(row.bound).toBe(v.prefill.bound);
    expect(row.ms * row.ofRoof).toBeCloseTo(row.floorMs, 9);
  });

  it('an overhead-bound CPU adapter with a tiny model says why, and what to try names a larger model', () => {
    const r = smallResult();
    r.environment = { ...r.environment, cpu_adapter: true };
    (r.model as { parameters: number }).parameters = 292_800;
    const l = r.latency as LatencySection;
    const slow = verdict({ flops: 1e6, bytes: 1e6, ms: 100 }, { computeFlopsPerS: 1e12, bandwidthBytesPerS: 1e11 });
    l.verdicts = l.verdicts.map((v) => ({ ...v, prefill: slow, decode: slow }));
    const h = headline(r);
    expect(slow.bound).toBe('overhead-bound');
    expect(h.bounds).toBe('Prefill and decode are both overhead-bound: on the memory side of the ridge, but far below the roof.');
    expect(h.overheadWhy).toMatch(/CPU implementation of WebGPU/);
    expect(h.overheadWhy).toMatch(/0\.3 M parameters/);
    expect(h.advice).toMatch(/larger model/);
  });

  it('an overhead-bound decode is explained by its waterfall’s largest part, not by a guess: the kernels, the launches or the host', () => {
    const overheadBound = (waterfall: { launch_ms: number; stream_ms: number; kernel_ms: number; host_ms: number }, cpu = true) => {
      const r = smallResult();
      r.environment = { ...r.environment, cpu_adapter: cpu };
      (r.model as { parameters: number }).parameters = 24.4e6;
      r.ceilings = { ...r.ceilings!, launch: { dispatch_us: 16.7, pass_us: 20, roundtrip_us: 600 } as never };
      const l = r.latency as LatencySection;
      const slow = verdict({ flops: 1e6, bytes: 1e6, ms: 100 }, { computeFlopsPerS: 1e12, bandwidthBytesPerS: 1e11 });
      l.verdicts = l.verdicts.map((v) => ({ ...v, prefill: slow, decode: slow }));
      l.dispatches_per_step = { prefill: 39, decode: 39 };
      const tpot = waterfall.launch_ms + waterfall.stream_ms + waterfall.kernel_ms + waterfall.host_ms;
      l.decode_waterfall = [{ prompt_tokens: 16, tpot_ms: tpot, readback_ms: 0.6, ...waterfall }];
      return headline(r);
    };
    // SwiftShader, stories15M: launches 2.3% of the token, the kernels 81.6%: no "launch costs dwarf the work".
    const kernels = overheadBound({ launch_ms: 0.651, stream_ms: 3.9, kernel_ms: 23.0, host_ms: 0.646 });
    expect(kernels.overheadWhy).toMatch(/^Of a decode token's 28\.2 ms after 16 tokens, the kernels' own inefficiency is the largest part: 23\.0 ms \(82%\)/);
    expect(kernels.overheadWhy).toMatch(/launching them \(2\.3%\)/);
    expect(kernels.overheadWhy).not.toMatch(/less work per kernel than a launch/);
    expect(kernels.advice).toMatch(/per-kernel profile/);
    const launches = overheadBound({ launch_ms: 0.65, stream_ms: 0.03, kernel_ms: 0.2, host_ms: 0.1 });
    expect(launches.overheadWhy).toMatch(/the launch floor is the largest part: 39 dependent dispatches × 16\.7 µs = 0\.65 ms \(66%\)/);
    expect(launches.overheadWhy).toMatch(/software queue/);
    expect(launches.advice).toMatch(/larger model/);
    const host = overheadBound({ launch_ms: 0.2, stream_ms: 0.1, kernel_ms: 0.3, host_ms: 2.5 }, false);
    expect(host.overheadWhy).toMatch(/the host is the largest part: 2\.5 ms \(81%\) between GPU steps/);
    expect(host.overheadWhy).not.toMatch(/CPU/);
    expect(host.advice).toMatch(/foreground/);
  });

  it('a memory-bound decode on a GPU gets no overhead line and advice about bytes per weight or batching', () => {
    const r = smallResult();
    (r.model as { parameters: number }).parameters = 1.2e9;
    const l = r.latency as LatencySection;
    const fast = verdict({ flops: 2e9, bytes: 1e9, ms: 11 }, { computeFlopsPerS: 1e13, bandwidthBytesPerS: 1e11 });
    expect(fast.bound).toBe('memory-bound');
    l.verdicts = l.verdicts.map((v) => ({ ...v, decode: fast }));
    const h = headline(r);
    expect(h.overheadWhy).toBeNull();
    expect(h.bounds).toMatch(/decode (is|are both) memory-bound/);
    expect(h.advice).toMatch(/q4_0|batching/);
  });

  it('a prefill far below the FMA peak but near what the GEMM kernel reaches alone is advised on the kernel, not on dispatches', () => {
    const r = largeResult();
    const h = headline(r);
    expect(h.bounds).toMatch(/^Prefill is overhead-bound.*decode is memory-bound/);
    expect(h.prefill!.ofMatmul).toBeGreaterThan(0.5);
    expect(h.advice).toMatch(/^Prefill reaches 58% of what our prefill GEMM does on its own, and that kernel 25% of the f16 FMA peak: a faster GEMM kernel/);
    expect(h.advice).toMatch(/fewer bytes per weight or batching/);
    expect(h.advice).not.toMatch(/Fewer, larger dispatches/);
  });

  it('a roofs-only result has the roofs and no phase sentences', () => {
    const r = smallResult();
    delete r.latency;
    const h = headline(r);
    expect(h.roofs).not.toBeNull();
    expect(h.decode).toBeNull();
    expect(h.bounds).toBeNull();
    expect(h.rows).toEqual([]);
  });

  it('names the lower compute roof as the one that binds, and the side of the ridge', () => {
    const roofs = { bandwidthGBps: 1, computeGflops: 10, computeName: 'f32 FMA peak', matmulGflops: 2, ridge: 10 } as const;
    expect(bindingComputeRoof(roofs).name).toBe('tiled matmul kernel');
    expect(bindingComputeRoof({ ...roofs, matmulGflops: 20 }).name).toBe('f32 FMA peak');
    expect(bindingComputeRoof({ ...roofs, computeName: 'f16 FMA peak', matmulGflops: 20 }).name).toBe('f16 FMA peak');
    expect(sideOfRidge(3.6, 50)).toBe('memory');
    expect(sideOfRidge(500, 50)).toBe('compute');
  });

  it('writes dates for people and titles a shared report by model, quantization and device', () => {
    expect(humanDate('2026-12-03T06:27:34.123Z')).toBe('3 Dec 2026, 06:27 UTC');
    expect(humanDate('not a date')).toBe('an unknown date');
    const r = smallResult();
    const m = r.model as { name: string; quantization: string };
    expect(reportTitle(r)).toBe(`${m.name} ${m.quantization} on NVIDIA GeForce RTX 4070`);
  });
});

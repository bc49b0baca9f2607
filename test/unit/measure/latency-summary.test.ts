import { describe, expect, it } from 'vitest';
import { latencyRow, rooflineOf, type LengthCosts, type RequestRecord } from '../../../src/measure/latency-summary.ts';
import { verdict } from '../../../src/measure/roofline.ts';
import { formatSection } from '../../../src/jobs/report.ts';
import { latencyOf, smallResult } from '../share/fixtures.ts';

const costs: LengthCosts = { prefill: { flops: 1e9, bytes: 1e8 }, decodeStep: { flops: 2e8, bytes: 1e8 } };
const roofs = { read_bandwidth_gbps: 10, f32_gflops: 100, matmul_f32_gflops: 50 };

function request(rep: number, tokenMs: number[], gpuDecode: number[]): RequestRecord {
  return {
    prompt_tokens: 8,
    output_tokens: tokenMs.length,
    rep,
    token_ms: tokenMs,
    gpu_prefill_ms: tokenMs[0] / 2,
    gpu_decode_ms: gpuDecode,
    disturbed: false,
  };
}

describe('host time per decode token', () => {
  it("takes each request's TPOT against its own GPU steps, so requests of different speeds do not part the medians", () => {
    // Request 0 has fast steps (gaps 10 ms, GPU 9 ms), request 1 slow ones (gaps 30 ms, GPU 29 ms):
    // host time is 1 ms on every step. Median TPOT is 20 ms and the median GPU step 29 ms (4 of
    // the 6 steps are slow), so a difference of medians would read −9 ms.
    const fast = request(0, [100, 110, 120], [9, 9]);
    const slow = request(1, [100, 130, 160, 190, 220], [29, 29, 29, 29]);
    const row = latencyRow([fast, slow], costs, roofs);
    expect(row.gpu_decode_ms).toBe(29);
    expect(row.host_overhead_ms).toBeCloseTo(1, 9);
  });

  it("is the whole request's span less its GPU time: a step queued ahead makes single gaps shorter than their step, never the sum", () => {
    // GPU 10 ms per step; the readbacks arrive 1 ms early three times, then 7 ms late: per-step
    // differences −1, −1, −1, +7 (their median −1 ms, which is how the table once read −0.03 ms),
    // while over the request the host cost 4 ms in 4 steps.
    const jitter = request(0, [100, 109, 118, 127, 144], [10, 10, 10, 10]);
    const row = latencyRow([jitter], costs, roofs);
    expect(row.host_overhead_ms).toBeCloseTo(1, 9);
    expect(row.host_overhead_ms).toBeGreaterThanOrEqual(0);
  });

  it('is null without GPU timestamps', () => {
    const row = latencyRow([{ ...request(0, [100, 110, 120], [9, 9]), gpu_decode_ms: null }], costs, roofs);
    expect(row.host_overhead_ms).toBeNull();
  });
});

describe('decode of the read beside it', () => {
  it('divides each request by its own read and takes the median, so a request slowed with its read keeps its ratio', () => {
    // 1e8 bytes a step. Request 0: TPOT 10 ms = 10 GB/s beside a 20 GB/s read (0.5); request 1 ran
    // under load, TPOT 20 ms = 5 GB/s beside a read that fell to 10 GB/s (0.5 again); request 2
    // TPOT 12.5 ms = 8 GB/s beside 20 GB/s (0.4). Against the fixed 10 GB/s roof they read 1.0,
    // 0.5 and 0.8.
    const calm = { ...request(0, [100, 110, 120], [9, 9]), read_beside_gbps: 20 };
    const loaded = { ...request(1, [100, 120, 140], [19, 19]), read_beside_gbps: 10 };
    const third = { ...request(2, [100, 112.5, 125], [12, 12]), read_beside_gbps: 20 };
    const row = latencyRow([calm, loaded, third], costs, roofs);
    expect(row.decode_of_read_beside).toBeCloseTo(0.5, 12);
    expect(row.decode_efficiency).toBeCloseTo(0.8, 12);
  });

  it('is absent where no request was paired with a read, null where none decoded', () => {
    expect('decode_of_read_beside' in latencyRow([request(0, [100, 110, 120], [9, 9])], costs, roofs)).toBe(false);
    const single = { ...request(0, [100], []), read_beside_gbps: 20 };
    expect(latencyRow([single], costs, roofs).decode_of_read_beside).toBeNull();
  });
});

describe('share of the prefill GEMM roof', () => {
  // 1e9 FLOPs in 10 ms of GPU prefill (gpu_prefill_ms is half the first token's 20 ms): 100 GFLOP/s.
  const row = (q8: number | null | undefined) =>
    latencyRow([request(0, [20, 30, 40], [9, 9])], costs, q8 === undefined ? roofs : { ...roofs, matmul_q8_gflops: q8 });

  it('is taken against the larger of the f32-weight and 8-bit-activation roofs', () => {
    expect(row(undefined).prefill_gflops).toBeCloseTo(100, 9);
    expect(row(undefined).prefill_of_matmul_roof).toBeCloseTo(100 / 50, 9);
    expect(row(null).prefill_of_matmul_roof).toBeCloseTo(100 / 50, 9);
    expect(row(40).prefill_of_matmul_roof).toBeCloseTo(100 / 50, 9);
    expect(row(200).prefill_of_matmul_roof).toBeCloseTo(100 / 200, 9);
  });
});

describe('the compute roof of the verdicts', () => {
  it('is the faster FMA peak: f16 where its chains ran faster (a GPU), f32 where f16 is slower (a CPU adapter) or absent', () => {
    expect(rooflineOf({ ...roofs, f16_gflops: 200 }).computeFlopsPerS).toBe(200e9);
    expect(rooflineOf({ ...roofs, f16_gflops: 25 }).computeFlopsPerS).toBe(100e9);
    expect(rooflineOf({ ...roofs, f16_gflops: null }).computeFlopsPerS).toBe(100e9);
    expect(rooflineOf(roofs).computeFlopsPerS).toBe(100e9);
    // A prefill at 150 GFLOP/s is 75% of the f16 roof, not 150% of the f32 one.
    const v = verdict({ flops: 1.5e9, bytes: 1e6, ms: 10 }, rooflineOf({ ...roofs, f16_gflops: 200 }));
    expect(v.computeShare).toBeCloseTo(0.75, 9);
    expect(v.bound).toBe('compute-bound');
  });
});

describe('the text report of the read beside the requests', () => {
  it('prints each row’s share and the range of the reads, and nothing where no read was taken', () => {
    const r = smallResult();
    const l = latencyOf(r);
    expect(formatSection(r, 'latency')).not.toContain('Decode of the read beside it');
    const reads = [8.5, 4.25, 9.75];
    r.latency = {
      ...l,
      requests: l.requests.map((q, i) => ({ ...q, read_beside_gbps: reads[i] })),
      rows: l.rows.map((row) => ({ ...row, decode_of_read_beside: 0.3125 })),
    };
    expect(formatSection(r, 'latency')).toContain('prompt 16 31.3%; the reads beside the requests ranged 4.25–9.75 GB/s.');
  });
});

import { describe, expect, it } from 'vitest';
import { summaryLine } from '../../../cli/gpu-check-summary.ts';
import type { LatencyRow } from '../../../src/measure/latency-summary.ts';

const row = (p: Partial<LatencyRow>) => p as LatencyRow;

describe('the GPU check summary line', () => {
  const rows = [
    row({
      prompt_tokens: 512,
      prefill_tokens_per_s: 20480,
      prefill_gflops: 50_000,
      decode_tokens_per_s: 90,
      decode_efficiency: 0.5,
      decode_ceiling_tokens_per_s: 180,
    }),
    row({
      prompt_tokens: 16,
      prefill_tokens_per_s: 1600,
      prefill_gflops: 1000,
      decode_tokens_per_s: 150,
      decode_efficiency: 0.75,
      decode_ceiling_tokens_per_s: 200,
    }),
  ];

  it('reads decode at the shortest prompt and prefill at the longest, against the f16 peak', () => {
    expect(summaryLine('llama-3.2-1b q4_0', { rows }, { f16_gflops: 500_000, f32_gflops: 60_000 })).toBe(
      'llama-3.2-1b q4_0: decode 150.0 tok/s = 0.750 of the read roof (ceiling 200 tok/s); ' +
        'prefill 512 tokens 20480 tok/s = 0.100 of the f16 FMA peak (50000 of 500000 GFLOP/s)',
    );
  });

  it('adds decode against the read timed beside its requests where the sweep measured it', () => {
    const paired = [rows[0], row({ ...rows[1], decode_of_read_beside: 0.8 })];
    expect(summaryLine('m', { rows: paired }, { f16_gflops: null, f32_gflops: 2000 })).toContain(
      'decode 150.0 tok/s = 0.750 of the read roof (ceiling 200 tok/s; 0.800 of the read timed beside it); prefill',
    );
  });

  it('states the launch floor’s share of the decode TPOT where the launch roof and the dispatch count are known', () => {
    const withTpot = [rows[0], row({ ...rows[1], tpot: { p50: 1.0 } as LatencyRow['tpot'] })];
    const launch = { dispatch_us: 4, pass_us: 6, roundtrip_us: 50 } as never;
    const line = summaryLine('m', { rows: withTpot, dispatches_per_step: { prefill: 90, decode: 100 } }, { f16_gflops: null, f32_gflops: 2000, launch });
    // 100 × 4 µs = 0.4 ms of a 1.0 ms TPOT.
    expect(line).toContain('(ceiling 200 tok/s); launch floor 100 dispatches × 4.00 µs = 0.400 of TPOT; prefill 512');
  });

  it('adds the rest of the decode waterfall after the launch floor: the bytes at the read roof, the kernels, the host', () => {
    const withTpot = [rows[0], row({ ...rows[1], tpot: { p50: 1.0 } as LatencyRow['tpot'] })];
    const launch = { dispatch_us: 4, pass_us: 6, roundtrip_us: 50 } as never;
    const decode_waterfall = [{ prompt_tokens: 16, tpot_ms: 1.0, launch_ms: 0.4, stream_ms: 0.35, kernel_ms: 0.2, host_ms: 0.05, readback_ms: 0.05 }];
    const line = summaryLine(
      'm',
      { rows: withTpot, dispatches_per_step: { prefill: 90, decode: 100 }, decode_waterfall },
      { f16_gflops: null, f32_gflops: 2000, launch },
    );
    expect(line).toContain('launch floor 100 dispatches × 4.00 µs = 0.400 of TPOT, stream at the read roof 0.350, kernels 0.200, host 0.050; prefill 512');
    // Where the probe over-reads the launch cost, no split is printed.
    const over = summaryLine(
      'm',
      { rows: withTpot, dispatches_per_step: { prefill: 90, decode: 100 }, decode_waterfall: [{ ...decode_waterfall[0], floors_exceed_gpu: true }] },
      { f16_gflops: null, f32_gflops: 2000, launch },
    );
    expect(over).not.toContain('kernels');
  });

  it('reads prefill against the f32 peak where f16 is slower (a CPU adapter emulates f16), as the report does', () => {
    const line = summaryLine('lavapipe', { rows: [row({ ...rows[0], prefill_gflops: 20 }), rows[1]] }, { f16_gflops: 12.4, f32_gflops: 50 });
    expect(line).toContain('prefill 512 tokens 20480 tok/s = 0.400 of the f32 FMA peak (20.0 of 50.0 GFLOP/s)');
  });

  it('falls back to the f32 peak without shader-f16, and says n/a without a decode', () => {
    const line = summaryLine('x', { rows: [row({ ...rows[1], decode_efficiency: null, decode_tokens_per_s: null })] }, { f16_gflops: null, f32_gflops: 2000 });
    expect(line).toBe('x: decode n/a; prefill 16 tokens 1600 tok/s = 0.500 of the f32 FMA peak (1000 of 2000 GFLOP/s)');
  });
});

/**
 * The result's declarations, through the public entry point (validateResult, and the link decoder):
 * each section's mutated fixtures — wrong types, out-of-range numbers, missing fields — are refused
 * with the field named; the committed JSON Schema is the generated one.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESULT_SCHEMA_PATH, resultSchemaText } from '../../../cli/result-schema.ts';
import { RESULT_SECTIONS, type BenchResult } from '../../../src/measure/schema.ts';
import type { Agrees } from '../../../src/measure/schema-kit.ts';
import { validateResult } from '../../../src/measure/validate.ts';
import { decodeReport, encodeReport } from '../../../src/share/permalink.ts';
import { fullResult } from '../share/fixtures.ts';

type Doc = Record<string, any>;

const HUGE = 1.5e308;

describe('the result declarations', () => {
  it('accept a result with every section', () => {
    const r = fullResult();
    expect(validateResult(JSON.parse(JSON.stringify(r)))).toEqual(r);
    expect(
      Object.keys(RESULT_SECTIONS)
        .filter((k) => k !== 'trimmed')
        .every((k) => k in r),
    ).toBe(true);
  });

  it.each<[string, (r: Doc) => unknown, RegExp]>([
    // Out of range: numbers a chart or table would draw.
    ['a huge roof', (r) => (r.ceilings.read_bandwidth_gbps = HUGE), /ceilings\.read_bandwidth_gbps must be ≤ 100000/],
    ['a huge roof sample', (r) => (r.ceilings.measurements.f32_gflops.samples[0] = HUGE), /ceilings\.measurements\.f32_gflops\.samples\[0\] must be ≤/],
    ['a huge token time', (r) => (r.latency.requests[0].token_ms[1] = HUGE), /latency\.requests\[0\]\.token_ms\[1\] must be ≤ 10000000/],
    ['a huge TTFT percentile', (r) => (r.latency.rows[0].ttft.p99 = HUGE), /latency\.rows\[0\]\.ttft\.p99 must be ≤/],
    ['a huge depth-curve point', (r) => (r.latency.depth_curve[0].tpot_ms = HUGE), /latency\.depth_curve\[0\]\.tpot_ms must be ≤/],
    ['a huge negative overhead', (r) => (r.latency.rows[0].host_overhead_ms = -HUGE), /latency\.rows\[0\]\.host_overhead_ms must be ≥ -10000000/],
    ['a kernel share above 1', (r) => (r.latency.kernels[0].share = 2), /latency\.kernels\[0\]\.share must be ≤ 1/],
    ['a huge verdict rate', (r) => (r.latency.verdicts[0].prefill.achievedBytesPerS = HUGE), /latency\.verdicts\[0\]\.prefill\.achievedBytesPerS must be ≤/],
    ['a huge layer count', (r) => (r.model.config.nLayers = 1e9), /model\.config\.nLayers must be ≤ 10000/],
    ['a huge cold start', (r) => (r.cold_start.upload_ms = HUGE), /cold_start\.upload_ms must be ≤/],
    ['a huge token id', (r) => (r.generation.token_ids[0] = 2 ** 40), /generation\.token_ids\[0\] must be ≤/],
    ['a huge llama-bench rate', (r) => (r.llama_bench[0].samples[0] = HUGE), /llama_bench\[0\]\.samples\[0\] must be ≤/],
    ['a huge serving TTFT', (r) => (r.serve.run.result.median_ttft_ms = HUGE), /serve\.run\.result\.median_ttft_ms must be ≤/],
    ['an attainment above 1', (r) => (r.serve.rate_sweep.probes[0].attainment = 1.5), /serve\.rate_sweep\.probes\[0\]\.attainment must be ≤ 1/],
    ['a huge batch-sweep throughput', (r) => (r.serve.batch_sweep[0].output_throughput = HUGE), /serve\.batch_sweep\[0\]\.output_throughput must be ≤/],
    ['a huge WebLLM TTFT', (r) => (r.webllm.comparisons[0].webllm.ttft_ms = HUGE), /webllm\.comparisons\[0\]\.webllm\.ttft_ms must be ≤/],
    ['a huge side-by-side point', (r) => (r.side_by_side.points[0].gbps = HUGE), /side_by_side\.points\[0\]\.gbps must be ≤/],
    // Wrong types.
    ['a serving prompt that is null', (r) => (r.serve.settings.prompt = null), /serve\.settings\.prompt must be an object/],
    ['an unknown length distribution', (r) => (r.serve.settings.output = { kind: 'zipf' }), /serve\.settings\.output\.kind must be one of lognormal/],
    ['a string cost', (r) => (r.serve.cost.dollarsPer1kOutputTokens = '1'), /serve\.cost\.dollarsPer1kOutputTokens must be a finite number/],
    ['a string WebLLM vram', (r) => (r.webllm.model.vramMB = 'lots'), /webllm\.model\.vramMB must be a finite number/],
    ['a step count that is fractional', (r) => (r.serve.run.steps[0].running = 1.5), /serve\.run\.steps\[0\]\.running must be an integer/],
    ['an unknown roof unit', (r) => (r.ceilings.measurements.read_bandwidth_gbps.unit = 'MB/s'), /unit must be one of GB\/s, GFLOP\/s/],
    ['an environment limit that is a string', (r) => (r.environment.limits.maxBufferSize = '1'), /environment\.limits\.maxBufferSize must be a finite number/],
    // Missing fields.
    ['a serving run without its timeline', (r) => delete r.serve.run.timeline, /serve\.run\.timeline must be an array/],
    ['a side-by-side without points', (r) => delete r.side_by_side.points, /side_by_side\.points must be an array/],
    ['a WebLLM section without comparisons', (r) => delete r.webllm.comparisons, /webllm\.comparisons must be an array/],
    ['a generation without token ids', (r) => delete r.generation.token_ids, /generation\.token_ids must be an array/],
    ['a model without its config', (r) => delete r.model.config, /model\.config must be an object/],
    [
      'an f16 measurement without its roof',
      (r) => ((r.ceilings.f16_gflops = null), (r.ceilings.measurements.f16_gflops = r.ceilings.measurements.f32_gflops)),
      /measurements\.f16_gflops must be null when the value is null/,
    ],
    [
      'an 8-bit GEMM measurement without its roof',
      (r) => delete r.ceilings.matmul_q8_gflops,
      /measurements\.matmul_q8_gflops must be null when the value is null/,
    ],
    [
      'an 8-bit GEMM roof without its measurement',
      (r) => (r.ceilings.measurements.matmul_q8_gflops = null),
      /measurements\.matmul_q8_gflops must be present when the value is/,
    ],
  ])('refuse %s, naming the field', (_name, mutate, message) => {
    const r = fullResult();
    mutate(r);
    expect(() => validateResult(r)).toThrow(message);
  });

  it('refuse an extreme number in a link before anything draws it', async () => {
    const r = fullResult();
    const fragment = await encodeReport(r as BenchResult);
    await expect(decodeReport(fragment)).resolves.toBeTruthy();
    r.latency.rows[0].stats.p99_tpot_ms = HUGE;
    await expect(decodeReport(await encodeReport(r as BenchResult))).rejects.toMatchObject({
      code: 'bad-input',
      message: expect.stringMatching(/latency\.rows\[0\]\.stats\.p99_tpot_ms must be ≤/),
    });
  });

  it('say when a declaration and an interface disagree (compile time)', () => {
    const same: Agrees<{ a: number; b?: string }, { a: number; b?: string }> = true;
    // @ts-expect-error — a field only one side names
    const extra: Agrees<{ a: number }, { a: number; b?: string }> = true;
    // @ts-expect-error — a field of another type
    const other: Agrees<{ a: number }, { a: string }> = true;
    expect([same, extra, other]).toEqual([true, true, true]);
  });

  it('publish the JSON Schema generated from them (run `npm run schema` after changing a section)', () => {
    expect(readFileSync(RESULT_SCHEMA_PATH, 'utf8')).toBe(resultSchemaText());
    const schema = JSON.parse(resultSchemaText());
    expect(schema.properties.latency.properties.rows.items.properties.ttft.properties.p99).toEqual({ type: 'number', minimum: 0, maximum: 1e7 });
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(Object.keys(RESULT_SECTIONS)));
  });
});

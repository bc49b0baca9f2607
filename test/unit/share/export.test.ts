import { describe, expect, it } from 'vitest';
import type { LatencyRow } from '../../../src/measure/latency-summary.ts';
import type { BenchResult } from '../../../src/measure/schema.ts';
import { MAX_IMPORT_CHARS, parseImportedJson, rowsToCsv, toJson } from '../../../src/share/export.ts';
import { largeResult, latencyOf, MODEL, smallResult } from './fixtures.ts';

const summary = (mean: number, p50: number, p90: number, p95: number, p99: number) => ({ count: 3, mean, std: 0, min: p50, p50, p90, p95, p99, max: p99 });

function withRows(name: string, rows: Partial<LatencyRow>[]): BenchResult {
  const r = smallResult();
  r.model = { ...MODEL, name };
  const base = latencyOf(r).rows[0];
  r.latency = { ...latencyOf(r), rows: rows.map((row) => ({ ...base, ...row })) };
  return r;
}

const HEADER =
  'model,prompt_tokens,output_tokens,n,mean_ttft_ms,median_ttft_ms,p90_ttft_ms,p95_ttft_ms,p99_ttft_ms,' +
  'mean_tpot_ms,median_tpot_ms,p90_tpot_ms,p95_tpot_ms,p99_tpot_ms,prefill_tokens_per_s,decode_tokens_per_s,' +
  'decode_bytes_per_token,decode_bandwidth_gbps,decode_efficiency,decode_of_read_beside,gpu_prefill_ms,gpu_decode_ms,host_overhead_ms\r\n';

describe('rowsToCsv', () => {
  it('writes one line per prompt length, empty cells for what was not measured', () => {
    const r = withRows('Llama-3.2-1B', [
      {
        prompt_tokens: 16,
        output_tokens: 64,
        n: 5,
        ttft: summary(10.5, 10, 11, 11.5, 12),
        tpot: summary(2.25, 2, 2.5, 2.75, 3),
        prefill_tokens_per_s: 1600,
        decode_tokens_per_s: 500,
        decode_bytes_per_token: 700000000,
        decode_bandwidth_gbps: 350,
        decode_efficiency: 0.85,
        decode_of_read_beside: 0.8125,
        gpu_prefill_ms: 9.5,
        gpu_decode_ms: 1.75,
        host_overhead_ms: -0.125,
      },
      {
        prompt_tokens: 1024,
        output_tokens: 1,
        n: 3,
        ttft: summary(300, 299, 310, 320, 330.0625),
        tpot: null,
        prefill_tokens_per_s: 3424.749163879599,
        decode_tokens_per_s: null,
        decode_bytes_per_token: 733554432,
        decode_bandwidth_gbps: null,
        decode_efficiency: null,
        gpu_prefill_ms: null,
        gpu_decode_ms: null,
        host_overhead_ms: null,
      },
    ]);
    expect(rowsToCsv(r)).toBe(
      HEADER +
        'Llama-3.2-1B,16,64,5,10.5,10,11,11.5,12,2.25,2,2.5,2.75,3,1600,500,700000000,350,0.85,0.8125,9.5,1.75,-0.125\r\n' +
        'Llama-3.2-1B,1024,1,3,300,299,310,320,330.0625,,,,,,3424.749163879599,,733554432,,,,,,\r\n',
    );
  });

  it.each([
    ['plain', 'plain'],
    ['a, b', '"a, b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("http://x","click")', `"'=HYPERLINK(""http://x"",""click"")"`],
    ['+1', "'+1"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', `"'\r=1"`],
    ['x=1', 'x=1'],
  ])('quotes the string %j as %j', (name, cell) => {
    const csv = rowsToCsv(withRows(name, [{}]));
    expect(csv.slice(HEADER.length, HEADER.length + cell.length + 1)).toBe(`${cell},`);
  });

  it('never guards numbers, so negative ones stay numbers', () => {
    const csv = rowsToCsv(withRows('m', [{ host_overhead_ms: -1.5 }]));
    expect(csv.endsWith(',-1.5\r\n')).toBe(true);
  });

  it('is the header alone without a latency section', () => {
    const { latency: _l, ...r } = smallResult();
    expect(rowsToCsv(r as BenchResult)).toBe(HEADER);
  });

  it('matches the real rows of a sweep', () => {
    const r = largeResult();
    const lines = rowsToCsv(r).split('\r\n');
    expect(lines).toHaveLength(1 + 4 + 1);
    const row = latencyOf(r).rows[2];
    expect(lines[3].split(',').slice(0, 6)).toEqual(['Llama-3.2-1B', '256', '128', '25', String(row.ttft.mean), String(row.ttft.p50)]);
  });
});

describe('toJson and parseImportedJson', () => {
  it('round-trip the full result, every raw sample included', () => {
    const r = largeResult();
    const text = toJson(r);
    expect(text).toMatch(/^\{\n {2}"schema_version": 1,\n/);
    expect(text.endsWith('}\n')).toBe(true);
    expect(parseImportedJson(text)).toEqual(r);
    expect(latencyOf(parseImportedJson(text)).requests[0].token_ms).toHaveLength(128);
  });

  it('accept a byte-order mark', () => {
    const r = smallResult();
    expect(parseImportedJson(`\uFEFF${toJson(r)}`)).toEqual(r);
  });

  it.each([
    ['a syntax error, with line and column', '{\n  "schema_version": 1,\n}', /not valid JSON at line 3, column 1/],
    ['a cut-off file', '{\n  "schema_version": 1', /not valid JSON/],
    ['an empty file', '', /not valid JSON/],
    ['JSON that is not a result', '[1, 2]', /result must be an object/],
    ['another schema version', JSON.stringify({ ...smallResult(), schema_version: 0 }), /schema version 0; this tokenscope reads version 1/],
    ['deep nesting', `{"a":\n${'{"a":'.repeat(40)}1${'}'.repeat(41)}`, /deeper than 16 levels \(line 2, column 76\)/],
  ])('refuse %s', (_name, text, message) => {
    expect(() => parseImportedJson(text)).toThrow(message);
    try {
      parseImportedJson(text);
    } catch (e) {
      expect(e).toMatchObject({ code: 'bad-input', hint: expect.stringMatching(/.+/) });
    }
  });

  it('refuse a file over the size cap before parsing it', () => {
    const text = ' '.repeat(MAX_IMPORT_CHARS + 1);
    const t0 = performance.now();
    expect(() => parseImportedJson(text)).toThrow(/tokenscope imports at most 52428800/);
    expect(performance.now() - t0).toBeLessThan(100);
  });
});

import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csv, profileRecords, reportTables, writeArtifacts } from '../../../cli/artifacts.ts';
import { embedResult } from '../../../cli/report-html.ts';
import { formatReport } from '../../../src/jobs/report.ts';
import { table, withTableSink } from '../../../src/measure/format.ts';
import { serveResult } from '../../../src/serve/metrics.ts';
import type { BenchResult } from '../../../src/measure/schema.ts';
import { fullResult, smallResult } from '../share/fixtures.ts';

describe('--out artifacts', () => {
  it("writes a latency sweep's repetitions as AIPerf records: TTFT, the gaps, ITL, latency, lengths", () => {
    const r = smallResult();
    r.latency!.requests = [
      { prompt_tokens: 16, output_tokens: 3, rep: 0, token_ms: [40, 50, 70], gpu_prefill_ms: null, gpu_decode_ms: null, disturbed: false },
    ];
    expect(profileRecords(r)).toEqual([
      {
        metadata: { session_num: 0, x_request_id: 'pp16-rep0', turn_index: 0, benchmark_phase: 'latency-sweep', was_cancelled: false },
        metrics: {
          input_sequence_length: { value: 16, unit: 'tokens' },
          time_to_first_token: { value: 40, unit: 'ms' },
          inter_chunk_latency: { value: [10, 20], unit: 'ms' },
          inter_token_latency: { value: 15, unit: 'ms' },
          output_token_throughput_per_user: { value: 1000 / 15, unit: 'tokens/sec/user' },
          request_latency: { value: 70, unit: 'ms' },
          output_sequence_length: { value: 3, unit: 'tokens' },
        },
        error: null,
      },
    ]);
  });

  it("writes a serve run's requests from vLLM's arrays, a failed one with its cause", () => {
    const result = serveResult(
      [
        { promptTokens: 8, tSend: 0, tTokens: [100, 130, 150] },
        { promptTokens: 9, tSend: 0, tTokens: [], error: 'timed out after 50 ms' },
      ],
      1,
    );
    const timeline = [
      { id: 0, prompt_tokens: 8, output_tokens: 3, error: null, cause: null },
      { id: 1, prompt_tokens: 9, output_tokens: 0, error: 'timed out after 50 ms', cause: 'timeout' },
    ];
    const r = { latency: undefined, serve: { run: { result, timeline } } } as unknown as BenchResult;
    const [ok, failed] = profileRecords(r);
    expect(ok.metadata.x_request_id).toBe('serve-0');
    expect(ok.metrics.time_to_first_token.value).toBeCloseTo(100, 9);
    expect((ok.metrics.inter_chunk_latency.value as number[]).map((v) => Math.round(v * 1e6) / 1e6)).toEqual([30, 20]);
    expect(ok.metrics.request_latency.value).toBeCloseTo(150, 9);
    expect(failed).toEqual({
      metadata: { session_num: 1, x_request_id: 'serve-1', turn_index: 0, benchmark_phase: 'serve', was_cancelled: true },
      metrics: { error_isl: { value: 9, unit: 'tokens' } },
      error: { code: null, type: 'timeout', message: 'timed out after 50 ms' },
    });
  });

  it('writes a CSV of every table the text report prints, in its order', () => {
    const r = fullResult() as BenchResult;
    const printed: string[][] = [];
    withTableSink(
      (header) => printed.push([...header]),
      () => formatReport(r),
    );
    const files = reportTables(r);
    const tables = files.filter((f) => f.name !== 'llama-bench.csv');
    expect(tables.length).toBe(printed.length);
    expect(printed.length).toBeGreaterThan(3);
    // Each CSV's header row is the printed table's header.
    tables.forEach((f, i) => expect(f.text.split('\n')[0]).toBe(printed[i].map((h) => `"${h}"`).join(',')));
    expect(files.map((f) => f.name)).toContain('latency.csv');
    expect(files.map((f) => f.name)).toContain('llama-bench.csv');
    expect(csv(['a', 'b "c"'], [['1,5', '']])).toBe('"a","b ""c"""\n"1,5",""\n');
    // Outside withTableSink, table() hands nothing on.
    expect(table(['x'], [['1']])).toContain('x');
  });

  it('embeds the result in the page as JSON no string in it can close the tag', () => {
    const r = smallResult();
    r.model!.name = '</script><script>alert(1)</script>';
    const html = embedResult('<html><body><ts-app></ts-app></body></html>', r);
    const m = /<script type="application\/json" id="tokenscope-result">(.*)<\/script>\n<\/body>/s.exec(html)!;
    expect(m[1]).not.toContain('</');
    expect(JSON.parse(m[1])).toEqual(r);
  });

  it('writes result.json, the records and the tables into a new folder', () => {
    const r = fullResult() as BenchResult;
    const dir = join(mkdtempSync(join(tmpdir(), 'ts-out-')), 'new', 'run');
    const files = writeArtifacts(dir, r);
    expect(readdirSync(dir).sort()).toEqual(files.map((f) => f.slice(dir.length + 1)).sort());
    expect(files[0]).toBe(join(dir, 'result.json'));
    expect(JSON.parse(readFileSync(files[0], 'utf8'))).toEqual(r);
    const lines = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBe(profileRecords(r).length);
  });
});

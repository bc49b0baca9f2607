import { describe, expect, it } from 'vitest';
import { formatLlamaBenchOutput, parseLlamaBenchTest } from '../../../src/measure/llama-bench-output.ts';
import { llamaBenchRow } from '../../../src/measure/metrics.ts';

const rows = [
  llamaBenchRow('llama 292K Q8_0', 1_185_792, 292_480, 'WebGPU', 'pp32', [3200, 4800]),
  llamaBenchRow('llama 292K Q8_0', 1_185_792, 292_480, 'WebGPU', 'tg8 @ d512', [400]),
];
const run = { model_filename: '../shared/models/stories260K.gguf', gpu_info: 'llvmpipe (LLVM 15.0.7, 256 bits)', test_time: '2026-12-05T01:40:00.000Z' };

describe("llama-bench's output formats", () => {
  it('parses test names into n_prompt, n_gen and n_depth', () => {
    expect(parseLlamaBenchTest('pp512')).toEqual({ n_prompt: 512, n_gen: 0, n_depth: 0 });
    expect(parseLlamaBenchTest('tg128 @ d4096')).toEqual({ n_prompt: 0, n_gen: 128, n_depth: 4096 });
    expect(parseLlamaBenchTest('pp512+tg128')).toEqual({ n_prompt: 512, n_gen: 128, n_depth: 0 });
    expect(() => parseLlamaBenchTest('xx')).toThrow(/not a llama-bench test/);
  });

  it("writes JSONL records with llama-bench's keys, nanoseconds derived from the tokens/s", () => {
    const lines = formatLlamaBenchOutput(rows, 'jsonl', run).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const [pp, tg] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(pp).toEqual({
      gpu_info: run.gpu_info,
      backends: 'WebGPU',
      model_filename: run.model_filename,
      model_type: 'llama 292K Q8_0',
      model_size: 1_185_792,
      model_n_params: 292_480,
      n_gpu_layers: -1,
      n_prompt: 32,
      n_gen: 0,
      n_depth: 0,
      test_time: run.test_time,
      avg_ns: 8_333_334, // mean of the rounded 32/3200 s = 10 ms and 32/4800 s = 6.67 ms
      stddev_ns: 2_357_022,
      avg_ts: 4000,
      stddev_ts: 1131.370849898476,
      samples_ns: [10_000_000, 6_666_667],
      samples_ts: [3200, 4800],
    });
    expect(tg).toMatchObject({ n_prompt: 0, n_gen: 8, n_depth: 512, avg_ts: 400, stddev_ts: 0, samples_ns: [20_000_000], stddev_ns: 0 });
  });

  it('writes JSON as one array of the same records', () => {
    const json = JSON.parse(formatLlamaBenchOutput(rows, 'json', run)) as unknown[];
    expect(json).toEqual(
      formatLlamaBenchOutput(rows, 'jsonl', run)
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    );
  });

  it('writes CSV with a header of the keys and every value quoted', () => {
    const [header, first, second, end] = formatLlamaBenchOutput(rows, 'csv', run).split('\n');
    expect(header.split(',')).toContain('avg_ts');
    expect(header.split(',').slice(-6)).toEqual(['avg_ns', 'stddev_ns', 'avg_ts', 'stddev_ts', 'samples_ns', 'samples_ts']);
    expect(first).toMatch(/^"llvmpipe \(LLVM 15\.0\.7, 256 bits\)","WebGPU",/);
    expect(first.endsWith('"10000000;6666667","3200;4800"')).toBe(true);
    expect(second).toContain('"512"');
    expect(end).toBe('');
    expect(formatLlamaBenchOutput([], 'csv', run).trimEnd().split('\n')).toEqual([header]);
  });

  it("writes llama-bench's markdown table with pp and tg @ d rows", () => {
    const md = formatLlamaBenchOutput(rows, 'md', run).split('\n');
    expect(md[0]).toMatch(/^\| model +\| +size \| +params \| backend +\| ngl \| +test \| +t\/s \|$/);
    expect(md[2]).toMatch(/\| +pp32 \| +4000\.00 ± 1131\.37 \|$/);
    expect(md[3]).toMatch(/\| +tg8 @ d512 \| +400\.00 ± 0\.00 \|$/);
  });

  it("writes llama-bench's SQL: CREATE TABLE IF NOT EXISTS test, then one quoted INSERT per test", () => {
    const pg = llamaBenchRow("llama 292K Q8_0 'quoted'", 1_185_792, 292_480, 'WebGPU', 'pp32+tg8', [600]);
    const sql = formatLlamaBenchOutput([...rows, pg], 'sql', run);
    const [create, inserts] = sql.split('\n\n');
    expect(create.split('\n')[0]).toBe('CREATE TABLE IF NOT EXISTS test (');
    expect(create).toContain('  model_size INTEGER,');
    expect(create).toContain('  avg_ts REAL,');
    expect(create).toContain('  gpu_info TEXT,');
    expect(create.endsWith('  stddev_ts REAL\n);')).toBe(true);
    expect(create).not.toContain('samples_ts');
    const lines = inserts.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^INSERT INTO test \(gpu_info, backends, model_filename, .*, avg_ts, stddev_ts\) VALUES \('llvmpipe \(LLVM 15\.0\.7, 256 bits\)', 'WebGPU', /,
    );
    // pp32+tg8 at 600 tokens/s: 40 tokens in 66.7 ms; a quote in a value is doubled.
    expect(lines[2]).toContain("'llama 292K Q8_0 ''quoted'''");
    expect(lines[2]).toContain("'32', '8', '0', '2026-12-05T01:40:00.000Z', '66666667', '0', '600', '0');");
  });
});

import { describe, expect, it } from 'vitest';
import { parseBench, usageError } from './bench-args.ts';
import { jobFromFlags } from '../../../cli/bench-job.ts';
import { runKind } from '../../../cli/bench-flags.ts';
import { llamaBenchTests, LLAMA_BENCH_DEFAULTS } from '../../../src/measure/llama-bench-spec.ts';
import { parseIntRanges } from '../../../src/measure/validate.ts';

const parse = parseBench;
const refusal = (argv: string[]) => usageError(() => parse(argv), argv.join(' '));

describe("llama-bench's integer lists and ranges", () => {
  it.each([
    ['32', [32]],
    ['32,64, 128', [32, 64, 128]],
    ['0,8', [0, 8]],
    ['128-512+128', [128, 256, 384, 512]],
    ['128-500+128', [128, 256, 384]],
    ['1-4', [1, 2, 3, 4]],
    ['128-512*2', [128, 256, 512]],
    ['16,64-128*2', [16, 64, 128]],
  ])('%s → %j', (text, values) => {
    expect(parseIntRanges('n-prompt', text)).toEqual(values);
  });
  it.each([
    ['abc', /each value of --n-prompt must be an integer/],
    ['', /each value of --n-prompt must be an integer/],
    ['512-128', /range 512-128 is empty/],
    ['1-8+0', /never advances/],
    ['1-8*1', /never advances/],
    ['0-8*2', /never advances/],
    ['1-100', /at most 16 values/],
    ['40000', /from 0 to 32768/],
    ['1-80000+40000', /from 0 to 32768/],
    ['1-1000000000', /at most 16 values/],
  ])('%j is refused', (text, message) => {
    expect(parseIntRanges('n-prompt', text)).toMatch(message);
  });
});

describe('llama-bench mode flags', () => {
  it('reads -m -p -n -r -d -o as llama-bench does, lists and ranges included', () => {
    const f = parse(['-m', 'x.gguf', '-p', '32,64', '-n', '8', '-r', '2', '-d', '0-512+512', '-o', 'jsonl']);
    expect(Object.fromEntries(f)).toEqual({ model: 'x.gguf', 'n-prompt': [32, 64], 'n-gen': [8], repetitions: 2, 'n-depth': [0, 512], output: 'jsonl' });
    expect(runKind(f as never)).toBe('llama-bench');
    // -m alone is a model for the default run; -p or -n choose llama-bench mode.
    expect(runKind(parse(['-m', 'x.gguf']) as never)).toBe('latency');
    expect(Object.fromEntries(parse(['--n-prompt=16', '-o=md']))).toEqual({ 'n-prompt': [16], output: 'md' });
  });

  it('builds a job of llama-bench tests only, without the roofs unless asked', () => {
    const job = jobFromFlags(parse(['-m', 'stories15m', '-p', '32', '-n', '8', '-r', '2', '-d', '0,16']), true);
    expect(job.probe).toBe(false);
    expect(job.latency).toBeUndefined();
    expect(job.model).toEqual({ preset: 'stories15m' });
    const tests = llamaBenchTests({ ...LLAMA_BENCH_DEFAULTS, ...(job.llamaBench as object) });
    expect(tests).toEqual([
      { nPrompt: 32, nGen: 0, depth: 0 },
      { nPrompt: 0, nGen: 8, depth: 0 },
      { nPrompt: 32, nGen: 0, depth: 16 },
      { nPrompt: 0, nGen: 8, depth: 16 },
    ]);
    expect(jobFromFlags(parse(['-p', '32', '--roofs', 'fresh']), true).probe).toBe(true);
    // Defaults are llama-bench's: pp512 and tg128.
    expect(
      llamaBenchTests({ ...LLAMA_BENCH_DEFAULTS, ...(jobFromFlags(parse(['-r', '1']), true).llamaBench as object) }).map((t) => [t.nPrompt, t.nGen]),
    ).toEqual([
      [512, 0],
      [0, 128],
    ]);
  });

  it('refuses flags of other modes, bad values and empty test lists', () => {
    expect(refusal(['-p', '32', '--prompt-lengths', '16'])).toMatch(/--prompt-lengths does not apply to llama-bench mode/);
    expect(refusal(['-p', '32', '--llama-bench'])).toMatch(/already run llama-bench mode/);
    expect(refusal(['-p', '32', '--mode', 'serve'])).toMatch(/--mode does not apply to llama-bench mode/);
    expect(refusal(['-p', '32', '--probe'])).toMatch(/^-p does not apply to --probe/);
    expect(refusal(['--n-prompt', '32', '--probe'])).toMatch(/^--n-prompt does not apply to --probe/);
    expect(refusal(['-o', 'xml'])).toMatch(/^-o must be one of md, csv, json, jsonl, sql/);
    expect(refusal(['-r', '0'])).toMatch(/^-r must be an integer from 1 to 1000/);
    expect(refusal(['-p'])).toMatch(/^-p needs a value/);
    expect(refusal(['-p', '-n', '8'])).toMatch(/^-p needs a value/);
    expect(refusal(['-x', '1'])).toMatch(/Unknown flag -x/);
    expect(() => jobFromFlags(parse(['-p', '0', '-n', '0']), true)).toThrow(/no test to run/);
    expect(() => jobFromFlags(parse(['-p', '16384', '-d', '16384', '-r', '10']), true)).toThrow(/add --yes/);
  });
});

describe("llama-bench's -pg", () => {
  const testsOf = (argv: string[]) =>
    llamaBenchTests({ ...LLAMA_BENCH_DEFAULTS, ...(jobFromFlags(parse(argv), true).llamaBench as object) }).map((t) => [t.nPrompt, t.nGen, t.depth]);

  it('adds a pp+tg test per -pg, after the pp and tg tests of each depth, as llama-bench orders them', () => {
    expect(testsOf(['-p', '32', '-n', '8', '-pg', '16,4', '-pg', '64,2', '-d', '0,8', '-r', '1'])).toEqual([
      [32, 0, 0],
      [0, 8, 0],
      [16, 4, 0],
      [64, 2, 0],
      [32, 0, 8],
      [0, 8, 8],
      [16, 4, 8],
      [64, 2, 8],
    ]);
    // -pg alone keeps llama-bench's default pp512 and tg128 beside it; -p 0 -n 0 leaves the pair alone.
    expect(testsOf(['-pg', '16,4', '-r', '1'])).toEqual([
      [512, 0, 0],
      [0, 128, 0],
      [16, 4, 0],
    ]);
    expect(testsOf(['-p', '0', '-n', '0', '-pg', '16,4'])).toEqual([[16, 4, 0]]);
    expect(runKind(parse(['-pg', '16,4']) as never)).toBe('llama-bench');
  });

  it('refuses a -pg that is not one pair of lengths above 0', () => {
    for (const [pg, message] of [
      ['512', /one PP,TG pair/],
      ['512,128,64', /one PP,TG pair/],
      ['a,128', /the PP of -pg a,128 must be an integer/],
      ['512,99999', /the TG of -pg 512,99999 must be an integer from 0 to 4096/],
      ['0,128', /both lengths must be above 0/],
    ] as const) {
      expect(() => jobFromFlags(parse(['-pg', pg]), true)).toThrow(message);
    }
    expect(refusal(['-pg', '16,4', '--prompt-lengths', '16'])).toMatch(/chosen by -p, -n, -pg/);
  });
});

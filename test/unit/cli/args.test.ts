import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBench, usageError } from './bench-args.ts';
import { parseFlags, UsageError, type FlagSpec } from '../../../cli/args.ts';
import { outputPathProblem } from '../../../cli/bench-flags.ts';

const FLAGS: Record<string, FlagSpec> = {
  probe: { type: 'boolean', help: '' },
  runtime: { type: 'string', choices: ['node', 'browser'], help: '' },
  reps: { type: 'int', help: '' },
  rate: { type: 'number', help: '' },
  lengths: { type: 'list', help: '' },
};

describe('parseFlags', () => {
  it('parses every type, with and without =', () => {
    const f = parseFlags(['--probe', '--runtime', 'browser', '--reps=5', '--rate', '2.5', '--lengths', '16,64, 256'], FLAGS);
    expect(Object.fromEntries(f)).toEqual({ probe: true, runtime: 'browser', reps: 5, rate: 2.5, lengths: ['16', '64', '256'] });
  });
  it.each([
    [['--nope'], /Unknown flag --nope/],
    [['--runtime', 'deno'], /must be one of node, browser/],
    [['--reps', '-1'], /non-negative integer/],
    [['--reps', '1.5'], /non-negative integer/],
    [['--rate', 'fast'], /must be a number/],
    [['--reps'], /needs a value/],
    [['--reps', '--probe'], /needs a value/],
    [['--probe=yes'], /takes no value/],
    [['stray'], /Unexpected argument/],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseFlags(argv, FLAGS)).toThrow(UsageError);
    expect(() => parseFlags(argv, FLAGS)).toThrow(message);
  });
});

describe("bench's flags: every value in range, every flag in its mode, before any GPU work", () => {
  const parse = parseBench;
  const refused = (argv: string[]) => usageError(() => parse(argv), argv.join(' '));
  const lengths = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1)).join(',');

  it.each([
    [['--reps', '0'], '--reps must be an integer from 1 to 1000, got 0.'],
    [['--reps', '100000'], '--reps must be an integer from 1 to 1000, got 100000.'],
    [['--gen', '0'], '--gen must be an integer from 1 to 4096, got 0.'],
    [['--warmup', '1000000'], '--warmup must be an integer from 0 to 100, got 1000000.'],
    [['--prompt-lengths', '@1000 lengths'], '--prompt-lengths takes at most 16 values, got 1000.'],
    [['--prompt-lengths', '@60000 lengths'], '--prompt-lengths takes at most 16 values, got 60000.'],
    [['--prompt-lengths', '16,0'], 'each value of --prompt-lengths must be an integer from 1 to 32768, got 0.'],
    [['--mode', 'serve', '--rate', '1e-9'], '--rate must be a number from 0.001 to 1000000 or inf, got 1e-9.'],
    [['--mode', 'serve', '--rate', 'abc'], '--rate must be a number from 0.001 to 1000000 or inf, got "abc".'],
    [['--mode', 'serve', '--burstiness', '1e-300'], '--burstiness must be a number from 0.01 to 1000, got 1e-300.'],
    [['--mode', 'serve', '--rate', '1e9', '--requests', '1000000'], '--rate must be a number from 0.001 to 1000000 or inf, got 1e9.'],
    [['--mode', 'serve', '--requests', '1000000'], '--requests must be an integer from 1 to 10000, got 1000000.'],
    [['--mode', 'serve', '--requests', '0'], '--requests must be an integer from 1 to 10000, got 0.'],
    [['--probe-mib', '0'], '--probe-mib must be an integer from 1 to 4096, got 0.'],
    [['--prompt', 'hi', '--temperature', '0.7', '--top-p', '-5'], '--top-p must be a number above 0 and at most 1, got -5.'],
    [['--context', '0'], '--context must be an integer from 1 to 16777216, got 0.'],
    [['--mode', 'serve', '--max-tokens-per-step', '0'], '--max-tokens-per-step must be an integer from 1 to 32768, got 0.'],
    [['--mode', 'serve', '--dollars-per-hour', '-1e308'], '--dollars-per-hour must be a number above 0 and at most 100000, got -1e308.'],
    [['--mode', 'serve', '--sweep-batch', '1,65'], 'each value of --sweep-batch must be an integer from 1 to 64, got 65.'],
    [['--inspect', 'm.gguf', '--context', '0'], '--context must be an integer from 1 to 16777216, got 0.'],
  ])('%j: out of range', (argv, message) => {
    // "@N lengths" stands for a list of N prompt lengths (kept out of the test's name).
    expect(refused(argv.map((a) => (a.startsWith('@') ? lengths(parseInt(a.slice(1))) : a)))).toBe(message);
  });

  it.each([
    [['--rate', 'abc'], '--rate is a serve-mode flag; add --mode serve.'],
    [['--requests', '5'], '--requests is a serve-mode flag; add --mode serve.'],
    [['--mode', 'latency', '--sweep-rate'], '--sweep-rate is a serve-mode flag; add --mode serve.'],
    [
      ['--mode', 'serve', '--reps', '3'],
      '--reps is a flag of the latency sweep (the default mode), which --mode serve does not run (and the roofs take it only with --probe alone).',
    ],
    [['--mode', 'serve', '--warmup', '3'], '--warmup is a flag of the latency sweep (the default mode), which --mode serve does not run.'],
    // The e2e tests once passed --reps 1 with --prompt to shorten the roofs: it never did.
    [
      ['--prompt', 'hi', '--gen', '24', '--probe-mib', '4', '--reps', '1'],
      /--reps is a latency-sweep flag; with --prompt the sweep runs only when --prompt-lengths is given/,
    ],
    [['--mode', 'serve', '--prompt-lengths', '16'], /--prompt-len sets its prompts/],
    [['--mode', 'serve', '--gen', '8'], /in serve mode --output-len sets it/],
    [['--prompt', 'hi', '--reps', '3'], /with --prompt the sweep runs only when --prompt-lengths is given/],
    [['--chat'], '--chat is a --prompt flag; add --prompt TEXT.'],
    [['--temperature', '0.7'], '--temperature is a --prompt flag; add --prompt TEXT.'],
    [['--prompt', 'hi', '--top-k', '40'], /--top-k shapes sampling, which needs --temperature above 0/],
    [['--prompt', 'hi', '--temperature', '0', '--top-p', '0.9'], /--top-p shapes sampling/],
    [['--mode', 'serve', '--no-chunking', '--chunk', '16'], /--no-chunking turns off/],
    [['--probe', '--model', 'x'], /--model does not apply to --probe, which measures the roofs only/],
    [['--probe', '--gen', '8'], /--gen does not apply to --probe/],
    [['--inspect', 'm.gguf', '--reps', '3'], /--reps does not apply to --inspect, which takes --probe, --probe-mib/],
    [['--inspect', 'm.gguf', '--probe-mib', '8'], /with --inspect it needs --probe/],
    [['--browser', '/bin/chrome'], /add --runtime browser/],
    [['--share-base', 'https://x.test/'], /add --share/],
  ])('%j: a flag the chosen mode ignores is refused, naming the mode that takes it', (argv, message) => {
    if (typeof message === 'string') expect(refused(argv)).toBe(message);
    else expect(refused(argv)).toMatch(message);
  });

  it('the mode is found wherever its flag stands, and is asked before a value is parsed', () => {
    expect(refused(['--rate', 'abc', '--mode', 'latency'])).toBe('--rate is a serve-mode flag; add --mode serve.');
    expect(parse(['--rate', '2', '--mode', 'serve']).get('rate')).toBe('2');
  });

  it.each([
    [['--reps', '3', '--prompt-lengths', '16,64', '--gen', '8', '--warmup', '0', '--profile', '--chunk', '64']],
    [['--mode', 'serve', '--rate', 'inf', '--requests', '10000', '--burstiness', '0.5', '--sweep-batch', '1,2,64', '--dollars-per-hour', '2.5']],
    [['--prompt', 'hi', '--chat', '--temperature', '0.7', '--top-k', '40', '--top-p', '0.9', '--gen', '8']],
    [['--prompt', 'hi', '--prompt-lengths', '16', '--reps', '2']],
    [['--mode', 'serve', '--prompt', 'hi', '--gen', '8']],
    [['--probe', '--reps', '3', '--probe-mib', '64', '--json', 'out.json']],
    [['--inspect', 'm.gguf', '--probe', '--probe-mib', '8', '--context', '4096', '--memory-gib', '2']],
    [['--help', '--rate', '2']],
  ])('%j is accepted', (argv) => {
    expect(() => parse(argv)).not.toThrow();
  });

  it('lists with a range come back as numbers', () => {
    expect(parse(['--prompt-lengths', '16, 64']).get('prompt-lengths')).toEqual([16, 64]);
    expect(parse(['--disable', 'subgroups']).get('disable')).toEqual(['subgroups']);
  });
});

describe('output paths are checked before the run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-out-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a new file in a writable folder, or an existing writable file, is fine', () => {
    expect(outputPathProblem(join(dir, 'new.json'))).toBeNull();
    writeFileSync(join(dir, 'old.json'), '{}');
    expect(outputPathProblem(join(dir, 'old.json'))).toBeNull();
  });
  it('a missing folder, a folder, or a path under a file is refused, naming --json', () => {
    expect(outputPathProblem(join(dir, 'missing', 'x.json'))).toMatch(/^--json .*x\.json: the folder .*missing does not exist; create it first$/);
    expect(outputPathProblem(dir)).toMatch(/^--json .* is a folder; give a file name inside it$/);
    writeFileSync(join(dir, 'file'), '');
    expect(outputPathProblem(join(dir, 'file', 'x.json'))).toMatch(/file is not a folder$/);
  });
  it.skipIf(process.getuid?.() === 0)('a read-only folder is refused (root may write anywhere)', () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro, { mode: 0o555 });
    expect(outputPathProblem(join(ro, 'x.json'))).toMatch(/is not writable here/);
  });
});

import { describe, expect, it } from 'vitest';
import { parseFlags, UsageError, type FlagSpec } from '../../../cli/args.ts';

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

import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../cli/args.ts';
import { parseMatvecArgs } from '../../../cli/matvec-args.ts';

describe('bench:matvec arguments', () => {
  it('reads the documented flags, with their defaults', () => {
    const parsed = parseMatvecArgs(['--format', 'q4_k', '--shapes', '2048x2048,128256x2048', '--rows', '1,8', '--reps', '3', '--q8dot']);
    expect(parsed?.opts).toMatchObject({
      format: 'q4_k',
      shapes: [
        [2048, 2048],
        [128256, 2048],
      ],
      rows: [1, 8],
      reps: 3,
      copies: 0,
      q8dot: true,
      candidates: false,
    });
    expect(parsed?.runtime).toBe('node');
    expect(parseMatvecArgs([])?.opts).toMatchObject({ format: 'q4_0', rows: [1], reps: 7 });
    expect(parseMatvecArgs(['--shape-json', '{"kernel":"matvec"}'])?.opts.extra).toEqual([{ kernel: 'matvec' }]);
    expect(parseMatvecArgs(['--disable', 'subgroups,shader-f16'])?.disable).toEqual(['subgroups', 'shader-f16']);
    expect(parseMatvecArgs([])?.disable).toEqual([]);
  });

  it('--help asks for the usage instead of a run', () => {
    expect(parseMatvecArgs(['--help'])).toBeNull();
  });

  it('a mistake is a usage error naming the flag, before any GPU work', () => {
    const cases: [string[], RegExp][] = [
      [['--format', 'q9'], /--format must be one of f32, f16.*got "q9"/],
      [['--shapes', '64x'], /--shapes: "64x" is not ROWSxCOLS/],
      [['--shapes', '0x64'], /--shapes: "0x64"/],
      [['--rows', '1,x'], /--rows must be an integer from 1 to/],
      [['--reps', '0'], /--reps must be an integer from 1 to 1000, got 0/],
      [['--reps', '3,4'], /--reps must be an integer/],
      [['--copies=-1'], /--copies must be a non-negative integer, got "-1"/],
      [['--runtime', 'gpu'], /--runtime must be one of node, browser/],
      [['--shape-json', '{nope'], /--shape-json \{nope: not JSON/],
      [['--bogus'], /Unknown flag --bogus/],
      [['--disable', 'subgroups,warp-drive'], /--disable: Unknown feature "warp-drive"/],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseMatvecArgs(argv), argv.join(' ')).toThrow(UsageError);
      expect(() => parseMatvecArgs(argv), argv.join(' ')).toThrow(message);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { parseMatvecArgs, UsageError } from '../../../cli/matvec-args.ts';

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
      [['--format', 'q9'], /--format q9: expected one of f32, f16/],
      [['--shapes', '64x'], /--shapes 64x: expected ROWSxCOLS/],
      [['--shapes', '0x64'], /--shapes 0x64/],
      [['--rows', '1,x'], /--rows 1,x: expected integers of at least 1/],
      [['--reps', '0'], /--reps 0: expected an integer of at least 1/],
      [['--reps', '3,4'], /--reps 3,4: expected an integer/],
      [['--copies=-1'], /--copies -1: expected an integer of at least 0/],
      [['--runtime', 'gpu'], /--runtime gpu: expected node or browser/],
      [['--shape-json', '{nope'], /--shape-json \{nope: not JSON/],
      [['--bogus'], /Unknown option '--bogus'/],
      [['--disable', 'subgroups,warp-drive'], /--disable subgroups,warp-drive: Unknown feature "warp-drive"/],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseMatvecArgs(argv), argv.join(' ')).toThrow(UsageError);
      expect(() => parseMatvecArgs(argv), argv.join(' ')).toThrow(message);
    }
  });
});

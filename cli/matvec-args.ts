/**
 * `npm run bench:matvec`'s flags, declared and parsed by cli/args.ts as `npm run bench`'s are: an
 * unknown flag or a bad value is a UsageError before any GPU work (cli/matvec-bench.ts runs them).
 */
import { describeError } from '../src/errors.ts';
import { parseFallbacks } from '../src/gpu/capabilities.ts';
import type { LinearShape } from '../src/kernels/linear-shapes.ts';
import { WEIGHT_FORMATS, type WeightFormat } from '../src/kernels/weight-formats.ts';
import type { MatvecBenchOptions } from '../src/measure/matvec-bench.ts';
import { parseFlags, usage, UsageError, type FlagSpec } from './args.ts';

export const MATVEC_FLAGS: Record<string, FlagSpec> = {
  runtime: { type: 'string', choices: ['node', 'browser'], help: 'Node + Dawn (default) or the built page in Chromium (npm run build first)' },
  browser: { type: 'string', value: 'PATH', help: 'with --runtime browser: the Chromium/Chrome executable' },
  format: { type: 'string', choices: WEIGHT_FORMATS, help: 'weight format (default q4_0)' },
  shapes: { type: 'list', value: 'RxC,RxC,…', help: 'matrices, rows × input features (default 2048x2048,8192x2048,2048x8192)' },
  // A problem's rows of X are a step's token rows: the chunk's range.
  rows: { type: 'list', range: 'chunk', value: 'N,N,…', help: 'token rows of X per problem (default 1)' },
  reps: { type: 'int', range: 'reps', value: 'N', help: 'timed repetitions, alternated with the read (default 7)' },
  copies: { type: 'int', value: 'N', help: 'copies of each matrix read in turn (default: enough for ≥ 96 MiB)' },
  'shape-json': { type: 'string', repeatable: true, value: 'JSON', help: 'a linear shape to time besides the default (repeatable)' },
  q8dot: { type: 'boolean', help: 'also the 8-bit-activation kernels among the candidates and the wide shape' },
  candidates: { type: 'boolean', help: 'also every candidate shape listed for the problem' },
  'dispatch-cost': { type: 'boolean', help: 'first print the fixed cost of one dispatch' },
  disable: { type: 'list', value: 'FEATURES', help: 'force fallbacks: any of timestamp-query,shader-f16,subgroups,packed_4x8_integer_dot_product' },
  help: { type: 'boolean', help: 'show this help' },
};

/** The command its usage names: `./matvec.sh` where the GPU check bundle's launcher says so. */
const COMMAND = (typeof process !== 'undefined' && process.env.TOKENSCOPE_MATVEC_COMMAND) || 'npm run bench:matvec --';

export const USAGE = usage(COMMAND, 'Times linear() on decode shapes against the streaming read over the same bytes, alternating rep by rep.', MATVEC_FLAGS);

/** The run `argv` asks for, or null for --help; a mistake throws a UsageError naming the flag. */
export function parseMatvecArgs(argv: string[]): { opts: MatvecBenchOptions; runtime: string; browser?: string; disable: string[] } | null {
  const flags = parseFlags(argv, MATVEC_FLAGS);
  if (flags.get('help')) return null;
  const shapes = ((flags.get('shapes') as string[] | undefined) ?? ['2048x2048', '8192x2048', '2048x8192']).map((d): [number, number] => {
    const m = /^(\d+)x(\d+)$/.exec(d);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new UsageError(`--shapes: "${d}" is not ROWSxCOLS, such as 2048x2048.`);
    return [Number(m[1]), Number(m[2])];
  });
  const extra = ((flags.get('shape-json') as string | undefined)?.split(';') ?? []).map((j) => {
    try {
      return JSON.parse(j) as LinearShape;
    } catch (e) {
      throw new UsageError(`--shape-json ${j}: not JSON (${describeError(e)}).`);
    }
  });
  const disable = (flags.get('disable') as string[] | undefined) ?? [];
  try {
    parseFallbacks(disable.join(','));
  } catch (e) {
    throw new UsageError(`--disable: ${describeError(e)}`);
  }
  const opts: MatvecBenchOptions = {
    format: ((flags.get('format') as string | undefined) ?? 'q4_0') as WeightFormat,
    shapes,
    rows: (flags.get('rows') as number[] | undefined) ?? [1],
    reps: (flags.get('reps') as number | undefined) ?? 7,
    copies: (flags.get('copies') as number | undefined) ?? 0,
    extra,
    q8dot: flags.has('q8dot'),
    candidates: flags.has('candidates'),
    dispatchCost: flags.has('dispatch-cost'),
  };
  return { opts, runtime: (flags.get('runtime') as string | undefined) ?? 'node', browser: flags.get('browser') as string | undefined, disable };
}

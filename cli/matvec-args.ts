/** `npm run bench:matvec`'s arguments: parsed and checked before any GPU work (cli/matvec-bench.ts runs them). */
import { parseArgs } from 'node:util';
import { describeError } from '../src/errors.ts';
import { parseFallbacks } from '../src/gpu/capabilities.ts';
import type { LinearShape } from '../src/kernels/linear-shapes.ts';
import { WEIGHT_FORMATS, type WeightFormat } from '../src/kernels/weight-formats.ts';
import type { MatvecBenchOptions } from '../src/measure/matvec-bench.ts';

export const USAGE = `Usage: npm run bench:matvec -- [options]

Times linear() on decode shapes against the streaming read over the same bytes, alternating rep by rep.

Options:
  --runtime node|browser   Node + Dawn (default) or the built page in Chromium (npm run build first)
  --browser PATH           with --runtime browser: the Chromium/Chrome executable
  --format F               weight format: ${WEIGHT_FORMATS.join(', ')} (default q4_0)
  --shapes RxC,RxC,…       matrices, rows × input features (default 2048x2048,8192x2048,2048x8192)
  --rows N,N,…             token rows of X per problem (default 1)
  --reps N                 timed repetitions, alternated with the read (default 7)
  --copies N               copies of each matrix read in turn (default: enough for ≥ 96 MiB)
  --shape-json JSON        a linear shape to time besides the default (repeatable)
  --q8dot                  also the 8-bit-activation kernels among the candidates and the wide shape
  --candidates             also every candidate shape listed for the problem
  --dispatch-cost          first print the fixed cost of one dispatch
  --disable FEATURES       force fallbacks: any of timestamp-query,shader-f16,subgroups,packed_4x8_integer_dot_product
  --help                   show this help`;

/** A usage mistake: printed with the usage, exit status 2. */
export class UsageError extends Error {}

/** `text` as comma-separated integers ≥ `min` (exactly one unless `list`). */
function integers(flag: string, text: string, min: number, list: boolean): number[] {
  const values = text.split(',').map((t) => (/^\s*\d+\s*$/.test(t) ? Number(t) : NaN));
  if ((!list && values.length !== 1) || values.some((v) => !Number.isSafeInteger(v) || v < min)) {
    throw new UsageError(`--${flag} ${text}: expected ${list ? 'integers' : 'an integer'} of at least ${min}${list ? ', separated by commas' : ''}`);
  }
  return values;
}

/** The run `argv` asks for, or null for --help; a mistake throws a UsageError naming the flag. */
export function parseMatvecArgs(argv: string[]): { opts: MatvecBenchOptions; runtime: string; browser?: string; disable: string[] } | null {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        runtime: { type: 'string', default: 'node' },
        browser: { type: 'string' },
        format: { type: 'string', default: 'q4_0' },
        shapes: { type: 'string', default: '2048x2048,8192x2048,2048x8192' },
        rows: { type: 'string', default: '1' },
        reps: { type: 'string', default: '7' },
        copies: { type: 'string', default: '0' },
        'shape-json': { type: 'string', multiple: true, default: [] },
        disable: { type: 'string', default: '' },
        q8dot: { type: 'boolean', default: false },
        candidates: { type: 'boolean', default: false },
        'dispatch-cost': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (e) {
    throw new UsageError(describeError(e));
  }
  if (values.help) return null;
  if (values.runtime !== 'node' && values.runtime !== 'browser') throw new UsageError(`--runtime ${values.runtime}: expected node or browser`);
  if (!(WEIGHT_FORMATS as readonly string[]).includes(values.format))
    throw new UsageError(`--format ${values.format}: expected one of ${WEIGHT_FORMATS.join(', ')}`);
  const shapes = values.shapes.split(',').map((d): [number, number] => {
    const m = /^\s*(\d+)x(\d+)\s*$/.exec(d);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1)
      throw new UsageError(`--shapes ${values.shapes}: expected ROWSxCOLS pairs such as 2048x2048, separated by commas`);
    return [Number(m[1]), Number(m[2])];
  });
  const extra = values['shape-json'].map((j) => {
    try {
      return JSON.parse(j) as LinearShape;
    } catch (e) {
      throw new UsageError(`--shape-json ${j}: not JSON (${describeError(e)})`);
    }
  });
  const opts: MatvecBenchOptions = {
    format: values.format as WeightFormat,
    shapes,
    rows: integers('rows', values.rows, 1, true),
    reps: integers('reps', values.reps, 1, false)[0],
    copies: integers('copies', values.copies, 0, false)[0],
    extra,
    q8dot: values.q8dot,
    candidates: values.candidates,
    dispatchCost: values['dispatch-cost'],
  };
  let disable: string[];
  try {
    disable = [...parseFallbacks(values.disable)];
  } catch (e) {
    throw new UsageError(`--disable ${values.disable}: ${describeError(e)}`);
  }
  return { opts, runtime: values.runtime, browser: values.browser, disable };
}

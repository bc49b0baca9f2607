/**
 * `npm run bench -- --merge a.json b.json … [--json list.json]`: result files (or lists made
 * before) merged into one list for the page's many-results view (src/share/result-list.ts).
 * Every file is read and validated (schema and version) before anything is written; an error
 * names the file. Without --json the list goes to stdout.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describeError, TokenscopeError } from '../src/errors.ts';
import type { BenchResult } from '../src/measure/schema.ts';
import { parseResultsText, resultList } from '../src/share/result-list.ts';
import { outputPathProblem } from './bench-flags.ts';

const USAGE = 'usage: npm run bench -- --merge RESULT.json [RESULT.json|LIST.json …] [--json LIST.json]\n';

export interface MergeArgs {
  files: string[];
  out: string | undefined;
}

/** The files and the output of a `--merge` command line; a usage error names what is wrong. */
export function parseMergeArgs(argv: readonly string[]): MergeArgs {
  const files: string[] = [];
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--merge') continue;
    if (arg === '--json' || arg.startsWith('--json=')) {
      if (out !== undefined) throw new TokenscopeError('bad-input', '--json is given twice.', 'Give one output file.');
      out = arg === '--json' ? argv[++i] : arg.slice('--json='.length);
      if (!out || out.startsWith('--')) throw new TokenscopeError('bad-input', '--json needs a file name.', 'e.g. --json list.json');
    } else if (arg.startsWith('-')) {
      throw new TokenscopeError('bad-input', `${arg} does not go with --merge.`, '--merge takes result files and --json only.');
    } else files.push(arg);
  }
  if (!files.length) throw new TokenscopeError('bad-input', '--merge needs at least one result file.', 'e.g. --merge a.json b.json --json list.json');
  return { files, out };
}

/** One file's results: a result saved with --json, or a list (its results and links). */
export async function readResultFile(path: string): Promise<BenchResult[]> {
  try {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new TokenscopeError('bad-input', `cannot read it (${(e as NodeJS.ErrnoException).code ?? describeError(e)}).`, 'Check the path.');
    }
    return await parseResultsText(text);
  } catch (e) {
    const error = e instanceof TokenscopeError ? e : new TokenscopeError('bad-input', describeError(e), '');
    throw new TokenscopeError(error.code, `${path}: ${error.message}`, error.hint, { cause: e });
  }
}

/** Every file's results in the order given, as one list. */
export async function mergeFiles(files: readonly string[]): Promise<ReturnType<typeof resultList>> {
  const results: BenchResult[] = [];
  for (const file of files) results.push(...(await readResultFile(file)));
  return resultList(results);
}

/** The `--merge` command: exit 0, or 2 with a message naming the bad argument or file. */
export async function mergeMain(argv: readonly string[]): Promise<number> {
  try {
    const { files, out } = parseMergeArgs(argv);
    const problem = out === undefined ? null : outputPathProblem(out);
    if (problem) throw new TokenscopeError('bad-input', `${problem}.`, '');
    const list = await mergeFiles(files);
    const text = `${JSON.stringify(list, null, 2)}\n`;
    if (out === undefined) process.stdout.write(text);
    else {
      writeFileSync(out, text);
      const devices = new Set(list.results.map((r) => r.environment.adapter.description || r.environment.adapter.vendor)).size;
      const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
      process.stderr.write(`Merged ${plural(list.results.length, 'result')} (${plural(devices, 'device')}) from ${plural(files.length, 'file')} into ${out}\n`);
    }
    return 0;
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n\n${USAGE}`);
    return 2;
  }
}

/**
 * One `npm run bench -- ARGS` as the e2e tests run it: a child process in the repository root,
 * its exit code, output and wall seconds (a failed run resolves too: its code is the CLI's).
 * `cacheHome` points XDG_CACHE_HOME at a folder of the test's own (the roofs cache), never the user's.
 */
import { execFile } from 'node:child_process';
import { ROOT } from './browser.ts';

export interface BenchRun {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

export function runBench(args: readonly string[], opts: { cacheHome?: string } = {}): Promise<BenchRun> {
  const t0 = performance.now();
  const env = opts.cacheHome ? { ...process.env, XDG_CACHE_HOME: opts.cacheHome, TOKENSCOPE_CACHE_DIR: undefined } : process.env;
  return new Promise((done) => {
    execFile('npm', ['run', '--silent', 'bench', '--', ...args], { cwd: ROOT, maxBuffer: 1 << 24, env }, (error, stdout, stderr) => {
      done({ code: error ? Number(error.code) : 0, stdout, stderr, seconds: (performance.now() - t0) / 1000 });
    });
  });
}

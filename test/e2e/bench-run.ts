/**
 * One `npm run bench -- ARGS` as the e2e tests run it: a child process in the repository root,
 * its exit code, output and wall seconds (a failed run resolves too: its code is the CLI's).
 * `cacheHome` is the run's cache folder (TOKENSCOPE_CACHE_DIR: its roofs and tuning caches), never
 * the user's. XDG_CACHE_HOME stays as it is: Mesa keeps lavapipe's compiled shaders under it, and a
 * fresh one made every run compile every pipeline again (the default job took 67 s instead of 13).
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
  const env = opts.cacheHome ? { ...process.env, TOKENSCOPE_CACHE_DIR: opts.cacheHome } : process.env;
  return new Promise((done) => {
    execFile('npm', ['run', '--silent', 'bench', '--', ...args], { cwd: ROOT, maxBuffer: 1 << 24, env }, (error, stdout, stderr) => {
      done({ code: error ? Number(error.code) : 0, stdout, stderr, seconds: (performance.now() - t0) / 1000 });
    });
  });
}

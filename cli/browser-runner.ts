/**
 * `--runtime browser`: serve the built page, open it in Chromium/Chrome with the WebGPU flags,
 * and run the job through the page's automation entry point (`window.tokenscope.runJob`), so
 * the browser path is exactly the page's code.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { BenchJob } from '../src/jobs/job-spec.ts';
import type { BenchResult } from '../src/measure/schema.ts';
import type { MatvecBenchOptions } from '../src/measure/matvec-bench.ts';
import type { Page } from 'playwright-core';
import { chromiumArgs, chromiumPath } from './chromium.ts';
import { serveStatic } from './static-server.ts';

export interface BrowserRunOptions {
  browser?: string;
  disable: string[];
  distDir?: string;
  onProgress?: (step: string, fraction: number) => void;
  onLog?: (line: string) => void;
}

/** Where a local model file is served to the page. */
const LOCAL_MODEL_PREFIX = '/local-model/';

/**
 * `buildJob` gets the page's device class (CPU adapter or not) for its defaults. A model given
 * as a local path is served to the page over HTTP (with Range support) and passed as a URL.
 */
export async function runInBrowser(buildJob: (cpuLike: boolean) => BenchJob, opts: BrowserRunOptions): Promise<BenchResult> {
  const modelPath = buildJob(false).model?.path;
  if (modelPath && !existsSync(modelPath)) throw new Error(`No such model file: ${modelPath}`);
  return withPage(opts, modelPath ? { [LOCAL_MODEL_PREFIX]: dirname(resolve(modelPath)) } : {}, async (page, serverUrl) => {
    const cpuLike = await page.evaluate(async () => {
      const api = (window as unknown as { tokenscope: { capabilities(): Promise<{ cpuLike: boolean }> } }).tokenscope;
      return (await api.capabilities().catch(() => ({ cpuLike: true }))).cpuLike;
    });
    const job = buildJob(cpuLike);
    if (job.model?.path)
      job.model = {
        ...job.model,
        path: undefined,
        url: `${serverUrl.replace(/\/$/, '')}${LOCAL_MODEL_PREFIX}${encodeURIComponent(basename(job.model.path))}`,
      };
    const outcome = await page.evaluate(async (j) => {
      const api = (window as unknown as { tokenscope: { runJob(job: unknown, onProgress: (s: string, f: number) => void): Promise<unknown> } }).tokenscope;
      const progress = (window as unknown as { __tokenscopeProgress: (s: string, f: number) => void }).__tokenscopeProgress;
      try {
        return { ok: true as const, result: await api.runJob(j, progress) };
      } catch (e) {
        const err = e as { message?: string; hint?: string; code?: string };
        return { ok: false as const, message: err.message ?? String(e), hint: err.hint ?? '', code: err.code ?? '' };
      }
    }, job);
    if (!outcome.ok) throw new Error(outcome.hint ? `${outcome.message} — ${outcome.hint}` : outcome.message);
    return outcome.result as BenchResult;
  });
}

/** The linear-layer micro-benchmark (src/measure/matvec-bench.ts) in the page; its lines go to `onLog`. */
export async function matvecBenchInBrowser(bench: MatvecBenchOptions, opts: Omit<BrowserRunOptions, 'onProgress'>): Promise<void> {
  await withPage(opts, {}, async (page) => {
    await page.exposeFunction('__tokenscopeLine', (line: string) => opts.onLog?.(line));
    const outcome = await page.evaluate(async (b) => {
      const w = window as unknown as {
        tokenscope: { matvecBench(o: unknown, log: (l: string) => void): Promise<void> };
        __tokenscopeLine: (l: string) => void;
      };
      try {
        await w.tokenscope.matvecBench(b, (l) => w.__tokenscopeLine(l));
        return '';
      } catch (e) {
        return (e as { message?: string }).message ?? String(e);
      }
    }, bench);
    if (outcome) throw new Error(outcome);
  });
}

/** Serve the built page (plus `extra` folders), open it in headless Chromium with the WebGPU flags, and run `body` on it. */
async function withPage<T>(opts: BrowserRunOptions, extra: Record<string, string>, body: (page: Page, serverUrl: string) => Promise<T>): Promise<T> {
  const dist = resolve(opts.distDir ?? 'dist');
  if (!existsSync(resolve(dist, 'index.html'))) {
    throw new Error(`The built page is missing (${dist}/index.html). Run "npm run build" first.`);
  }
  const { chromium } = await import('playwright-core');
  const server = await serveStatic(dist, { extra });
  const browser = await chromium.launch({ executablePath: chromiumPath(opts.browser), args: chromiumArgs(), headless: true });
  try {
    const page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') opts.onLog?.(`[page ${m.type()}] ${m.text()}`);
    });
    await page.exposeFunction('__tokenscopeProgress', (step: string, f: number) => opts.onProgress?.(step, f));
    const query = opts.disable.length ? `?disable=${encodeURIComponent(opts.disable.join(','))}` : '';
    await page.goto(server.url + query);
    await page.waitForFunction(() => 'tokenscope' in window, undefined, { timeout: 30_000 });
    return await body(page, server.url);
  } finally {
    await browser.close();
    await server.close();
  }
}

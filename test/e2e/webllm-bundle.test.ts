/**
 * WebLLM (6 MB of JavaScript) must reach only visitors who pick a WebLLM model: the built page's
 * initial scripts carry none of it, and once the UI imports src/webllm/adapter.ts lazily, the
 * bundler puts it in a chunk of its own. Reads dist/ as `vite build` wrote it (npm test builds first).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './browser.ts';

const DIST = resolve(ROOT, 'dist');
const ASSETS = join(DIST, 'assets');

/** String literals of WebLLM's runtime that survive minification (cache scope, TVM's runtime wasm). */
const MARKERS = ['webllm/config', 'tvmjs'];
const hasWebLLM = (code: string) => MARKERS.some((m) => code.includes(m));

/** Module scripts and modulepreloads of index.html, then every chunk they import statically. */
function initialChunks(): string[] {
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  const queue = [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\.\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
  const seen = new Set<string>();
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const code = readFileSync(join(ASSETS, name), 'utf8');
    // Static imports only: `import{a}from"./x.js"` or `import"./x.js"`, never `import("./x.js")`.
    for (const m of code.matchAll(/\bimport\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']\.\/([^"']+\.js)["']/g)) queue.push(m[1]);
  }
  return [...seen];
}

/** Whether a source file outside src/webllm/ imports the adapter (the page's lazy import). */
function uiImportsAdapter(): boolean {
  const src = resolve(ROOT, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.startsWith('webllm'))
    .some((f) => /import\(\s*['"][^'"]*webllm\/adapter(\.ts)?['"]\s*\)/.test(readFileSync(join(src, f), 'utf8')));
}

describe('the built page and WebLLM', () => {
  if (!existsSync(join(DIST, 'index.html'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) before the e2e tests.');

  it('the markers are in WebLLM itself, so their absence means something', () => {
    const lib = readFileSync(resolve(ROOT, 'node_modules/@mlc-ai/web-llm/lib/index.js'), 'utf8');
    for (const marker of MARKERS) expect(lib).toContain(marker);
  });

  it('the initial scripts carry no WebLLM code', () => {
    const chunks = initialChunks();
    expect(chunks.length).toBeGreaterThan(0);
    const offenders = chunks.filter((name) => hasWebLLM(readFileSync(join(ASSETS, name), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it.runIf(uiImportsAdapter())('a lazily loaded chunk does (the UI imports the adapter with import())', () => {
    const initial = new Set(initialChunks());
    const lazy = readdirSync(ASSETS).filter((name) => name.endsWith('.js') && !initial.has(name));
    expect(lazy.filter((name) => hasWebLLM(readFileSync(join(ASSETS, name), 'utf8'))).length).toBeGreaterThan(0);
  });
});

/** The entry's budget (issue 24): what a first visit downloads before the page can run anything. */
const ENTRY_GZIP_BUDGET = 150 * 1024;

describe('the built page loads the heavy parts on demand', () => {
  it(`the initial scripts are at most ${ENTRY_GZIP_BUDGET / 1024} KB gzip`, () => {
    const bytes = initialChunks().reduce((sum, name) => sum + gzipSync(readFileSync(join(ASSETS, name))).length, 0);
    console.info(`initial scripts: ${(bytes / 1024).toFixed(1)} KB gzip`);
    expect(bytes).toBeLessThanOrEqual(ENTRY_GZIP_BUDGET);
  });

  it('the job runner and the engine are in lazy chunks (the page loads them when a run starts)', () => {
    // Error messages of jobs/job.ts and model/engine.ts: they survive minification.
    const MARKERS = ['The latency sweep needs the roofs.', 'KV block copies need a prefix pool'];
    const initial = new Set(initialChunks());
    const scripts = readdirSync(ASSETS).filter((name) => name.endsWith('.js'));
    for (const marker of MARKERS) {
      const holders = scripts.filter((name) => readFileSync(join(ASSETS, name), 'utf8').includes(marker));
      expect(holders.length, marker).toBeGreaterThan(0);
      const inInitial = holders.filter((name) => initial.has(name));
      expect(inInitial, marker).toEqual([]);
    }
  });

  it('WGSL and Chart.js are in lazy chunks: one per weight format plus the core kernels, and Chart.js apart', () => {
    const initial = initialChunks().map((name) => readFileSync(join(ASSETS, name), 'utf8'));
    // Markers that survive minification: a variant's part marker (every generated variant has them) and a Chart.js error message.
    const WGSL = '// ---- shaders/';
    const CHART_JS = 'Canvas is already in use';
    expect(initial.filter((code) => code.includes(WGSL) || code.includes(CHART_JS))).toEqual([]);
    const lazy = readdirSync(ASSETS).filter((name) => name.endsWith('.js'));
    const chunk = (prefix: string) => lazy.find((name) => name.startsWith(prefix));
    for (const group of ['core', 'q4_0', 'q4_k', 'f16']) expect(readFileSync(join(ASSETS, chunk(`${group}.generated-`)!), 'utf8')).toContain(WGSL);
    expect(readFileSync(join(ASSETS, chunk('chart-lib-')!), 'utf8')).toContain(CHART_JS);
  });
});

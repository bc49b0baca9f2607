/**
 * `--out DIR`'s report.html: the page itself (the same Lit elements and charts), built once per
 * source tree with vite into one HTML file — every module inlined, no chunk or asset files — and
 * the result embedded as `<script type="application/json" id="tokenscope-result">`, which the page
 * opens at startup as an imported report. It opens offline, from disk. WebLLM (6.6 MB) is left
 * out of this build: the saved page shows reports; running WebLLM there says to use the hosted page.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BenchResult } from '../src/measure/schema.ts';
import { defaultCacheDir } from './roofs-cache.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** The id the page looks for (src/ui/app.ts). */
export const EMBEDDED_RESULT_ID = 'tokenscope-result';
const WEBLLM_ADAPTER = resolve(ROOT, 'src/webllm/adapter.ts');
const WEBLLM_ABSENT = '\0tokenscope-webllm-absent';

/** A key of the page's sources (paths, sizes, modification times): a changed file builds the page again. */
function sourcesKey(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const s = statSync(path);
        hash.update(`${path}\0${s.size}\0${s.mtimeMs}\n`);
      }
    }
  };
  walk(join(ROOT, 'src'));
  walk(join(ROOT, 'shaders'));
  for (const file of ['index.html', 'package.json', 'package-lock.json']) if (existsSync(join(ROOT, file))) hash.update(readFileSync(join(ROOT, file)));
  return hash.digest('hex').slice(0, 16);
}

/** `</script` inside inlined code would end its tag early; `<\/script` means the same in JS strings, templates and regexes. */
const inlineSafe = (code: string) => code.replace(/<\/(script)/gi, '<\\/$1');

/**
 * The page as one self-contained HTML file: from the cache when the sources are unchanged,
 * else built with vite (tens of seconds on a small machine) and cached.
 */
export async function reportPageHtml(options: { cacheDir?: string; log?: (line: string) => void } = {}): Promise<string> {
  const dir = join(options.cacheDir ?? defaultCacheDir(), 'report-page');
  const file = join(dir, `page-${sourcesKey()}.html`);
  if (existsSync(file)) return readFileSync(file, 'utf8');
  options.log?.('report.html: building the page into one file (once per source version)…');
  const outDir = join(dir, `build-${process.pid}`);
  const { build } = await import('vite');
  try {
    await build({
      configFile: false,
      root: ROOT,
      base: './',
      logLevel: 'error',
      plugins: [
        {
          name: 'tokenscope-report-without-webllm',
          enforce: 'pre',
          async resolveId(source, importer, opts) {
            if (!source.includes('webllm/adapter')) return null;
            const resolved = await this.resolve(source, importer, { ...opts, skipSelf: true });
            return resolved?.id === WEBLLM_ADAPTER ? WEBLLM_ABSENT : null;
          },
          load(id) {
            if (id !== WEBLLM_ABSENT) return null;
            return [
              "import { TokenscopeError } from '/src/errors.ts';",
              'const absent = async () => {',
              "  throw new TokenscopeError('bad-input', 'This saved report page does not include WebLLM', 'Open the hosted tokenscope page to run WebLLM models.');",
              '};',
              'export const listWebLLMModels = absent;',
              'export const loadWebLLM = absent;',
            ].join('\n');
          },
        },
      ],
      build: {
        outDir,
        emptyOutDir: true,
        target: 'es2022',
        sourcemap: false,
        cssCodeSplit: false,
        modulePreload: false,
        assetsInlineLimit: Number.MAX_SAFE_INTEGER,
        chunkSizeWarningLimit: 1e6,
        rollupOptions: { output: { codeSplitting: false } },
      },
    });
    const html = readFileSync(join(outDir, 'index.html'), 'utf8');
    const asset = (ref: string) => readFileSync(join(outDir, ref.replace(/^\.\//, '')), 'utf8');
    const single = html
      .replace(/<script type="module"[^>]*\ssrc="([^"]+)"[^>]*><\/script>/g, (_, src: string) => `<script type="module">${inlineSafe(asset(src))}</script>`)
      .replace(/<link rel="stylesheet"[^>]*\shref="([^"]+)"[^>]*>/g, (_, href: string) => `<style>${asset(href).replace(/<\/(style)/gi, '<\\/$1')}</style>`);
    if (/\s(src|href)="\.\/assets\//.test(single)) throw new Error('the built page still links a file under assets/');
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${file}.tmp`, single);
    renameSync(`${file}.tmp`, file);
    return single;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The page with `result` embedded for it to open at startup (JSON with `<` escaped, so no text in it can close the tag). */
export function embedResult(pageHtml: string, result: BenchResult): string {
  const json = JSON.stringify(result).replace(/</g, '\\u003c');
  const tag = `<script type="application/json" id="${EMBEDDED_RESULT_ID}">${json}</script>`;
  const at = pageHtml.lastIndexOf('</body>');
  return at === -1 ? `${pageHtml}${tag}` : `${pageHtml.slice(0, at)}${tag}\n${pageHtml.slice(at)}`;
}

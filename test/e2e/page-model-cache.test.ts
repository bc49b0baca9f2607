import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { BenchJob } from '../../src/jobs/job-spec.ts';
import { serveStatic, type Served, type StaticServer } from '../../cli/static-server.ts';
import { api, deepText, launch, QUICK_ROOFS, ROOT, runAndWait, waitForReady, watchErrors } from './browser.ts';

const MODELS = resolve(ROOT, '../shared/models');
const STORIES = resolve(MODELS, 'stories260K.gguf');
const HAVE = existsSync(STORIES);
const GGUF_PATH = '/test-models/stories260K.gguf';

/**
 * A GGUF by URL, end to end in the built page: inspected from its header only (Range requests),
 * downloaded once by a run and kept (Cache API), read from the kept copy after a reload (the
 * server sees no request for it), then removed from the page's list of kept files.
 */
describe.skipIf(!HAVE)(HAVE ? 'a GGUF by URL: inspect, keep, reuse, clear' : 'a GGUF by URL — SKIPPED: stories260K.gguf not found', () => {
  let server: StaticServer;
  let browser: Browser;
  const served: Served[] = [];
  const ggufRequests = () => served.filter((s) => s.path === GGUF_PATH);

  beforeAll(async () => {
    const dist = resolve(ROOT, 'dist');
    if (!existsSync(resolve(dist, 'index.html'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests.');
    server = await serveStatic(dist, { extra: { '/test-models/': MODELS }, onServe: (s) => served.push(s) });
    browser = await launch(true);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('inspects the header only, downloads once, reads the kept copy after a reload, and clears it', async () => {
    const url = `${server.url}${GGUF_PATH.slice(1)}`;
    const fileBytes = statSync(STORIES).size;
    const job: BenchJob = { probe: false, model: { url }, generate: { prompt: 'Once upon a time', gen: 4 } };
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}?mode=roofs&${QUICK_ROOFS}`);
    await waitForReady(page);
    // A roof first, so the inspection can predict decode speed.
    await runAndWait(page);
    await page.locator('input[name=mode][value=latency]').check();
    await page.locator('ts-model-picker #model').selectOption('url');
    const address = page.locator('ts-model-picker input[type=url]');
    await address.fill(url);
    await address.blur();

    await page.locator('#inspect').click();
    await page.locator('ts-model-inspect .inspection').waitFor({ timeout: 30_000 });
    const shown = await deepText(page, 'ts-model-inspect');
    expect(shown).toMatch(/llama/);
    expect(shown).toMatch(/F32 48 1\.1 MiB 100\.0%/);
    expect(shown).toMatch(/at most [\d.]+ tokens\/s = read roof [\d.]+ GB\/s/);
    expect(shown).toMatch(/fits this device’s limits/);
    expect(shown).toMatch(/Run downloads 1\.1 MiB once/);
    await page.locator('ts-model-picker').screenshot({ path: resolve(ROOT, 'test/screenshots/model-inspect.png') });
    // Header only: a probe byte and the reader's first 1 MiB window, both Range requests.
    expect(ggufRequests().length).toBeGreaterThan(0);
    expect(ggufRequests().every((s) => s.status === 206)).toBe(true);
    expect(ggufRequests().reduce((n, s) => n + s.bytes, 0)).toBeLessThanOrEqual(1 + (1 << 20));

    // The run downloads the whole file once (one plain GET) and keeps it.
    const before = ggufRequests().length;
    const first = await api<{ generation: { token_ids: number[] } }>(page, `runJob(${JSON.stringify(job)})`);
    const download = ggufRequests().slice(before);
    expect(download.map((s) => [s.status, s.range, s.bytes])).toEqual([[200, null, fileBytes]]);
    expect(first.generation.token_ids).toHaveLength(4);

    // After a reload the same run reads the kept copy: the server sees no request at all.
    await page.reload();
    await waitForReady(page);
    const afterReload = ggufRequests().length;
    const second = await api<{ generation: { token_ids: number[] } }>(page, `runJob(${JSON.stringify(job)})`);
    expect(ggufRequests().length).toBe(afterReload);
    expect(second.generation.token_ids).toEqual(first.generation.token_ids);

    // The kept file is listed with its size, and Remove clears it.
    await page.locator('ts-kept-models summary').click();
    const row = page.locator('ts-kept-models tbody tr');
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.first().textContent()).toMatch(/stories260K\.gguf\s*1\.1 MiB/);
    await page.getByRole('button', { name: 'Remove stories260K.gguf' }).click();
    await page.locator('#kept-empty').waitFor();
    expect(await page.evaluate(async () => (await (await caches.open('tokenscope-models-v1')).keys()).length)).toBe(0);
    // With nothing kept, the next run downloads it again.
    await api(page, `runJob(${JSON.stringify(job)})`);
    expect(
      ggufRequests()
        .slice(afterReload)
        .map((s) => s.status),
    ).toEqual([200]);
    expect(errors).toEqual([]);
    await context.close();
  }, 240_000);
});

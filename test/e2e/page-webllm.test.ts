import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { StaticServer } from '../../cli/static-server.ts';
import { launch, resultRows, ROOT, runAndWait, screenshot, startPage, TINY, waitForReady, watchErrors } from './browser.ts';

const ASSETS = resolve(ROOT, 'dist/assets');
/** The built chunk that holds WebLLM's runtime (one of its string literals, as in webllm-bundle.test.ts). */
const WEBLLM_CHUNK = readdirSync(ASSETS).find((f) => f.endsWith('.js') && readFileSync(join(ASSETS, f), 'utf8').includes('tvmjs'));

/**
 * WebLLM from the page with no network (this sandbox has none; every request off the page's own
 * server is aborted, so the test means the same elsewhere): its code arrives only when the visitor
 * opens the WebLLM group, a WebLLM run fails with the clear download error, and the page still runs.
 */
describe('WebLLM in the page', () => {
  let server: StaticServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startPage();
    browser = await launch(true);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A fresh page of the built site with every request off its own server aborted. */
  async function offline(): Promise<{ page: Page; errors: string[]; chunkFetches: () => Promise<number> }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    await page.route('**/*', (route) => (route.request().url().startsWith(server.url) ? route.continue() : route.abort('internetdisconnected')));
    const chunkFetches = () => page.evaluate((name) => performance.getEntriesByType('resource').filter((e) => e.name.endsWith(`/assets/${name}`)).length, WEBLLM_CHUNK!);
    await page.goto(`${server.url}${TINY}`);
    await waitForReady(page);
    return { page, errors, chunkFetches };
  }

  it('the WebLLM chunk is fetched only when the WebLLM option is used', async () => {
    expect(WEBLLM_CHUNK, 'a built chunk with WebLLM in it').toBeDefined();
    const { page, chunkFetches } = await offline();
    await page.locator('ts-model-picker #model').selectOption('preset:stories260k');
    expect(await chunkFetches(), 'WebLLM is not loaded before it is asked for').toBe(0);
    await page.locator('ts-model-picker #model').selectOption('webllm-list');
    await expect.poll(() => page.locator('ts-model-picker #model option[value^="webllm:"]').count(), { timeout: 30_000 }).toBeGreaterThan(10);
    expect(await chunkFetches(), 'opening the WebLLM group loads WebLLM once').toBe(1);
    // SwiftShader has no shader-f16: the f16 models are listed, disabled, with the reason.
    const f16 = page.locator('ts-model-picker #model option[value$="q4f16_1-MLC"]').first();
    expect(await f16.isDisabled()).toBe(true);
    expect(await f16.textContent()).toContain('needs the shader-f16 feature');
    await page.close();
  });

  it('In Chromium with no network, choosing a WebLLM model fails with the clear error and the page stays usable', async () => {
    const { page, errors, chunkFetches } = await offline();
    const model = page.locator('ts-model-picker #model');
    await model.selectOption('webllm-list');
    const options = page.locator('ts-model-picker #model option[value^="webllm:"]');
    await expect.poll(() => options.count(), { timeout: 30_000 }).toBeGreaterThan(10);
    const usable = await options.evaluateAll((os) => os.filter((o) => !(o as HTMLOptionElement).disabled).map((o) => (o as HTMLOptionElement).value));
    const pick = usable.find((v) => v.includes('SmolLM2-135M')) ?? usable[0];
    await model.selectOption(pick);
    await page.locator('ts-model-picker #side-by-side').uncheck();
    await runAndWait(page);
    const alert = page.locator('ts-app .banner.error[role=alert]');
    await expect.poll(() => alert.count()).toBe(1);
    expect(await alert.textContent()).toMatch(/This run failed: .*[\s\S]*huggingface\.co.*check your connection/);
    await screenshot(page, 'webllm-offline-desktop');

    // The page keeps working: back to the tiny preset, a latency run completes.
    await model.selectOption('preset:stories260k');
    await runAndWait(page);
    expect((await resultRows(page)).map((r) => r[0])).toEqual(['8', '16']);
    expect(await page.locator('ts-app .banner.error[role=alert]').count()).toBe(0);
    expect(await chunkFetches()).toBe(1);
    expect(errors.filter((e) => e.startsWith('pageerror'))).toEqual([]);
    await page.close();
  });
});

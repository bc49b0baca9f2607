import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { StaticServer } from '../../cli/static-server.ts';
import { newResult } from '../../src/measure/schema.ts';
import { sideBySide } from '../../src/jobs/side-by-side.ts';
import { runWebLLMLatency } from '../../src/jobs/webllm-run.ts';
import { encodeReport } from '../../src/share/permalink.ts';
import { adapterFor, type WebLLMEngine } from '../../src/webllm/adapter.ts';
import { environment, latency, MODEL, ROOFS } from '../unit/share/fixtures.ts';
import { deepText, launch, resultRows, ROOT, SCREENSHOTS, runAndWait, screenshot, startPage, TINY, waitForReady, watchErrors } from './browser.ts';

const ASSETS = resolve(ROOT, 'dist/assets');
/** The built chunk that holds WebLLM's runtime (one of its string literals, as in webllm-bundle.test.ts). */
const WEBLLM_CHUNK = readdirSync(ASSETS).find((f) => f.endsWith('.js') && readFileSync(join(ASSETS, f), 'utf8').includes('tvmjs'));

/**
 * A scripted WebLLM token path on a fake clock: prefill 0.5 ms per token + 10 ms, decode 4 ms per
 * step; its own statistics claim a decode rate 1.5× what our clock sees (a disagreement to flag).
 */
async function webllmResult(): Promise<string> {
  let now = 0;
  const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
  let prompt = 0;
  const engine: WebLLMEngine = {
    chat: { completions: { create: () => Promise.reject(new Error('token path only')) } },
    resetChat: async () => {},
    forwardTokensAndSample: async (ids, isPrefill) => {
      if (isPrefill) prompt = ids.length;
      now += isPrefill ? 0.5 * ids.length + 10 : 4;
      return 7;
    },
    runtimeStatsText: async () => `prefill: ${((prompt / (0.5 * prompt + 10)) * 1000).toFixed(4)} tokens/sec, decoding: ${(1.5 * 250).toFixed(4)} tokens/sec`,
    interruptGenerate: () => {},
    unload: async () => {},
  };
  const model = {
    id: 'Llama-3.2-1B-Instruct-q4f32_1-MLC',
    family: 'Llama-3.2-1B',
    quantization: 'q4f32_1',
    vramMB: 1128.8,
    lowResource: true,
    contextWindow: 4096,
  };
  const costsAt = (P: number) => ({ prefill: { flops: 2.4e9 * P, bytes: 7e8 + 3e5 * P }, decodeStep: { flops: 2.4e9, bytes: 7e8 + 32768 * (P + 4) } });
  const settings = { prompt_lengths: [16, 64], output_tokens: 8, reps: 3, warmup: 1, cooldown_ms: 0, seed: 42, vocab_size: 128256, bos_id: 1 };
  const section = await runWebLLMLatency(adapterFor(engine, model), settings, {}, { model_id: MODEL.id, quantization: 'q4_0', costsAt, roofs: ROOFS });
  clock.mockRestore();
  const r = newResult(environment());
  r.model = MODEL;
  r.latency = latency([16, 64], 3, 8);
  r.webllm = section;
  r.side_by_side = sideBySide({ latency: r.latency as ReturnType<typeof latency>, model: MODEL }, section);
  return encodeReport(JSON.parse(JSON.stringify(r)));
}

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
    const chunkFetches = () =>
      page.evaluate((name) => performance.getEntriesByType('resource').filter((e) => e.name.endsWith(`/assets/${name}`)).length, WEBLLM_CHUNK!);
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

  it('a WebLLM report shows its rows, the flagged clock disagreements with both numbers, the ratios and what differs', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    await page.goto(`${server.url}${await webllmResult()}`);
    const report = page.locator('ts-webllm-report');
    await expect.poll(() => report.locator('#webllm-rows tbody tr').count(), { timeout: 20_000 }).toBe(2);
    // Six timed requests, each off on TPOT and the decode rate.
    const flagged = await report.locator('#webllm-flagged tbody tr').allTextContents();
    expect(flagged).toHaveLength(12);
    expect(
      flagged.some((row) => /decode tok\/s\s*250\s*375/.test(row)),
      flagged.join(' | '),
    ).toBe(true);
    expect(await report.locator('#side-by-side tbody tr').count()).toBe(2);
    expect(await report.locator('#side-by-side tbody tr').first().textContent()).toMatch(/×\d/);
    expect(await report.locator('#differences li').count()).toBeGreaterThan(0);
    expect(await deepText(page, 'ts-webllm-report')).toContain('6 of 6 timed requests differ');
    await page.locator('section:has(> #webllm-title)').screenshot({ path: resolve(SCREENSHOTS, 'webllm-report-desktop.png') });
    expect(errors).toEqual([]);
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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { StaticServer } from '../../cli/static-server.ts';
import { decodeReport } from '../../src/share/permalink.ts';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { api, canvasHasInk, launch, runAndWait, SCREENSHOTS, startPage, waitForReady, watchErrors } from './browser.ts';

/**
 * A small serving run: 6 requests of 8 + 4 tokens at 20 req/s, batch ≤ 3, a batch sweep of 1 and 2,
 * a rate sweep against generous SLOs (so it stops after its two bracket probes), a price and a power.
 */
const SERVE =
  '?mode=serve&preset=stories260k&quant=f32&probe-mib=4&probe-reps=2&requests=6&max-batch=3&rate=20&prompt-len=8&output-len=4&sweep-batch=1,2&sweep-rate=1&slo=ttft=60000,tpot=60000';
const CHARTS = ['ts-serve-cdf-chart', 'ts-timeline-chart', 'ts-batch-chart', 'ts-capacity-chart', 'ts-roofline-chart'];

/** The serving summary table as label → value. */
async function summary(page: Page): Promise<Record<string, string>> {
  const rows = await page
    .locator('ts-serve-summary #serve-summary tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [tr.children[0].textContent?.trim() ?? '', tr.children[1].textContent?.trim() ?? '']));
  return Object.fromEntries(rows);
}

/** The serving card alone (the whole page is long), to test/screenshots/NAME.png. */
async function serveShot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.locator('section:has(> #serve-title)').screenshot({ path: resolve(SCREENSHOTS, `${name}.png`) });
}

describe('serving mode in the page', () => {
  let server: StaticServer;
  let browser: Browser;
  let link = '';
  let numbers: Record<string, string> = {};

  beforeAll(async () => {
    server = await startPage();
    browser = await launch(true);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('a small serving run completes with a consistent summary and every serving chart drawn', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    const errors = watchErrors(page);
    await page.goto(`${server.url}${SERVE}`);
    await waitForReady(page);
    expect(await page.locator('ts-serve-setup #requests').inputValue()).toBe('6');
    await page.locator('ts-serve-setup #dollars').fill('2.5');
    await page.locator('ts-serve-setup #dollars').dispatchEvent('change');
    await page.locator('ts-serve-setup #watts').fill('300');
    await page.locator('ts-serve-setup #watts').dispatchEvent('change');
    await runAndWait(page);
    await expect.poll(() => page.getByText('This run failed').count()).toBe(0);
    numbers = await summary(page);
    const n = (label: string) => Number(numbers[label]);
    expect(n('Successful requests') + n('Failed requests')).toBe(6);
    expect(n('Request goodput (req/s)')).toBeLessThanOrEqual(n('Request throughput (req/s)'));
    expect(numbers['SLO attainment']).toMatch(/%$/);
    expect(n('Energy per output token (J)')).toBeGreaterThan(0);
    for (const chart of CHARTS) expect(await canvasHasInk(page, `${chart} canvas`), chart).toBe(true);
    expect(await page.locator('ts-batch-chart canvas').getAttribute('aria-label')).toMatch(/B=1: .* B=2: /);
    expect(await page.locator('ts-roofline-chart canvas').getAttribute('aria-label')).toMatch(/serving decode at B = 1/);
    await serveShot(page, 'serve-desktop-light');

    await page.getByRole('button', { name: 'Share link' }).click();
    link = await page.locator('ts-share-bar input[readonly]').inputValue();
    expect(link).toMatch(/#r=[A-Za-z0-9_-]+$/);
    const shared = await decodeReport(new URL(link).hash);
    expect((shared.serve as { run: { result: { completed: number } } }).run.result.completed).toBe(n('Successful requests'));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('its share link shows the same summary in a fresh page and runs nothing', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 900 }, colorScheme: 'dark' });
    const errors = watchErrors(page);
    await page.goto(link);
    await expect.poll(() => summary(page), { timeout: 20_000 }).toEqual(numbers);
    expect(await page.getByText('Opened from a link').count()).toBe(1);
    for (const chart of CHARTS) expect(await canvasHasInk(page, `${chart} canvas`), chart).toBe(true);
    expect(await api<number>(page, 'runsStarted()')).toBe(0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, 'no sideways scrolling of the whole page').toBeLessThanOrEqual(0);
    await serveShot(page, 'serve-phone-dark');
    expect(errors).toEqual([]);
    await page.close();
  });
});

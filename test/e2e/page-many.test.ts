import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import type { BenchJob } from '../../src/jobs/job-spec.ts';
import type { BenchResult } from '../../src/measure/schema.ts';
import { percentile } from '../../src/measure/stats.ts';
import { validateResult } from '../../src/measure/validate.ts';
import { resultList } from '../../src/share/result-list.ts';
import { variant } from '../unit/ui/cohort-fixtures.ts';
import { deepText, pageAndBrowser, SCREENSHOTS, TINY, waitForReady, watchErrors } from './browser.ts';

/** A tiny sweep whose roofs are probed as the page's QUICK_ROOFS parameters probe them (so the run form's cache key is the same). */
const JOB: BenchJob = {
  probe: true,
  probeMiB: 4,
  protocol: { warmup: 1, minReps: 2, maxReps: 2, minDurationMs: 0 },
  probeShapes: { bandwidthWorkgroups: [16, 64] },
  model: { preset: 'stories260k', quant: 'q4_0' },
  latency: { promptLengths: [8], gen: 4, reps: 2, warmup: 0 },
};

const LIST_URL = 'https://lists.example/many.json';
const BAD_URL = 'https://lists.example/bad.json';

/** Devices and decode tok/s of the list: 5 runs (p10–p90), 4 and 3 (min–max). */
const DEVICES: Record<string, number[]> = {
  'Apple M2': [40, 44, 50, 52, 60],
  'Intel Arc A770': [20, 22, 25, 30],
  'Qualcomm Adreno 740': [8, 9, 11],
};

interface TableRow {
  device: string;
  n: number;
  spread: string;
  kind: string;
  mine: boolean;
}

async function tableRows(page: Page): Promise<TableRow[]> {
  return page.locator('ts-many-view').evaluate((el) =>
    [...el.shadowRoot!.querySelectorAll('#many-table tbody tr')].map((tr) => ({
      device: (tr as HTMLElement).dataset.device!,
      n: Number(tr.querySelector('.n')!.textContent),
      spread: tr.querySelector('.spread')?.textContent?.replace(/\s+/g, ' ').trim() ?? '',
      kind: (tr.querySelector('.spread') as HTMLElement | null)?.dataset.kind ?? '',
      mine: tr.classList.contains('mine'),
    })),
  );
}

/** Serve the list (and a hostile one) to the page as a CORS-enabled host would. */
async function routeLists(page: Page, list: unknown): Promise<void> {
  const headers = { 'access-control-allow-origin': '*', 'content-type': 'application/json' };
  await page.route(LIST_URL, (route) => route.fulfill({ status: 200, headers, body: JSON.stringify(list) }));
  await page.route(BAD_URL, (route) => route.fulfill({ status: 200, headers, body: JSON.stringify({ results: [{ schema_version: 1, tool: 'x' }] }) }));
}

/** The view's section alone (the full page is several screens tall). */
async function viewShot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.locator('section[aria-labelledby="many-title"]').screenshot({ path: resolve(SCREENSHOTS, `${name}.png`) });
}

const num = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

describe('many results at once', () => {
  const ctx = pageAndBrowser();
  let profile: BrowserContext;
  let page: Page;
  let errors: string[];
  let runs: BenchResult[];
  let list: ReturnType<typeof resultList>;

  beforeAll(async () => {
    // One browser profile (context) for the runs and the form below: they share IndexedDB.
    profile = await ctx.browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await profile.newPage();
    errors = watchErrors(page);
    await page.goto(ctx.server.url);
    await waitForReady(page);
    // Two runs as the Run button makes them: the first measures the roofs and stores them, the second reuses them.
    runs = [];
    for (let i = 0; i < 2; i++) {
      runs.push(
        validateResult(
          await page.evaluate(
            (job) =>
              (window as unknown as { tokenscope: { runJob(j: unknown, p: undefined, o: unknown): Promise<unknown> } }).tokenscope.runJob(job, undefined, {
                roofsCache: 'use',
              }),
            JOB,
          ),
        ),
      );
    }
    const base = runs[0];
    list = resultList(
      Object.entries(DEVICES).flatMap(([device, speeds]) =>
        speeds.map((decode, i) => variant(base, { device, decode, created_at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString() })),
      ),
    );
    await routeLists(page, list);
  });

  afterAll(() => profile?.close());

  it('a second run reuses the roofs from IndexedDB and says when they were measured; the run form says so', async () => {
    expect(runs[0].ceilings!.source).toMatchObject({ kind: 'measured' });
    expect(runs[1].ceilings!.source).toMatchObject({ kind: 'cached', measured_at: runs[0].ceilings!.source!.measured_at, path: 'IndexedDB tokenscope-roofs' });
    // The roof it reused is run 1's (run 2 divides by its own re-measured read where that beat it).
    expect(runs[1].ceilings!.drift?.raised_from_gbps ?? runs[1].ceilings!.read_bandwidth_gbps).toBe(runs[0].ceilings!.read_bandwidth_gbps);
    expect(await deepText(page, 'ts-roofs-table #roofs-source')).toMatch(/Reused \(roofs cache IndexedDB tokenscope-roofs\), measured \d+ \w+ \d{4}/);
    // Reused roofs that the run's re-measured read shows low (beyond the drift bound: a busy machine when
    // they were measured) are dropped, and the run's notes say so (measure/roofs-key.ts staleReusedRoofs).
    const drift = runs[1].ceilings!.drift!;
    const dropped = (runs[1].notes ?? []).some((n) => /the cached roofs are dropped/.test(n));
    expect(dropped).toBe(drift.ratio > 1 + drift.bound);
    // The same probe settings from the address, in the same browser profile: the form offers the stored
    // roofs instead of their cost — unless the second run dropped them, when it states their cost again.
    const form = await profile.newPage();
    await form.goto(`${ctx.server.url}${TINY}`);
    await waitForReady(form);
    if (dropped) {
      await expect.poll(() => deepText(form, 'ts-run-setup #expected')).toMatch(/^Takes about .* for the roofs/);
    } else {
      await expect.poll(() => deepText(form, 'ts-run-setup #expected')).toMatch(/Reuses this device's roofs measured .* \(no time for the roofs\)/);
      expect(await form.locator('#measure-roofs-again').isChecked()).toBe(false);
      await form.locator('#measure-roofs-again').check();
      await expect.poll(() => deepText(form, 'ts-run-setup #expected')).toMatch(/^Takes about .* for the roofs/);
    }
    await form.close();
  });

  it(`groups ${Object.values(DEVICES).flat().length} listed results from ${Object.keys(DEVICES).length} devices with spreads, and ranks your run among them`, async () => {
    await page.evaluate((url) => (location.hash = `#results=${encodeURIComponent(url)}`), LIST_URL);
    await expect.poll(() => tableRows(page).then((rows) => rows.length), { timeout: 20_000 }).toBe(4);
    const rows = await tableRows(page);
    for (const [device, speeds] of Object.entries(DEVICES)) {
      const row = rows.find((r) => r.device === device)!;
      expect(row.n).toBe(speeds.length);
      const [lo, hi, kind] =
        speeds.length >= 5 ? [percentile(speeds, 10), percentile(speeds, 90), 'p10–p90'] : [Math.min(...speeds), Math.max(...speeds), 'min–max'];
      expect(row.kind).toBe(kind);
      expect(row.spread).toBe(`${num(lo)}–${num(hi)} ${kind}`);
      expect(row.mine).toBe(false);
    }
    expect(
      rows.map((r) => r.device).filter((d) => d in DEVICES),
      'fastest median decode first',
    ).toEqual(['Apple M2', 'Intel Arc A770', 'Qualcomm Adreno 740']);
    const own = rows.find((r) => !(r.device in DEVICES))!;
    expect(own).toMatchObject({ n: 2, mine: true, kind: 'min–max' });
    expect(await deepText(page, 'ts-many-view #many-yours')).toMatch(/Your run .*of 14 runs, .* of 2 in its group/);
    expect(await deepText(page, 'ts-many-view #many-summary')).toMatch(/14 runs from 14 results in 4 groups on 4 devices/);
    await expect.poll(() => page.locator('ts-many-view ts-cohort-chart canvas').count()).toBe(1);
    await viewShot(page, 'many-1280');
  });

  it('a hostile list, bad links and a broken file are refused with messages naming them; the view and the page stay usable', async () => {
    const before = await tableRows(page);
    await page.locator('ts-many-view #many-url').fill(BAD_URL);
    await page.locator('ts-many-view').getByRole('button', { name: 'Load list' }).click();
    await expect.poll(() => deepText(page, 'ts-many-view')).toMatch(/the list at https:\/\/lists\.example\/bad\.json: Item 1 \(a result\): Invalid result/);
    expect(await tableRows(page)).toEqual(before);
    await page.locator('ts-many-view #many-links').fill('not a link\nhttps://x.example/#r=%%%');
    await page.locator('ts-many-view').getByRole('button', { name: 'Add links' }).click();
    await expect
      .poll(() => deepText(page, 'ts-many-view #many-problems'))
      .toMatch(/3 sources could not be read.*link 1: This is not a tokenscope link.*link 2:/);
    // Several files at once: a result from one more device joins the table; a broken one is named.
    const mali = variant(runs[0], { device: 'Arm Mali-G78', decode: 5 });
    await page.locator('ts-many-view #many-files').setInputFiles([
      { name: 'mali.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(mali)) },
      { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"schema_version": 1,') },
    ]);
    await expect.poll(() => tableRows(page).then((rows) => rows.map((r) => r.device))).toContain('Arm Mali-G78');
    expect(await deepText(page, 'ts-many-view #many-problems')).toMatch(/the file “broken\.json”: The file is not valid JSON/);
    expect(await page.locator('button.run').isEnabled()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('opens from a link alone (#results=URL), phone width, with no run of its own', async () => {
    const phone = await ctx.browser.newPage({ viewport: { width: 390, height: 844 } });
    const phoneErrors = watchErrors(phone);
    await routeLists(phone, list);
    await phone.goto(`${ctx.server.url}#results=${encodeURIComponent(LIST_URL)}`);
    await expect.poll(() => tableRows(phone).then((rows) => rows.length), { timeout: 30_000 }).toBe(3);
    expect(await deepText(phone, 'ts-many-view #many-yours')).toMatch(/Run a latency sweep on this page/);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, 'nothing wider than the phone').toBeLessThanOrEqual(0);
    await phone.screenshot({ path: resolve(SCREENSHOTS, 'many-390-first-screen.png') });
    await viewShot(phone, 'many-390');
    expect(phoneErrors).toEqual([]);
    await phone.close();
  });
});

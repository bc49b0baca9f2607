import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeReport } from '../../src/share/permalink.ts';
import { validateResult } from '../../src/measure/validate.ts';
import {
  api,
  canvasHasInk,
  deepText,
  dropFile,
  pageAndBrowser,
  resultRows,
  runAndWait,
  screenshot,
  TINY,
  waitForReady,
  watchCsp,
  watchErrors,
} from './browser.ts';

const CHARTS = ['ts-ttft-chart', 'ts-depth-chart', 'ts-cdf-chart', 'ts-kernel-chart', 'ts-roofline-chart', 'ts-what-if-chart'];

/**
 * One real run (the tiny preset, with the per-kernel profile), then everything that reads its
 * result: the permalink opened in a fresh page, the exports, the import by file chooser and by
 * drag and drop, and the screenshots at desktop and phone widths in light and dark.
 */
describe('a run, its link, its exports', () => {
  const ctx = pageAndBrowser();
  let link = '';
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-page-'));
  const jsonPath = join(dir, 'result.json');
  let table: string[][] = [];

  it('first visit, one click: the default run completes and every chart is drawn', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    const errors = watchErrors(page);
    const csp = await watchCsp(page);
    await page.goto(`${ctx.server.url}${TINY}&profile=1`);
    await waitForReady(page);
    expect(await api<number>(page, 'runsStarted()')).toBe(0);
    await runAndWait(page);
    table = await resultRows(page);
    expect(table.map((r) => r[0])).toEqual(['8', '16']);
    for (const chart of CHARTS) expect(await canvasHasInk(page, `${chart} canvas`), chart).toBe(true);
    expect(await page.locator('ts-ttft-chart canvas').getAttribute('aria-label')).toMatch(/8 tokens p50 [\d.]+ ms/);
    expect(await deepText(page, 'ts-run-facts')).toMatch(/Compile the pipelines.*First request’s TTFT/);
    expect(await deepText(page, 'ts-verdict-card')).toMatch(/prefill 8 .*decode @ 8 .*prefill 16 .*decode @ 16/);
    await screenshot(page, 'report-desktop-light');

    // Exports: the full JSON, the rows as CSV, a chart as PNG.
    const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
    await json.saveAs(jsonPath);
    const exported = validateResult(JSON.parse(readFileSync(jsonPath, 'utf8')));
    expect((exported.latency as { requests: unknown[] }).requests.length).toBe(4);
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV of rows' }).click()]);
    const lines = readFileSync(await csv.path(), 'utf8')
      .trim()
      .split('\r\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^model,prompt_tokens,output_tokens,n,/);
    const [png] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Save the roofline chart as PNG' }).click()]);
    expect(png.suggestedFilename()).toBe('tokenscope-roofline.png');
    expect(
      readFileSync(await png.path())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');

    await page.getByRole('button', { name: 'Share link' }).click();
    link = await page.locator('ts-share-bar input[readonly]').inputValue();
    expect(link).toMatch(/#r=[A-Za-z0-9_-]+$/);
    // The address bar keeps this visitor's own query string; the link carries only the report.
    expect(new URL(page.url()).hash).toBe(new URL(link).hash);
    expect(new URL(link).search).toBe('');
    expect(errors).toEqual([]);
    expect(await csp()).toEqual([]);
    await page.close();
  });

  it('a shared link shows the same numbers in a fresh page and runs nothing', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    await page.goto(link);
    await expect.poll(() => resultRows(page), { timeout: 20_000 }).toEqual(table);
    expect(await page.getByText('Opened from a link').count()).toBe(1);
    // This small run fits a link whole; trimming is checked in page-links.test.ts.
    expect((await decodeReport(new URL(link).hash)).trimmed).toBeUndefined();
    for (const chart of CHARTS) expect(await canvasHasInk(page, `${chart} canvas`), chart).toBe(true);
    expect(await api<number>(page, 'runsStarted()')).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  for (const [width, scheme] of [
    [1280, 'dark'],
    [390, 'light'],
    [390, 'dark'],
  ] as const) {
    it(`an imported JSON file renders the full report at ${width} px, ${scheme}`, async () => {
      const page = await ctx.browser.newPage({ viewport: { width, height: 900 }, colorScheme: scheme });
      const errors = watchErrors(page);
      await page.goto(ctx.server.url);
      await page.locator('ts-share-bar input[type=file]').setInputFiles(jsonPath);
      await expect.poll(() => resultRows(page), { timeout: 20_000 }).toEqual(table);
      for (const chart of CHARTS) expect(await canvasHasInk(page, `${chart} canvas`), chart).toBe(true);
      expect(await api<number>(page, 'runsStarted()')).toBe(0);
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(await overflow(), 'no sideways scrolling of the whole page').toBeLessThanOrEqual(0);
      await screenshot(page, `report-${width < 600 ? 'phone' : 'desktop'}-${scheme}`);
      if (width < 600) {
        await page.setViewportSize({ width: 360, height: 800 });
        expect(await overflow(), 'nor at 360 px').toBeLessThanOrEqual(0);
      }
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  it('keyboard and screen readers: names for every control, text for every chart, visible focus, no trap', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    await page.goto(ctx.server.url);
    await waitForReady(page);
    await page.locator('ts-share-bar input[type=file]').setInputFiles(jsonPath);
    await expect.poll(() => resultRows(page), { timeout: 20_000 }).toEqual(table);
    const audit = await page.evaluate(() => {
      const all: Element[] = [];
      const walk = (root: Document | ShadowRoot) =>
        root.querySelectorAll('*').forEach((el) => {
          all.push(el);
          if (el.shadowRoot) walk(el.shadowRoot);
        });
      walk(document);
      const named = (el: Element) => {
        const control = el as HTMLInputElement;
        if (el.getAttribute('aria-label')?.trim() || el.getAttribute('aria-labelledby')) return true;
        if (control.labels && control.labels.length > 0) return true;
        return el.tagName === 'BUTTON' && (el.textContent ?? '').trim().length > 0;
      };
      return {
        unnamed: all.filter((el) => ['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName) && !named(el)).map((el) => el.outerHTML.slice(0, 80)),
        canvases: all.filter((el) => el.tagName === 'CANVAS').map((el) => [el.getAttribute('role'), (el.getAttribute('aria-label') ?? '').length > 20]),
        tablesWithoutHeaders: all.filter((el) => el.tagName === 'TABLE' && el.querySelectorAll('th').length === 0).length,
        live: all.filter((el) => el.getAttribute('aria-live') || ['status', 'alert'].includes(el.getAttribute('role') ?? '')).length,
      };
    });
    expect(audit.unnamed).toEqual([]);
    expect(audit.canvases).toEqual(CHARTS.map(() => ['img', true]));
    expect(audit.tablesWithoutHeaders).toBe(0);
    expect(audit.live).toBeGreaterThan(0);

    // Tab through the whole page: each stop shows a focus outline, and focus leaves the page at the end.
    const focused = () =>
      page.evaluate(() => {
        let el: Element | null = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        if (!el || el === document.body) return null;
        const style = getComputedStyle(el);
        return {
          id: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}:${(el.textContent ?? '').trim().slice(0, 20)}`,
          outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
        };
      });
    const stops: string[] = [];
    for (let i = 0; i < 150; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      if (f === null) break;
      expect(f.outline, `visible focus on ${f.id}`).toBe(true);
      stops.push(f.id);
    }
    expect(stops.length).toBeLessThan(150);
    // An opened file is shown first: its report, then share/export, then the run form folded under "Run on your device".
    const order = ['button:Share link', 'summary:Run on your device', 'input#wi-bw', 'input#paste-link'].map((id) => stops.findIndex((s) => s.startsWith(id)));
    expect(
      order.every((i) => i >= 0),
      stops.join(' | '),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a JSON file dropped on the page opens it', async () => {
    const page = await ctx.browser.newPage();
    const errors = watchErrors(page);
    await page.goto(ctx.server.url);
    await dropFile(page, 'result.json', readFileSync(jsonPath, 'utf8'));
    await expect.poll(() => resultRows(page), { timeout: 20_000 }).toEqual(table);
    expect(await page.getByText('Opened from a file').count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });
});

/**
 * The page a visitor understands at a glance (issue 14): the verdict on top, one set of roofs in
 * the roofline and the what-if panel, links that open on the report (first viewport, both widths,
 * light and dark), preflight instead of a late failure, and Cancel within 2 s during the roofs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { BenchJob } from '../../src/jobs/job-spec.ts';
import type { BenchResult } from '../../src/measure/schema.ts';
import { encodeComparison } from '../../src/share/compare.ts';
import { encodeReport } from '../../src/share/permalink.ts';
import { validateResult } from '../../src/measure/validate.ts';
import { api, deepText, launch, pageAndBrowser, screenshot, waitForReady, watchErrors } from './browser.ts';

const JOB: BenchJob = {
  probe: true,
  probeMiB: 4,
  protocol: { warmup: 0, minReps: 2, maxReps: 2, minDurationMs: 0 },
  probeShapes: { bandwidthWorkgroups: [16, 64] },
  model: { preset: 'stories260k', quant: 'q4_0' },
  latency: { promptLengths: [8, 16], gen: 6, reps: 2, warmup: 0 },
};

const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** The top of an element (in any shadow root) relative to the viewport, or null when it is not on the page. */
async function topOf(page: Page, selector: string): Promise<number | null> {
  const handle = page.locator(selector).first();
  if ((await handle.count()) === 0) return null;
  return (await handle.boundingBox())?.y ?? null;
}

describe('verdict, links and preflight', () => {
  const ctx = pageAndBrowser();
  let result: BenchResult;

  beforeAll(async () => {
    const page = await ctx.browser.newPage();
    await page.goto(ctx.server.url);
    await waitForReady(page);
    result = validateResult(
      await page.evaluate((job) => (window as unknown as { tokenscope: { runJob(j: unknown): Promise<unknown> } }).tokenscope.runJob(job), JOB),
    );
    await page.close();
  });

  it('llama-bench with the default model is refused up front and offers the nearest valid choice', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors = watchErrors(page);
    await page.goto(ctx.server.url);
    await waitForReady(page);
    await page.getByRole('radio', { name: /llama-bench/ }).check();
    const run = page.getByRole('button', { name: 'Run', exact: true });
    expect(await run.isDisabled()).toBe(true);
    expect(await deepText(page, 'ts-run-setup')).toMatch(/pp512 · tg128 needs 512 positions; TinyStories stories15M holds 256/);
    expect(await deepText(page, 'ts-run-setup')).not.toMatch(/--context/);
    await page.getByRole('button', { name: 'Use pp256 · tg128 instead' }).click();
    expect(await run.isEnabled()).toBe(true);
    expect(await page.locator('ts-run-setup #pp').inputValue()).toBe('256');
    // The job refuses the same request itself before measuring any roof (the CLI and automation path).
    const t0 = Date.now();
    const refused = await page.evaluate(() =>
      (window as unknown as { tokenscope: { runJob(j: unknown): Promise<unknown> } }).tokenscope
        .runJob({ probe: true, model: { preset: 'stories15m', quant: 'q4_0' }, llamaBench: true })
        .then(
          () => 'ran',
          (e: Error) => e.message,
        ),
    );
    expect(refused).toMatch(/needs 512 positions; TinyStories stories15M holds 256/);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the what-if panel and the roofline report the same bound for the same run', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${ctx.server.url}${await encodeReport(result)}`);
    const caption = page.locator('ts-roofline-chart #roofline-caption');
    await caption.waitFor({ timeout: 20_000 });
    const side = await caption.getAttribute('data-decode-side');
    expect(side === 'memory' || side === 'compute').toBe(true);
    // The what-if starts on this device's measured roofs (the roofline's), at batch 1 and the measured model.
    expect(await page.locator('ts-what-if #wi-device').inputValue()).toBe('measured');
    expect(await page.locator('ts-what-if #wi-compute').inputValue()).toBe(String(Number(result.ceilings!.f32_gflops.toPrecision(3))));
    expect(await page.locator('ts-what-if #wi-answer').getAttribute('data-bound')).toBe(side);
    expect(await deepText(page, 'ts-verdict-card')).toMatch(new RegExp(`\\(\\s*${side}\\s+side\\)`));
    // A spec-sheet preset is marked as such, and batching moves decode to the compute side without running anything.
    await page.locator('ts-what-if #wi-device').selectOption('rtx-4090');
    expect(await deepText(page, 'ts-what-if')).toMatch(/Spec-sheet figures/);
    await page.locator('ts-what-if #wi-shape').selectOption('llama-3.2-1b');
    await page.locator('ts-what-if #wi-context').fill('0');
    await page.locator('ts-what-if #wi-context').dispatchEvent('change');
    expect(await page.locator('ts-what-if #wi-answer').getAttribute('data-bound')).toBe('memory');
    // Any llama-quantize mix: f16 weights read about 3.5× the bytes of q4_0, so the memory-bound ceiling falls as much.
    const ceiling = async () => Number((await page.locator('ts-what-if #wi-answer strong').innerText()).replace(/[^0-9.]/g, ''));
    await page.locator('ts-what-if #wi-quant').selectOption('q4_0');
    const q4 = await ceiling();
    await page.locator('ts-what-if #wi-quant').selectOption('f16');
    expect(q4 / (await ceiling())).toBeGreaterThan(3);
    await page.locator('ts-what-if').screenshot({ path: 'test/screenshots/what-if-1280.png' });
    await page.locator('ts-what-if #wi-batch').fill('256');
    await page.locator('ts-what-if #wi-batch').dispatchEvent('change');
    expect(await page.locator('ts-what-if #wi-answer').getAttribute('data-bound')).toBe('compute');
    await page.close();
  });

  for (const viewport of VIEWPORTS) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`a #r= link opens on the report at ${viewport.width}×${viewport.height} (${scheme})`, async () => {
        const page = await ctx.browser.newPage({ viewport, colorScheme: scheme });
        const errors = watchErrors(page);
        await page.goto(`${ctx.server.url}${await encodeReport(result)}`);
        await page.locator('ts-verdict-card #phase-table').waitFor({ timeout: 20_000 });
        const banner = (await deepText(page, '#shared-banner')).replace(/\s+([:,])/g, '$1');
        expect(banner).toMatch(/Shared report: TinyStories stories260K .* on .*, \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC/);
        expect((await topOf(page, '#shared-banner'))!).toBeLessThan(viewport.height);
        // The verdict's big numbers start inside the first screen.
        expect((await topOf(page, 'ts-verdict-card #v-bandwidth'))!).toBeLessThan(viewport.height - 60);
        // The run form is folded below the report.
        expect(await page.locator('#run-here').evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
        expect(await api<number>(page, 'runsStarted()')).toBe(0);
        await page.screenshot({ path: `test/screenshots/link-${viewport.width}-${scheme}.png` });
        await screenshot(page, `link-${viewport.width}-${scheme}-full`);
        expect(errors).toEqual([]);
        await page.close();
      });
    }

    it(`a #c= link opens on both reports and what differs at ${viewport.width}×${viewport.height}`, async () => {
      const b = structuredClone(result);
      b.environment.user_agent = 'Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
      (b.model as { quantization: string }).quantization = 'q8_0';
      const page = await ctx.browser.newPage({ viewport });
      const errors = watchErrors(page);
      await page.goto(`${ctx.server.url}${await encodeComparison(result, b)}`);
      await page.locator('ts-compare-view #differences').waitFor({ timeout: 20_000 });
      expect((await deepText(page, '#shared-banner')).replace(/\s+([:,])/g, '$1')).toMatch(/Shared comparison: A — .* B — /);
      const diffs = await deepText(page, 'ts-compare-view #differences');
      expect(diffs).toMatch(/quantization/);
      expect(diffs).toMatch(/browser.*Safari 17/);
      // Same numbers on both sides: nothing is painted as a win.
      expect(await page.locator('ts-compare-view td.better').count()).toBe(0);
      expect((await topOf(page, 'ts-compare-view'))!).toBeLessThan(viewport.height);
      // Report A is on show below, never "No report yet".
      expect(await deepText(page, 'main')).not.toContain('No report yet');
      expect(await page.locator('ts-verdict-card').count()).toBe(1);
      await page.screenshot({ path: `test/screenshots/compare-${viewport.width}.png` });
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  it('without WebGPU a link reads as a normal page with a neutral note, no error', async () => {
    const plain = await launch(false);
    try {
      const page = await plain.newPage({ viewport: { width: 390, height: 844 } });
      await page.goto(`${ctx.server.url}${await encodeReport(result)}`);
      await page.locator('ts-verdict-card #phase-table').waitFor({ timeout: 20_000 });
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await deepText(page, '#run-here')).toMatch(/cannot run benchmarks.*shared numbers above read the same/);
      await screenshot(page, 'link-no-webgpu-390');
    } finally {
      await plain.close();
    }
  });

  it('Cancel during the roofs returns control within 2 s', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(ctx.server.url);
    await waitForReady(page);
    await page.getByRole('radio', { name: /Roofs only/ }).check();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const cancel = page.locator('#cancel');
    await cancel.waitFor({ timeout: 10_000 });
    await page.waitForTimeout(1_500);
    // Timed inside the page, from the click to the Run button enabled again (Playwright's own round trips excluded).
    const ms = await page.evaluate(
      () =>
        new Promise<number>((done) => {
          const app = document.querySelector('ts-app')!.shadowRoot!;
          const t0 = performance.now();
          (app.querySelector('#cancel') as HTMLButtonElement).click();
          const poll = () => {
            const run = app.querySelector('ts-run-setup')?.shadowRoot?.querySelector<HTMLButtonElement>('button.run');
            if (!app.querySelector('#cancel') && run && !run.disabled) done(performance.now() - t0);
            else setTimeout(poll, 10);
          };
          poll();
        }),
    );
    expect(ms).toBeLessThan(2_000);
    expect(await page.getByRole('button', { name: 'Run', exact: true }).isEnabled()).toBe(true);
    expect(await deepText(page, 'main')).toMatch(/You cancelled this run\. (Nothing had finished yet|What finished before is kept below)/);
    await page.close();
  });
});

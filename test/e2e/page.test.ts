import { describe, expect, it } from 'vitest';
import { canvasHasInk, deepText, launch, pageAndBrowser, QUICK_ROOFS, runAndWait, screenshot, waitForReady, watchCsp, watchErrors } from './browser.ts';

describe('the page in Chromium', () => {
  const ctx = pageAndBrowser();

  it('shows the device card and completes a roofs-only run with a drawn roofline', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    const csp = await watchCsp(page);
    await page.goto(`${ctx.server.url}?${QUICK_ROOFS}`);
    await expect.poll(() => page.locator('ts-device-panel table').first().textContent(), { timeout: 20_000 }).toContain('swiftshader');
    expect(await page.locator('ts-device-panel table').first().textContent()).toContain('timestamp-query');
    await waitForReady(page);
    await page.getByRole('radio', { name: /Roofs only/ }).check();
    await runAndWait(page);
    expect(await deepText(page, 'ts-roofs-table')).toMatch(/GB\/s.*GFLOP\/s/);
    expect(await canvasHasInk(page, 'ts-roofline-chart canvas')).toBe(true);
    expect(await page.locator('ts-roofline-chart canvas').getAttribute('aria-label')).toMatch(/ridge point at [\d.]+ FLOP\/byte/);
    expect(await page.getByRole('button', { name: 'Run', exact: true }).isEnabled()).toBe(true);
    await screenshot(page, 'roofs-desktop');
    expect(errors).toEqual([]);
    expect(await csp()).toEqual([]);
    await page.close();
  });

  it('explains what to do when WebGPU is unavailable', async () => {
    const plain = await launch(false);
    try {
      const page = await plain.newPage();
      const errors = watchErrors(page);
      await page.goto(ctx.server.url);
      const alert = page.getByRole('alert');
      await alert.waitFor({ timeout: 20_000 });
      const text = await alert.textContent();
      expect(text).toMatch(/no GPU adapter|not available/);
      expect(text).toMatch(/Chrome|Edge|Safari|Firefox/);
      await screenshot(page, 'no-webgpu');
      expect(errors).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});

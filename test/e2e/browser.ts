/** Shared setup for end-to-end tests: the built page served locally, Chromium via Playwright. */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumArgs, chromiumPath } from '../../cli/chromium.ts';
import { serveStatic, type StaticServer } from '../../cli/static-server.ts';

export const ROOT = resolve(__dirname, '../..');
export const SCREENSHOTS = resolve(ROOT, 'test/screenshots');

export async function startPage(): Promise<StaticServer> {
  const dist = resolve(ROOT, 'dist');
  if (!existsSync(resolve(dist, 'index.html'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) before the e2e tests.');
  return serveStatic(dist, { extra: { '/test-models/': resolve(ROOT, '../shared/models') } });
}

export async function launch(webgpu = true): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs({ webgpu }), headless: true });
}

/** Collects console errors and uncaught page errors, which tests assert are empty. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** True when a canvas has at least `minInk` non-transparent pixels (i.e. something was drawn). */
export async function canvasHasInk(page: Page, selector: string, minInk = 200): Promise<boolean> {
  return page.locator(selector).first().evaluate((el, min) => {
    const canvas = el as HTMLCanvasElement;
    const ctx = canvas.getContext('2d');
    if (!ctx || canvas.width === 0 || canvas.height === 0) return false;
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) ink++;
    return ink >= min;
  }, minInk);
}

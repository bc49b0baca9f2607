/** Shared setup for end-to-end tests: the built page served locally, Chromium via Playwright. */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumArgs, chromiumPath } from '../../cli/chromium.ts';
import { serveStatic, type StaticServer } from '../../cli/static-server.ts';

export const ROOT = resolve(__dirname, '../..');
export const SCREENSHOTS = resolve(ROOT, 'test/screenshots');

/**
 * URL parameters that keep a latency run to seconds on SwiftShader: the 260K-parameter preset,
 * two short prompts, 8 output tokens, 2 repetitions, and quick roofs (a 4 MiB working set, 2 timed
 * repetitions per roof, two bandwidth grids tried). The visitor's default (`defaultJob`) is untouched.
 */
export const QUICK_ROOFS = 'probe-mib=4&probe-reps=2&probe-grids=16,64';
export const TINY = `?preset=stories260k&lengths=8,16&gen=8&reps=2&${QUICK_ROOFS}`;

export async function startPage(): Promise<StaticServer> {
  const dist = resolve(ROOT, 'dist');
  if (!existsSync(resolve(dist, 'index.html'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) before the e2e tests.');
  return serveStatic(dist, { extra: { '/test-models/': resolve(ROOT, '../shared/models') } });
}

export async function launch(webgpu = true): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs({ webgpu }), headless: true });
}

/** The built page served and Chromium (with WebGPU) launched before a file's tests, both closed after. */
export function pageAndBrowser(): { readonly server: StaticServer; readonly browser: Browser } {
  const held = {} as { server: StaticServer; browser: Browser };
  beforeAll(async () => {
    held.server = await startPage();
    held.browser = await launch(true);
  });
  afterAll(async () => {
    await held.browser?.close();
    await held.server?.close();
  });
  return held;
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

/** Records Content-Security-Policy violations from the first script on; read them with the returned function. */
export async function watchCsp(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __csp: string[] }).__csp = seen;
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** True when a canvas has at least `minInk` non-transparent pixels (i.e. something was drawn). */
export async function canvasHasInk(page: Page, selector: string, minInk = 200): Promise<boolean> {
  return page
    .locator(selector)
    .first()
    .evaluate((el, min) => {
      const canvas = el as HTMLCanvasElement;
      const ctx = canvas.getContext('2d');
      if (!ctx || canvas.width === 0 || canvas.height === 0) return false;
      const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let ink = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) ink++;
      return ink >= min;
    }, minInk);
}

/** The page's automation API (`window.tokenscope`), called from the test. */
export function api<T>(page: Page, call: string): Promise<T> {
  return page.evaluate(`window.tokenscope.${call}`) as Promise<T>;
}

/**
 * Wait until the device is ready and the Run button can be pressed (it may be folded under
 * "Run on your device" when the page opened on a shared report).
 */
export async function waitForReady(page: Page): Promise<void> {
  await page.locator('button.run:not([disabled])').waitFor({ state: 'attached', timeout: 30_000 });
}

/** Press Run and wait until the run is over (the Cancel button has come and gone). */
export async function runAndWait(page: Page, timeout = 120_000): Promise<void> {
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.locator('#cancel').waitFor({ state: 'attached', timeout: 10_000 });
  await page.locator('#cancel').waitFor({ state: 'detached', timeout });
}

/** Rows of the length-stratified results table (each row's cells as text). */
export async function resultRows(page: Page): Promise<string[][]> {
  return page.locator('ts-results-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent?.trim() ?? '')));
}

/**
 * Counts live GPUBuffers in the page: createBuffer adds, destroy removes. Install before the
 * page loads; read with `liveGpuBuffers`.
 */
export async function trackGpuBuffers(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const live = new Set<GPUBuffer>();
    (window as unknown as { __liveBuffers: () => number }).__liveBuffers = () => live.size;
    const create = GPUDevice.prototype.createBuffer;
    GPUDevice.prototype.createBuffer = function (this: GPUDevice, descriptor: GPUBufferDescriptor) {
      const buffer = create.call(this, descriptor);
      live.add(buffer);
      return buffer;
    };
    const destroy = GPUBuffer.prototype.destroy;
    GPUBuffer.prototype.destroy = function (this: GPUBuffer) {
      live.delete(this);
      return destroy.call(this);
    };
  });
}

export function liveGpuBuffers(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { __liveBuffers: () => number }).__liveBuffers());
}

/** The text of an element including every shadow root inside it (textContent stops at shadow roots). */
export async function deepText(page: Page, selector: string): Promise<string> {
  return page
    .locator(selector)
    .first()
    .evaluate((root) => {
      const parts: string[] = [];
      const walk = (node: Node) => {
        if (node.nodeType === Node.TEXT_NODE) parts.push(node.textContent ?? '');
        if (node instanceof Element && node.shadowRoot) walk(node.shadowRoot);
        node.childNodes.forEach(walk);
      };
      walk(root);
      return parts.join(' ').replace(/\s+/g, ' ');
    });
}

/** Drop a file on the page as a drag from the desktop would. */
export async function dropFile(page: Page, name: string, text: string): Promise<void> {
  await page.evaluate(
    ([name, text]) => {
      const data = new DataTransfer();
      data.items.add(new File([text], name, { type: 'application/json' }));
      const target = document.querySelector('ts-app')!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    },
    [name, text],
  );
}

/**
 * The page's address field takes llama.cpp's `-hf` form, ORG/REPO[:QUANT] (issue 24): in the built
 * page it reads the repository's file list from the Hub and names the file the quant tag picks (Q4_K_M
 * when none is given); an unknown tag names the quants the repository has. The Hub is stood in for by
 * Playwright's request routing, so nothing leaves the machine.
 */
import { describe, expect, it } from 'vitest';
import { deepText, pageAndBrowser, waitForReady } from './browser.ts';

const LISTING = {
  siblings: [
    { rfilename: 'README.md' },
    { rfilename: 'tiny-Q4_K_M.gguf' },
    { rfilename: 'tiny-Q8_0.gguf' },
    { rfilename: 'tiny-F16-00001-of-00002.gguf' },
    { rfilename: 'tiny-F16-00002-of-00002.gguf' },
  ],
};

describe('the address field with ORG/REPO[:QUANT]', () => {
  const ctx = pageAndBrowser();

  it('names the file the tag picks, Q4_K_M by default, and lists the quants for an unknown tag', async () => {
    const page = await ctx.browser.newPage();
    const asked: string[] = [];
    await page.route('https://huggingface.co/api/models/**', (route) => {
      asked.push(new URL(route.request().url()).pathname);
      return route.fulfill({ status: 200, contentType: 'application/json', headers: { 'access-control-allow-origin': '*' }, body: JSON.stringify(LISTING) });
    });
    await page.goto(ctx.server.url);
    await waitForReady(page);
    await page.locator('ts-model-picker #model').selectOption('url');
    const address = page.locator('ts-model-picker input[type=url]');
    const note = async (typed: string, expected: RegExp) => {
      await address.fill(typed);
      await address.blur();
      await expect.poll(() => deepText(page, 'ts-model-picker'), { timeout: 15_000 }).toMatch(expected);
    };
    await note('someorg/tiny-GGUF:q8_0', /someorg\/tiny-GGUF:q8_0 → tiny-Q8_0\.gguf/);
    await note('someorg/tiny-GGUF', /someorg\/tiny-GGUF → tiny-Q4_K_M\.gguf/);
    await note('someorg/tiny-GGUF:Q5_K_M', /has no Q5_K_M file; its quants: .*Q4_K_M.*Q8_0/);
    expect(asked).toEqual(Array(3).fill('/api/models/someorg/tiny-GGUF'));
  });
});

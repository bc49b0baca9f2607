import { describe, expect, it } from 'vitest';
import { decodeReport } from '../../src/share/permalink.ts';
import { pageAndBrowser, runAndWait, waitForReady, watchErrors } from './browser.ts';

/** Six requests behind a 32-token system prompt, two at a time: the later four find its two blocks cached. */
const PREFIX =
  '?mode=serve&preset=stories260k&quant=f32&probe-mib=4&probe-reps=2&requests=6&max-batch=2&rate=inf&prompt-len=8&output-len=4&shared-prefix=32&max-queue=8&sla=99';

type PrefixCacheJson = { hit_rate: number | null; requests_with_hit: number; ttft_hit: { count: number } | null };

describe('prefix caching in the page', () => {
  const ctx = pageAndBrowser();

  it('the form takes the prefix settings from the link, the run reports its hit rate and TTFT of hits vs misses, and the share link keeps them', async () => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    const errors = watchErrors(page);
    await page.goto(`${ctx.server.url}${PREFIX}`);
    await waitForReady(page);
    expect(await page.locator('ts-serve-setup #shared-prefix').inputValue()).toBe('32');
    expect(await page.locator('ts-serve-setup #prefix-cache').isChecked()).toBe(true);
    expect(await page.locator('ts-serve-setup #max-queue').inputValue()).toBe('8');
    expect(await page.locator('ts-serve-setup #sla').inputValue()).toBe('99');
    await runAndWait(page);
    await expect.poll(() => page.getByText('This run failed').count()).toBe(0);
    expect(await page.locator('ts-prefix-cache-view #prefix-hit-rate').textContent()).toMatch(/^\d+(\.\d+)?%$/);
    expect(await page.locator('ts-prefix-cache-view #prefix-ttft tbody tr').count()).toBe(2);

    await page.getByRole('button', { name: 'Share link' }).click();
    const link = await page.locator('ts-share-bar input[readonly]').inputValue();
    const shared = (await decodeReport(new URL(link).hash)) as {
      serve: { settings: { shared_prefix: number; prefix_cache: boolean }; run: { prefix_cache: PrefixCacheJson; timeline: { token_ids?: number[] }[] } };
    };
    expect(shared.serve.settings).toMatchObject({ shared_prefix: 32, prefix_cache: true });
    const p = shared.serve.run.prefix_cache;
    expect(p.requests_with_hit).toBeGreaterThan(0);
    expect(p.hit_rate!).toBeGreaterThan(0);
    expect(p.ttft_hit!.count).toBe(p.requests_with_hit);
    expect(shared.serve.run.timeline.every((t) => t.token_ids?.length === 4)).toBe(true);

    // The link reopens the report with the prefix cache's block.
    const reopened = await ctx.browser.newPage({ viewport: { width: 390, height: 900 } });
    await reopened.goto(link);
    await expect.poll(() => reopened.locator('ts-prefix-cache-view #prefix-hit-rate').count(), { timeout: 20_000 }).toBe(1);
    await reopened.close();
    expect(errors).toEqual([]);
    await page.close();
  });
});

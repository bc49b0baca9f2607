import { describe, expect, it } from 'vitest';
import type { BenchJob } from '../../src/jobs/job-spec.ts';
import { STORIES_GGUF } from '../unit/model/paths.ts';
import {
  api,
  canvasHasInk,
  deepText,
  liveGpuBuffers,
  pageAndBrowser,
  resultRows,
  runAndWait,
  TINY,
  trackGpuBuffers,
  waitForReady,
  watchErrors,
} from './browser.ts';

/** Cancel, device loss and repeated runs: the page recovers, and what a run allocates it frees. */
describe('run lifecycle', () => {
  const ctx = pageAndBrowser();

  it('Cancel mid-run stops within a step, frees the GPU memory and leaves the page usable', async () => {
    const page = await ctx.browser.newPage();
    const errors = watchErrors(page);
    await trackGpuBuffers(page);
    await page.goto(`${ctx.server.url}${TINY.replace('&reps=2&', '&reps=50&')}`);
    await waitForReady(page);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    // Any repetition of the sweep (one lasts a fraction of a second; the sweep, many seconds).
    await page.getByText(/latency: prompt \d+ tokens, repetition \d+\/50/).waitFor({ timeout: 150_000 });
    const t0 = Date.now();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('#cancel').waitFor({ state: 'detached', timeout: 30_000 });
    expect(Date.now() - t0).toBeLessThan(30_000);
    await page.getByText('You cancelled this run').waitFor();
    // Control returns at once; the GPU work in flight then stops at its next check and frees everything.
    await expect.poll(() => liveGpuBuffers(page), { timeout: 10_000 }).toBe(0);
    expect(await page.getByRole('button', { name: 'Run', exact: true }).isEnabled()).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  // The second run opens the real test model as a local file: skipped where it is absent (paths.ts).
  it.skipIf(!STORIES_GGUF)(
    `a device lost mid-run fails the run and keeps the finished rows; the next run (a local GGUF file) gets a fresh device${STORIES_GGUF ? '' : ' — SKIPPED: stories260K.gguf not found'}`,
    async () => {
      const page = await ctx.browser.newPage();
      const errors = watchErrors(page);
      await page.goto(`${ctx.server.url}${TINY}`);
      await waitForReady(page);
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await expect.poll(() => resultRows(page), { timeout: 150_000 }).toHaveLength(1);
      expect(await canvasHasInk(page, 'ts-ttft-chart canvas'), 'the charts fill in while the run goes on').toBe(true);
      await api(page, 'loseDevice()');
      const alert = page.getByRole('alert');
      await alert.waitFor({ timeout: 30_000 });
      expect(await alert.textContent()).toMatch(/This run failed: The GPU device was lost.*gathered before it stopped are kept/s);
      expect((await resultRows(page)).map((r) => r[0])).toEqual(['8']);
      await page.locator('#model').selectOption('file');
      await page.locator('ts-model-picker input[type=file]').setInputFiles(STORIES_GGUF!);
      await runAndWait(page);
      expect((await resultRows(page)).map((r) => r[0])).toEqual(['8', '16']);
      expect(await deepText(page, 'ts-run-facts')).toMatch(/293 K parameters, f32.*real weights/);
      // Real weights get the accuracy pass; in the page its CPU reference runs in a worker (the built chunk).
      expect(await deepText(page, 'ts-verdict-card')).toMatch(/KLD .*The pass took [\d.]+ s; the reference ran in a worker/s);
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(errors).toEqual([]);
      await page.close();
    },
  );

  /**
   * Two roofs-only runs, then a latency sweep on the tiny preset (roofs + engine), through the
   * automation API; the live-buffer count is checked after each, so one leaking run fails the test.
   */
  it('two roofs-only runs and a latency sweep leave the number of live GPU buffers where it started', async () => {
    const page = await ctx.browser.newPage();
    const errors = watchErrors(page);
    await trackGpuBuffers(page);
    await page.goto(ctx.server.url);
    await waitForReady(page);
    const roofs: BenchJob = {
      probe: true,
      probeMiB: 4,
      protocol: { warmup: 0, minReps: 1, maxReps: 1, minDurationMs: 0 },
      probeShapes: { bandwidthWorkgroups: [16, 64] },
    };
    const latency: BenchJob = { ...roofs, model: { preset: 'stories260k', quant: 'q4_0' }, latency: { promptLengths: [8], gen: 4, reps: 1, warmup: 0 } };
    // The count is checked after every run, so a buffer leaked per run shows from the first (and
    // one kept by a first run and leaked by the next, from the second).
    const jobs = [roofs, roofs, latency];
    const before = await liveGpuBuffers(page);
    const after = await page.evaluate(async (jobs) => {
      const w = window as unknown as { tokenscope: { runJob(j: unknown): Promise<unknown> }; __liveBuffers: () => number };
      const counts: number[] = [];
      for (const job of jobs) {
        await w.tokenscope.runJob(job);
        counts.push(w.__liveBuffers());
      }
      return counts;
    }, jobs);
    expect(after).toEqual(jobs.map(() => before));
    expect(await api<number>(page, 'runsStarted()')).toBe(jobs.length);
    expect(errors).toEqual([]);
    await page.close();
  });
});

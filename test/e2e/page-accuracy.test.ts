/**
 * The accuracy section on the page: a link with a measured section shows what the fast kernels cost
 * beside the verdict's speed figures; a skipped one says why, in the same place.
 */
import { describe, expect, it } from 'vitest';
import type { BenchResult } from '../../src/measure/schema.ts';
import { encodeReport } from '../../src/share/permalink.ts';
import { smallResult } from '../unit/share/fixtures.ts';
import { deepText, pageAndBrowser, waitForReady, watchErrors } from './browser.ts';

const MEASURED: NonNullable<BenchResult['accuracy']> = {
  reference: 'cpu-f32',
  sequence: { seed: 7, token_ids: [1, 300, 301, 302] },
  positions: 64,
  kld_mean: 9.39e-4,
  kld_p99: 3.79e-3,
  top1_agreement: 0.984375,
  first_disagreement: 26,
  kld_per_position: [1e-4, 2e-3],
  arithmetic: { linears: [{ format: 'q4_0', precision: 'int8', linears: 16 }], kv_cache: 'f16' },
  wall_ms: 949,
  reference_load_ms: 18,
  reference_ms: 125,
  engine_ms: 724,
};

describe('accuracy beside the verdict', () => {
  const ctx = pageAndBrowser();

  it.each([
    ['measured', MEASURED, /KLD 9\.39e-4.*the fast kernels \(q4_0 × int8; f16 KV\) cost in accuracy.*98\.4%.*position 26/s],
    ['skipped', { skipped: 'synthetic weights: speed only' }, /accuracy not measured: synthetic weights: speed only/],
  ] as const)('%s: the verdict card says it, from a link', async (_name, accuracy, expected) => {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    await page.goto(`${ctx.server.url}${await encodeReport({ ...smallResult(), accuracy })}`);
    await waitForReady(page);
    await expect.poll(() => deepText(page, 'ts-verdict-card'), { timeout: 20_000 }).toMatch(expected);
    expect(errors).toEqual([]);
    await page.close();
  });
});

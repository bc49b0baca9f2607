/**
 * One enormous number in a chart field used to freeze the tab for good: Chart.js's tick builder
 * loops forever on an axis near 1.5e308. A link and the same JSON as a file must leave the tab
 * answering, with the report saying what it did not draw.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { BenchResult } from '../../src/measure/schema.ts';
import { encodeFragment } from '../../src/share/codec.ts';
import { latencyOf, smallResult } from '../unit/share/fixtures.ts';
import { deepText, pageAndBrowser, watchErrors } from './browser.ts';

const HUGE = 1.7e308;

/** Resolves with `action`'s value, or rejects when the page does not answer within `ms`: a frozen tab. */
function answers<T>(action: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const frozen = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the tab did not answer within ${ms} ms (${what})`)), ms);
  });
  return Promise.race([action, frozen]).finally(() => clearTimeout(timer));
}

const cases: [string, (r: BenchResult) => void][] = [
  [
    'a token time',
    (r) => {
      const request = latencyOf(r).requests[0];
      request.token_ms[request.token_ms.length - 1] = HUGE;
    },
  ],
  [
    'a TTFT percentile',
    (r) => {
      latencyOf(r).rows[0].ttft.p50 = HUGE;
    },
  ],
  [
    'a depth-curve point',
    (r) => {
      latencyOf(r).depth_curve[0].tpot_ms = HUGE;
    },
  ],
];

/** Values that used to make a section vanish with an uncaught error rather than freeze the tab. */
const vanishing: [string, (r: BenchResult) => void][] = [
  [
    'a zero read roof',
    (r) => {
      r.ceilings!.read_bandwidth_gbps = 0;
    },
  ],
  [
    'an overflowing compute roof',
    (r) => {
      r.ceilings!.f32_gflops = 1e300;
    },
  ],
];

describe('extreme numbers in a report', () => {
  const ctx = pageAndBrowser();

  /** Waits for the report to say what it refused; every step must answer within seconds. */
  async function expectAnswersAndSaysWhy(page: Page): Promise<string> {
    let text = '';
    for (const started = Date.now(); Date.now() - started < 30_000;) {
      text = await answers(deepText(page, 'body'), 5_000, 'reading the page text');
      if (/could not be drawn|could not be opened/.test(text)) break;
      await answers(page.waitForTimeout(250), 5_000, 'waiting');
    }
    expect(
      await answers(
        page.evaluate(() => 1 + 1),
        5_000,
        'a trivial evaluate',
      ),
    ).toBe(2);
    // Either a chart says it was not drawn, or the result was refused with a message naming the value.
    expect(text).toMatch(/could not be drawn[^]*1\.7e\+308|could not be opened[^]*(1\.7e\+308|outside|implausible|range|must be ≤)/);
    return text;
  }

  for (const [name, poison] of vanishing) {
    it(`${name}: the report says what it could not show instead of dropping the section`, async () => {
      const result = smallResult();
      poison(result);
      const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = watchErrors(page);
      try {
        await answers(page.goto(`${ctx.server.url}${await encodeFragment('r', result)}`, { waitUntil: 'domcontentloaded' }), 30_000, 'loading the link');
        let text = '';
        for (const started = Date.now(); Date.now() - started < 20_000 && !/could not be (drawn|shown|opened)/.test(text);) {
          text = await answers(deepText(page, 'body'), 5_000, 'reading the page text');
        }
        expect(text).toMatch(/could not be (drawn|shown|opened)/);
        expect(errors.filter((e) => /pageerror/.test(e))).toEqual([]);
      } finally {
        await answers(page.close(), 5_000, 'closing the page').catch(() => {});
      }
    });
  }

  for (const [name, poison] of cases) {
    it(`${name} of 1.7e308, in a link and in a file: the tab answers and the report says what it refused`, async () => {
      const result = smallResult();
      poison(result);
      const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = watchErrors(page);
      try {
        await answers(page.goto(`${ctx.server.url}${await encodeFragment('r', result)}`, { waitUntil: 'domcontentloaded' }), 30_000, 'loading the link');
        await expectAnswersAndSaysWhy(page);

        await answers(page.goto(ctx.server.url, { waitUntil: 'domcontentloaded' }), 30_000, 'loading the page');
        await answers(
          page.locator('ts-share-bar input[type=file]').setInputFiles({
            name: 'extreme.json',
            mimeType: 'application/json',
            buffer: Buffer.from(JSON.stringify(result)),
          }),
          10_000,
          'importing the file',
        );
        await expectAnswersAndSaysWhy(page);
        expect(errors.filter((e) => /pageerror/.test(e))).toEqual([]);
      } finally {
        // A frozen tab may not close politely; do not let it hold the browser.
        await answers(page.close(), 5_000, 'closing the page').catch(() => {});
      }
    });
  }
});

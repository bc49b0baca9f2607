import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { BenchJob } from '../../src/jobs/job-spec.ts';
import type { LatencySection } from '../../src/measure/latency.ts';
import type { BenchResult } from '../../src/measure/schema.ts';
import { encodeFragment, toBase64Url } from '../../src/share/codec.ts';
import { decodeReport, encodeReport } from '../../src/share/permalink.ts';
import { validateResult } from '../../src/measure/validate.ts';
import { api, canvasHasInk, deepText, dropFile, pageAndBrowser, resultRows, waitForReady, watchCsp, watchErrors } from './browser.ts';

async function deflateRaw(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw'))).arrayBuffer());
}

const PAYLOADS = ['<script>window.__pwned=1</script>', '<img src=x onerror="window.__pwned=1">', '"><svg onload="window.__pwned=1">'];

/**
 * Every string of `r` prefixed with an HTML payload, except where the schema allows only fixed
 * words (units, enums, dates); `count` is how many strings carry one.
 */
function withPayloads(r: BenchResult): { hostile: BenchResult; count: number } {
  const doc = structuredClone({ ...r, notes: ['a note'] }) as unknown as Record<string, unknown>;
  let n = 0;
  let count = 0;
  const walk = (o: Record<string, unknown> | unknown[]) => {
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === 'string') {
        (o as Record<string, unknown>)[k] = `${PAYLOADS[n++ % PAYLOADS.length]} ${v}`;
        try {
          validateResult(structuredClone(doc));
          count++;
        } catch {
          (o as Record<string, unknown>)[k] = v;
        }
      } else if (v && typeof v === 'object') walk(v as Record<string, unknown>);
    }
  };
  walk(doc);
  return { hostile: validateResult(doc), count };
}

/** A tiny sweep with a profile, so the result has every section the report draws. */
const JOB: BenchJob = {
  probe: true,
  probeMiB: 4,
  protocol: { warmup: 0, minReps: 1, maxReps: 1, minDurationMs: 0 },
  probeShapes: { bandwidthWorkgroups: [16, 64] },
  model: { preset: 'stories260k', quant: 'q4_0' },
  latency: { promptLengths: [8], gen: 4, reps: 2, warmup: 0, profile: true },
};

describe('links, comparisons and hostile input', () => {
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

  /** A fresh page at `hash`, with error, CSP and payload watchers. */
  async function open(hash: string, viewport = { width: 1280, height: 900 }): Promise<{ page: Page; errors: string[]; csp: () => Promise<string[]> }> {
    const page = await ctx.browser.newPage({ viewport });
    const errors = watchErrors(page);
    const csp = await watchCsp(page);
    await page.goto(`${ctx.server.url}${hash}`);
    await waitForReady(page);
    return { page, errors, csp };
  }

  async function expectInert(page: Page, errors: string[], csp: () => Promise<string[]>): Promise<void> {
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    const injected = await page.evaluate(() => {
      let found = 0;
      const walk = (root: Document | ShadowRoot) => {
        found += root.querySelectorAll('script:not([src]), img, svg[onload]').length;
        root.querySelectorAll('*').forEach((el) => el.shadowRoot && walk(el.shadowRoot));
      };
      walk(document);
      return found;
    });
    expect(injected, 'no element made from a payload').toBe(0);
    expect(errors).toEqual([]);
    expect(await csp()).toEqual([]);
    expect(await api<number>(page, 'runsStarted()')).toBe(0);
    expect(await page.locator('button.run').isEnabled(), 'the page stays usable').toBe(true);
  }

  it('a trimmed link says so in the report, and the charts that need raw samples say why they are empty', async () => {
    const l = result.latency as LatencySection;
    // 200 requests with distinct timings: far more than a link holds.
    const requests = Array.from({ length: 200 }, (_, i) => ({
      ...l.requests[i % l.requests.length],
      token_ms: l.requests[0].token_ms.map((t, k) => t + ((i * 7919 + k * 104729) % 1000) / 997),
    }));
    const fragment = await encodeReport({ ...result, latency: { ...l, requests } });
    expect((await decodeReport(fragment)).trimmed).toBe(true);
    const { page, errors, csp } = await open(fragment);
    await expect.poll(() => resultRows(page), { timeout: 20_000 }).toHaveLength(1);
    const text = await deepText(page, 'ts-report');
    expect(text).toMatch(/trimmed for the link/);
    expect(await deepText(page, 'ts-cdf-chart')).toMatch(/left out of the link/);
    expect(await canvasHasInk(page, 'ts-ttft-chart canvas')).toBe(true);
    await expectInert(page, errors, csp);
    await page.close();
  });

  it('the TTFT chart labels each measured prompt length, on its logarithmic axis too', async () => {
    // Lengths 4× apart draw a logarithmic x axis, whose default labels skip values like 16 or 64.
    const l = result.latency as LatencySection;
    const rows = [8, 64].map((prompt_tokens) => ({ ...l.rows[0], prompt_tokens }));
    const { page, errors, csp } = await open(await encodeReport({ ...result, latency: { ...l, rows } }));
    const labels = () =>
      page
        .locator('ts-ttft-chart')
        .first()
        .evaluate((el) => {
          const chart = (el as unknown as { chart?: { scales: Record<string, { type: string; ticks: { label: unknown }[] }> } }).chart;
          return chart ? { type: chart.scales.x.type, labels: chart.scales.x.ticks.map((t) => String(t.label)) } : null;
        });
    await expect.poll(labels, { timeout: 20_000 }).toEqual({ type: 'logarithmic', labels: ['8', '64'] });
    await expectInert(page, errors, csp);
    await page.close();
  });

  it('two links side by side with ratios, and the comparison as its own #c= link', async () => {
    // A steady run (its TTFT repetitions within ±10% of the median: two on a loaded SwiftShader can differ 5×) and one
    // 4× faster whose whole spread moved, not only its median (else the comparison rightly reads "within noise").
    const steady = structuredClone(result);
    const st = (steady.latency as LatencySection).rows[0].ttft;
    Object.assign(st, { min: st.p50 * 0.9, max: st.p50 * 1.1 });
    const faster = structuredClone(steady);
    faster.ceilings!.read_bandwidth_gbps *= 2;
    const m = faster.ceilings!.measurements.read_bandwidth_gbps!;
    Object.assign(m, { value: m.value * 2, min: m.min * 2, max: m.max * 2 });
    const ttft = (faster.latency as LatencySection).rows[0].ttft;
    for (const k of ['mean', 'std', 'min', 'p50', 'p90', 'p95', 'p99', 'max'] as const) ttft[k] /= 4;
    const { page, errors, csp } = await open('');
    for (const r of [steady, faster]) {
      await page.locator('#paste-link').fill(`${ctx.server.url}${await encodeReport(r)}`);
      await page.getByRole('button', { name: 'Add', exact: true }).click();
    }
    await page.getByRole('button', { name: 'Compare A and B' }).click();
    const compared = async (p: Page) => deepText(p, 'ts-compare-view');
    await expect.poll(() => compared(page)).toMatch(/streaming read bandwidth.*×2\.00 B/);
    expect(await compared(page)).toMatch(/median TTFT.*×0\.250 B|median TTFT.*×0\.25 B/);
    await page.getByRole('button', { name: 'Share comparison link' }).click();
    const link = await page.locator('ts-compare-view input[readonly]').inputValue();
    expect(link).toMatch(/#c=[A-Za-z0-9_-]+$/);
    await expectInert(page, errors, csp);
    await page.close();

    const fresh = await open(new URL(link).hash);
    await expect.poll(() => compared(fresh.page), { timeout: 20_000 }).toMatch(/streaming read bandwidth.*×2\.00 B/);
    expect(await compared(fresh.page)).toContain('Compared report A');
    await expectInert(fresh.page, fresh.errors, fresh.csp);
    await fresh.page.close();
  });

  it('HTML in every string of a link or a file is shown as text and never runs', async () => {
    const { hostile, count } = withPayloads(result);
    expect(count).toBeGreaterThan(30);
    // Which payload lands where depends on the order of the result's strings; the model's name carries one.
    expect(PAYLOADS.some((p) => (hostile.model as { name: string }).name.startsWith(p))).toBe(true);
    const { page, errors, csp } = await open(await encodeReport(hostile));
    await expect.poll(() => deepText(page, 'ts-report'), { timeout: 20_000 }).toContain('<script>window.__pwned=1</script>');
    expect(await deepText(page, 'ts-report')).toContain('<img src=x onerror="window.__pwned=1">');
    await expectInert(page, errors, csp);
    await dropFile(page, 'hostile.json', JSON.stringify(hostile));
    await expect.poll(() => deepText(page, '#shown')).toMatch(/File hostile\.json/);
    await expectInert(page, errors, csp);
    await page.close();
  });

  const bomb = async () => `#r=${toBase64Url(await deflateRaw(new Uint8Array(16 * 1024 * 1024).fill(32)))}`;
  const cases: [string, () => Promise<string>, RegExp][] = [
    ['bad base64', async () => '#r=@@not*base64!!', /characters that base64url does not use/],
    ['a cut-off link', async () => (await encodeReport(result)).slice(0, 801), /impossible length|not valid deflate/],
    ['a decompression bomb', bomb, /expands to more than/],
    ['not JSON', async () => `#r=${toBase64Url(await deflateRaw(new TextEncoder().encode('{"schema_version": 1, <b>')))}`, /not valid JSON/],
    ['a wrong schema version', () => encodeFragment('r', { ...result, schema_version: 99 }), /schema version 99/],
    [
      'a wrong field type',
      () => encodeFragment('r', { ...result, ceilings: { ...result.ceilings, read_bandwidth_gbps: '<img src=x onerror=alert(1)>' } }),
      /read_bandwidth_gbps must be a finite number/,
    ],
    [
      'a comparison with a broken side',
      () => encodeFragment('c', { a: result, b: { ...result, environment: null } }),
      /second result.*environment must be an object/,
    ],
  ];
  it.each(cases)('%s: a clear message, and the page stays usable', async (_name, make, message) => {
    const { page, errors, csp } = await open(await make());
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 20_000 });
    expect(await alert.textContent()).toMatch(/could not be opened/);
    expect(await alert.textContent()).toMatch(message);
    expect(await resultRows(page)).toEqual([]);
    await expectInert(page, errors, csp);
    await page.getByRole('button', { name: 'Dismiss' }).click();
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.close();
  });

  it('a file that is not a tokenscope result: a clear message', async () => {
    const { page, errors, csp } = await open('');
    await page
      .locator('ts-share-bar input[type=file]')
      .setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]') });
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/notes\.json.*could not be opened.*deeper than/);
    await expectInert(page, errors, csp);
    await page.close();
  });
});

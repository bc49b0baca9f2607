/**
 * What a chart may be given. Chart.js's tick builder loops forever when an axis spans a range
 * near the largest double (a value ≥ ~1.5e308 from a hostile link froze the tab for good), and
 * draws nothing useful for NaN or ±Infinity. Every chart's data passes through `chartRefusal`
 * before it reaches Chart.js; a refused chart says why in its place.
 */
import type { ChartConfiguration } from 'chart.js';

/**
 * The largest magnitude a chart draws: far above anything the page plots (milliseconds, tokens,
 * GB/s, GFLOP/s, FLOP/byte are all below 1e9 on any device) and far below where Chart.js breaks.
 */
export const CHART_MAX_MAGNITUDE = 1e12;

/** Why this configuration must not be drawn, naming the first value out of range; undefined when it is safe. */
export function chartRefusal(config: ChartConfiguration): string | undefined {
  const datasets = (config.data?.datasets ?? []) as { label?: unknown; data?: unknown }[];
  for (const [d, dataset] of datasets.entries()) {
    const data = Array.isArray(dataset.data) ? dataset.data : [];
    for (let i = 0; i < data.length; i++) {
      const bad = firstBadNumber(data[i]);
      if (bad !== undefined) {
        const series = typeof dataset.label === 'string' && dataset.label ? `'${dataset.label}'` : `series ${d + 1}`;
        return `${series} has the value ${bad.value} at point ${i + 1}${bad.key ? ` (${bad.key})` : ''}, outside what a chart can draw (±${CHART_MAX_MAGNITUDE.toExponential()})`;
      }
    }
  }
  const scales = (config.options?.scales ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [axis, scale] of Object.entries(scales)) {
    for (const key of ['min', 'max', 'suggestedMin', 'suggestedMax'] as const) {
      const v = scale?.[key];
      if (typeof v === 'number' && !drawable(v)) return `the ${axis} axis ${key} is ${v}, outside what a chart can draw`;
    }
  }
  return undefined;
}

function drawable(v: number): boolean {
  return Number.isFinite(v) && Math.abs(v) <= CHART_MAX_MAGNITUDE;
}

/** Chart.js points are numbers, null (a gap), [low, high] bars or objects with x / y (and extras). */
function firstBadNumber(point: unknown): { value: number; key?: string } | undefined {
  if (typeof point === 'number') return drawable(point) ? undefined : { value: point };
  if (Array.isArray(point)) {
    const bad = point.find((v) => typeof v === 'number' && !drawable(v));
    return bad === undefined ? undefined : { value: bad as number };
  }
  if (point && typeof point === 'object') {
    for (const key of ['x', 'y', 'r'] as const) {
      const v = (point as Record<string, unknown>)[key];
      if (typeof v === 'number' && !drawable(v)) return { value: v, key };
    }
  }
  return undefined;
}

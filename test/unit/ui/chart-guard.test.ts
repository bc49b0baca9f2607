import { describe, expect, it } from 'vitest';
import type { ChartConfiguration } from 'chart.js';
import { chartRefusal } from '../../../src/ui/chart-guard.ts';

const config = (data: unknown[], scales: Record<string, unknown> = {}) =>
  ({
    type: 'scatter',
    data: {
      datasets: [
        { label: 'ok', data: [{ x: 1, y: 2 }] },
        { label: 'TTFT p50', data },
      ],
    },
    options: { scales },
  }) as unknown as ChartConfiguration;

describe('chartRefusal', () => {
  it('passes ordinary data, gaps and bars', () => {
    expect(chartRefusal(config([{ x: 1e9, y: -3 }, null, 5, [1, 2]]))).toBeUndefined();
  });

  it.each([
    ['a huge y', [{ x: 1, y: 1.7e308 }], /'TTFT p50' has the value 1\.7e\+308 at point 1 \(y\)/],
    ['NaN', [1, NaN], /'TTFT p50' has the value NaN at point 2/],
    ['Infinity in a bar', [[0, Infinity]], /value Infinity at point 1/],
    ['just past the limit', [{ x: 1.01e12, y: 1 }], /value 1010000000000 at point 1 \(x\)/],
  ])('refuses %s, naming the series and the point', (_name, data, message) => {
    expect(chartRefusal(config(data))).toMatch(message);
  });

  it('refuses an axis bound out of range', () => {
    expect(chartRefusal(config([1], { y: { max: -Infinity } }))).toMatch(/the y axis max is -Infinity/);
  });
});

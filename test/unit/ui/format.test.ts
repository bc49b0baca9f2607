import { describe, expect, it } from 'vitest';
import { linkPrecision } from '../../../src/share/codec.ts';
import { fixed, num, pct, precision, ratio } from '../../../src/ui/format.ts';

/** Energy per token from round inputs and a 0.1 ms clock: exact decimal ties, each with its own float residue. */
const ties = (): number[] => {
  const out: number[] = [];
  for (let tokens = 1; tokens <= 40; tokens++) for (let tenthsMs = 1000; tenthsMs < 3000; tenthsMs += 7) out.push(300 / (tokens / (tenthsMs / 1e4)));
  return out;
};

describe('figures print the same live and from a link', () => {
  it('an exact tie rounds one way, not by its float residue', () => {
    const x = 300 / (2 / 0.1001); // 15.015 J, held as 15.014999999999999
    expect(x.toFixed(2)).toBe('15.01');
    expect(fixed(x, 2)).toBe('15.02');
    expect(fixed(linkPrecision(x), 2)).toBe('15.02');
  });

  it('every formatter gives a figure and its nine-digit link copy the same text', () => {
    const values = ties();
    const flips = values.filter((x) => x.toFixed(2) !== linkPrecision(x).toFixed(2));
    expect(flips.length, 'the sweep holds ties that plain toFixed splits').toBeGreaterThan(10);
    for (const x of values) {
      const y = linkPrecision(x);
      expect(num(y)).toBe(num(x));
      expect(pct(linkPrecision(x / 100))).toBe(pct(x / 100));
      expect(ratio(y)).toBe(ratio(x));
      expect(fixed(y, 2)).toBe(fixed(x, 2));
      expect(precision(y, 3)).toBe(precision(x, 3));
    }
  });

  it('keeps its shapes', () => {
    expect([num(1234), num(12.34), num(1.234), num(0.01234), num(0), num(null), num(NaN)]).toEqual(['1234', '12.3', '1.23', '0.0123', '0.00', '—', '—']);
    expect([pct(0.1234), pct(undefined), ratio(1.5), ratio(150), ratio(null)]).toEqual(['12.3%', '—', '×1.50', '×150', '—']);
  });
});

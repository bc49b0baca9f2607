import { describe, expect, it } from 'vitest';
import { progressPrinter } from '../../../cli/progress.ts';

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 60, write: (t: string) => writes.push(t) } };
}

describe('progress in a log (not a TTY)', () => {
  it('prints one line per step, never a consecutive duplicate, never a falling percentage', () => {
    const { writes, stream } = fakeStream(false);
    const p = progressPrinter(stream);
    const steps: [string, number][] = [
      ['model: reading header', 0.01],
      ['roofs: streaming read', 0.05],
      ['roofs: streaming read', 0.1],
      ['roofs: streaming read', 0.2],
      ['roofs: copy kernel', 0.3],
      ['model: uploading weights', 0.2], // a later phase reporting a lower fraction
      ['model: uploading weights', 0.21],
      ['model: uploading weights', 0.22],
      ['latency: prompt 16 1/3', 0.25],
      ['latency: prompt 16 2/3', 0.6],
      ['latency: prompt 16 2/3', 0.6],
      ['latency: prompt 16 3/3', 0.55],
      ['done', Number.NaN],
    ];
    for (const [s, f] of steps) p(s, f);
    expect(writes.every((w) => w.endsWith('\n') && !w.includes('\r'))).toBe(true);
    const lines = writes.map((w) => w.trimEnd());
    expect(lines).toEqual([
      '[  1%] model: reading header',
      '[  5%] roofs: streaming read',
      '[ 30%] roofs: copy kernel',
      '[ 30%] model: uploading weights',
      '[ 30%] latency: prompt 16 1/3',
      '[ 60%] latency: prompt 16 2/3',
      '[ 60%] latency: prompt 16 3/3',
      '[ 60%] done',
    ]);
    const percents = lines.map((l) => Number(/\[\s*(\d+)%\]/.exec(l)![1]));
    for (let i = 1; i < percents.length; i++) expect(percents[i]).toBeGreaterThanOrEqual(percents[i - 1]);
    for (let i = 1; i < lines.length; i++) expect(lines[i]).not.toBe(lines[i - 1]);
    p.clear();
    expect(writes).toHaveLength(lines.length);
  });
});

describe('progress on a TTY', () => {
  it('rewrites one line with the elapsed time and what is left, cut to the width, and clears it', () => {
    const { writes, stream } = fakeStream(true);
    let t = 0;
    const p = progressPrinter(stream, () => t);
    t = 10_000;
    p('roofs: streaming read', 0.5);
    t = 12_000;
    p('roofs: streaming read', 0.4);
    p('latency: a step with a very long name that does not fit in sixty columns at all', 0.6);
    expect(writes[0]).toBe('\r\x1b[K[ 50%] roofs: streaming read (10 s, ~10 s left)');
    expect(writes[1]).toBe('\r\x1b[K[ 50%] roofs: streaming read (12 s, ~12 s left)');
    expect(writes[2].length).toBeLessThanOrEqual('\r\x1b[K'.length + 59);
    expect(writes[2].endsWith('…')).toBe(true);
    expect(writes.some((w) => w.includes('\n'))).toBe(false);
    p.clear();
    expect(writes.at(-1)).toBe('\r\x1b[K');
  });
});

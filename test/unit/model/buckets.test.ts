import { describe, expect, it } from 'vitest';
import { bucketOf, buckets, LruCache } from '../../../src/model/buckets.ts';

describe('row buckets', () => {
  it('are powers of two below the maximum, then the maximum', () => {
    expect(buckets(1)).toEqual([1]);
    expect(buckets(16)).toEqual([1, 2, 4, 8, 16]);
    expect(buckets(24)).toEqual([1, 2, 4, 8, 16, 24]);
    expect(buckets(3, 0)).toEqual([0, 1, 2, 3]);
  });

  it('round every size up to the smallest bucket that holds it', () => {
    for (const max of [1, 3, 16, 24, 100]) {
      const all = buckets(max, 0);
      for (let n = 0; n <= max; n++) {
        const b = bucketOf(n, max);
        expect(all).toContain(b);
        expect(b).toBeGreaterThanOrEqual(n);
        expect(all.filter((x) => x >= n)[0]).toBe(b);
      }
    }
    expect(() => bucketOf(17, 16)).toThrow(RangeError);
  });
});

describe('LruCache', () => {
  it('keeps the most recently used entries and hands each dropped one to drop, once', async () => {
    const dropped: string[] = [];
    const cache = new LruCache<string>(2, (v) => dropped.push(v));
    let builds = 0;
    const get = (k: string) => cache.get(k, async () => (builds++, k));
    await get('a');
    await get('b');
    await get('a'); // a is now the most recent
    await get('c'); // drops b
    await Promise.resolve();
    expect(dropped).toEqual(['b']);
    expect(cache.has('a') && cache.has('c') && !cache.has('b')).toBe(true);
    expect(builds).toBe(3);
    expect(await get('b')).toBe('b'); // rebuilt, drops a
    await Promise.resolve();
    expect(dropped).toEqual(['b', 'a']);
    expect((await cache.clear()).sort()).toEqual(['b', 'c']);
    expect(cache.size).toBe(0);
  });

  it('forgets a failed build so the next request retries it', async () => {
    const cache = new LruCache<number>(4, () => undefined);
    await expect(cache.get('x', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await Promise.resolve();
    expect(cache.has('x')).toBe(false);
    expect(await cache.get('x', async () => 1)).toBe(1);
  });
});

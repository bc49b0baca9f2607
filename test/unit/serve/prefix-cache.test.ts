import { describe, expect, it } from 'vitest';
import { BLOCK_TOKENS, blockKey, blockKeys, PrefixCache, ROOT_KEY } from '../../../src/serve/prefix-cache.ts';

/** A block of 16 token ids starting at `first`. */
const block = (first: number) => Array.from({ length: BLOCK_TOKENS }, (_, i) => first + i);

describe('block keys', () => {
  it('chain each block to its prefix: the same block after a different prefix has a different key', () => {
    const a = block(0);
    const b = block(100);
    expect(blockKey(ROOT_KEY, a)).toBe(blockKey(ROOT_KEY, [...a]));
    expect(blockKey(ROOT_KEY, b)).not.toBe(blockKey(blockKey(ROOT_KEY, a), b));
    expect(blockKeys([...a, ...b, 7, 8])).toEqual([blockKey(ROOT_KEY, a), blockKey(blockKey(ROOT_KEY, a), b)]);
    // One token changed changes the key; only full blocks have keys.
    expect(blockKey(ROOT_KEY, [...a.slice(0, 15), 999])).not.toBe(blockKey(ROOT_KEY, a));
    expect(blockKeys(a.slice(0, 15))).toEqual([]);
  });
});

describe('PrefixCache', () => {
  /** Cache the full blocks of `tokens` in order, as the engine does; the pool indices it got. */
  const fill = (cache: PrefixCache, tokens: number[]) => {
    let parent = ROOT_KEY;
    const indices: (number | null)[] = [];
    for (let s = 0; s + BLOCK_TOKENS <= tokens.length; s += BLOCK_TOKENS) {
      const got = cache.insert(parent, tokens.slice(s, s + BLOCK_TOKENS));
      indices.push(got?.fresh ? got.block.index : null);
      parent = got ? got.block.key : blockKey(parent, tokens.slice(s, s + BLOCK_TOKENS));
    }
    return indices;
  };

  it('matches the longest cached chain of full blocks: a full hit, a partial hit, a miss', () => {
    const cache = new PrefixCache(8);
    expect(fill(cache, [...block(0), ...block(16), ...block(32)])).toEqual([0, 1, 2]);
    expect(cache.match([...block(0), ...block(16), ...block(32), 5]).map((b) => b.index)).toEqual([0, 1, 2]);
    // Shares the first block only.
    expect(cache.match([...block(0), ...block(500), ...block(32)]).map((b) => b.index)).toEqual([0]);
    // The second block alone is not a prefix: no hit.
    expect(cache.match([...block(16), ...block(32)])).toEqual([]);
    // A partial last block is never matched, and maxBlocks caps the hit.
    expect(cache.match([...block(0), ...block(16).slice(0, 15)]).length).toBe(1);
    expect(cache.match([...block(0), ...block(16), ...block(32)], 2).length).toBe(2);
    // Caching the same prefix again copies nothing.
    expect(fill(cache, [...block(0), ...block(16)])).toEqual([null, null]);
    expect(cache.stats).toEqual({ blocks: 3, evictions: 0, inserted: 3, refused: 0 });
  });

  it('evicts the least recently used unreferenced block when full', () => {
    const cache = new PrefixCache(2);
    fill(cache, block(0)); // index 0
    fill(cache, block(100)); // index 1
    cache.match(block(0)); // a lookup alone does not count as a use
    cache.acquire(cache.match(block(0))); // block(0) is now the most recent
    cache.release(cache.match(block(0)));
    expect(fill(cache, block(200))).toEqual([1]); // block(100) was the least recently used
    expect(cache.match(block(100))).toEqual([]);
    expect(cache.match(block(0)).length).toBe(1);
    expect(cache.stats.evictions).toBe(1);
  });

  it('never evicts a referenced block: with every block in use a new one is not cached', () => {
    const cache = new PrefixCache(2);
    fill(cache, [...block(0), ...block(16)]);
    const held = cache.match([...block(0), ...block(16)]);
    cache.acquire(held);
    expect(fill(cache, block(300))).toEqual([null]);
    expect(cache.stats).toMatchObject({ blocks: 2, refused: 1, evictions: 0 });
    cache.release(held.slice(1));
    // Now the second block may go (the first is still held).
    expect(fill(cache, block(300))).toEqual([1]);
    expect(cache.match([...block(0), ...block(16)]).length).toBe(1);
    expect(() => cache.release(held.slice(1))).toThrow(/released more often/);
  });

  it('forgets a block whose copy never ran, and refuses blocks of the wrong size or an empty pool', () => {
    const cache = new PrefixCache(1);
    const got = cache.insert(ROOT_KEY, block(0));
    cache.drop(got!.block);
    expect(cache.match(block(0))).toEqual([]);
    expect(cache.stats).toMatchObject({ blocks: 0, inserted: 0 });
    expect(cache.insert(ROOT_KEY, block(0))?.block.index).toBe(0);
    expect(() => cache.insert(ROOT_KEY, [1, 2, 3])).toThrow(/16 tokens/);
    expect(() => new PrefixCache(0)).toThrow(/≥ 1 block/);
  });
});

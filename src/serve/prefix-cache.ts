/**
 * The index of automatic prefix caching, as vLLM keeps it: a sequence's tokens in blocks of
 * {@link BLOCK_TOKENS}; each full block keyed by the hash of its tokens chained with its prefix's
 * key, so one key names one whole prefix. A cached block lives at an index of a fixed pool
 * (the engine holds its K and V there); it is reference-counted while sequences that hit it run,
 * and evicted least recently used when the pool is full and a new block needs room. Blocks in use
 * are never evicted: when every block is in use, a new block is simply not cached.
 *
 * Pure bookkeeping: the engine copies the bytes (gpu-engine.ts).
 */

/** Tokens per block (vLLM's default block size). */
export const BLOCK_TOKENS = 16;

/** The key of the empty prefix, the parent of every first block. */
export const ROOT_KEY = '';

export interface CachedBlock {
  /** Chained hash of the prefix up to and including this block. */
  key: string;
  parent: string;
  tokens: readonly number[];
  /** Where its K and V live in the engine's pool. */
  index: number;
  /** Running sequences holding it. */
  refs: number;
}

/**
 * The chained key of a block: a 64-bit FNV-1a over the parent's key and the block's token ids (two
 * 32-bit lanes), as 16 hex digits. A lookup also compares the parent key and the tokens, so a
 * collision is a miss, never a wrong hit.
 */
export function blockKey(parent: string, tokens: readonly number[]): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  const mix = (x: number) => {
    for (let k = 0; k < 4; k++) {
      const byte = (x >>> (8 * k)) & 0xff;
      a = Math.imul(a ^ byte, 0x01000193);
      b = Math.imul(b ^ byte, 0x0100019b) ^ (a >>> 15);
    }
  };
  for (let i = 0; i < parent.length; i++) mix(parent.charCodeAt(i));
  mix(0xffffffff); // the separator between the parent and the tokens
  for (const t of tokens) mix(t);
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** The keys of the full blocks of `tokens`, in order. */
export function blockKeys(tokens: readonly number[]): string[] {
  const keys: string[] = [];
  let parent = ROOT_KEY;
  for (let start = 0; start + BLOCK_TOKENS <= tokens.length; start += BLOCK_TOKENS) {
    parent = blockKey(parent, tokens.slice(start, start + BLOCK_TOKENS));
    keys.push(parent);
  }
  return keys;
}

export interface PrefixCacheStats {
  /** Blocks held now. */
  blocks: number;
  /** Blocks evicted to make room. */
  evictions: number;
  /** Blocks inserted. */
  inserted: number;
  /** New blocks not cached because every block of the pool was in use. */
  refused: number;
}

export class PrefixCache {
  /** By key, least recently used first (a use moves a block to the end). */
  private readonly byKey = new Map<string, CachedBlock>();
  private readonly freeIndices: number[];
  private evictions = 0;
  private inserted = 0;
  private refused = 0;

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) throw new RangeError(`A prefix cache holds ≥ 1 block, not ${capacity}.`);
    this.freeIndices = Array.from({ length: capacity }, (_, i) => capacity - 1 - i);
  }

  /**
   * The cached blocks `tokens` starts with (the longest chain, each block full), at most `maxBlocks`.
   * Does not take references; {@link acquire} does.
   */
  match(tokens: readonly number[], maxBlocks = Infinity): CachedBlock[] {
    const found: CachedBlock[] = [];
    let parent = ROOT_KEY;
    for (let start = 0; start + BLOCK_TOKENS <= tokens.length && found.length < maxBlocks; start += BLOCK_TOKENS) {
      const block = this.lookup(parent, tokens.slice(start, start + BLOCK_TOKENS));
      if (!block) break;
      found.push(block);
      parent = block.key;
    }
    return found;
  }

  /** The block of `tokens` after the prefix keyed `parent`, if cached. */
  lookup(parent: string, tokens: readonly number[]): CachedBlock | undefined {
    const block = this.byKey.get(blockKey(parent, tokens));
    if (!block || block.parent !== parent || block.tokens.length !== tokens.length || block.tokens.some((t, i) => t !== tokens[i])) return undefined;
    return block;
  }

  /** Take a reference on each block (a sequence will read them) and mark them used. */
  acquire(blocks: readonly CachedBlock[]): void {
    for (const b of blocks) {
      b.refs++;
      this.touch(b);
    }
  }

  /** Drop a reference on each block; a block nobody holds becomes evictable. */
  release(blocks: readonly CachedBlock[]): void {
    for (const b of blocks) {
      if (b.refs <= 0) throw new RangeError(`Block ${b.key} released more often than acquired.`);
      b.refs--;
    }
  }

  /**
   * Cache the block of `tokens` after the prefix keyed `parent`: the new block (its index is where
   * the caller copies its K and V), the block already cached under that key (marked used; nothing
   * to copy, `fresh` false), or null when every block of the pool is in use.
   */
  insert(parent: string, tokens: readonly number[]): { block: CachedBlock; fresh: boolean } | null {
    if (tokens.length !== BLOCK_TOKENS) throw new RangeError(`A block holds ${BLOCK_TOKENS} tokens, not ${tokens.length}.`);
    const existing = this.lookup(parent, tokens);
    if (existing) {
      this.touch(existing);
      return { block: existing, fresh: false };
    }
    const key = blockKey(parent, tokens);
    let index = this.freeIndices.pop();
    if (index === undefined) {
      const victim = [...this.byKey.values()].find((b) => b.refs === 0);
      if (!victim) {
        this.refused++;
        return null;
      }
      this.byKey.delete(victim.key);
      this.evictions++;
      index = victim.index;
    }
    // A colliding key (different parent or tokens) is replaced only when nobody holds it.
    const clash = this.byKey.get(key);
    if (clash) {
      if (clash.refs > 0) {
        this.freeIndices.push(index);
        this.refused++;
        return null;
      }
      this.byKey.delete(key);
      this.freeIndices.push(clash.index);
    }
    const block: CachedBlock = { key, parent, tokens: [...tokens], index, refs: 0 };
    this.byKey.set(key, block);
    this.inserted++;
    return { block, fresh: true };
  }

  /** Forget a block (its bytes were never written: the step that was to copy them failed). */
  drop(block: CachedBlock): void {
    if (this.byKey.get(block.key) !== block) return;
    this.byKey.delete(block.key);
    this.freeIndices.push(block.index);
    this.inserted--;
  }

  get stats(): PrefixCacheStats {
    return { blocks: this.byKey.size, evictions: this.evictions, inserted: this.inserted, refused: this.refused };
  }

  private touch(b: CachedBlock): void {
    this.byKey.delete(b.key);
    this.byKey.set(b.key, b);
  }
}

/**
 * Pairwise merging of adjacent symbols, shared by both tokenizers as llama.cpp does it: a queue of
 * candidate pairs (a heap) over a linked list of symbols, so a word of n symbols merges in
 * O(n log n) — rescanning every pair after each merge was quadratic (a 131 KB prompt took 12 s).
 */

/**
 * Merges adjacent symbols, in place, while any adjacent pair has a priority: always the pair with
 * the smallest priority, the leftmost on ties. Returns the symbols left, in order.
 */
export function mergeSymbols(symbols: string[], priority: (left: string, right: string) => number | undefined): string[] {
  const n = symbols.length;
  if (n < 2) return symbols;
  const prev = new Int32Array(n).map((_, i) => i - 1); // -1: none
  const next = new Int32Array(n).map((_, i) => (i + 1 < n ? i + 1 : -1));
  const heap = new MergeHeap();
  const offer = (left: number) => {
    if (left < 0 || next[left] < 0) return;
    const key = priority(symbols[left], symbols[next[left]]);
    if (key !== undefined) heap.push(key, left);
  };
  for (let i = 0; i + 1 < n; i++) offer(i);
  while (heap.pop()) {
    const left = heap.at;
    const right = next[left];
    // An entry is stale once either symbol has merged since; the pair now at `left` is checked afresh.
    if (symbols[left] === '' || right < 0 || priority(symbols[left], symbols[right]) !== heap.key) continue;
    symbols[left] += symbols[right];
    symbols[right] = '';
    next[left] = next[right];
    if (next[right] >= 0) prev[next[right]] = left;
    offer(prev[left]);
    offer(left);
  }
  const out: string[] = [];
  for (let i = 0; i >= 0; i = next[i]) out.push(symbols[i]);
  return out;
}

/**
 * A binary min-heap of (key, at) pairs, ordered by key, then by `at`: the candidate merges (key:
 * a BPE rank, or a SentencePiece score negated; at: the left symbol's index). Two number arrays,
 * no object per entry, so a million candidates cost tens of megabytes.
 */
export class MergeHeap {
  private readonly keys: number[] = [];
  private readonly ats: number[] = [];
  /** The entry the last `pop()` took. */
  key = 0;
  at = 0;

  get size(): number {
    return this.keys.length;
  }

  push(key: number, at: number): void {
    const { keys, ats } = this;
    let i = keys.length;
    keys.push(key);
    ats.push(at);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(key, at, keys[parent], ats[parent])) break;
      keys[i] = keys[parent];
      ats[i] = ats[parent];
      i = parent;
    }
    keys[i] = key;
    ats[i] = at;
  }

  /** Takes the smallest entry into `key` and `at`; false when the heap is empty. */
  pop(): boolean {
    const { keys, ats } = this;
    if (keys.length === 0) return false;
    this.key = keys[0];
    this.at = ats[0];
    const lastKey = keys.pop()!;
    const lastAt = ats.pop()!;
    const n = keys.length;
    if (n === 0) return true;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.before(keys[child + 1], ats[child + 1], keys[child], ats[child])) child++;
      if (!this.before(keys[child], ats[child], lastKey, lastAt)) break;
      keys[i] = keys[child];
      ats[i] = ats[child];
      i = child;
    }
    keys[i] = lastKey;
    ats[i] = lastAt;
    return true;
  }

  private before(key: number, at: number, otherKey: number, otherAt: number): boolean {
    return key < otherKey || (key === otherKey && at < otherAt);
  }
}

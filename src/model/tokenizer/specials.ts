/**
 * Special tokens cut out of text before it is tokenized, as llama.cpp's tokenizer_st_partition
 * does: control, unknown and user-defined tokens, longest text first, each splitting every
 * remaining text fragment at all its occurrences (leftmost first, not overlapping). Without
 * `parseSpecial` (a prompt's literal text) control and unknown tokens are left as text, but
 * user-defined ones are still cut out.
 *
 * llama.cpp searches every fragment for every token in turn: with Gemma 3's 6,414 special tokens
 * that took 3 s for 1 MB of text. Here one pass over the text with a trie finds every occurrence
 * of every token; the occurrences, taken token by token in the same order, are kept where they
 * overlap none kept before — the same cuts. Where tokens nest (many occurrences per character),
 * the tokens present cut in turn, as llama.cpp does.
 */
import { TokenType } from './types.ts';
import { utf8Encoder, type Vocabulary } from './vocab.ts';

/** Text still to be tokenized, or the id of a special token found whole. */
export type Fragment = string | number;

/** A trie over UTF-16 code units; `ends` lists the tokens (by rank) whose text ends at this node. */
class TrieNode {
  /** Children by code unit: an array for ASCII (most steps), a map for the rest. */
  private readonly ascii: (TrieNode | undefined)[] = [];
  private readonly other = new Map<number, TrieNode>();
  readonly ends: number[] = [];

  child(unit: number): TrieNode | undefined {
    return unit < 128 ? this.ascii[unit] : this.other.get(unit);
  }

  add(unit: number): TrieNode {
    let node = this.child(unit);
    if (!node) {
      node = new TrieNode();
      if (unit < 128) {
        while (this.ascii.length < unit) this.ascii.push(undefined);
        this.ascii[unit] = node;
      } else this.other.set(unit, node);
    }
    return node;
  }
}

/**
 * Occurrences per character past which tokens are cut in turn instead: nested tokens (Gemma 3 has
 * one for each run of 1 to 31 spaces or newlines) make up to 31 per character of a run, which
 * cost more to place than llama.cpp's way costs over the few tokens present.
 */
const NESTED_PER_CHAR = 4;

export class SpecialTokens {
  /** [text, id, always (user-defined)], longest text (in UTF-8 bytes) first: a token's rank is its index. */
  private readonly tokens: [string, number, boolean][] = [];
  private readonly root = new TrieNode();

  constructor(vocab: Pick<Vocabulary, 'tokens' | 'types'>) {
    const special = new Set<number>([TokenType.CONTROL, TokenType.USER_DEFINED, TokenType.UNKNOWN]);
    vocab.tokens.forEach((text, id) => {
      if (text !== '' && special.has(vocab.types[id])) this.tokens.push([text, id, vocab.types[id] === TokenType.USER_DEFINED]);
    });
    this.tokens.sort((a, b) => utf8Encoder.encode(b[0]).length - utf8Encoder.encode(a[0]).length);
    this.tokens.forEach(([text], rank) => {
      let node = this.root;
      for (let i = 0; i < text.length; i++) node = node.add(text.charCodeAt(i));
      node.ends.push(rank);
    });
  }

  partition(text: string, parseSpecial: boolean): Fragment[] {
    if (text === '') return [];
    if (this.tokens.length === 0) return [text];
    const n = text.length;
    // Every occurrence, grouped by rank (counted, then placed), in ascending position within a rank.
    const offsets = new Int32Array(this.tokens.length + 1);
    const total = this.scan(text, offsets.subarray(1));
    if (total > NESTED_PER_CHAR * n) return this.cutInTurn(text, parseSpecial, offsets.subarray(1));
    for (let r = 0; r < this.tokens.length; r++) offsets[r + 1] += offsets[r];
    const starts = new Int32Array(total);
    this.scan(text, offsets.slice(0, -1), starts);

    const claimed = new Uint8Array(n);
    const keptStarts = new FenwickCounts(n);
    const kept = new Int32Array(n).fill(-1); // rank of the token kept at each position
    for (let rank = 0; rank < this.tokens.length; rank++) {
      const [token, , always] = this.tokens[rank];
      if (!always && !parseSpecial) continue;
      for (let k = offsets[rank]; k < offsets[rank + 1]; k++) {
        const start = starts[k];
        const end = start + token.length;
        // Overlapping a kept token means covering its first character or starting inside it.
        if (claimed[start] || keptStarts.between(start + 1, end) > 0) continue;
        claimed.fill(1, start, end);
        keptStarts.add(start);
        kept[start] = rank;
      }
    }

    const fragments: Fragment[] = [];
    let from = 0;
    for (let i = 0; i < n; i++) {
      if (kept[i] < 0) continue;
      if (i > from) fragments.push(text.slice(from, i));
      const [token, id] = this.tokens[kept[i]];
      fragments.push(id);
      from = i + token.length;
      i = from - 1;
    }
    if (from < n) fragments.push(text.slice(from));
    return fragments;
  }

  /** llama.cpp's way, over the tokens present (`counts[rank]` > 0): each token cuts every fragment. */
  private cutInTurn(text: string, parseSpecial: boolean, counts: Int32Array): Fragment[] {
    let fragments: Fragment[] = [text];
    this.tokens.forEach(([token, id, always], rank) => {
      if (counts[rank] === 0 || (!always && !parseSpecial)) return;
      fragments = fragments.flatMap((f) => {
        if (typeof f !== 'string' || !f.includes(token)) return [f];
        const out: Fragment[] = [];
        let start = 0;
        for (let at = f.indexOf(token); at >= 0; at = f.indexOf(token, start)) {
          if (at > start) out.push(f.slice(start, at));
          out.push(id);
          start = at + token.length;
        }
        if (start < f.length) out.push(f.slice(start));
        return out;
      });
    });
    return fragments;
  }

  /**
   * Walks the text once with the trie. Without `starts`, counts each rank's occurrences into
   * `counts`; with it, writes each occurrence's start at `starts[counts[rank]++]`. Returns how many.
   */
  private scan(text: string, counts: Int32Array, starts?: Int32Array): number {
    let total = 0;
    for (let i = 0; i < text.length; i++) {
      let node = this.root.child(text.charCodeAt(i));
      for (let j = i + 1; node; j++) {
        const ends = node.ends;
        for (let e = 0; e < ends.length; e++) {
          if (starts) starts[counts[ends[e]]++] = i;
          else counts[ends[e]]++;
        }
        total += ends.length;
        node = j < text.length ? node.child(text.charCodeAt(j)) : undefined;
      }
    }
    return total;
  }
}

/** Counts of marked positions, by range, in O(log n) (a Fenwick tree). */
class FenwickCounts {
  private readonly tree: Int32Array;

  constructor(n: number) {
    this.tree = new Int32Array(n + 1);
  }

  add(position: number): void {
    for (let i = position + 1; i < this.tree.length; i += i & -i) this.tree[i]++;
  }

  /** Marked positions in [from, to). */
  between(from: number, to: number): number {
    return this.before(to) - this.before(from);
  }

  private before(position: number): number {
    let sum = 0;
    for (let i = Math.min(position, this.tree.length - 1); i > 0; i -= i & -i) sum += this.tree[i];
    return sum;
  }
}

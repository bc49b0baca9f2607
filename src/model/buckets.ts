/**
 * Step sizes in buckets, and a bounded cache of what is built per bucket.
 *
 * A program (its pipelines, bind groups and uniforms) is built per step size. Serving varies the
 * rows of a step from one step to the next; built per exact size, programs would pile up and
 * pipelines would compile inside measured steps. Rounded up to a bucket — powers of two up to the
 * largest size, and that size — a few programs serve every step, and they can all be built before
 * anything is measured. The engine pads a step to its bucket (see Engine.submit).
 */

/** The bucket sizes for steps of 1…max rows: 1, 2, 4, … below `max`, then `max`. */
export function buckets(max: number, min = 1): number[] {
  if (!(Number.isInteger(max) && max >= min)) throw new RangeError(`bucket sizes need an integer maximum ≥ ${min}, got ${max}`);
  const out = min === 0 ? [0] : [];
  for (let b = 1; b < max; b *= 2) out.push(b);
  out.push(max);
  return out;
}

/** The smallest bucket of `buckets(max, min)` that holds n. */
export function bucketOf(n: number, max: number): number {
  if (!(Number.isInteger(n) && n >= 0 && n <= max)) throw new RangeError(`${n} is not a step size in 0…${max}`);
  if (n === 0) return 0;
  const pow2 = 2 ** Math.ceil(Math.log2(n));
  return Math.min(pow2, max);
}

/**
 * A map that keeps the `capacity` most recently used entries and hands each dropped value to
 * `drop` (which frees what it owns). Values are promises of what is being built; a failed build is
 * forgotten so the next request retries it.
 */
export class LruCache<V> {
  private readonly entries = new Map<string, Promise<V>>();

  constructor(
    readonly capacity: number,
    private readonly drop: (value: V) => void,
  ) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) throw new RangeError(`cache capacity must be an integer ≥ 1, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value for `key`, built with `build` on a miss; marks it most recently used. */
  get(key: string, build: () => Promise<V>): Promise<V> {
    let value = this.entries.get(key);
    if (value) {
      this.entries.delete(key);
    } else {
      value = build();
      value.catch(() => {
        if (this.entries.get(key) === value) this.entries.delete(key);
      });
    }
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) {
      const [oldest, dropped] = this.entries.entries().next().value as [string, Promise<V>];
      this.entries.delete(oldest);
      dropped.then(this.drop, () => undefined);
    }
    return value;
  }

  /** Every value built so far (settled), and forget them all. */
  async clear(): Promise<V[]> {
    const all = [...this.entries.values()];
    this.entries.clear();
    const settled = await Promise.allSettled(all);
    return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  }
}

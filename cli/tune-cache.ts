/**
 * The CLI's cache of tuned kernel shapes: one JSON file under node_modules/.cache/tokenscope
 * (or $TOKENSCOPE_CACHE_DIR), read once and rewritten on every new entry.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TuneCache } from '../src/kernels/autotune.ts';

export function fileTuneCache(dir = process.env.TOKENSCOPE_CACHE_DIR ?? join(process.cwd(), 'node_modules', '.cache', 'tokenscope')): TuneCache {
  const file = join(dir, 'tuned-shapes.json');
  let entries: Record<string, string> = {};
  try {
    entries = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    // No cache yet, or an unreadable one: start empty (it is rewritten on the first entry).
  }
  return {
    get: (key) => (typeof entries[key] === 'string' ? entries[key] : undefined),
    set: (key, value) => {
      entries[key] = value;
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(file, JSON.stringify(entries, null, 1));
      } catch {
        // A read-only checkout: the shape is still used for this run.
      }
    },
  };
}

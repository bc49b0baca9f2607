/**
 * Roofs once per device: the CLI's cache of measured `ceilings`, one JSON file under the user's
 * cache folder ($TOKENSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/tokenscope, else ~/.cache/tokenscope).
 * An entry is keyed by the adapter, the runtime (Node + the webgpu package's Dawn), the disabled
 * features, the working-set cap and the project version with ROOFS_VERSION, and is reused for
 * ROOFS_MAX_AGE_MS. `--roofs fresh` measures again (and refreshes the entry); `--roofs FILE` takes
 * a saved result's roofs.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TokenscopeError } from '../src/errors.ts';
import type { Ceilings, Environment } from '../src/measure/schema.ts';
import { isFresh, ROOFS_MAX_AGE_MS } from '../src/measure/roofs-key.ts';
import { ceilingsSchema } from '../src/measure/sections/environment.ts';
import { SchemaError } from '../src/measure/schema-kit.ts';

export { ROOFS_MAX_AGE_MS, ROOFS_VERSION, roofsKey, type RoofsKeyParts } from '../src/measure/roofs-key.ts';

export type RoofsSource = NonNullable<Ceilings['source']>;

interface Entry {
  measured_at: string;
  ceilings: Ceilings;
}

export interface RoofsCache {
  readonly file: string;
  /** Roofs measured under `key` within the reuse window, or undefined. */
  get(key: string): { ceilings: Ceilings; source: RoofsSource } | undefined;
  /** Remember freshly measured roofs (a read-only cache folder is skipped silently). */
  set(key: string, ceilings: Ceilings, measuredAt: string): void;
  /** Forget the roofs under `key` (they proved stale: see staleReusedRoofs). */
  drop(key: string): void;
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TOKENSCOPE_CACHE_DIR) return env.TOKENSCOPE_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tokenscope');
}

export function fileRoofsCache(opts: { dir?: string; maxAgeMs?: number; now?: () => number; warn?: (message: string) => void } = {}): RoofsCache {
  const dir = opts.dir ?? defaultCacheDir();
  const file = join(dir, 'roofs.json');
  const maxAge = opts.maxAgeMs ?? ROOFS_MAX_AGE_MS;
  const now = opts.now ?? Date.now;
  const entries = readEntries(file, opts.warn ?? (() => {}));
  return {
    file,
    get(key) {
      const e = entries[key];
      if (!e) return undefined;
      if (!isFresh(e.measured_at, now(), maxAge)) return undefined;
      return { ceilings: e.ceilings, source: { kind: 'cached', measured_at: e.measured_at, path: file } };
    },
    set(key, ceilings, measuredAt) {
      const { source: _, ...bare } = ceilings;
      entries[key] = { measured_at: measuredAt, ceilings: bare };
      save();
    },
    drop(key) {
      if (!(key in entries)) return;
      delete entries[key];
      save();
    },
  };

  function save(): void {
    // Drop what has expired, so the file does not grow with every driver update.
    for (const [k, e] of Object.entries(entries)) if (!(now() - Date.parse(e.measured_at) <= maxAge)) delete entries[k];
    try {
      mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(entries));
      renameSync(tmp, file);
    } catch {
      // A read-only home: the roofs are still used for this run.
    }
  }
}

/** The cache file's entries; a file that is not one (corrupt, hand-edited, another version's) is ignored with a warning. */
function readEntries(file: string, warn: (message: string) => void): Record<string, Entry> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const doc = JSON.parse(text) as unknown;
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not an object');
    const out: Record<string, Entry> = {};
    for (const [key, e] of Object.entries(doc as Record<string, Entry>)) {
      if (typeof e?.measured_at !== 'string') throw new Error(`entry without measured_at`);
      ceilingsSchema.check(e.ceilings, 'ceilings');
      out[key] = e;
    }
    return out;
  } catch (e) {
    warn(`warning: ignoring the roofs cache ${file} (${e instanceof Error ? e.message : String(e)}); the roofs are measured again and the file rewritten.`);
    return {};
  }
}

/** `--roofs FILE`: the roofs of a saved result (`npm run bench -- --json FILE`), checked against the schema. */
export function roofsFromResultFile(path: string): { ceilings: Ceilings; source: RoofsSource; adapter?: Environment['adapter'] } {
  let doc: { created_at?: unknown; ceilings?: unknown; environment?: { adapter?: Environment['adapter'] } };
  try {
    doc = JSON.parse(readFileSync(path, 'utf8')) as typeof doc;
  } catch (e) {
    throw new TokenscopeError(
      'bad-input',
      `--roofs ${path}: cannot read it as JSON (${e instanceof Error ? e.message : String(e)}).`,
      'Give a result saved with --json, or --roofs fresh.',
    );
  }
  if (!doc || typeof doc !== 'object' || doc.ceilings === undefined) {
    throw new TokenscopeError(
      'bad-input',
      `--roofs ${path} holds no roofs (no "ceilings" field).`,
      'Give a result of a run that measured the roofs, or --roofs fresh.',
    );
  }
  try {
    ceilingsSchema.check(doc.ceilings, 'ceilings');
  } catch (e) {
    const why = e instanceof SchemaError ? e.message : String(e);
    throw new TokenscopeError(
      'bad-input',
      `--roofs ${path}: its roofs do not match the result schema (${why}).`,
      'Give a result saved by this version, or --roofs fresh.',
    );
  }
  const ceilings = doc.ceilings as Ceilings;
  const measuredAt = ceilings.source?.measured_at ?? (typeof doc.created_at === 'string' ? doc.created_at : 'unknown');
  const { source: _, ...bare } = ceilings;
  const adapter = doc.environment?.adapter;
  return { ceilings: bare, source: { kind: 'file', measured_at: measuredAt, path }, ...(adapter && typeof adapter === 'object' ? { adapter } : {}) };
}

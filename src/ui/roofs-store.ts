/**
 * Roofs once per device, in the page: measured `ceilings` kept in IndexedDB (database
 * "tokenscope-roofs"), keyed as the CLI's file cache is (measure/roofs-key.ts: adapter, the
 * browser's user agent, disabled features, working-set cap, project version) and reused for
 * ROOFS_MAX_AGE_MS unless the visitor ticks "measure again". Storage that is blocked or full
 * (private windows, quotas) only means the roofs are measured each time.
 */
import type { BenchJob } from '../jobs/job-spec.ts';
import type { Ceilings, Environment } from '../measure/schema.ts';
import { ceilingsSchema } from '../measure/sections/environment.ts';
import { isFresh, roofsKey } from '../measure/roofs-key.ts';
import { TOOL_VERSION } from '../measure/schema.ts';

const DB = 'tokenscope-roofs';
const STORE = 'roofs';
/** Where reused roofs say they came from (`ceilings.source.path`). */
export const ROOFS_STORE_PATH = `IndexedDB ${DB}`;

export type RoofsSource = NonNullable<Ceilings['source']>;

export interface StoredRoofs {
  ceilings: Ceilings;
  source: RoofsSource;
}

interface Entry {
  measured_at: string;
  ceilings: Ceilings;
}

/** The page's key for roofs measured on this adapter in this browser with this probe. */
export function pageRoofsKey(environment: Environment, job: Pick<BenchJob, 'probeMiB' | 'protocol' | 'probeShapes'>): string {
  const custom = job.protocol || job.probeShapes ? JSON.stringify([job.protocol ?? null, job.probeShapes ?? null]) : undefined;
  return roofsKey({ environment, driver: 'browser', version: TOOL_VERSION, probeMiB: job.probeMiB, probe: custom });
}

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((ok, fail) => {
    r.onsuccess = () => ok(r.result);
    r.onerror = () => fail(r.error);
  });
}

async function open(): Promise<IDBDatabase> {
  const r = indexedDB.open(DB, 1);
  r.onupgradeneeded = () => r.result.createObjectStore(STORE);
  return request(r);
}

async function withStore<T>(mode: IDBTransactionMode, f: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    const tx = db.transaction(STORE, mode);
    const result = await request(f(tx.objectStore(STORE)));
    await new Promise<void>((ok, fail) => {
      tx.oncomplete = () => ok();
      tx.onerror = () => fail(tx.error);
      tx.onabort = () => fail(tx.error);
    });
    return result;
  } finally {
    db.close();
  }
}

/** Roofs stored under `key` and still within the reuse window; undefined when none (or storage is unusable). */
export async function storedRoofs(key: string, now = Date.now()): Promise<StoredRoofs | undefined> {
  try {
    const e = (await withStore('readonly', (s) => s.get(key))) as Entry | undefined;
    if (!e || typeof e.measured_at !== 'string' || !isFresh(e.measured_at, now)) return undefined;
    ceilingsSchema.check(e.ceilings, 'ceilings');
    return { ceilings: e.ceilings, source: { kind: 'cached', measured_at: e.measured_at, path: ROOFS_STORE_PATH } };
  } catch {
    return undefined;
  }
}

/** Remember roofs measured now (without their `source`); failures are ignored. */
export async function storeRoofs(key: string, ceilings: Ceilings, measuredAt: string): Promise<void> {
  const { source: _, ...bare } = ceilings;
  const entry: Entry = { measured_at: measuredAt, ceilings: bare };
  try {
    await withStore('readwrite', (s) => s.put(entry, key));
  } catch {
    // Storage blocked or full: the next run measures the roofs again.
  }
}

/** Forget the roofs under `key` (they proved stale: measure/roofs-key.ts staleReusedRoofs); failures are ignored. */
export async function dropRoofs(key: string): Promise<void> {
  try {
    await withStore('readwrite', (s) => s.delete(key));
  } catch {
    // Storage blocked: the entry expires with its reuse window.
  }
}

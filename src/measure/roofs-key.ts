/**
 * What identifies a device's roofs, shared by the CLI's file cache (cli/roofs-cache.ts) and the
 * page's IndexedDB cache (ui/roofs-store.ts): the same key means the same probe on the same
 * adapter, driver, browser or Node build, disabled features and project version.
 */
import type { Ceilings, Environment } from './schema.ts';

/** Bumped whenever the roof probe changes what it measures or how: older entries are then not reused (2: a roof is the best median of 5 consecutive samples, not their p90; 3: of consecutive samples lasting 250 ms). */
export const ROOFS_VERSION = 3;
/** How long measured roofs are reused unless the visitor (or `--roofs fresh`) asks to measure again. */
export const ROOFS_MAX_AGE_MS = 24 * 3600 * 1000;

export interface RoofsKeyParts {
  environment: Pick<Environment, 'adapter' | 'user_agent' | 'disabled_features'>;
  /** The runtime's GPU layer, e.g. "webgpu 0.6.2" (Dawn's build); in a browser its user agent already names it. */
  driver: string;
  /** package.json's version. */
  version: string;
  probeMiB?: number;
  /** A custom probe (repetitions, grids) in words: such roofs are only reused by the same probe. */
  probe?: string;
}

export function roofsKey(p: RoofsKeyParts): string {
  const a = p.environment.adapter;
  return JSON.stringify([
    ROOFS_VERSION,
    p.version,
    a.vendor,
    a.architecture,
    a.device,
    a.description,
    p.environment.user_agent,
    p.driver,
    [...p.environment.disabled_features].sort(),
    p.probeMiB ?? null,
    ...(p.probe ? [p.probe] : []),
  ]);
}

/** Whether roofs measured at `measuredAt` are still reused at `now`. */
export function isFresh(measuredAt: string, now: number, maxAgeMs = ROOFS_MAX_AGE_MS): boolean {
  const age = now - Date.parse(measuredAt);
  return Number.isFinite(age) && age >= 0 && age <= maxAgeMs;
}

/**
 * Why reused roofs should not be reused again, or null: the streaming read re-measured after this
 * run's model phases (`ceilings.drift`) came out more than the drift bound above the cached one — it
 * was measured while the device was busy or throttled (this run divides by the later reading:
 * ceilings.drift.raised_from_gbps). The caller drops the entry, so the next run measures the roofs afresh.
 */
export function staleReusedRoofs(ceilings: Pick<Ceilings, 'source' | 'drift'> | null | undefined): string | null {
  const drift = ceilings?.drift;
  if (ceilings?.source?.kind !== 'cached' || drift?.raised_from_gbps === undefined) return null;
  return `The reused roofs (measured ${ceilings.source.measured_at}) read ×${drift.ratio.toFixed(2)} below the streaming read measured again after this run, which this run's "% of read roof" figures divide by instead; the cached roofs are dropped and the next run measures them afresh.`;
}

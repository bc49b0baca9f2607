/**
 * What identifies a device's roofs, shared by the CLI's file cache (cli/roofs-cache.ts) and the
 * page's IndexedDB cache (ui/roofs-store.ts): the same key means the same probe on the same
 * adapter, driver, browser or Node build, disabled features and project version.
 */
import type { Environment } from './schema.ts';

/** Bumped whenever the roof probe changes what it measures or how: older entries are then not reused. */
export const ROOFS_VERSION = 1;
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

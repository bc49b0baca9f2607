/**
 * The last streaming-read roof measured on this adapter, remembered across visits (localStorage),
 * so the model inspection can predict decode speed before anything is downloaded.
 */
import type { Environment } from '../measure/schema.ts';

const KEY = 'tokenscope.read-roof.v1';

export interface RememberedRoof {
  gbps: number;
  measuredAt: string;
}

function adapterKey(env: Pick<Environment, 'adapter' | 'runtime'>): string {
  const a = env.adapter;
  return [env.runtime, a.vendor, a.architecture, a.device, a.description].join('|');
}

function load(): Record<string, RememberedRoof> {
  try {
    const parsed: unknown = JSON.parse(globalThis.localStorage?.getItem(KEY) ?? '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, RememberedRoof>) : {};
  } catch {
    return {};
  }
}

export function rememberReadRoof(env: Pick<Environment, 'adapter' | 'runtime'>, gbps: number, measuredAt: string): void {
  if (!(gbps > 0)) return;
  try {
    globalThis.localStorage?.setItem(KEY, JSON.stringify({ ...load(), [adapterKey(env)]: { gbps, measuredAt } }));
  } catch {
    // Storage full or blocked: the inspection then says no roof has been measured.
  }
}

export function lastReadRoof(env: Pick<Environment, 'adapter' | 'runtime'> | null): RememberedRoof | null {
  if (!env) return null;
  const roof = load()[adapterKey(env)];
  return roof && typeof roof.gbps === 'number' && roof.gbps > 0 ? roof : null;
}

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defaultCacheDir,
  fileRoofsCache,
  ROOFS_MAX_AGE_MS,
  ROOFS_VERSION,
  roofsFromResultFile,
  roofsKey,
  type RoofsKeyParts,
} from '../../../cli/roofs-cache.ts';
import { ceilings } from '../share/fixtures.ts';
import { staleReusedRoofs } from '../../../src/measure/roofs-key.ts';
import { readRoofDrift } from '../../../src/measure/roof-checks.ts';
import { parseFlags } from '../../../cli/args.ts';
import { BENCH_FLAGS, misplacedFlag } from '../../../cli/bench-flags.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'roofs-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const parts: RoofsKeyParts = {
  environment: {
    adapter: { vendor: 'mesa', architecture: 'llvmpipe', device: '0', description: 'lavapipe', isFallbackAdapter: false },
    user_agent: 'Node v22.0.0 (linux-x64; webgpu package, Dawn)',
    disabled_features: ['shader-f16', 'subgroups'],
  },
  driver: 'webgpu 0.6.2',
  version: '0.1.0',
};

describe('roofsKey', () => {
  it('is the same for the same device and changes with the adapter, driver, disabled features, version and working set', () => {
    const key = roofsKey(parts);
    expect(roofsKey({ ...parts, environment: { ...parts.environment, disabled_features: ['subgroups', 'shader-f16'] } })).toBe(key);
    expect(key).toContain(String(ROOFS_VERSION));
    const variants: RoofsKeyParts[] = [
      { ...parts, environment: { ...parts.environment, adapter: { ...parts.environment.adapter, description: 'SwiftShader' } } },
      { ...parts, environment: { ...parts.environment, user_agent: 'Node v24.0.0 (linux-x64; webgpu package, Dawn)' } },
      { ...parts, environment: { ...parts.environment, disabled_features: ['subgroups'] } },
      { ...parts, driver: 'webgpu 0.7.0' },
      { ...parts, version: '0.2.0' },
      { ...parts, probeMiB: 64 },
    ];
    for (const v of variants) expect(roofsKey(v)).not.toBe(key);
  });
});

describe('fileRoofsCache', () => {
  const t0 = Date.parse('2026-12-05T00:00:00Z');

  it('returns what was stored under the same key within the window, marked cached with its time and file', () => {
    const dir = tempDir();
    let now = t0;
    const c = ceilings(3);
    fileRoofsCache({ dir, now: () => now }).set(
      'k',
      { ...c, source: { kind: 'measured', measured_at: new Date(t0).toISOString() } },
      new Date(t0).toISOString(),
    );
    now = t0 + ROOFS_MAX_AGE_MS - 1000;
    // A new cache object reads the file, as the next run does.
    const hit = fileRoofsCache({ dir, now: () => now }).get('k');
    expect(hit?.source).toEqual({ kind: 'cached', measured_at: '2026-12-05T00:00:00.000Z', path: join(dir, 'roofs.json') });
    expect(hit?.ceilings.read_bandwidth_gbps).toBe(c.read_bandwidth_gbps);
    expect(hit?.ceilings.source).toBeUndefined();
    expect(fileRoofsCache({ dir, now: () => now }).get('other key')).toBeUndefined();
  });

  it('expires entries past the window (and drops them from the file on the next store)', () => {
    const dir = tempDir();
    fileRoofsCache({ dir, now: () => t0 }).set('old', ceilings(2), new Date(t0).toISOString());
    const later = t0 + ROOFS_MAX_AGE_MS + 1000;
    const cache = fileRoofsCache({ dir, now: () => later });
    expect(cache.get('old')).toBeUndefined();
    cache.set('new', ceilings(2), new Date(later).toISOString());
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'roofs.json'), 'utf8')) as object)).toEqual(['new']);
  });

  it('honours a shorter window', () => {
    const dir = tempDir();
    fileRoofsCache({ dir, now: () => t0 }).set('k', ceilings(2), new Date(t0).toISOString());
    expect(fileRoofsCache({ dir, now: () => t0 + 61_000, maxAgeMs: 60_000 }).get('k')).toBeUndefined();
    expect(fileRoofsCache({ dir, now: () => t0 + 59_000, maxAgeMs: 60_000 }).get('k')).toBeDefined();
  });

  it('ignores a corrupt cache file with a warning, and rewrites it on the next store', () => {
    for (const text of ['{not json', '[1,2]', JSON.stringify({ k: { measured_at: '2026-12-05T00:00:00Z', ceilings: { read_bandwidth_gbps: 'fast' } } })]) {
      const dir = tempDir();
      writeFileSync(join(dir, 'roofs.json'), text);
      const warnings: string[] = [];
      const cache = fileRoofsCache({ dir, now: () => t0, warn: (m) => warnings.push(m) });
      expect(cache.get('k')).toBeUndefined();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/ignoring the roofs cache .*roofs\.json/);
      cache.set('k', ceilings(2), new Date(t0).toISOString());
      expect(fileRoofsCache({ dir, now: () => t0, warn: (m) => warnings.push(m) }).get('k')).toBeDefined();
      expect(warnings).toHaveLength(1);
    }
  });

  it('lives under $TOKENSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/tokenscope, else ~/.cache/tokenscope', () => {
    expect(defaultCacheDir({ TOKENSCOPE_CACHE_DIR: '/a' })).toBe('/a');
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/x' })).toBe(join('/x', 'tokenscope'));
    expect(defaultCacheDir({})).toMatch(/\.cache[/\\]tokenscope$/);
  });
});

describe('roofsFromResultFile (--roofs FILE)', () => {
  it("takes a saved result's roofs, marked as from the file with the time they were measured", () => {
    const dir = tempDir();
    const file = join(dir, 'r.json');
    writeFileSync(file, JSON.stringify({ created_at: '2026-12-04T10:00:00Z', ceilings: ceilings(2) }));
    expect(roofsFromResultFile(file).source).toEqual({ kind: 'file', measured_at: '2026-12-04T10:00:00Z', path: file });
    writeFileSync(file, JSON.stringify({ created_at: 'x', ceilings: { ...ceilings(2), source: { kind: 'cached', measured_at: '2026-12-03T09:00:00Z' } } }));
    expect(roofsFromResultFile(file).source.measured_at).toBe('2026-12-03T09:00:00Z');
    const adapter = { vendor: 'nvidia', architecture: 'hopper', device: '', description: 'H200', isFallbackAdapter: false };
    writeFileSync(file, JSON.stringify({ created_at: 'x', environment: { adapter }, ceilings: ceilings(2) }));
    expect(roofsFromResultFile(file).adapter).toEqual(adapter);
  });

  it('refuses a file that is not JSON, holds no roofs or holds bad ones', () => {
    const dir = tempDir();
    const file = join(dir, 'r.json');
    expect(() => roofsFromResultFile(join(dir, 'missing.json'))).toThrow(/cannot read it as JSON/);
    writeFileSync(file, JSON.stringify({ created_at: 'x' }));
    expect(() => roofsFromResultFile(file)).toThrow(/holds no roofs/);
    writeFileSync(file, JSON.stringify({ ceilings: { f32_gflops: -1 } }));
    expect(() => roofsFromResultFile(file)).toThrow(/do not match the result schema/);
  });
});

describe('--roofs among the flags', () => {
  const parse = (argv: string[]) => parseFlags(argv, BENCH_FLAGS, misplacedFlag);
  it('is taken by every run; --probe takes only fresh (it always measures)', () => {
    expect(parse(['--roofs', 'fresh']).get('roofs')).toBe('fresh');
    expect(parse(['--roofs', 'saved.json', '--model', 'stories15m']).get('roofs')).toBe('saved.json');
    expect(parse(['-p', '32', '--roofs', 'saved.json']).get('roofs')).toBe('saved.json');
    expect(parse(['--probe', '--roofs', 'fresh']).get('roofs')).toBe('fresh');
    expect(() => parse(['--probe', '--roofs', 'saved.json'])).toThrow(/--probe measures the roofs afresh/);
    expect(() => parse(['--roofs'])).toThrow(/--roofs needs a value/);
  });
});

describe('stale reused roofs', () => {
  const drift = (ratio: number) => readRoofDrift(4.39, 4.39 * ratio);
  const cachedAt = { kind: 'cached' as const, measured_at: '2026-12-05T03:44:30.606Z', path: '/x/roofs.json' };

  it('are reused roofs whose read was re-measured well above them after the run (measured on a busy device)', () => {
    expect(staleReusedRoofs({ source: cachedAt, drift: drift(2.43) })).toMatch(
      /^The reused roofs \(measured 2026-12-05T03:44:30\.606Z\) read ×2\.43 below the streaming read measured again after this run/,
    );
    // Within the bound, slower after the run (throttling: the roof was the device's best), measured now, or no drift: kept.
    expect(staleReusedRoofs({ source: cachedAt, drift: drift(1.1) })).toBeNull();
    expect(staleReusedRoofs({ source: cachedAt, drift: drift(0.5) })).toBeNull();
    expect(staleReusedRoofs({ source: { ...cachedAt, kind: 'measured' }, drift: drift(2.43) })).toBeNull();
    expect(staleReusedRoofs({ source: cachedAt })).toBeNull();
    expect(staleReusedRoofs(null)).toBeNull();
  });

  it('are dropped from the cache file, so the next run measures afresh; other entries stay', () => {
    const dir = tempDir();
    const now = () => Date.parse('2026-12-05T04:00:00Z');
    const cache = fileRoofsCache({ dir, now });
    const other = roofsKey({ ...parts, version: '0.2.0' });
    cache.set(roofsKey(parts), ceilings(2), '2026-12-05T03:44:30.606Z');
    cache.set(other, ceilings(2), '2026-12-05T03:44:30.606Z');
    cache.drop(roofsKey(parts));
    const reread = fileRoofsCache({ dir, now });
    expect(reread.get(roofsKey(parts))).toBeUndefined();
    expect(reread.get(other)).toBeDefined();
    expect(() => reread.drop('no such key')).not.toThrow();
  });
});

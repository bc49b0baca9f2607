import { describe, expect, it } from 'vitest';
import type { Capabilities } from '../../../src/gpu/capabilities.ts';
import { MemoryTuneCache, proxyProblem, TUNE_WORKING_SET_BYTES, tuneCopies, tuneKey } from '../../../src/kernels/autotune.ts';
import { weightBytes } from '../../../src/kernels/weights.ts';

const caps = { adapter: { vendor: 'mesa', architecture: 'software', device: 'llvmpipe', description: 'Mesa 25', isFallbackAdapter: true } } as Capabilities;

describe('autotune keys and proxies', () => {
  it('keys by adapter, format, exact R up to 8, "short-prefill" up to 64, "prefill" beyond, and power-of-two sizes', () => {
    expect(tuneKey(caps, 'q4_0', 4096, 4096, 1)).toBe('linear|v2|mesa|software|llvmpipe|Mesa 25|q4_0|R1|4096x4096');
    expect(tuneKey(caps, 'q4_0', 3000, 4000, 3)).toBe('linear|v2|mesa|software|llvmpipe|Mesa 25|q4_0|R3|4096x4096');
    expect(tuneKey(caps, 'f16', 11008, 4096, 512)).toBe(tuneKey(caps, 'f16', 16384, 4096, 65));
    expect(tuneKey(caps, 'f16', 11008, 4096, 33)).toBe('linear|v2|mesa|software|llvmpipe|Mesa 25|f16|short-prefill|16384x4096');
    expect(tuneKey(caps, 'f16', 4096, 4096, 64)).toBe(tuneKey(caps, 'f16', 4096, 4096, 9));
    expect(tuneKey(caps, 'f16', 4096, 4096, 64)).not.toBe(tuneKey(caps, 'f16', 4096, 4096, 65));
    expect(tuneKey(caps, 'f16', 4096, 4096, 8)).not.toBe(tuneKey(caps, 'f16', 4096, 4096, 9));
  });

  it('shrinks rows, then cols, then a matmul R, until under the FLOP cap', () => {
    expect(proxyProblem(1, 4096, 4096, 2 ** 26)).toEqual({ R: 1, rows: 4096, cols: 4096 });
    expect(proxyProblem(512, 4096, 4096, 2 ** 26)).toEqual({ R: 128, rows: 256, cols: 1024 });
    expect(proxyProblem(8, 128256, 4096, 2 ** 26)).toEqual({ R: 8, rows: 1002, cols: 4096 });
    const p = proxyProblem(512, 11008, 4096, 2 ** 32);
    expect(2 * p.R * p.rows * p.cols).toBeLessThanOrEqual(2 ** 32);
    expect(p.cols % 32).toBe(0);
  });

  it('times GPU candidates over copies that exceed any last-level cache; CPU adapters over one', () => {
    const gpu = { ...caps, cpuLike: false } as Capabilities;
    for (const [rows, cols] of [
      [2048, 2048],
      [16384, 2048],
      [128256, 2048],
    ]) {
      const bytes = weightBytes('q4_0', rows, cols);
      const copies = tuneCopies(gpu, bytes);
      expect(copies * bytes >= TUNE_WORKING_SET_BYTES || copies === 64, `${rows}x${cols}`).toBe(true);
      expect((copies - 1) * bytes).toBeLessThan(TUNE_WORKING_SET_BYTES);
    }
    expect(tuneCopies({ ...caps, cpuLike: true } as Capabilities, 1024)).toBe(1);
  });

  it('keeps entries in memory', () => {
    const cache = new MemoryTuneCache();
    expect(cache.get('k')).toBeUndefined();
    cache.set('k', 'v');
    expect(cache.get('k')).toBe('v');
  });
});

import { describe, expect, it } from 'vitest';
import type { Capabilities } from '../../../src/gpu/capabilities.ts';
import {
  attentionShapes,
  decodeLanes,
  decodeWorkgroupBytes,
  elementwiseShape,
  prefillWorkgroupBytes,
  rowReductionShape,
  sampleWorkgroupSize,
} from '../../../src/kernels/select.ts';

/** A capability record with only what the layer shapes read. */
const device = (cpuLike: boolean, workgroupBytes = 32768): Capabilities =>
  ({
    cpuLike,
    subgroups: true,
    limits: { maxComputeWorkgroupStorageSize: workgroupBytes, maxComputeWorkgroupsPerDimension: 65535 },
  }) as Capabilities;

const GPU = device(false);
const CPU = device(true);
const HEADS = [
  { nHeads: 32, nKvHeads: 8, headDim: 128 }, // Llama 3 8B
  { nHeads: 14, nKvHeads: 2, headDim: 64 }, // Qwen2 0.5B (7:1)
  { nHeads: 32, nKvHeads: 32, headDim: 80 }, // MHA
  { nHeads: 8, nKvHeads: 1, headDim: 256 },
];

describe('layer kernel shapes', () => {
  it('elementwise: one element per invocation on GPUs, ≤ 16 long workgroups on CPU adapters, grids within limits', () => {
    expect(elementwiseShape(GPU, 1000)).toEqual({ wgSize: 256, workgroups: [4, 1, 1] });
    expect(elementwiseShape(CPU, 1000)).toEqual({ wgSize: 64, workgroups: [16, 1, 1] });
    expect(elementwiseShape(CPU, 3)).toEqual({ wgSize: 64, workgroups: [1, 1, 1] });
    const big = elementwiseShape(GPU, 256 * 100_000).workgroups;
    expect(big[0]).toBeLessThanOrEqual(65535);
    expect(big[0] * big[1]).toBeGreaterThanOrEqual(100_000);
  });

  it('row reductions use power-of-two workgroups and subgroups where present', () => {
    for (const c of [GPU, CPU]) {
      const { wgSize, subgroups } = rowReductionShape(c);
      expect(wgSize & (wgSize - 1)).toBe(0);
      expect(subgroups).toBe(true);
    }
  });

  it('sampling fits the WebGPU baseline of 16 KiB of workgroup memory', () => {
    expect(sampleWorkgroupSize(GPU)).toBe(256);
    expect(sampleWorkgroupSize(device(false, 16384))).toBe(128);
    expect(sampleWorkgroupSize(CPU)).toBe(64);
  });

  it('attention: split-K fills a GPU and a CPU, CPU adapters without subgroups keep one workgroup per (row, kv head) and no prefill kernel', () => {
    for (const heads of HEADS) {
      for (const R of [1, 3, 17, 256]) {
        const gpu = attentionShapes(GPU, heads, R);
        const group = heads.nHeads / heads.nKvHeads;
        expect(R * heads.nKvHeads * gpu.decode.splits).toBeGreaterThanOrEqual(Math.min(512, R * heads.nKvHeads * 32));
        expect(decodeWorkgroupBytes(heads.headDim, group, gpu.decode.keyBlock)).toBeLessThanOrEqual(32768);
        expect(gpu.tiledPrefill).toBe(gpu.prefill !== null);
        if (gpu.prefill) expect(gpu.prefill.kernel).toBe('tiled');
        if (gpu.prefill?.kernel === 'tiled') {
          expect(gpu.prefill.rowTile).toBeLessThan(2 * R);
          expect(prefillWorkgroupBytes(heads.headDim, group, gpu.prefill.rowTile, gpu.prefill.keyBlock)).toBeLessThanOrEqual(32768);
        }
        const cpu = attentionShapes({ ...CPU, subgroups: false }, heads, R);
        expect(cpu.tiledPrefill).toBe(false);
        expect(cpu.decode.splits).toBe(1);
        // With subgroups, the rows kernel (attention_prefill_rows.wgsl) for head dims up to 256.
        const rows8 = { ...CPU, subgroups: true, subgroupMinSize: 8, subgroupMaxSize: 8 };
        const rows = attentionShapes(rows8, heads, R);
        expect(rows.tiledPrefill).toBe(heads.headDim <= 256);
        expect(rows.prefill).toEqual(heads.headDim <= 256 ? { kernel: 'rows', wgSize: 8 } : null);
        // …and the subgroup decode kernel where the group's queries fit 16 registers of its lanes,
        // in workgroups of one subgroup, split so that a step has ≥ 8 workgroups (≤ 4 per (row, kv head)).
        const lanes = decodeLanes(rows8, heads.headDim);
        const fits = group * (heads.headDim / 4 / lanes) <= 16;
        expect(rows.decode.kernel).toBe(fits ? 'subgroups' : 'workgroup');
        if (fits) {
          expect(rows.decode).toMatchObject({ wgSize: 8, lanes });
          expect(rows.decode.splits).toBe(Math.min(4, Math.ceil(8 / (R * heads.nKvHeads))));
        } else {
          expect(rows.decode.splits).toBe(1);
        }
      }
    }
  });

  it('attention: prefill falls back to the decode kernel when no tile fits; decode too wide is a typed error', () => {
    const wide = attentionShapes(GPU, { nHeads: 8, nKvHeads: 1, headDim: 256 }, 17);
    expect(wide.prefill).toBeNull();
    expect(wide.tiledPrefill).toBe(false);
    expect(() => attentionShapes(device(false, 4096), { nHeads: 8, nKvHeads: 1, headDim: 256 }, 1)).toThrow(/workgroup memory/);
  });
});

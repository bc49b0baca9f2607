import { describe, expect, it } from 'vitest';
import { adapterKind, type Capabilities } from '../../../src/gpu/capabilities.ts';
import {
  activationGroup,
  GROUPED_MAX_TOKENS,
  linearShape,
  linearShapes,
  MATVEC_MAX_TOKENS,
  q8dotTokens,
  q8dotWorkgroupBytes,
} from '../../../src/kernels/linear-shapes.ts';
import { LINEAR_PAIRS } from '../../../src/kernels/variant-table.ts';

function caps(over: Partial<Capabilities>): Capabilities {
  return {
    adapter: { vendor: 'v', architecture: 'a', device: 'd', description: '', isFallbackAdapter: false },
    features: [],
    timestampQuery: true,
    shaderF16: false,
    subgroups: false,
    packedDot: false,
    subgroupMinSize: 0,
    subgroupMaxSize: 0,
    limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 32768 } as Capabilities['limits'],
    cpuLike: false,
    kind: 'gpu',
    ...over,
  };
}

const lavapipe = caps({ cpuLike: true, kind: 'lavapipe', shaderF16: true, subgroups: true, subgroupMinSize: 8, subgroupMaxSize: 8 });
const gpu = caps({ shaderF16: true, subgroups: true, subgroupMinSize: 32, subgroupMaxSize: 32 });

describe('linear shape selection', () => {
  it('uses a matvec for decode and the tiled matmul for prefill on GPUs (with subgroups, the grouped wide matvec up to 64 rows); CPU adapters take register tiles from 2 rows', () => {
    for (const c of [gpu, caps({})]) {
      expect(linearShape(c, 1).kernel).toBe('matvec');
      expect(linearShape(c, MATVEC_MAX_TOKENS).kernel).toBe('matvec');
    }
    expect(linearShape(caps({}), MATVEC_MAX_TOKENS + 1).kernel).toBe('matmul');
    expect(linearShape(gpu, MATVEC_MAX_TOKENS + 1)).toMatchObject({ kernel: 'matvec', wide: true });
    expect(linearShape(gpu, GROUPED_MAX_TOKENS)).toMatchObject({ kernel: 'matvec', wide: true });
    expect(linearShape(gpu, GROUPED_MAX_TOKENS + 1).kernel).toBe('matmul');
    expect(linearShape(lavapipe, 1).kernel).toBe('matvec');
    for (const R of [2, MATVEC_MAX_TOKENS, 16, 512]) expect(linearShape(lavapipe, R).kernel).toBe('rows');
  });

  it('gives GPUs with subgroups the wide matvec (several subgroups per workgroup), one subgroup of the smallest size on CPU adapters', () => {
    expect(linearShape(gpu, 1)).toEqual({ kernel: 'matvec', subgroups: true, wide: true, lanes: 128, rowBlock: 2, rowsPerWorkgroup: 8 });
    expect(linearShape(lavapipe, 1)).toEqual({ kernel: 'matvec', subgroups: true, lanes: 8, rowBlock: 8, rowsPerWorkgroup: 32 });
    expect(linearShape(caps({ subgroups: true, subgroupMinSize: 0 }), 1)).toMatchObject({ subgroups: false, lanes: 64 });
    // Rows per workgroup follow the widest subgroup the device may run (Apple through Dawn: 4–32 → 4 subgroups of 32).
    expect(linearShape(caps({ subgroups: true, subgroupMinSize: 4, subgroupMaxSize: 32 }), 1)).toMatchObject({ wide: true, lanes: 128, rowsPerWorkgroup: 8 });
  });

  it('keeps CPU register tiles within 16 accumulators and at most 4 tokens by default', () => {
    for (const R of [1, 2, 3, 8, 100]) {
      for (const s of linearShapes(lavapipe, R)) {
        if (s.kernel === 'rows') expect(s.rowBlock * s.tokens).toBeLessThanOrEqual(16);
      }
    }
    expect(linearShape(lavapipe, 100)).toEqual({ kernel: 'rows', lanes: 8, rowBlock: 4, tokens: 4 });
    expect(linearShape(lavapipe, 2)).toEqual({ kernel: 'rows', lanes: 8, rowBlock: 8, tokens: 2 });
  });

  it('prefers f16 tiles on GPUs with shader-f16, f32 on CPU adapters and without it', () => {
    expect(linearShape(gpu, 512)).toEqual({ kernel: 'matmul', f16: true, tileM: 64, tileN: 64 });
    expect(linearShapes(lavapipe, 512).find((s) => s.kernel === 'matmul')).toMatchObject({ f16: false });
    expect(linearShape(caps({}), 512)).toMatchObject({ f16: false });
    expect(linearShapes(caps({}), 512).some((s) => s.kernel === 'matmul' && s.f16)).toBe(false);
  });

  it('offers valid, distinct candidates', () => {
    for (const c of [lavapipe, gpu, caps({})]) {
      for (const R of [1, 3, 8, 100]) {
        const all = linearShapes(c, R).map((s) => JSON.stringify(s));
        expect(new Set(all).size).toBe(all.length);
        for (const s of linearShapes(c, R)) {
          if (s.kernel === 'matvec') expect(s.rowsPerWorkgroup % s.rowBlock).toBe(0);
        }
      }
    }
  });

  it('runs q4_0/q8_0/q4_k/q6_k decode with 8-bit activations where packed_4x8_integer_dot_product exists, while X fits workgroup memory', () => {
    const dot = { ...gpu, packedDot: true };
    expect(linearShape(dot, 1, 'q4_0', 2048)).toEqual({
      kernel: 'matvec',
      subgroups: true,
      wide: true,
      lanes: 128,
      rowBlock: 2,
      rowsPerWorkgroup: 8,
      q8dot: true,
    });
    expect(linearShape(dot, 8, 'q8_0', 2048)).toMatchObject({ wide: true, q8dot: true });
    // q4_k (its sub-blocks' mins through Σ q_x) and q6_k too; never a format the 8-bit kernels cannot decode.
    expect(linearShape(dot, 1, 'q4_k', 2048)).toMatchObject({ wide: true, q8dot: true });
    expect(linearShape(dot, 1, 'q6_k', 2048)).toMatchObject({ wide: true, q8dot: true });
    expect(linearShape(dot, 1, 'q5_k', 2048)).not.toHaveProperty('q8dot');
    expect(linearShape(dot, 9, 'q4_0', 2048)).toMatchObject({ kernel: 'matvec', wide: true, q8dot: true });
    expect(linearShape(dot, GROUPED_MAX_TOKENS + 1, 'q4_0', 2048).kernel).toBe('matmul');
    // Llama-3.1-8B's down projection: 14336 columns stage 19.9 KB at R = 1 (448 blocks of 44 bytes
    // and 56 group maxima), 39.9 KB at R = 2 (over 32 KiB).
    expect(q8dotWorkgroupBytes(1, 14336)).toBe(448 * 44 + 56 * 4);
    expect(linearShape(dot, 1, 'q4_0', 14336)).toMatchObject({ q8dot: true });
    expect(linearShape(dot, 2, 'q4_0', 14336)).not.toHaveProperty('q8dot');
    expect(linearShapes(dot, 2, 'q4_0', 14336).some((s) => q8dotTokens(s, 'q4_0', 2) > 0)).toBe(false);
    // CPU adapters: q8_0 at R = 1; q4_0 at R = 1 the SWAR kernel at every width (with subgroups).
    const lava = { ...lavapipe, packedDot: true };
    const swar = { kernel: 'rows', lanes: 16, rowBlock: 16, tokens: 1, q8dot: true, swar: true };
    expect(q8dotTokens(linearShape(lava, 1, 'q8_0', 2048), 'q8_0', 1)).toBe(1);
    // q4_k: the SWAR kernel's tiles as q4_0's; without subgroups the 8-bit kernel at R = 1 (2.1–2.2× the
    // f32 matvec on lavapipe) and for prefill, the f32 tiles from 2 to 8 rows.
    for (const [R, tile] of [
      [1, {}],
      [4, { rowBlock: 8, tokens: 2 }],
      [64, { rowBlock: 4, tokens: 4 }],
    ] as const)
      expect(linearShape(lava, R, 'q4_k', 2048)).toEqual({ ...swar, ...tile });
    // q6_k: the 8-bit kernel at R = 1; prefill in f32 (its 8-bit tile assembles the 6-bit quants per token).
    expect(linearShape(lava, 1, 'q6_k', 2048)).toMatchObject({ wide: true, q8dot: true });
    expect(linearShape(lava, 64, 'q6_k', 2048)).not.toHaveProperty('q8dot');
    const noSubgroups = { ...lava, subgroups: false };
    expect(linearShape(noSubgroups, 1, 'q4_k', 2048)).toMatchObject({ q8dot: true });
    expect(linearShape(noSubgroups, 4, 'q4_k', 2048)).not.toHaveProperty('q8dot');
    expect(linearShape(noSubgroups, 64, 'q4_k', 2048)).toEqual({ kernel: 'rows', lanes: 32, rowBlock: 4, tokens: 4, q8dot: true });
    expect(linearShape(lava, 1, 'q8_0', 2048)).not.toHaveProperty('swar');
    for (const cols of [960, 2048, 8192]) expect(linearShape(lava, 1, 'q4_0', cols)).toEqual(swar);
    // From 2 to 8 rows of X, its 8 × 2 register tile; prefill its 4 × 4 tile, and q8_0 prefill the plain 8-bit one.
    for (const R of [2, 5, 8]) expect(linearShape(lava, R, 'q4_0', 2048)).toEqual({ ...swar, rowBlock: 8, tokens: 2 });
    for (const R of [9, 512]) expect(linearShape(lava, R, 'q4_0', 2048)).toEqual({ ...swar, rowBlock: 4, tokens: 4 });
    expect(linearShape(lava, 9, 'q8_0', 2048)).toEqual({ kernel: 'rows', lanes: 32, rowBlock: 4, tokens: 4, q8dot: true });
    // Without subgroups: the 8-bit kernel from 4096 columns, the nibble kernel below (they tie there).
    expect(linearShape({ ...lava, subgroups: false }, 1, 'q4_0', 2048)).toMatchObject({ nibbles: true });
    expect(linearShape({ ...lava, subgroups: false }, 1, 'q4_0', 8192)).toMatchObject({ kernel: 'rows', q8dot: true });
    expect(linearShape({ ...lava, subgroups: false }, 1, 'q4_0', 8192)).not.toHaveProperty('swar');
    expect(linearShape(lava, 3, 'q8_0', 2048)).not.toHaveProperty('q8dot');
  });

  it("rounds activations per format as llama.cpp does (Q8_0 for q4_0/q8_0, Q8_K for the K-quants), and a pair's two matrices share one rounding", () => {
    expect(['q4_0', 'q8_0', 'q4_k', 'q6_k'].map((f) => activationGroup(f as 'q4_0'))).toEqual([1, 1, 8, 8]);
    // A pair variant stages X once for both matrices, with its first format's X_GROUP.
    for (const [a, b] of LINEAR_PAIRS) expect(activationGroup(a), `${a}+${b}`).toBe(activationGroup(b));
  });

  it('chooses per CPU adapter kind: without subgroups SwiftShader runs q4_0 decode with 8-bit activations at every width, lavapipe from 4096 columns', () => {
    const swiftshader = caps({ cpuLike: true, kind: 'swiftshader', packedDot: true, subgroups: false, subgroupMinSize: 4, subgroupMaxSize: 4 });
    const lava = { ...lavapipe, packedDot: true, subgroups: false };
    const rows = { kernel: 'rows', lanes: 8, rowBlock: 8, tokens: 1, q8dot: true };
    // smollm2-360m's decode shapes: 960 columns (Q|K|V, wo, gate|up, the LM head) and 2560 (down).
    for (const cols of [960, 2560, 8192]) expect(linearShape(swiftshader, 1, 'q4_0', cols)).toEqual(rows);
    expect(linearShape(lava, 1, 'q4_0', 960)).toMatchObject({ nibbles: true });
    // With subgroups both run the SWAR kernel; SwiftShader one token per workgroup at every R, 8
    // named rows per invocation (linear_q8dot_swar.wgsl's one_token_rows8) [L14].
    for (const k of [swiftshader, lava]) expect(linearShape({ ...k, subgroups: true }, 1, 'q4_0', 960)).toMatchObject({ swar: true });
    for (const R of [1, 2, 8, 64])
      expect(linearShape({ ...swiftshader, subgroups: true }, R, 'q4_0', 960)).toMatchObject({ swar: true, rowBlock: 8, tokens: 1 });
    expect(linearShape({ ...lava, subgroups: true }, 1, 'q4_0', 960)).toMatchObject({ swar: true, rowBlock: 16, tokens: 1 });
    // Another CPU adapter follows lavapipe's measurements; without the language feature, or from R = 2, nothing changes.
    expect(linearShape({ ...lava, kind: 'cpu' }, 1, 'q4_0', 960)).toMatchObject({ nibbles: true });
    expect(linearShape({ ...swiftshader, packedDot: false }, 1, 'q4_0', 960)).toMatchObject({ nibbles: true });
    expect(linearShape(swiftshader, 2, 'q4_0', 960)).toEqual(linearShape({ ...swiftshader, kind: 'lavapipe' }, 2, 'q4_0', 960));
    // The nibble kernel stays a candidate (the autotuner's).
    expect(linearShapes(swiftshader, 1, 'q4_0', 960).some((s) => s.kernel === 'rows' && s.nibbles)).toBe(true);
  });
});

describe('adapter kind', () => {
  const desc = (vendor: string, architecture: string, description = '') => ({ vendor, architecture, device: '', description, isFallbackAdapter: false });
  it('tells SwiftShader, lavapipe, other CPU adapters and GPUs apart', () => {
    expect(adapterKind(desc('google', 'swiftshader', 'SwiftShader Device (Subzero)'), true)).toBe('swiftshader');
    expect(adapterKind(desc('mesa', '', 'llvmpipe (LLVM 19.1.7, 256 bits)'), true)).toBe('lavapipe');
    expect(adapterKind(desc('microsoft', 'warp'), true)).toBe('cpu');
    expect(adapterKind(desc('nvidia', 'hopper'), false)).toBe('gpu');
  });
});

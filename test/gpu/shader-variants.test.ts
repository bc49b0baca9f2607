/**
 * Every shader module the kernels can produce compiles on this adapter with no compiler error:
 * linear layers (every weight format × every kernel body and shape select.ts can choose, on this
 * device and on it presented as a GPU, × each epilogue switch), the embedding per format, the
 * attention, RoPE-store and sampling variants as their kernels build them, and every entry point
 * of every other module. Shapes come from the tables the code uses (WEIGHT_FORMATS, linearShapes,
 * linearSpec), and the modules from the generated set (SHADERS in src/kernels/shaders.generated.ts:
 * every kernel file and every variant of variant-table.ts), so a new format, shape, file or variant
 * is covered without editing this test; a module this adapter can run but no build reached fails it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageBuffer } from '../../src/gpu/buffers.ts';
import type { Capabilities } from '../../src/gpu/capabilities.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { getPipeline, pipelineKey, type ShaderSpec } from '../../src/gpu/pipelines.ts';
import { attentionDecode, attentionPrefill } from '../../src/kernels/attention.ts';
import { add, swiglu } from '../../src/kernels/elementwise.ts';
import { embeddingSpec } from '../../src/kernels/embedding.ts';
import { releaseDispatches, type Dispatch } from '../../src/kernels/kernel.ts';
import { checkLinearShape, linearSpec, type LinearIo } from '../../src/kernels/linear-plan.ts';
import { rmsnorm } from '../../src/kernels/rmsnorm.ts';
import { ropeStore } from '../../src/kernels/rope-store.ts';
import { argmax, sample } from '../../src/kernels/sampling.ts';
import { attentionShapes, embeddingWorkgroupSize } from '../../src/kernels/select.ts';
import { linearShapes } from '../../src/kernels/linear-shapes.ts';
import { allShaderCode, type KernelSpec, type ShaderName } from '../../src/kernels/shaders.ts';
import { WEIGHT_FORMATS } from '../../src/kernels/weights.ts';
import { inBrowser, testGpu } from './context.ts';

/**
 * Each epilogue/prologue switch of a linear pipeline on its own, and all of them at once. The
 * switches are override constants over one module text, so Chromium's WGSL validation sees every
 * path in any of them; its SwiftShader back end compiles only the all-switches variant of each
 * format and body (the others compile subsets of that code), lavapipe every one.
 */
const LINEAR_IO: LinearIo[] = [
  {},
  { bias: true },
  { accumulate: true },
  { norm: true },
  { gate: 'silu' },
  { gate: 'gelu_tanh' },
  { bias: true, accumulate: true, norm: true, gate: 'gelu_tanh' },
];
/**
 * Step sizes whose shapes are compiled. Each R is its own pipeline (TOKENS and the shape change with
 * it); SwiftShader compiles ~10× slower than lavapipe, so in Chromium one step of each class stands
 * for the rest — decode (1), several rows, odd and full (3, 8), a short prompt in groups (64) —
 * which lavapipe compiles every one of.
 */
const ROWS = inBrowser ? [1, 3, 8, 64] : [1, 2, 3, 4, 5, 6, 7, 8, 16, 64];

/**
 * This device's capabilities with and without subgroups (a run may turn them off), presented as a
 * CPU adapter and, on lavapipe, also as a GPU: every shape select.ts can pick. Chromium compiles
 * only the shapes the page picks on SwiftShader (a CPU adapter's); lavapipe compiles the GPUs'.
 */
function capsVariants(caps: Capabilities): Capabilities[] {
  return (inBrowser ? [caps.cpuLike] : [true, false]).flatMap((cpuLike) =>
    [caps.subgroups, false].filter((s, i, all) => all.indexOf(s) === i).map((subgroups) => ({ ...caps, cpuLike, subgroups })),
  );
}

/** Every module's text, loaded once before the tests (the page loads a group at a time). */
let SHADERS: Record<ShaderName, string>;

/** A kernel spec with its module's text. */
const withCode = (s: KernelSpec): ShaderSpec => ({ ...s, code: s.code ?? SHADERS[s.name as ShaderName] });

function linearVariants(ctx: GpuContext): ShaderSpec[] {
  const specs = new Map<string, ShaderSpec>();
  const seen = new Set<string>();
  const once = (key: string, spec: () => KernelSpec) => {
    if (seen.has(key)) return;
    seen.add(key);
    const s = withCode(spec());
    specs.set(`${s.code}|${pipelineKey(s)}`, s);
  };
  for (const caps of capsVariants(ctx.caps)) {
    for (const R of ROWS) {
      for (const shape of [...linearShapes(caps, R), ...linearShapes(caps, R, 'q4_0')]) {
        try {
          checkLinearShape(caps, shape, R);
        } catch {
          continue;
        }
        const plain = linearSpec('f32', shape, R);
        const body = plain.name.split('+')[0];
        // Every shape's constants once; every format × body with no switch and with all of them;
        // every switch alone once per body.
        // TOKENS only bounds loops (the kernels' arrays are sized by their maxima): one value per shape is enough.
        const { TOKENS: _tokens, ...constants } = plain.constants ?? {};
        once(pipelineKey({ ...plain, name: body, code: '', constants }), () => plain);
        for (const format of WEIGHT_FORMATS)
          for (const io of [LINEAR_IO[0], LINEAR_IO[LINEAR_IO.length - 1]].slice(inBrowser ? 1 : 0))
            once(`${linearSpec(format, shape, R).name} ${JSON.stringify(io)}`, () => linearSpec(format, shape, R, io));
        for (const io of inBrowser ? [] : LINEAR_IO) once(`${body} ${JSON.stringify(io)}`, () => linearSpec('q4_k', shape, R, io));
      }
    }
  }
  return [...specs.values()];
}

/** Specs of the modules no kernel build compiled: each of their entry points, with the default constants. */
function standaloneVariants(compiled: readonly string[]): ShaderSpec[] {
  const used = new Set(compiled);
  return (Object.keys(SHADERS) as ShaderName[])
    .filter((name) => !used.has(SHADERS[name]))
    .flatMap((name) => [...SHADERS[name].matchAll(/@compute[^;{]*?fn\s+(\w+)/g)].map((m) => ({ name, code: SHADERS[name], entryPoint: m[1] })));
}

/** Attention, RoPE-store, norm, elementwise and sampling dispatches as their kernels build them, over tiny buffers. */
async function kernelVariants(ctx: GpuContext): Promise<Dispatch[]> {
  const d = ctx.device;
  const buf = (label: string) => storageBuffer(d, `variants.${label}`, 1 << 16);
  const b = {
    q: buf('q'),
    kCache: buf('k'),
    vCache: buf('v'),
    rows: buf('rows'),
    out: buf('out'),
    qkv: buf('qkv'),
    invFreq: buf('invFreq'),
    norm: buf('norm'),
  };
  const out: Dispatch[] = [];
  for (const caps of capsVariants(ctx.caps)) {
    const c = { ...ctx, caps };
    // One query head per kv head, and four (GQA).
    for (const [heads, kv] of [
      [{ nHeads: 4, nKvHeads: 4, headDim: 16 }, 'f32'],
      [{ nHeads: 8, nKvHeads: 2, headDim: 8 }, 'f16'],
    ] as const) {
      const shape = { ...heads, maxSeq: 16, window: 0, kv };
      for (const R of [1, 2, 16]) {
        const choice = attentionShapes(caps, heads, R);
        out.push(...(await attentionDecode(c, 'variants.decode', b, R, shape, choice.decode)));
        if (choice.prefill) out.push(...(await attentionPrefill(c, 'variants.prefill', b, R, shape, choice.prefill)));
      }
      for (const ropeStyle of ['adjacent', 'neox'] as const) {
        for (const headNorm of [undefined, { q: b.norm, k: b.norm, eps: 1e-6 }]) {
          const rope = { ...heads, ropeDim: heads.headDim, ropeStyle, slots: 1, maxSeq: 16, kv };
          out.push(await ropeStore(c, 'variants.rope', { ...b, headNorm }, 2, rope));
        }
      }
    }
    out.push(...(await argmax(c, 'variants.argmax', b.out, b.rows, 2, 64)), ...(await argmax(c, 'variants.argmax_two_pass', b.out, b.rows, 2, 64, 16)));
    out.push((await sample(c, 'variants.sample', b.out, b.rows, 2, 64, { temperature: 1, topK: 4, topP: 0.9, seed: 1, step: 0 })).dispatch);
    out.push(await rmsnorm(c, 'variants.rmsnorm', b.q, b.norm, b.out, 2, 16, 1e-6));
    out.push(await add(c, 'variants.add', b.out, b.q, 2, 16));
    out.push(await swiglu(c, 'variants.swiglu', b.q, b.kCache, b.out, 2, 16));
    out.push(await swiglu(c, 'variants.swiglu_in_place', b.q, b.kCache, b.q, 2, 16));
  }
  releaseDispatches(out);
  for (const x of Object.values(b)) x.destroy();
  return out;
}

describe('every shader variant the kernels can produce', () => {
  let ctx: GpuContext;
  const modules: GPUShaderModule[] = [];
  const codes: string[] = [];
  let original: GPUDevice['createShaderModule'];
  beforeAll(async () => {
    SHADERS = await allShaderCode();
    ctx = await testGpu();
    const device = ctx.device;
    original = device.createShaderModule;
    // Every module made on this device, to read its compilation messages.
    device.createShaderModule = (descriptor) => {
      const module = original.call(device, descriptor);
      modules.push(module);
      codes.push(descriptor.code);
      return module;
    };
  });
  afterAll(() => {
    if (ctx) ctx.device.createShaderModule = original;
    ctx?.destroy();
  });

  it('keys pipelines by their code: two variants under one label never share a pipeline', async () => {
    const code = SHADERS.copy;
    const a = getPipeline(ctx.device, { name: 'same-label', code });
    const b = getPipeline(ctx.device, { name: 'same-label', code: `${code}\n// another variant` });
    expect(a).not.toBe(b);
    expect(getPipeline(ctx.device, { name: 'same-label', code })).toBe(a);
    await Promise.all([a, b]);
  });

  it('compiles on this adapter with no compiler error', { timeout: 600_000 }, async () => {
    const f16 = ctx.caps.shaderF16;
    const runnable = (s: ShaderSpec) => (f16 || !/\benable f16\b/.test(s.code)) && (ctx.caps.subgroups || !/\benable subgroups\b/.test(s.code));
    const linear = linearVariants(ctx);
    const joined = [
      ...linear,
      ...WEIGHT_FORMATS.flatMap((f) => capsVariants(ctx.caps).map((caps) => withCode(embeddingSpec(f, embeddingWorkgroupSize(caps))))),
    ];
    const failures: string[] = [];
    // The kernels' own builds first: the files they join (e.g. a KV load into attention) are not standalone.
    const dispatches = await kernelVariants(ctx).catch((e: unknown) => (failures.push(String(e)), []));
    expect(dispatches.length).toBeGreaterThan(0);
    const standalone = standaloneVariants([...joined.map((s) => s.code), ...codes]);
    const specs = [...joined, ...standalone].filter(runnable);
    // Every linear body and every format is reached, and so is every WGSL file.
    const bodies = new Set(linear.map((s) => s.name.split('+')[0]));
    expect([...bodies].sort()).toEqual(
      expect.arrayContaining([
        'linear_rows',
        'linear_rows_q4_0_loads',
        'matmul_tiled',
        'matvec',
        ...(ctx.caps.subgroups ? ['matvec_subgroups', 'matvec_wide'] : []),
      ]),
    );
    expect(new Set(linear.map((s) => s.name.split('+')[1]))).toEqual(new Set(WEIGHT_FORMATS));

    for (let i = 0; i < specs.length; i += 16) {
      const batch = await Promise.allSettled(specs.slice(i, i + 16).map((s) => getPipeline(ctx.device, s)));
      batch.forEach((r, j) => {
        if (r.status === 'rejected') failures.push(`${pipelineKey(specs[i + j])}: ${String(r.reason)}`);
      });
    }
    for (const module of modules) {
      const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error');
      for (const e of errors) failures.push(`${module.label} line ${e.lineNum}: ${e.message}`);
    }
    expect(failures).toEqual([]);
    // Every generated module (kernel file or variant) was compiled (one that enables a feature this
    // adapter lacks is reached where the feature exists).
    const reached = new Set(codes);
    const names = (Object.keys(SHADERS) as ShaderName[]).filter((name) => runnable({ name, code: SHADERS[name] }));
    expect(names.filter((name) => !reached.has(SHADERS[name]))).toEqual([]);
    console.info(
      `shader variants: ${linear.length} linear, ${specs.length} joined/standalone pipelines + ${dispatches.length} kernel dispatches, ${modules.length} modules checked`,
    );
  });
});

/**
 * The prepared GPU check: one run on a machine with a real GPU that measures the roofs, then
 * decode and prefill of the Llama presets — Llama-3.2-1B in Q4_0 (with a per-kernel profile of
 * its decode and prefill), Q4_K_M and F16, then 3B and 8B in Q4_0 — with the linear kernels'
 * shapes autotuned on the device, then stories260K's 200 golden tokens, reporting how far greedy
 * decoding agrees with the CPU's — writing a result JSON and a text report per model to OUTDIR and
 * one summary line per model. The full plan refuses a CPU implementation of WebGPU (it would
 * time the CPU, slowly); --quick runs the same steps on toy models anywhere. Runs from the repo
 * (`npm run gpu-check -- OUTDIR`) or from the self-contained bundle `npm run gpu-check:bundle`
 * builds (see README, "A prepared GPU check").
 *
 * Usage: gpu-check OUTDIR [--quick] [--models ID:QUANT,…] [--stories DIR] [--budget-s S]
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { besideSampler, measureCeilings } from '../src/measure/ceilings.ts';
import { describeEnvironment } from '../src/measure/environment.ts';
import { runLatency, type LatencySection } from '../src/measure/latency.ts';
import { summaryLine } from './gpu-check-summary.ts';
import { resolveModel } from '../src/jobs/model-source.ts';
import { formatCeilings } from '../src/measure/sections/environment.ts';
import { formatReport } from '../src/jobs/report.ts';
import { newResult, type BenchResult, type Ceilings } from '../src/measure/schema.ts';
import { describeError } from '../src/errors.ts';
import type { GpuContext } from '../src/gpu/device.ts';
import { MemoryTuneCache, type TuneCache } from '../src/kernels/autotune.ts';
import { acquireNodeGpu } from '../src/gpu/node-gpu.ts';
import { generate } from '../src/model/generate.ts';
import { fileSource } from '../src/model/gguf/node-source.ts';
import type { Quantization } from '../src/model/gpu-weights.ts';
import { presetChoice, type ModelChoice } from '../src/model/choice.ts';
import { loadModel } from '../src/model/load.ts';

interface Plan {
  models: { id: string; quant: Quantization }[];
  promptLengths: number[];
  gen: number;
  reps: number;
  probeMiB?: number;
}

const FULL: Plan = {
  // The first model is profiled per kernel; Q4_K_M is the format most published files use.
  models: [
    { id: 'llama-3.2-1b', quant: 'q4_0' },
    { id: 'llama-3.2-1b', quant: 'q4_k_m' },
    { id: 'llama-3.2-1b', quant: 'f16' },
    { id: 'llama-3.2-3b', quant: 'q4_0' },
    { id: 'llama-3.1-8b', quant: 'q4_0' },
    { id: 'llama-3.1-8b', quant: 'q4_k_m' },
  ],
  // Decode after a short prompt; prefill at 512 tokens (the f16/f32 FMA fraction is read there).
  promptLengths: [16, 512],
  gen: 64,
  reps: 3,
};

/** The same steps at toy size, to check the bundle end to end on a CPU adapter (lavapipe). */
const QUICK: Plan = {
  models: [
    { id: 'stories260k', quant: 'q4_0' },
    { id: 'stories260k', quant: 'q4_k_m' },
    { id: 'stories260k', quant: 'f16' },
  ],
  promptLengths: [8, 32],
  gen: 8,
  reps: 1,
  probeMiB: 8,
};

interface Args {
  out: string;
  plan: Plan;
  quick: boolean;
  storiesDir: string;
  budgetMs: number;
}

const USAGE = 'usage: gpu-check OUTDIR [--quick] [--models ID:QUANT,…] [--stories DIR] [--budget-s S]';

function parseArgs(argv: string[], here: string): Args {
  let out: string | undefined;
  let plan = FULL;
  let quick = false;
  let models: Plan['models'] | undefined;
  let storiesDir =
    [join(here, 'models'), resolve(here, '../../shared/models'), resolve(here, '../shared/models')].find((d) => existsSync(join(d, 'stories260K.gguf'))) ??
    join(here, 'models');
  let budgetS = 330;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') {
      plan = QUICK;
      quick = true;
    } else if (a === '--models')
      models = (argv[++i] ?? '').split(',').map((m) => {
        const [id, quant = 'q4_0'] = m.split(':');
        return { id, quant: quant as Quantization };
      });
    else if (a === '--stories') storiesDir = resolve(argv[++i] ?? '.');
    else if (a === '--budget-s') budgetS = Number(argv[++i]);
    else if (!a.startsWith('--') && out === undefined) out = resolve(a);
    else throw new Error(`${USAGE}\nunexpected argument ${a}`);
  }
  if (!out) throw new Error(USAGE);
  if (!(budgetS > 0)) throw new Error(`--budget-s must be a positive number of seconds\n${USAGE}`);
  return { out, plan: models ? { ...plan, models } : plan, quick, storiesDir, budgetMs: budgetS * 1000 };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** One model: load (synthetic weights), tune its linear shapes on this device, then the latency sweep against the roofs measured once. */
async function runModel(ctx: GpuContext, ceilings: Ceilings, choice: ModelChoice, plan: Plan, profile: boolean, tuneCache: TuneCache): Promise<BenchResult> {
  const maxSeq = Math.max(...plan.promptLengths) + plan.gen;
  const result = newResult(describeEnvironment(ctx));
  result.ceilings = ceilings;
  const loaded = await loadModel(ctx, choice, { shape: { maxSeq, slots: 1, maxRows: Math.min(512, maxSeq) }, autotune: { cache: tuneCache } });
  // The read roof's kernel timed beside each request, as runJob's sweeps do (decode_of_read_beside).
  const beside = await besideSampler(ctx, ceilings);
  if (typeof beside === 'string') log(`  (${beside})`);
  const sampler = typeof beside === 'string' ? null : beside;
  try {
    result.model = loaded.info;
    result.cold_start = loaded.cold;
    result.kernel_shapes = loaded.kernelShapes;
    result.latency = await runLatency(
      loaded.engine,
      loaded.cold,
      ceilings,
      {
        prompt_lengths: plan.promptLengths,
        output_tokens: plan.gen,
        reps: plan.reps,
        warmup: 1,
        cooldown_ms: 0,
        seed: 42,
        chunk: Math.min(512, maxSeq),
        profile,
      },
      sampler ? { readBeside: () => sampler.sample() } : {},
    );
  } finally {
    sampler?.destroy();
    await loaded.engine.destroy();
  }
  return result;
}

/**
 * stories260K's greedy tokens from BOS against llama2.c's (the file's expected output): how many of
 * the 200 agree, and where they first part. A GPU may round differently from the CPU that wrote
 * them (reduction order, an f16 cache), so an agreement short of 200 is reported, not failed; an
 * early parting (within the first GOLDEN_MIN_AGREE tokens) is a wrong kernel and fails the check.
 */
const GOLDEN_MIN_AGREE = 32;

async function golden(ctx: GpuContext, dir: string): Promise<{ line: string; ok: boolean; record: unknown }> {
  const expected = JSON.parse(readFileSync(join(dir, 'stories260K.expected.json'), 'utf8')) as { token_ids: number[] };
  const source = await fileSource(join(dir, 'stories260K.gguf'));
  try {
    const resolved = await resolveModel({}, { source });
    const steps = expected.token_ids.length - 1;
    const loaded = await loadModel(ctx, resolved.choice, { shape: { maxSeq: steps + 1, slots: 1, maxRows: 16 } });
    try {
      const g = await generate(loaded.engine, [expected.token_ids[0]], steps);
      const got = [expected.token_ids[0], ...g.outputTokens];
      const parted = got.findIndex((t, i) => t !== expected.token_ids[i]);
      const agree = parted === -1 ? steps : parted - 1;
      const ok = agree >= Math.min(GOLDEN_MIN_AGREE, steps);
      const line =
        parted === -1
          ? `stories260K: greedy decoding agrees with the expected tokens for all ${steps}`
          : `stories260K: greedy decoding agrees for ${agree} of ${steps} tokens, first difference at position ${parted} (expected ${expected.token_ids[parted]}, got ${got[parted]})${ok ? '' : ' — too early: a kernel is wrong'}`;
      return {
        ok,
        line,
        record: { ok, steps, agree, first_difference: parted, kv_cache: loaded.info.kv_cache ?? null, token_ids: got, expected: expected.token_ids },
      };
    } finally {
      await loaded.engine.destroy();
    }
  } finally {
    await source.close();
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n(what each step measures: the README's section "A prepared GPU check")\n`);
    return 0;
  }
  const args = parseArgs(argv, import.meta.dirname ?? process.cwd());
  mkdirSync(args.out, { recursive: true });
  const started = performance.now();
  const summary: string[] = [];
  const write = (name: string, data: unknown) => writeFileSync(join(args.out, name), `${JSON.stringify(data, null, 2)}\n`);
  let failed = false;

  const ctx = await acquireNodeGpu({ onError: (m) => log(m) });
  try {
    const env = describeEnvironment(ctx);
    log(`device: ${env.adapter.vendor} ${env.adapter.architecture} ${env.adapter.device ?? ''} ${env.adapter.description ?? ''} (${env.user_agent})`);
    if (ctx.caps.cpuLike && !args.quick) {
      throw new Error(
        `the adapter is a CPU implementation of WebGPU (${ctx.caps.kind}), not a GPU: the full plan would time this CPU for hours. ` +
          'If this machine has a GPU, its Vulkan driver was not found (check `vulkaninfo --summary`, VK_DRIVER_FILES, and that the driver matches the kernel module). ' +
          'To check the bundle itself on a CPU, run with --quick.',
      );
    }
    const tuneCache = new MemoryTuneCache();
    log('roofs…');
    const ceilings = await measureCeilings(ctx, {
      maxWorkingSetBytes: args.plan.probeMiB ? args.plan.probeMiB * 2 ** 20 : undefined,
      onProgress: (step) => log(`  ${step}`),
    });
    const roofs = newResult(env);
    roofs.ceilings = ceilings;
    write('roofs.json', roofs);
    process.stdout.write(`${formatCeilings(ceilings)}\n\n`);

    for (const m of args.plan.models) {
      const name = `${m.id} ${m.quant}`;
      if (performance.now() - started > args.budgetMs) {
        summary.push(`${name}: skipped — the ${args.budgetMs / 1000} s budget was spent`);
        continue;
      }
      log(`${name}…`);
      try {
        // The plan's first model also gets the per-kernel profile (separate runs, never in the headline).
        const result = await runModel(ctx, ceilings, presetChoice(m.id, m.quant, 1), args.plan, m === args.plan.models[0], tuneCache);
        write(`${m.id}-${m.quant}.json`, result);
        writeFileSync(join(args.out, `${m.id}-${m.quant}.txt`), `${formatReport(result)}\n`);
        summary.push(summaryLine(name, result.latency as LatencySection, ceilings));
        if (result.kernel_shapes) log(`  linear shapes (${result.kernel_shapes.source}): ${JSON.stringify(result.kernel_shapes.linear)}`);
      } catch (e) {
        const tooLarge = /model-too-large/.test((e as { code?: string }).code ?? '');
        if (!tooLarge) failed = true;
        summary.push(`${name}: ${tooLarge ? 'skipped' : 'FAILED'} — ${describeError(e)}`);
      }
      log(`  ${summary[summary.length - 1]}`);
    }

    log('stories260K golden tokens…');
    try {
      const g = await golden(ctx, args.storiesDir);
      write('stories260k-golden.json', g.record);
      summary.push(g.line);
      if (!g.ok) failed = true;
    } catch (e) {
      failed = true;
      summary.push(`stories260K: FAILED — ${describeError(e)}`);
    }
  } finally {
    ctx.destroy();
  }
  summary.push(`total ${((performance.now() - started) / 1000).toFixed(1)} s; results in ${args.out}`);
  writeFileSync(join(args.out, 'summary.txt'), `${summary.join('\n')}\n`);
  process.stdout.write(`${summary.join('\n')}\n`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`error: ${describeError(e)}\n`);
    process.exit(1);
  },
);

/**
 * `npm run bench` — the headless runner. Drives the same job code as the page, in Node on the
 * `webgpu` package (Dawn) or in Chromium/Chrome on the built page.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { KNOWN_FILES, parameterCount, PRESETS } from '../src/model/catalog.ts';
import { fileTuneCache } from './tune-cache.ts';
import { formatReport } from '../src/jobs/report.ts';
import { table } from '../src/measure/format.ts';
import { QUANTIZATIONS } from '../src/model/recipes.ts';
import type { BenchResult, Ceilings } from '../src/measure/schema.ts';
import type { BenchJob } from '../src/jobs/job-spec.ts';
import type { GpuContext } from '../src/gpu/device.ts';
import type { Fallbacks } from '../src/gpu/capabilities.ts';
import { progressPrinter } from './progress.ts';
import { staleReusedRoofs } from '../src/measure/roofs-key.ts';
import { fileRoofsCache, roofsFromResultFile, roofsKey, type RoofsSource } from './roofs-cache.ts';
import { describeError } from '../src/errors.ts';
import { parseFallbacks } from '../src/gpu/capabilities.ts';
import { encodeReport, shareable } from '../src/share/permalink.ts';
import { parseFlags, usage, UsageError, type GivenFlags } from './args.ts';
import { BENCH_FLAGS, misplacedFlag, outputDirProblem, outputPathProblem, runKind } from './bench-flags.ts';
import type { LlamaBenchOutput } from '../src/measure/llama-bench-output.ts';

/** Where `npm start` serves the page. */
const DEFAULT_PAGE_URL = 'http://127.0.0.1:5173/';

const SUMMARY =
  'Measure this machine with tokenscope. With no arguments: the roofs, then a latency sweep of the\n' +
  'embedded default model (a small synthetic-weight preset on CPU adapters, Llama-3.2-1B-shaped on GPUs).\n' +
  "`--merge A.json B.json … [--json LIST.json]` merges saved results into one list for the page's many-results view.";

function listModels(): string {
  const presets = PRESETS.map((p) => [
    p.id,
    p.title,
    p.config.architecture,
    `${(parameterCount(p.config) / 1e6).toFixed(1)} M`,
    'synthetic weights — speed only',
  ]);
  const files = KNOWN_FILES.map((f) => [f.id, f.title, '', f.size ? `${(f.size / 2 ** 20).toFixed(1)} MiB` : '?', f.url]);
  return `${table(['id', 'model', 'arch', 'params/size', 'source'], [...presets, ...files])}\n\nPresets take --quant ${QUANTIZATIONS.join('|')} (default q4_0). Files: --model PATH or URL.\n`;
}

async function main(argv: string[]): Promise<number> {
  // `--merge` writes a list of saved results and runs nothing: its own small command (cli/merge.ts).
  if (argv.includes('--merge')) return (await import('./merge.ts')).mergeMain(argv);
  let flags: Map<string, unknown>;
  let disabled;
  let savedRoofs: ReturnType<typeof roofsFromResultFile> | undefined;
  try {
    flags = parseFlags(argv, BENCH_FLAGS, misplacedFlag);
    disabled = parseFallbacks(((flags.get('disable') as string[] | undefined) ?? []).join(','));
    const jsonPath = flags.get('json') as string | undefined;
    const pathProblem = jsonPath === undefined ? null : outputPathProblem(jsonPath);
    if (pathProblem) throw new UsageError(`${pathProblem}.`);
    const outDir = flags.get('out') as string | undefined;
    const outProblem = outDir === undefined ? null : outputDirProblem(outDir, '--out');
    if (outProblem) throw new UsageError(`${outProblem}.`);
    const saveProblem = flags.has('save-result') ? outputDirProblem((flags.get('result-dir') as string | undefined) ?? '.', '--result-dir') : null;
    if (saveProblem) throw new UsageError(`${saveProblem}.`);
    const roofsFlag = flags.get('roofs') as string | undefined;
    // A saved result's roofs are read and checked here, before any GPU work.
    if (roofsFlag !== undefined && roofsFlag !== 'fresh') savedRoofs = roofsFromResultFile(roofsFlag);
    // Every setting is checked before the device is touched: with the small defaults of a CPU
    // adapter here, and again with the device's own once it is known (still before the roofs).
    // The engine's modules load only once the flags above have passed.
    if (!flags.has('help') && !flags.has('list-models') && !flags.has('inspect')) (await import('./bench-job.ts')).jobFromFlags(flags, true);
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n\n${usage('npm run bench --', SUMMARY, BENCH_FLAGS)}`);
    return 2;
  }
  if (flags.get('help')) {
    process.stdout.write(usage('npm run bench --', SUMMARY, BENCH_FLAGS));
    return 0;
  }
  if (flags.get('list-models')) {
    process.stdout.write(listModels());
    return 0;
  }
  const quiet = Boolean(flags.get('quiet'));
  const progress = progressPrinter(process.stderr);
  const onProgress = (step: string, f: number) => {
    if (!quiet) progress(step, f);
  };
  /** A line on stderr that ends a TTY's updating progress line first. */
  const log = (line: string) => {
    progress.clear();
    process.stderr.write(`${line}\n`);
  };
  const inspect = flags.get('inspect') as string | undefined;
  if (inspect !== undefined) return runInspect(inspect, flags, onProgress, () => progress.clear());

  const hf = flags.get('hf-repo') as string | undefined;
  if (hf !== undefined) {
    const { parseHfRepoRef, resolveHfRepo } = await import('../src/model/hf-repo.ts');
    try {
      const { file, url } = await resolveHfRepo(parseHfRepoRef(hf)!, process.env.TOKENSCOPE_HF_BASE || undefined);
      flags.set('model', url);
      if (!quiet) log(`-hf ${hf}: ${file} (${url})`);
    } catch (e) {
      process.stderr.write(`error: -hf ${hf}: ${describeError(e)}\n`);
      return 1;
    }
  }

  let result: BenchResult;
  const { jobFromFlags } = await import('./bench-job.ts');
  try {
    if (flags.get('runtime') === 'browser') {
      const { runInBrowser } = await import('./browser-runner.ts');
      const roofs = savedRoofs ? { ceilings: savedRoofs.ceilings, source: savedRoofs.source } : undefined;
      result = await runInBrowser((cpuLike) => ({ ...jobFromFlags(flags, cpuLike), ...(roofs ? { roofs } : {}) }), {
        browser: flags.get('browser') as string | undefined,
        disable: [...disabled],
        onProgress,
        onLog: log,
      });
    } else {
      const { acquireNodeGpu } = await import('../src/gpu/node-gpu.ts');
      const ctx = await acquireNodeGpu({ disable: disabled, onError: log });
      try {
        const { runJob } = await import('../src/jobs/job.ts');
        const job = jobFromFlags(flags, ctx.caps.cpuLike);
        const cached = savedRoofs ? null : await roofsCacheFor(ctx, disabled, job, flags.get('roofs') === 'fresh' || flags.has('probe'));
        if (savedRoofs) {
          job.roofs = { ceilings: savedRoofs.ceilings, source: savedRoofs.source };
          const [was, is] = [savedRoofs.adapter, ctx.caps.adapter];
          if (was && (was.description !== is.description || was.vendor !== is.vendor || was.architecture !== is.architecture)) {
            log(
              `warning: --roofs ${savedRoofs.source.path} was measured on another adapter (${was.description || was.vendor}); this one is ${is.description || is.vendor}.`,
            );
          }
        } else if (cached?.hit) job.roofs = cached.hit;
        if (job.roofs && !quiet) log(describeReuse(job.roofs.source));
        const agreementFile = flags.get('agreement') === 'llama.cpp' ? job.model?.path : undefined;
        result = await runJob(ctx, job, disabled, {
          onProgress,
          tuneCache: fileTuneCache(),
          ...(agreementFile ? { secondReference: () => import('./llama-cpp-reference.ts').then((m) => m.openLlamaCppReference(agreementFile)) } : {}),
        });
        const source = result.ceilings?.source;
        if (cached && result.ceilings && source?.kind === 'measured') cached.store(result.ceilings, source.measured_at);
        const stale = staleReusedRoofs(result.ceilings);
        if (cached && stale) {
          cached.drop();
          result.notes = [...(result.notes ?? []), stale];
          if (!quiet) log(`warning: ${stale}`);
        }
      } finally {
        ctx.destroy();
      }
    }
  } catch (e) {
    progress.clear();
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n\n${usage('npm run bench --', SUMMARY, BENCH_FLAGS)}`);
      return 2;
    }
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 1;
  }

  progress.clear();
  if (runKind(flags as unknown as GivenFlags) === 'llama-bench') {
    // llama-bench's own output on stdout, as llama-bench prints it (progress and notes went to stderr).
    const { formatLlamaBenchOutput } = await import('../src/measure/llama-bench-output.ts');
    const a = result.environment.adapter;
    process.stdout.write(
      formatLlamaBenchOutput(result.llama_bench ?? [], (flags.get('output') as LlamaBenchOutput | undefined) ?? 'md', {
        model_filename: (flags.get('model') as string | undefined) ?? result.model?.id ?? '',
        gpu_info: a.description || [a.vendor, a.architecture].filter(Boolean).join(' '),
        test_time: result.created_at,
      }),
    );
  } else process.stdout.write(`${formatReport(result)}\n`);
  if (flags.get('share')) {
    const base = (flags.get('share-base') as string | undefined) ?? process.env.TOKENSCOPE_URL ?? DEFAULT_PAGE_URL;
    const fragment = await encodeReport(result);
    process.stdout.write(
      `\nPermalink (${fragment.length.toLocaleString('en-US')} characters${(await shareable(result)).notes?.some((n) => /trimmed/i.test(n)) ? '; raw samples trimmed — the JSON has them' : ''}):\n${base.replace(/#.*$/, '')}${fragment}\n`,
    );
  }
  if (flags.get('save-result')) {
    const { vllmResultFileName, vllmResultJson } = await import('./vllm-result.ts');
    const options = {
      modelId: (flags.get('model') as string | undefined) ?? result.model?.id ?? 'model',
      maxConcurrency: (flags.get('max-batch') as number | undefined) ?? null,
      detailed: Boolean(flags.get('save-detailed')),
    };
    const json = vllmResultJson(result, options);
    if (json) {
      const dir = (flags.get('result-dir') as string | undefined) ?? '.';
      mkdirSync(dir, { recursive: true });
      const file = join(dir, (flags.get('result-filename') as string | undefined) ?? vllmResultFileName(result, options));
      writeFileSync(file, `${JSON.stringify(json)}\n`);
      process.stdout.write(`\nWrote ${file} (vLLM's result JSON)\n`);
    }
  }
  let code = 0;
  const outDir = flags.get('out') as string | undefined;
  if (outDir !== undefined) {
    const { writeArtifacts } = await import('./artifacts.ts');
    const files = writeArtifacts(outDir, result);
    try {
      const { embedResult, reportPageHtml } = await import('./report-html.ts');
      const page = await reportPageHtml({ log: (line) => (quiet ? undefined : log(line)) });
      writeFileSync(join(outDir, 'report.html'), embedResult(page, result));
      files.push(join(outDir, 'report.html'));
    } catch (e) {
      // The data files are written already; only the page is missing.
      process.stderr.write(`error: --out: report.html could not be built (${describeError(e)}); the other files are written.\n`);
      code = 1;
    }
    // In llama-bench mode stdout holds only llama-bench's output.
    (runKind(flags as unknown as GivenFlags) === 'llama-bench' ? process.stderr : process.stdout).write(
      `\nWrote ${files.length} files to ${outDir}: ${files.map((f) => basename(f)).join(', ')}\n`,
    );
  }
  const jsonPath = flags.get('json') as string | undefined;
  if (jsonPath) {
    writeFileSync(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    // In llama-bench mode stdout holds only llama-bench's output (a JSONL reader sees nothing else).
    (runKind(flags as unknown as GivenFlags) === 'llama-bench' ? process.stderr : process.stdout).write(`\nWrote ${jsonPath}\n`);
  }
  return code;
}

/**
 * The per-device roofs cache for this run (Node runtime): its entry when one is fresh (unless
 * `fresh`), and how to store newly measured roofs. Runs with a custom protocol (`--probe --reps`) are neither read nor stored.
 */
async function roofsCacheFor(ctx: GpuContext, disabled: Fallbacks, job: BenchJob, fresh: boolean) {
  if (job.protocol || job.probeShapes) return null;
  const { describeEnvironment } = await import('../src/measure/environment.ts');
  const cache = fileRoofsCache({ warn: (m) => process.stderr.write(`${m}\n`) });
  const key = roofsKey({ environment: describeEnvironment(ctx, disabled), driver: webgpuVersion(), version: projectVersion(), probeMiB: job.probeMiB });
  return {
    // A job that does not measure the roofs (llama-bench mode) still takes the cached ones: they cost nothing.
    hit: fresh ? undefined : cache.get(key),
    store: (ceilings: Ceilings, measuredAt: string) => cache.set(key, ceilings, measuredAt),
    drop: () => cache.drop(key),
  };
}

function describeReuse(source: RoofsSource): string {
  const minutes = Math.round((Date.now() - Date.parse(source.measured_at)) / 60_000);
  const ago = Number.isFinite(minutes) ? `, ${minutes < 120 ? `${minutes} min` : `${(minutes / 60).toFixed(1)} h`} ago` : '';
  return source.kind === 'cached'
    ? `roofs: reused from ${source.path} (measured ${source.measured_at}${ago}); --roofs fresh measures them again`
    : `roofs: taken from ${source.path} (measured ${source.measured_at}${ago})`;
}

function readVersion(file: URL | string): string {
  try {
    return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version ?? '?');
  } catch {
    return '?';
  }
}
const projectVersion = () => readVersion(new URL('../package.json', import.meta.url));
const webgpuVersion = () => `webgpu ${readVersion(new URL('../node_modules/webgpu/package.json', import.meta.url))}`;

async function runInspect(
  target: string,
  flags: Map<string, unknown>,
  onProgress: (step: string, f: number) => void,
  endProgress: () => void,
): Promise<number> {
  const { inspectTarget, formatInspection } = await import('./inspect.ts');
  try {
    const run = await inspectTarget(target, {
      probe: Boolean(flags.get('probe')),
      probeMiB: flags.get('probe-mib') as number | undefined,
      budgetBytes: flags.has('memory-gib') ? (flags.get('memory-gib') as number) * 2 ** 30 : undefined,
      context: flags.get('context') as number | undefined,
      onProgress,
    });
    endProgress();
    process.stdout.write(`${formatInspection(run)}\n`);
    const jsonPath = flags.get('json') as string | undefined;
    if (jsonPath) {
      writeFileSync(jsonPath, `${JSON.stringify({ ...run.inspection, bytes_read: run.bytesRead, reads: run.reads }, null, 2)}\n`);
      process.stdout.write(`\nWrote ${jsonPath}\n`);
    }
    // A file the run would refuse (its config, tensors or the --context) fails here too, with the run's message.
    return run.inspection.unsupported ? 1 : 0;
  } catch (e) {
    endProgress();
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

/**
 * `npm run bench` — the headless runner. Drives the same job code as the page, in Node on the
 * `webgpu` package (Dawn) or in Chromium/Chrome on the built page.
 */
import { writeFileSync } from 'node:fs';
import { findPreset, KNOWN_FILES, parameterCount, PRESETS } from '../src/model/catalog.ts';
import { defaultJob, runJob, type BenchJob } from '../src/jobs/job.ts';
import { fileTuneCache } from './tune-cache.ts';
import type { ModelSpec } from '../src/jobs/model-source.ts';
import { formatReport } from '../src/jobs/report.ts';
import { table } from '../src/measure/format.ts';
import type { Quantization } from '../src/model/gpu-weights.ts';
import { QUANTIZATIONS } from '../src/model/recipes.ts';
import { parseSlo } from '../src/serve/metrics.ts';
import type { ServeSettings } from '../src/serve/run.ts';
import type { LengthDistribution } from '../src/serve/workload.ts';
import type { BenchResult } from '../src/measure/schema.ts';
import { describeError } from '../src/errors.ts';
import { parseFallbacks } from '../src/gpu/capabilities.ts';
import { encodeReport, shareable } from '../src/share/permalink.ts';
import { parseFlags, usage, UsageError, type FlagSpec } from './args.ts';

const FLAGS: Record<string, FlagSpec> = {
  runtime: { type: 'string', choices: ['node', 'browser'], help: 'where to run: Node + Dawn (default) or the built page in Chromium' },
  engine: {
    type: 'string',
    choices: ['tokenscope', 'webllm'],
    help: "whose inference to time: tokenscope's WGSL engine (default) or WebLLM (browser runtime only)",
  },
  browser: { type: 'string', value: 'PATH', help: 'Chromium/Chrome executable (else $CHROME_PATH, else the usual paths)' },
  model: {
    type: 'string',
    value: 'PRESET|FILE|URL',
    help: 'a preset id (synthetic weights), a GGUF path or URL (default: per device); with --engine webllm, a WebLLM model id',
  },
  quant: {
    type: 'string',
    choices: [...QUANTIZATIONS],
    help: 'weight format or llama-quantize mix (q4_k_m, q4_k_s, q5_k_m, q6_k, q8_0): synthesised for presets, quantized on load for F32/F16 files',
  },
  prompt: { type: 'string', value: 'TEXT', help: 'generate greedily from this prompt and print the text' },
  chat: { type: 'boolean', help: "with --prompt: send it as a user message through the model file's chat template" },
  temperature: { type: 'number', value: 'T', help: 'with --prompt: sample on the GPU at this temperature (default 0: greedy)' },
  'top-k': { type: 'int', value: 'K', help: 'with --temperature: keep the K most likely tokens (default 0: off)' },
  'top-p': { type: 'number', value: 'P', help: 'with --temperature: nucleus sampling mass (default 1: off)' },
  gen: { type: 'int', value: 'N', help: 'output tokens per request (default 16 on CPU adapters, 64 on GPUs)' },
  'prompt-lengths': { type: 'list', value: 'N,N,…', help: 'prompt lengths of the latency sweep (seeded random token ids)' },
  reps: { type: 'int', value: 'N', help: 'timed repetitions per prompt length / per roof (default 5; 3 on CPU adapters)' },
  warmup: { type: 'int', value: 'N', help: 'untimed warm-up requests per prompt length (default 1)' },
  profile: { type: 'boolean', help: 'also time every kernel (separate runs; perturbs timing, never in the headline numbers)' },
  'llama-bench': { type: 'boolean', help: "also run llama-bench's pp512 / tg128 and print its table" },
  accuracy: {
    type: 'string',
    choices: ['auto', 'on', 'off'],
    help: 'logits against the f32 CPU reference after latency/generation runs: auto (default: real models under 100 M parameters), on, off',
  },
  context: { type: 'int', value: 'N', help: 'KV-cache positions (default: what the run needs)' },
  chunk: { type: 'int', value: 'N', help: 'prefill chunk size in tokens (default 512)' },
  seed: { type: 'int', value: 'N', help: 'seed of synthetic weights and random prompts (default 42)' },
  'memory-gib': { type: 'number', value: 'GIB', help: 'refuse models whose memory plan exceeds this budget' },
  mode: { type: 'string', choices: ['latency', 'serve'], help: 'latency sweep (default) or serving under load' },
  rate: { type: 'string', value: 'REQ/S|inf', help: 'serve: arrival rate (default inf: all at once)' },
  burstiness: { type: 'number', value: 'K', help: 'serve: Gamma shape of arrival gaps (1 = Poisson, default)' },
  requests: { type: 'int', value: 'N', help: 'serve: number of requests (default 16)' },
  'max-batch': { type: 'int', value: 'B', help: 'serve: most sequences decoding together (default 4)' },
  'max-tokens-per-step': { type: 'int', value: 'N', help: 'serve: token budget of one step (default 64)' },
  'prompt-len': { type: 'string', value: 'SPEC', help: 'serve: N | uniform:MIN-MAX | lognormal:MEDIAN:SIGMA:MAX (default 32)' },
  'output-len': { type: 'string', value: 'SPEC', help: 'serve: output lengths, same forms (default 16)' },
  'no-chunking': { type: 'boolean', help: 'serve: prefill whole prompts (default: chunks of --chunk, 32)' },
  slo: { type: 'string', value: 'ttft=MS,tpot=MS,e2el=MS', help: 'serve: SLOs for goodput/attainment, or an MLPerf preset name' },
  'sweep-rate': { type: 'boolean', help: 'serve: bisect the arrival rate for capacity (≥ 90% within SLOs)' },
  'sweep-batch': { type: 'list', value: 'B,B,…', help: 'serve: throughput vs latency across max batch sizes' },
  'dollars-per-hour': { type: 'number', value: 'USD', help: 'serve: machine price, for cost per 1k tokens' },
  watts: { type: 'number', value: 'W', help: 'serve: power draw, for energy per token' },
  probe: { type: 'boolean', help: "measure the device's roofs only (bandwidth and compute)" },
  'probe-mib': { type: 'int', value: 'MIB', help: 'cap on the bandwidth working set in MiB (default: per device)' },
  disable: { type: 'list', value: 'FEATURES', help: 'force fallbacks: any of timestamp-query,shader-f16,subgroups' },
  json: { type: 'string', value: 'FILE', help: 'write the result (versioned JSON schema) to FILE' },
  share: { type: 'boolean', help: 'print a permalink that opens this report in the page (no server, no re-run)' },
  'share-base': { type: 'string', value: 'URL', help: 'where the page is hosted (default $TOKENSCOPE_URL, else the npm start address)' },
  inspect: {
    type: 'string',
    value: 'URL|PATH|ID',
    help: "read only a GGUF's header (Range requests for a URL) and print its architecture, parameters, tensor types' shares of bytes, memory against this device and the decode tokens/s the read roof allows (with --probe; --json writes it)",
  },
  'list-models': { type: 'boolean', help: 'print the model catalog and exit' },
  quiet: { type: 'boolean', help: 'no progress lines' },
  help: { type: 'boolean', help: 'show this help' },
};

/** Where `npm start` serves the page. */
const DEFAULT_PAGE_URL = 'http://127.0.0.1:5173/';

const SUMMARY =
  'Measure this machine with tokenscope. With no arguments: the roofs, then a latency sweep of the\n' +
  'embedded default model (a small synthetic-weight preset on CPU adapters, Llama-3.2-1B-shaped on GPUs).';

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

/** Build the job from the flags; device-dependent defaults are filled in once the device is known. */
function jobFromFlags(flags: Map<string, unknown>, cpuLike: boolean): BenchJob {
  const get = <T>(name: string) => flags.get(name) as T | undefined;
  if (flags.get('probe')) return { probe: true, probeMiB: get<number>('probe-mib'), protocol: protocolFor(get<number>('reps')) };
  const defaults = defaultJob({ cpuLike });
  const modelArg = get<string>('model');
  const webllm = get('engine') === 'webllm';
  if (webllm) {
    if (!modelArg) throw new UsageError('--engine webllm needs --model with a WebLLM model id, e.g. Qwen2.5-0.5B-Instruct-q4f32_1-MLC.');
    for (const f of ['prompt', 'llama-bench', 'profile', 'quant']) if (flags.has(f)) throw new UsageError(`--${f} needs --engine tokenscope.`);
    if (get('mode') === 'serve') throw new UsageError('--mode serve needs --engine tokenscope.');
  }
  const model: ModelSpec | undefined = webllm
    ? undefined
    : modelArg
      ? /^https?:\/\//.test(modelArg)
        ? { url: modelArg }
        : findPreset(modelArg)
          ? { preset: modelArg }
          : { path: modelArg }
      : { ...defaults.model };
  if (model && get('quant')) model.quant = get<Quantization>('quant');
  if (model && get('seed') !== undefined) model.seed = get<number>('seed');
  const lengths = get<string[]>('prompt-lengths')?.map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--prompt-lengths needs positive integers, got "${s}".`);
    return n;
  });
  const gen = get<number>('gen') ?? defaults.latency!.gen;
  const job: BenchJob = {
    probe: true,
    probeMiB: get<number>('probe-mib'),
    model,
    context: get<number>('context'),
    llamaBench: Boolean(flags.get('llama-bench')),
    accuracy: get<BenchJob['accuracy']>('accuracy'),
    memoryBudgetBytes: get<number>('memory-gib') !== undefined ? get<number>('memory-gib')! * 2 ** 30 : undefined,
    ...(webllm ? { engine: 'webllm' as const, webllm: { model: modelArg! } } : {}),
  };
  const prompt = get<string>('prompt');
  if (flags.has('chat') && prompt === undefined) throw new UsageError('--chat needs --prompt.');
  if (prompt !== undefined) {
    const temperature = get<number>('temperature') ?? 0;
    job.generate = { prompt, gen, chat: Boolean(flags.get('chat')) };
    if (temperature > 0)
      job.generate.sampling = { temperature, topK: get<number>('top-k') ?? 0, topP: get<number>('top-p') ?? 1, seed: get<number>('seed') ?? 42 };
  }
  if (get('mode') === 'serve') {
    job.serve = serveSettingsFromFlags(get, cpuLike);
    return job;
  }
  if (prompt === undefined || lengths) {
    job.latency = {
      promptLengths: lengths ?? defaults.latency!.promptLengths,
      gen,
      reps: get<number>('reps') ?? defaults.latency!.reps,
      warmup: get<number>('warmup'),
      profile: Boolean(flags.get('profile')),
      chunk: get<number>('chunk'),
      seed: get<number>('seed'),
    };
  }
  return job;
}

function serveSettingsFromFlags(get: <T>(name: string) => T | undefined, cpuLike: boolean): ServeSettings {
  const rateText = get<string>('rate') ?? 'inf';
  const rate = rateText === 'inf' ? Infinity : Number(rateText);
  if (!(rate > 0)) throw new UsageError(`--rate must be a positive number or inf, got "${rateText}".`);
  const sweepBatch = get<string[]>('sweep-batch')?.map((b) => {
    const n = Number(b);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--sweep-batch needs positive integers, got "${b}".`);
    return n;
  });
  let slo: ReturnType<typeof parseSlo>;
  try {
    slo = get<string>('slo') ? parseSlo(get<string>('slo')!) : {};
  } catch (e) {
    throw new UsageError(describeError(e));
  }
  return {
    requests: get<number>('requests') ?? 16,
    rate,
    burstiness: get<number>('burstiness') ?? 1,
    prompt: parseLength('prompt-len', get<string>('prompt-len') ?? (cpuLike ? '32' : '256')),
    output: parseLength('output-len', get<string>('output-len') ?? (cpuLike ? '16' : '128')),
    max_batch: get<number>('max-batch') ?? 4,
    max_tokens_per_step: get<number>('max-tokens-per-step') ?? (cpuLike ? 64 : 512),
    chunk: get('no-chunking') ? null : (get<number>('chunk') ?? 32),
    slo,
    seed: get<number>('seed') ?? 42,
    dollars_per_hour: get<number>('dollars-per-hour'),
    watts: get<number>('watts'),
    sweep_batch: sweepBatch,
    sweep_rate: Boolean(get('sweep-rate')),
  };
}

/** "128" | "uniform:64-256" | "lognormal:128:0.5:1024". */
export function parseLength(flag: string, text: string): LengthDistribution {
  const int = (s: string) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag}: "${s}" is not a positive integer.`);
    return n;
  };
  if (/^\d+$/.test(text)) return { kind: 'fixed', tokens: int(text) };
  const uniform = /^uniform:(\d+)-(\d+)$/.exec(text);
  if (uniform) {
    const [min, max] = [int(uniform[1]), int(uniform[2])];
    if (min > max) throw new UsageError(`--${flag}: uniform range ${min}-${max} is empty.`);
    return { kind: 'uniform', min, max };
  }
  const lognormal = /^lognormal:(\d+):([\d.]+):(\d+)$/.exec(text);
  if (lognormal) return { kind: 'lognormal', median: int(lognormal[1]), sigma: Number(lognormal[2]), max: int(lognormal[3]) };
  throw new UsageError(`--${flag} must be N, uniform:MIN-MAX or lognormal:MEDIAN:SIGMA:MAX; got "${text}".`);
}

function protocolFor(reps: number | undefined) {
  return reps ? { warmup: 1, minReps: reps, maxReps: Math.max(reps, 50), minDurationMs: 400 } : undefined;
}

async function main(argv: string[]): Promise<number> {
  let flags: Map<string, unknown>;
  let disabled;
  try {
    flags = parseFlags(argv, FLAGS);
    disabled = parseFallbacks(((flags.get('disable') as string[] | undefined) ?? []).join(','));
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n\n${usage('npm run bench --', SUMMARY, FLAGS)}`);
    return 2;
  }
  if (flags.get('help')) {
    process.stdout.write(usage('npm run bench --', SUMMARY, FLAGS));
    return 0;
  }
  if (flags.get('list-models')) {
    process.stdout.write(listModels());
    return 0;
  }
  const quiet = Boolean(flags.get('quiet'));
  const onProgress = (step: string, f: number) => {
    if (!quiet) process.stderr.write(`[${(f * 100).toFixed(0).padStart(3)}%] ${step}\n`);
  };
  const inspect = flags.get('inspect') as string | undefined;
  if (inspect !== undefined) return runInspect(inspect, flags, onProgress);

  let result: BenchResult;
  try {
    if (flags.get('runtime') === 'browser') {
      const { runInBrowser } = await import('./browser-runner.ts');
      result = await runInBrowser((cpuLike) => jobFromFlags(flags, cpuLike), {
        browser: flags.get('browser') as string | undefined,
        disable: [...disabled],
        onProgress,
        onLog: (l) => process.stderr.write(`${l}\n`),
      });
    } else {
      const { acquireNodeGpu } = await import('../src/gpu/node-gpu.ts');
      const ctx = await acquireNodeGpu({ disable: disabled, onError: (m) => process.stderr.write(`${m}\n`) });
      try {
        result = await runJob(ctx, jobFromFlags(flags, ctx.caps.cpuLike), disabled, { onProgress, tuneCache: fileTuneCache() });
      } finally {
        ctx.destroy();
      }
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n\n${usage('npm run bench --', SUMMARY, FLAGS)}`);
      return 2;
    }
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 1;
  }

  process.stdout.write(`${formatReport(result)}\n`);
  if (flags.get('share')) {
    const base = (flags.get('share-base') as string | undefined) ?? process.env.TOKENSCOPE_URL ?? DEFAULT_PAGE_URL;
    const fragment = await encodeReport(result);
    process.stdout.write(
      `\nPermalink (${fragment.length.toLocaleString('en-US')} characters${(await shareable(result)).notes?.some((n) => /trimmed/i.test(n)) ? '; raw samples trimmed — the JSON has them' : ''}):\n${base.replace(/#.*$/, '')}${fragment}\n`,
    );
  }
  const jsonPath = flags.get('json') as string | undefined;
  if (jsonPath) {
    writeFileSync(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`\nWrote ${jsonPath}\n`);
  }
  return 0;
}

async function runInspect(target: string, flags: Map<string, unknown>, onProgress: (step: string, f: number) => void): Promise<number> {
  const { inspectTarget, formatInspection } = await import('./inspect.ts');
  try {
    const run = await inspectTarget(target, {
      probe: Boolean(flags.get('probe')),
      probeMiB: flags.get('probe-mib') as number | undefined,
      budgetBytes: flags.has('memory-gib') ? (flags.get('memory-gib') as number) * 2 ** 30 : undefined,
      context: flags.get('context') as number | undefined,
      onProgress,
    });
    process.stdout.write(`${formatInspection(run)}\n`);
    const jsonPath = flags.get('json') as string | undefined;
    if (jsonPath) {
      writeFileSync(jsonPath, `${JSON.stringify({ ...run.inspection, bytes_read: run.bytesRead, reads: run.reads }, null, 2)}\n`);
      process.stdout.write(`\nWrote ${jsonPath}\n`);
    }
    return 0;
  } catch (e) {
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

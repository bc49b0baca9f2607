/**
 * The job `npm run bench` runs, from its parsed flags (cli/bench-flags.ts). Kept apart from
 * bench.ts so the flags are checked before the engine's modules load: a refused flag exits at once.
 */
import { findKnownFile, findPreset, hfFileUrl } from '../src/model/catalog.ts';
import { parseHfRepoRef } from '../src/model/hf-repo.ts';
import { defaultJob, plannedWork, servePositions, type BenchJob } from '../src/jobs/job-spec.ts';
import type { ModelSpec } from '../src/jobs/model-source.ts';
import type { Quantization } from '../src/model/gpu-weights.ts';
import { parseSlo } from '../src/serve/metrics.ts';
import type { ServeSettings } from '../src/serve/run.ts';
import { checkClasses, type LengthDistribution, type RequestClass } from '../src/serve/workload.ts';
import { describeError } from '../src/errors.ts';
import type { LatencyMetric } from '../src/measure/metrics.ts';
import { arrivalLimitProblem, MAX_LIST_ENTRIES, MAX_PROMPT_TOKENS, MAX_UNCONFIRMED_TOKENS, rangeProblem, workProblem } from '../src/measure/validate.ts';
import { LLAMA_BENCH_DEFAULTS, llamaBenchTests } from '../src/measure/llama-bench-spec.ts';
import { UsageError, type GivenFlags } from './args.ts';
import { runKind } from './bench-flags.ts';

/** vLLM's --percentile-metrics names. */
const LATENCY_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;

/** Build the job from the flags; device-dependent defaults are filled in once the device is known. */
export function jobFromFlags(flags: Map<string, unknown>, cpuLike: boolean): BenchJob {
  const get = <T>(name: string) => flags.get(name) as T | undefined;
  if (flags.get('probe')) return { probe: true, probeMiB: get<number>('probe-mib'), protocol: protocolFor(get<number>('reps')) };
  const defaults = defaultJob({ cpuLike });
  const hf = get<string>('hf-repo');
  if (hf !== undefined && !parseHfRepoRef(hf))
    throw new UsageError(`-hf takes ORG/REPO or ORG/REPO:QUANT (e.g. bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M), got "${hf}".`);
  if (hf !== undefined && get('engine') === 'webllm') throw new UsageError('-hf needs --engine tokenscope (WebLLM takes its own model ids with --model).');
  // -hf is resolved to its file's URL (a network read) before the job is built for the run; until then the default model stands in.
  const modelArg = get<string>('model');
  if (runKind(flags as unknown as GivenFlags) === 'llama-bench') return llamaBenchJob(flags, modelArg ? modelSpec(modelArg) : { ...defaults.model! });
  const webllm = get('engine') === 'webllm';
  if (webllm) {
    if (!modelArg) throw new UsageError('--engine webllm needs --model with a WebLLM model id, e.g. Qwen2.5-0.5B-Instruct-q4f32_1-MLC.');
    for (const f of ['prompt', 'llama-bench', 'profile', 'quant']) if (flags.has(f)) throw new UsageError(`--${f} needs --engine tokenscope.`);
    if (get('mode') === 'serve') throw new UsageError('--mode serve needs --engine tokenscope.');
  }
  const model: ModelSpec | undefined = webllm ? undefined : modelArg ? modelSpec(modelArg) : { ...defaults.model };
  if (model && get('quant')) model.quant = get<Quantization>('quant');
  if (model && get('seed') !== undefined) model.seed = get<number>('seed');
  const lengths = get<number[]>('prompt-lengths');
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
    const need = servePositions(job.serve);
    if (job.context !== undefined && need > job.context)
      throw new UsageError(
        `The longest request needs ${need} positions (shared prefix + turns × (prompt + output)); --context ${job.context} holds fewer. Lower --shared-prefix, --turns or the lengths, or raise --context.`,
      );
    if (need > MAX_PROMPT_TOKENS)
      throw new UsageError(
        `The longest request needs ${need} positions (shared prefix + turns × (prompt + output)), over ${MAX_PROMPT_TOKENS}. Lower --shared-prefix, --turns or the lengths.`,
      );
  } else if (prompt === undefined || lengths) {
    job.latency = {
      promptLengths: lengths ?? defaults.latency!.promptLengths,
      gen,
      reps: get<number>('reps') ?? defaults.latency!.reps,
      warmup: get<number>('warmup'),
      profile: Boolean(flags.get('profile')),
      chunk: get<number>('chunk'),
      seed: get<number>('seed'),
      ...cachedPrefixes(get<number[]>('cached-prefix'), lengths ?? defaults.latency!.promptLengths),
    };
  }
  if (flags.has('agreement')) {
    const why = agreementProblem(job, flags.get('runtime') === 'browser');
    if (why) throw new UsageError(why);
    // The accuracy pass runs on any real model it is asked for.
    job.accuracy ??= 'on';
  }
  const work = plannedWork(job);
  const problem = arrivalLimitProblem(work) ?? (flags.get('yes') ? null : workProblem(work, 'add --yes to run it anyway'));
  if (problem) throw new UsageError(`${problem}.`);
  return job;
}

/** `--cached-prefix`: each C must be shorter than some prompt length (pairs with C ≥ P are skipped). */
function cachedPrefixes(given: number[] | undefined, lengths: number[]): { cachedPrefixes?: number[] } {
  if (!given?.length) return {};
  const longest = Math.max(...lengths);
  const over = given.find((c) => c >= longest);
  if (over !== undefined)
    throw new UsageError(
      `--cached-prefix ${over} is not shorter than any prompt length (the longest is ${longest}); a cached prefix leaves at least one token to prefill.`,
    );
  return { cachedPrefixes: [...new Set(given)].sort((a, b) => a - b) };
}

/** Why `--agreement llama.cpp` cannot run with this job, or null: llama.cpp must read the very file the engine runs. */
export function agreementProblem(job: BenchJob, browser: boolean): string | null {
  if (browser) return '--agreement llama.cpp runs llama.cpp in Node; drop --runtime browser';
  if (job.engine === 'webllm') return '--agreement needs --engine tokenscope';
  if (!job.model?.path) return '--agreement llama.cpp needs --model PATH to a local GGUF file, which llama.cpp reads too';
  if (job.model.quant)
    return '--agreement compares on the same file, and --quant re-encodes it on load; quantize the file first (npm run quantize -- IN OUT TYPE) and pass that';
  if (job.accuracy === 'off') return '--agreement adds llama.cpp to the accuracy pass, which --accuracy off turns off';
  return null;
}

/**
 * What `--model` names: an https:// URL, `hf://ORG/REPO/FILE.gguf` (the file on Hugging Face's main
 * branch, as llama.cpp's tools take it), a preset id, a catalog id (`--list-models`: its URL), else a path.
 */
export function modelSpec(arg: string): ModelSpec {
  if (/^https?:\/\//.test(arg)) return { url: arg };
  if (arg.startsWith('hf://')) return { url: huggingFaceUrl(arg) };
  if (findPreset(arg)) return { preset: arg };
  const known = findKnownFile(arg);
  return known ? { url: known.url } : { path: arg };
}

/** `hf://ORG/REPO/PATH.gguf` as its URL (catalog.ts's hfFileUrl; TOKENSCOPE_HF_BASE overrides the host), or a usage error. */
export function huggingFaceUrl(arg: string): string {
  try {
    return hfFileUrl(arg, (typeof process !== 'undefined' && process.env.TOKENSCOPE_HF_BASE) || undefined);
  } catch (e) {
    throw new UsageError(`--model ${describeError(e)}`);
  }
}

/**
 * llama-bench mode (-p/-n/-d/-r/-o): its tests only. The roofs are not measured unless asked
 * (`--roofs fresh`); the CLI adds the per-device cache's or `--roofs FILE`'s when it has them.
 */
function llamaBenchJob(flags: Map<string, unknown>, model: ModelSpec): BenchJob {
  const get = <T>(name: string) => flags.get(name) as T | undefined;
  if (get('quant')) model.quant = get<Quantization>('quant');
  if (get('seed') !== undefined) model.seed = get<number>('seed');
  const nPrompts = get<number[]>('n-prompt') ?? [LLAMA_BENCH_DEFAULTS.nPrompt];
  const nGens = get<number[]>('n-gen') ?? [LLAMA_BENCH_DEFAULTS.nGen];
  const promptGens = get<string>('n-pg') === undefined ? [] : parsePromptGen(get<string>('n-pg')!);
  if (![...nPrompts, ...nGens].some((n) => n > 0) && promptGens.length === 0)
    throw new UsageError('-p and -n are all 0: there is no test to run; give a length above 0 (or a -pg PP,TG test).');
  const llamaBench = {
    nPrompt: nPrompts[0],
    nGen: nGens[0],
    nPrompts,
    nGens,
    promptGens,
    depths: get<number[]>('n-depth') ?? [0],
    reps: get<number>('repetitions') ?? LLAMA_BENCH_DEFAULTS.reps,
    seed: get<number>('seed') ?? LLAMA_BENCH_DEFAULTS.seed,
  };
  const tests = llamaBenchTests({ ...LLAMA_BENCH_DEFAULTS, ...llamaBench });
  // Each repetition (and the warm-up) fills the depth, then runs the test.
  const tokens = tests.reduce((sum, t) => sum + (llamaBench.reps + LLAMA_BENCH_DEFAULTS.warmup) * (t.depth + t.nPrompt + t.nGen), 0);
  if (tokens > MAX_UNCONFIRMED_TOKENS && !flags.get('yes')) {
    throw new UsageError(
      `These llama-bench tests process about ${tokens.toLocaleString('en-US')} tokens, more than the ${MAX_UNCONFIRMED_TOKENS.toLocaleString('en-US')} allowed without confirmation; lower -r, -p, -n or -d, or add --yes.`,
    );
  }
  return {
    probe: get('roofs') === 'fresh',
    probeMiB: get<number>('probe-mib'),
    model,
    context: get<number>('context'),
    llamaBench,
    memoryBudgetBytes: get<number>('memory-gib') !== undefined ? get<number>('memory-gib')! * 2 ** 30 : undefined,
  };
}

/**
 * llama-bench's `-pg PP,TG` pairs, one per -pg given (the parser joins repeats with ";"): each a
 * test of PP prompt tokens then TG generated ones.
 */
export function parsePromptGen(text: string): { nPrompt: number; nGen: number }[] {
  const pairs = text.split(';').map((pair) => {
    const parts = pair.split(',').map((s) => s.trim());
    if (parts.length !== 2) throw new UsageError(`-pg takes one PP,TG pair (e.g. -pg 512,128; repeat -pg for more), got "${pair}".`);
    const [nPrompt, nGen] = parts.map((v, i) => {
      const problem = rangeProblem(i === 0 ? 'n-prompt' : 'n-gen', v, `the ${i === 0 ? 'PP' : 'TG'} of -pg ${pair}`);
      if (problem) throw new UsageError(`${problem}.`);
      return Number(v);
    });
    if (nPrompt === 0 || nGen === 0) throw new UsageError(`-pg ${pair}: both lengths must be above 0 (-p or -n alone run a pp or tg test).`);
    return { nPrompt, nGen };
  });
  if (pairs.length > MAX_LIST_ENTRIES) throw new UsageError(`-pg takes at most ${MAX_LIST_ENTRIES} tests, got ${pairs.length}.`);
  return pairs;
}

function serveSettingsFromFlags(get: <T>(name: string) => T | undefined, cpuLike: boolean): ServeSettings {
  const rateText = get<string>('rate') ?? 'inf';
  const rate = rateText === 'inf' ? Infinity : Number(rateText);
  const sweepBatch = get<number[]>('sweep-batch');
  let slo: ReturnType<typeof parseSlo>;
  try {
    slo = get<string>('slo') ? parseSlo(get<string>('slo')!) : {};
  } catch (e) {
    throw new UsageError(describeError(e));
  }
  if (get<number>('degrade-to') !== undefined && get<number>('degrade-over') === undefined) throw new UsageError('--degrade-to needs --degrade-over N.');
  const classes = get<string[]>('class')?.map(parseClass);
  if (classes) {
    try {
      checkClasses(classes);
    } catch (e) {
      throw new UsageError(describeError(e));
    }
  }
  const prefixCache = get<string>('prefix-cache') ?? 'on';
  if (prefixCache !== 'on' && prefixCache !== 'off') throw new UsageError(`--prefix-cache must be on or off, got "${prefixCache.slice(0, 40)}".`);
  const conversations = get<number>('conversations');
  if (get<number>('turns') !== undefined && conversations === undefined) throw new UsageError('--turns needs --conversations C.');
  if (conversations !== undefined && get<number>('requests') !== undefined)
    throw new UsageError('--conversations C --turns T sends C × T requests; leave --requests out.');
  const turns = conversations === undefined ? undefined : (get<number>('turns') ?? 2);
  const metrics = get<string[]>('percentile-metrics');
  const unknown = metrics?.find((m) => !(LATENCY_METRICS as readonly string[]).includes(m));
  if (unknown !== undefined) throw new UsageError(`--percentile-metrics takes ${LATENCY_METRICS.join(', ')}; got "${unknown}".`);
  return {
    requests: conversations !== undefined ? conversations * turns! : (get<number>('requests') ?? 16),
    rate,
    burstiness: get<number>('burstiness') ?? 1,
    prompt: parseLength('prompt-len', get<string>('prompt-len') ?? (cpuLike ? '32' : '256')),
    output: parseLength('output-len', get<string>('output-len') ?? (cpuLike ? '16' : '128')),
    max_batch: get<number>('max-batch') ?? 4,
    max_tokens_per_step: get<number>('max-tokens-per-step') ?? (cpuLike ? 64 : 512),
    chunk: get('no-chunking') ? null : (get<number>('chunk') ?? 32),
    slo,
    seed: get<number>('seed') ?? 42,
    ...(metrics ? { percentile_metrics: [...new Set(metrics)] as LatencyMetric[] } : {}),
    ...(get<number[]>('metric-percentiles') ? { metric_percentiles: [...new Set(get<number[]>('metric-percentiles'))] } : {}),
    dollars_per_hour: get<number>('dollars-per-hour'),
    watts: get<number>('watts'),
    sweep_batch: sweepBatch,
    sweep_rate: Boolean(get('sweep-rate')),
    max_queue: get<number>('max-queue'),
    timeout_ms: get<number>('timeout-ms'),
    degrade_over: get<number>('degrade-over'),
    degrade_to: get<number>('degrade-to'),
    sla_percent: get<number>('sla'),
    classes,
    prefix_cache: prefixCache === 'on',
    shared_prefix: get<number>('shared-prefix'),
    conversations,
    turns,
  };
}

/** "chat:0.7:500:50" | "batch:0.3:-:-:uniform:64-256/128": name, share, TTFT and TPOT SLOs in ms ("-" for none), prompt/output lengths. */
export function parseClass(text: string): RequestClass {
  const [name, share, ttft, tpot, ...rest] = text.split(':');
  const form = 'NAME:SHARE:TTFT_MS:TPOT_MS[:PROMPT/OUTPUT], e.g. chat:0.7:500:50';
  if (tpot === undefined || name === '') throw new UsageError(`--class "${text}" must read ${form}.`);
  const ms = (what: string, v: string) => {
    if (v === '-') return undefined;
    const n = Number(v);
    if (v.trim() === '' || !(n >= 0 && Number.isFinite(n)))
      throw new UsageError(`--class "${text}": the ${what} SLO "${v}" is not a number of ms ≥ 0 (or - for none).`);
    return n;
  };
  const c: RequestClass = { name, share: Number(share), slo: {} };
  if (!(c.share > 0 && Number.isFinite(c.share))) throw new UsageError(`--class "${text}": the share "${share}" must be a number > 0.`);
  const [t, p] = [ms('TTFT', ttft), ms('TPOT', tpot)];
  if (t !== undefined) c.slo.ttft = t;
  if (p !== undefined) c.slo.tpot = p;
  if (rest.length) {
    const lengths = rest.join(':').split('/');
    if (lengths.length !== 2) throw new UsageError(`--class "${text}": lengths read PROMPT/OUTPUT, each N, uniform:MIN-MAX or lognormal:MEDIAN:SIGMA:MAX.`);
    c.prompt = parseLength('prompt-len', lengths[0]);
    c.output = parseLength('output-len', lengths[1]);
  }
  return c;
}

/** "128" | "uniform:64-256" | "lognormal:128:0.5:1024". */
export function parseLength(flag: 'prompt-len' | 'output-len', text: string): LengthDistribution {
  const int = (s: string) => {
    const problem = rangeProblem(flag, s, `each length in --${flag}`);
    if (problem) throw new UsageError(`${problem}.`);
    return Number(s);
  };
  if (/^\d+$/.test(text)) return { kind: 'fixed', tokens: int(text) };
  const uniform = /^uniform:(\d+)-(\d+)$/.exec(text);
  if (uniform) {
    const [min, max] = [int(uniform[1]), int(uniform[2])];
    if (min > max) throw new UsageError(`--${flag}: uniform range ${min}-${max} is empty.`);
    return { kind: 'uniform', min, max };
  }
  const lognormal = /^lognormal:(\d+):([\d.]+):(\d+)$/.exec(text);
  if (lognormal) {
    const sigma = Number(lognormal[2]);
    if (!(sigma <= 10)) throw new UsageError(`--${flag}: the lognormal sigma must be a number from 0 to 10, got ${lognormal[2]}.`);
    return { kind: 'lognormal', median: int(lognormal[1]), sigma, max: int(lognormal[3]) };
  }
  throw new UsageError(`--${flag} must be N, uniform:MIN-MAX or lognormal:MEDIAN:SIGMA:MAX; got "${text}".`);
}

function protocolFor(reps: number | undefined) {
  return reps ? { warmup: 1, minReps: reps, maxReps: Math.max(reps, 50), minDurationMs: 400 } : undefined;
}

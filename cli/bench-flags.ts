/**
 * `npm run bench`'s flags: each declared with its type and range (validate.ts's table), and which
 * run uses it — so a flag the chosen run would ignore is an error naming the mode that takes it,
 * and the output file is checked before the run, not after it.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { QUANTIZATIONS } from '../src/model/recipes.ts';
import { MAX_LIST_ENTRIES, MAX_UNCONFIRMED_ARRIVAL_S, MAX_UNCONFIRMED_TOKENS, SETTING_RANGES } from '../src/measure/validate.ts';
import type { FlagSpec, GivenFlags } from './args.ts';

export const BENCH_FLAGS: Record<string, FlagSpec> = {
  runtime: { type: 'string', choices: ['node', 'browser'], help: 'where to run: Node + Dawn (default) or the built page in Chromium' },
  engine: {
    type: 'string',
    choices: ['tokenscope', 'webllm'],
    help: "whose inference to time: tokenscope's WGSL engine (default) or WebLLM (browser runtime only)",
  },
  browser: { type: 'string', value: 'PATH', help: 'with --runtime browser: Chromium/Chrome executable (else $CHROME_PATH, else the usual paths)' },
  model: {
    short: 'm',
    type: 'string',
    value: 'PRESET|ID|FILE|URL',
    help: 'a preset id (synthetic weights), a catalog id (--list-models), a GGUF path, an https:// URL or hf://ORG/REPO/FILE.gguf (default: per device); with --engine webllm, a WebLLM model id',
  },
  'hf-repo': {
    short: 'hf',
    type: 'string',
    value: 'ORG/REPO[:QUANT]',
    help: "a Hugging Face repository's GGUF, as llama.cpp's -hf: the file whose name holds QUANT (default Q4_K_M; $TOKENSCOPE_HF_BASE overrides the host)",
  },
  quant: {
    type: 'string',
    choices: [...QUANTIZATIONS],
    caseless: true,
    help: 'weight format or llama-quantize mix (q4_k_m, q4_k_s, q5_k_m, q6_k, q8_0): synthesised for presets, quantized on load for F32/F16 files',
  },
  prompt: { type: 'string', value: 'TEXT', help: 'generate greedily from this prompt and print the text' },
  chat: { type: 'boolean', help: "with --prompt: send it as a user message through the model file's chat template" },
  temperature: {
    type: 'number',
    range: 'temperature',
    value: 'T',
    help: 'with --prompt: sample on the GPU at this temperature (default 0: greedy)',
  },
  'top-k': { type: 'int', range: 'top-k', value: 'K', help: 'with --temperature: keep the K most likely tokens (default 0: off)' },
  'top-p': { type: 'number', range: 'top-p', value: 'P', help: 'with --temperature: nucleus sampling mass (default 1: off)' },
  gen: { type: 'int', range: 'gen', value: 'N', help: 'output tokens per request (default 16 on CPU adapters, 64 on GPUs)' },
  'prompt-lengths': {
    type: 'list',
    range: 'prompt-lengths',
    value: 'N,N,…',
    help: `prompt lengths of the latency sweep, at most ${MAX_LIST_ENTRIES} (seeded random token ids)`,
  },
  'cached-prefix': {
    type: 'list',
    range: 'cached-prefix',
    value: 'C,C,…',
    help: 'latency sweep: also the TTFT of each prompt length with its first C tokens already in the KV cache (what a prefix-cache hit saves)',
  },
  reps: { type: 'int', range: 'reps', value: 'N', help: 'timed repetitions per prompt length / per roof (default 5; 3 on CPU adapters)' },
  warmup: { type: 'int', range: 'warmup', value: 'N', help: 'untimed warm-up requests per prompt length (default 1)' },
  profile: { type: 'boolean', help: 'also time every kernel (separate runs; perturbs timing, never in the headline numbers)' },
  'llama-bench': { type: 'boolean', help: "also run llama-bench's pp512 / tg128 and print its table" },
  accuracy: {
    type: 'string',
    choices: ['auto', 'on', 'off'],
    help: 'logits against the f32 CPU reference after latency/generation runs: auto (default: real models under 100 M parameters), on, off',
  },
  agreement: {
    type: 'string',
    choices: ['llama.cpp'],
    help: 'with --model FILE.gguf: also run the accuracy pass through llama.cpp (node-llama-cpp, CPU) on the same file, beside the f32 reference',
  },
  'n-prompt': {
    short: 'p',
    type: 'ranges',
    range: 'n-prompt',
    value: 'N,N|A-B+S',
    help: "llama-bench mode: pp tests of these prompt lengths (default 512; lists and ranges as llama-bench's: 32,64 or 128-512*2)",
  },
  'n-gen': { short: 'n', type: 'ranges', range: 'n-gen', value: 'N,N|A-B+S', help: 'llama-bench mode: tg tests of these output lengths (default 128)' },
  'n-depth': {
    short: 'd',
    type: 'ranges',
    range: 'n-depth',
    value: 'N,N|A-B+S',
    help: 'llama-bench mode: run each test after this many tokens of context ("pp32 @ d512")',
  },
  'n-pg': {
    short: 'pg',
    type: 'string',
    repeatable: true,
    value: 'PP,TG',
    help: 'llama-bench mode: a prompt-then-generation test ("pp512+tg128": tokens/s over both); repeat -pg for more',
  },
  repetitions: { short: 'r', type: 'int', range: 'repetitions', value: 'N', help: 'llama-bench mode: repetitions per test (default 5)' },
  output: {
    short: 'o',
    type: 'string',
    choices: ['md', 'csv', 'json', 'jsonl', 'sql'],
    value: 'FORMAT',
    help: "llama-bench mode: print llama-bench's table (md, default), its records as csv, json or jsonl (avg_ts, stddev_ts, samples_ts…), or sql (CREATE TABLE + INSERTs)",
  },
  context: { type: 'int', range: 'context', value: 'N', help: 'KV-cache positions (default: what the run needs)' },
  chunk: { type: 'int', range: 'chunk', value: 'N', help: 'prefill chunk size in tokens (default 512; serve: 32)' },
  seed: { type: 'int', range: 'seed', value: 'N', help: 'seed of synthetic weights and random prompts (default 42)' },
  'memory-gib': { type: 'number', range: 'memory-gib', value: 'GIB', help: 'refuse models whose memory plan exceeds this budget' },
  mode: { type: 'string', choices: ['latency', 'serve'], help: 'latency sweep (default) or serving under load' },
  rate: {
    aliases: ['request-rate'],
    type: 'string',
    range: 'rate',
    choices: ['inf'],
    value: 'REQ/S|inf',
    help: 'serve: arrival rate (default inf: all at once)',
  },
  burstiness: { type: 'number', range: 'burstiness', value: 'K', help: 'serve: Gamma shape of arrival gaps (1 = Poisson, default)' },
  requests: { aliases: ['num-prompts'], type: 'int', range: 'requests', value: 'N', help: 'serve: number of requests (default 16)' },
  'max-batch': { aliases: ['max-concurrency'], type: 'int', range: 'max-batch', value: 'B', help: 'serve: most sequences decoding together (default 4)' },
  'max-tokens-per-step': { type: 'int', range: 'max-tokens-per-step', value: 'N', help: 'serve: token budget of one step (default 64)' },
  'prompt-len': {
    type: 'string',
    value: 'SPEC',
    help: `serve: N | uniform:MIN-MAX | lognormal:MEDIAN:SIGMA:MAX (default 32; at most ${SETTING_RANGES['prompt-len'].max} tokens)`,
  },
  'output-len': { type: 'string', value: 'SPEC', help: `serve: output lengths, same forms (default 16; at most ${SETTING_RANGES['output-len'].max} tokens)` },
  'no-chunking': { type: 'boolean', help: 'serve: prefill whole prompts (default: chunks of --chunk, 32)' },
  slo: {
    aliases: ['goodput'],
    type: 'string',
    variadic: true,
    value: 'ttft=MS,tpot=MS,e2el=MS',
    help: "serve: SLOs for goodput/attainment (vLLM's --goodput ttft:500 tpot:50 form too), or an MLPerf preset name",
  },
  'percentile-metrics': {
    type: 'list',
    value: 'M,M,…',
    help: "serve: the metrics whose percentiles the summary prints, any of ttft,tpot,itl,e2el, as vLLM's (default all four)",
  },
  'metric-percentiles': {
    type: 'list',
    range: 'metric-percentiles',
    value: 'P,P,…',
    help: "serve: the percentiles printed after mean and median, as vLLM's (default 90,95,99); each is a p{P}_{metric}_ms key in the JSON",
  },
  'save-result': { type: 'boolean', help: "serve: write vLLM's result JSON (its keys; file named as vLLM names it unless --result-filename)" },
  'save-detailed': { type: 'boolean', help: 'serve: with --save-result, keep the per-request arrays (input_lens, output_lens, ttfts, itls, errors)' },
  'result-dir': { type: 'string', value: 'DIR', help: 'serve: with --save-result, the folder of the file (created; default: here)' },
  'result-filename': {
    type: 'string',
    value: 'FILE',
    help: 'serve: with --save-result, the file name (default {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json)',
  },
  'sweep-rate': { type: 'boolean', help: 'serve: bisect the arrival rate for capacity (≥ 90% within SLOs)' },
  'sweep-batch': { type: 'list', range: 'sweep-batch', value: 'B,B,…', help: 'serve: throughput vs latency across max batch sizes' },
  'dollars-per-hour': { type: 'number', range: 'dollars-per-hour', value: 'USD', help: 'serve: machine price, for cost per 1k tokens' },
  watts: { type: 'number', range: 'watts', value: 'W', help: 'serve: power draw, for energy per token' },
  'max-queue': { type: 'int', range: 'max-queue', value: 'N', help: 'serve: reject arrivals when N requests already wait beyond the free slots (0: no queue)' },
  'timeout-ms': { type: 'number', range: 'timeout-ms', value: 'MS', help: 'serve: cancel a request not finished MS ms after its arrival (a timeout error)' },
  'degrade-over': { type: 'int', range: 'degrade-over', value: 'N', help: 'serve: cap the output of requests admitted while more than N wait behind them' },
  'degrade-to': { type: 'int', range: 'degrade-to', value: 'TOKENS', help: 'serve: with --degrade-over, the cap (default: half of what a request asks)' },
  sla: { type: 'number', range: 'sla', value: 'PERCENT', help: 'serve: availability target in percent, e.g. 99.9, for the error budget' },
  'prefix-cache': { type: 'string', value: 'on|off', help: 'serve: automatic prefix caching, blocks of 16 tokens (default on)' },
  'shared-prefix': { type: 'int', range: 'shared-prefix', value: 'N', help: 'serve: every request starts with the same N-token system prompt (seeded)' },
  conversations: { type: 'int', range: 'conversations', value: 'C', help: 'serve: C multi-turn chats (with --turns; requests = C × T)' },
  turns: {
    type: 'int',
    range: 'turns',
    value: 'T',
    help: "serve: turns per conversation: each turn's prompt is the previous prompt + its answer + a new message (default 2)",
  },
  class: {
    type: 'list',
    value: 'NAME:SHARE:TTFT_MS:TPOT_MS[:PROMPT/OUTPUT],…',
    help: 'serve: request classes with their share, SLOs (- for none) and optional lengths (e.g. chat:0.7:500:50,batch:0.3:-:-:256/128)',
  },
  yes: {
    type: 'boolean',
    help: `run even past the work bound: ${MAX_UNCONFIRMED_TOKENS.toLocaleString('en-US')} tokens (prompt + output, every repetition) or arrivals over ${MAX_UNCONFIRMED_ARRIVAL_S / 3600} h`,
  },
  roofs: {
    type: 'string',
    value: 'fresh|FILE',
    help: "roofs measured on this device within 24 h are reused (a cache under ~/.cache/tokenscope); fresh: measure again; FILE: take a saved result's",
  },
  probe: { type: 'boolean', help: "measure the device's roofs only (bandwidth and compute)" },
  'probe-mib': { type: 'int', range: 'probe-mib', value: 'MIB', help: 'cap on the bandwidth working set in MiB (default: per device)' },
  disable: { type: 'list', value: 'FEATURES', help: 'force fallbacks: any of timestamp-query,shader-f16,subgroups,packed_4x8_integer_dot_product' },
  out: {
    type: 'string',
    value: 'DIR',
    help: 'write artifacts into DIR (created; checked writable before the run): result.json, profile_export.jsonl (per request, AIPerf-style), a CSV per printed table, report.html (the page, offline)',
  },
  json: { type: 'string', value: 'FILE', help: 'write the result (versioned JSON schema) to FILE (checked writable before the run)' },
  share: { type: 'boolean', help: 'print a permalink that opens this report in the page (no server, no re-run)' },
  'share-base': { type: 'string', value: 'URL', help: 'with --share: where the page is hosted (default $TOKENSCOPE_URL, else the npm start address)' },
  inspect: {
    type: 'string',
    value: 'URL|PATH|ID',
    help: "read only a GGUF's header (Range requests for a URL) and print its architecture, parameters, tensor types' shares of bytes, memory against this device and the decode tokens/s the read roof allows (with --probe; --json writes it)",
  },
  'list-models': { type: 'boolean', help: 'print the model catalog and exit' },
  quiet: { type: 'boolean', help: 'no progress lines' },
  help: { type: 'boolean', help: 'show this help' },
};

/** The flags of serving under load (`--mode serve`). */
const SERVE_FLAGS = new Set([
  'rate',
  'burstiness',
  'requests',
  'max-batch',
  'max-tokens-per-step',
  'prompt-len',
  'output-len',
  'no-chunking',
  'slo',
  'sweep-rate',
  'sweep-batch',
  'dollars-per-hour',
  'watts',
  'max-queue',
  'timeout-ms',
  'degrade-over',
  'degrade-to',
  'sla',
  'class',
  'prefix-cache',
  'shared-prefix',
  'conversations',
  'turns',
  'percentile-metrics',
  'metric-percentiles',
  'save-result',
  'save-detailed',
  'result-dir',
  'result-filename',
]);
/** The flags of the latency sweep (`--reps` also sets the roofs' repetitions with `--probe`). */
const SWEEP_FLAGS = new Set(['prompt-lengths', 'reps', 'warmup', 'profile', 'cached-prefix']);
/** The flags that choose llama-bench mode (llama-bench's -p -n -pg -d -r -o). */
const LLAMA_BENCH_MODE_FLAGS = ['n-prompt', 'n-gen', 'n-pg', 'n-depth', 'repetitions', 'output'];
/** What llama-bench mode takes besides its own flags and the common ones. */
const LLAMA_BENCH_OTHER_FLAGS = new Set(['model', 'hf-repo', 'quant', 'seed', 'context', 'memory-gib']);
/** What `--inspect` takes besides its target. */
const INSPECT_FLAGS = ['probe', 'probe-mib', 'memory-gib', 'context', 'json', 'quiet'];
/** Flags every run takes. */
const COMMON_FLAGS = new Set([
  'roofs',
  'help',
  'list-models',
  'quiet',
  'json',
  'out',
  'yes',
  'disable',
  'runtime',
  'probe',
  'probe-mib',
  'share',
  'share-base',
  'browser',
]);

/** What the flags run: a header inspection, the roofs alone, serving under load, or the latency sweep (the default). */
export function runKind(given: GivenFlags): 'inspect' | 'roofs' | 'llama-bench' | 'serve' | 'latency' {
  if (given.has('inspect')) return 'inspect';
  if (given.has('probe')) return 'roofs';
  if (LLAMA_BENCH_MODE_FLAGS.some((f) => given.has(f))) return 'llama-bench';
  return given.get('mode') === 'serve' ? 'serve' : 'latency';
}

/**
 * Null when `name` is used by the run the flags choose; otherwise why not, naming the mode or flag
 * that takes it ("--rate is a serve-mode flag; add --mode serve").
 */
export function misplacedFlag(name: string, given: GivenFlags): string | null {
  // These print and exit before anything runs.
  if (given.has('help') || given.has('list-models')) return null;
  const flag = `--${name}`;
  const kind = runKind(given);
  if (kind === 'inspect') {
    if (name === 'inspect' || name === 'help' || name === 'list-models') return null;
    if (!INSPECT_FLAGS.includes(name)) return `${flag} does not apply to --inspect, which takes ${INSPECT_FLAGS.map((f) => `--${f}`).join(', ')}`;
    if (name === 'probe-mib' && !given.has('probe')) return '--probe-mib sizes the roof measurement; with --inspect it needs --probe';
    return null;
  }
  if ((name === 'result-dir' || name === 'result-filename' || name === 'save-detailed') && !given.has('save-result'))
    return `--${name} shapes the file of --save-result; add --save-result`;
  if (name === 'hf-repo' && given.has('model')) return '-hf and --model both name the model; drop one of them';
  if (name === 'browser' && given.get('runtime') !== 'browser') return '--browser picks the browser of --runtime browser; add --runtime browser';
  if (name === 'share-base' && !given.has('share')) return '--share-base is where --share links point; add --share';
  if (name === 'roofs' && kind === 'roofs' && given.get('roofs') !== 'fresh')
    return '--probe measures the roofs afresh; --roofs FILE reuses saved ones instead, so drop one of them';
  if (COMMON_FLAGS.has(name)) return null;
  if (kind === 'roofs') {
    return name === 'reps'
      ? null
      : `${flag} does not apply to --probe, which measures the roofs only; drop --probe to run a model (the roofs come first anyway)`;
  }
  if (kind === 'llama-bench') {
    if (LLAMA_BENCH_MODE_FLAGS.includes(name) || LLAMA_BENCH_OTHER_FLAGS.has(name)) return null;
    if (name === 'llama-bench') return '--llama-bench adds pp512/tg128 to a latency sweep; -p/-n/-pg/-d/-r/-o already run llama-bench mode, so drop it';
    return `${flag} does not apply to llama-bench mode (chosen by -p, -n, -pg, -d, -r or -o), which takes -m, -hf, -p, -n, -pg, -d, -r, -o, --quant, --seed, --context, --memory-gib`;
  }
  const prompt = given.has('prompt');
  if (SERVE_FLAGS.has(name)) return kind === 'serve' ? null : `${flag} is a serve-mode flag; add --mode serve`;
  if (SWEEP_FLAGS.has(name)) {
    if (kind === 'serve') {
      const instead = name === 'prompt-lengths' ? '; --prompt-len sets its prompts' : name === 'reps' ? ' (and the roofs take it only with --probe alone)' : '';
      return `${flag} is a flag of the latency sweep (the default mode), which --mode serve does not run${instead}`;
    }
    if (prompt && !given.has('prompt-lengths')) return `${flag} is a latency-sweep flag; with --prompt the sweep runs only when --prompt-lengths is given`;
    return null;
  }
  if (name === 'agreement' && kind === 'serve') return '--agreement joins the accuracy pass of latency and --prompt runs, which --mode serve does not run';
  if (name === 'gen' && kind === 'serve' && !prompt) return '--gen sets the output of the latency sweep and --prompt; in serve mode --output-len sets it';
  if ((name === 'chat' || name === 'temperature') && !prompt) return `${flag} is a --prompt flag; add --prompt TEXT`;
  if ((name === 'top-k' || name === 'top-p') && !(Number(given.get('temperature')) > 0)) {
    return `${flag} shapes sampling, which needs --temperature above 0 (at temperature 0 decoding is greedy)`;
  }
  if (name === 'chunk') {
    if (kind === 'serve' && given.has('no-chunking')) return '--chunk sets the prefill chunk, which --no-chunking turns off; drop one of them';
    if (kind === 'latency' && prompt && !given.has('prompt-lengths'))
      return "--chunk sets the latency sweep's prefill chunk; with --prompt the sweep runs only when --prompt-lengths is given";
  }
  return null;
}

/**
 * Why `path` cannot be written, or null when it can: an existing file must be writable, a new
 * one's folder must exist and be writable. Checked before the run, so a result is never lost at its end.
 */
export function outputPathProblem(path: string, flag = '--json'): string | null {
  const full = resolve(path);
  // A path through a file (ENOTDIR) is reported as its folder's problem below.
  const statOf = (p: string) => {
    try {
      return statSync(p, { throwIfNoEntry: false });
    } catch {
      return undefined;
    }
  };
  try {
    const stat = statOf(full);
    if (stat?.isDirectory()) return `${flag} ${path} is a folder; give a file name inside it`;
    if (stat) {
      accessSync(full, constants.W_OK);
      return null;
    }
    const folder = dirname(full);
    const parent = statOf(folder);
    if (!parent) return `${flag} ${path}: the folder ${folder} does not exist; create it first`;
    if (!parent.isDirectory()) return `${flag} ${path}: ${folder} is not a folder`;
    accessSync(folder, constants.W_OK);
    return null;
  } catch {
    return `${flag} ${path} is not writable here; choose another path`;
  }
}

/**
 * Why files cannot be written into folder `dir`, or null when they can: an existing folder must be
 * writable; a missing one is created at the end, so its nearest existing parent must be a writable folder.
 */
export function outputDirProblem(dir: string, flag: string): string | null {
  let probe = resolve(dir);
  for (;;) {
    let stat;
    try {
      stat = statSync(probe, { throwIfNoEntry: false });
    } catch {
      // ENOTDIR: a path through a file; its parent says which.
      stat = undefined;
    }
    if (stat) {
      if (!stat.isDirectory()) return `${flag} ${dir}: ${probe} is a file, not a folder`;
      try {
        accessSync(probe, constants.W_OK);
        return null;
      } catch {
        return `${flag} ${dir}: ${probe} is not writable here; choose another folder`;
      }
    }
    const parent = dirname(probe);
    if (parent === probe) return `${flag} ${dir}: no folder of it exists`;
    probe = parent;
  }
}

/**
 * What the visitor chose to run (model, mode, sweep settings) and how it becomes a `BenchJob`.
 * Pure: no Lit, no DOM beyond `File`, so it is unit-tested in Node. The defaults are
 * `defaultJob(caps)`; URL parameters (see `parsePageParams`) override them, which is how the
 * tests keep a run short on SwiftShader without shrinking the visitor's default.
 */
import { findKnownFile, findPreset, hfFileUrl } from '../model/catalog.ts';
import { defaultJob, plannedWork, servePositions, type BenchJob, type LatencyJob } from '../jobs/job-spec.ts';
import { LLAMA_BENCH_DEFAULTS } from '../measure/llama-bench-spec.ts';
import type { RepeatProtocol } from '../measure/protocol.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import { QUANTIZATIONS, type Quantization } from '../model/recipes.ts';
import { parseSlo, type Slo } from '../serve/metrics.ts';
import type { ServeSettings } from '../serve/run.ts';
import type { LengthDistribution } from '../serve/workload.ts';
import { listProblem, MAX_BATCH, MAX_LIST_ENTRIES, MAX_PROMPT_TOKENS, rangeProblem, type PlannedWork, type SettingName } from '../measure/validate.ts';
import { matchingPreset, parseModelId } from '../webllm/catalog.ts';

export type Mode = 'roofs' | 'latency' | 'llama-bench' | 'serve';
export const MODES: readonly Mode[] = ['roofs', 'latency', 'llama-bench', 'serve'];
export const QUANTS: readonly Quantization[] = QUANTIZATIONS;

/** Which model: a synthetic preset, a known public GGUF, any GGUF URL, or a file on this computer. */
export type ModelPick =
  | { kind: 'preset'; id: string; quant: Quantization }
  | { kind: 'known'; id: string; quant: Quantization | null }
  | { kind: 'url'; url: string; quant: Quantization | null }
  | { kind: 'file'; file: File | null; quant: Quantization | null }
  /** A WebLLM prebuilt model; `sideBySide` also runs our engine on the preset of its family. */
  | { kind: 'webllm'; id: string; quant: null; sideBySide: boolean };

export interface SweepSettings {
  promptLengths: number[];
  gen: number;
  reps: number;
  profile: boolean;
}

export interface RunSetup {
  mode: Mode;
  model: ModelPick;
  sweep: SweepSettings;
  serve: ServeSettings;
  /** llama-bench's pp and tg lengths (llama.cpp's defaults: 512 and 128). */
  llamaBench: { nPrompt: number; nGen: number };
  /** Cap on the roofs' bandwidth working set, MiB (default: chosen per device). */
  probeMiB?: number;
  /** Timed repetitions per roof (default: the protocol's minimum duration). */
  probeReps?: number;
  /** Workgroup grids the bandwidth roofs try (default: chosen per device in kernels/select.ts). */
  probeGrids?: number[];
  /** Tokens of work the visitor confirmed past the bound (validate.ts's workProblem); more asks again. */
  confirmedWork?: number;
}

/** URL parameters the page reads (all optional). */
export interface PageParams {
  mode?: Mode;
  preset?: string;
  quant?: Quantization;
  lengths?: number[];
  gen?: number;
  reps?: number;
  profile?: boolean;
  probeMiB?: number;
  probeReps?: number;
  probeGrids?: number[];
  serve?: Partial<ServeSettings>;
}

const MAX_PROMPT = MAX_PROMPT_TOKENS;

/** A URL parameter's number, checked against the setting's range (validate.ts's table, the CLI's too). */
function setting(raw: string, name: SettingName, problems: string[], param: string = name): number | undefined {
  const problem = rangeProblem(name, raw, `?${param}=`);
  if (problem === null) return Number(raw);
  problems.push(`${problem}; using the default.`);
  return undefined;
}

/** A comma-separated list of the setting's values (at most MAX_LIST_ENTRIES), or undefined with the problems noted. */
function settings(raw: string, name: SettingName, problems: string[], param: string = name): number[] | undefined {
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length > MAX_LIST_ENTRIES) {
    problems.push(`?${param}= takes at most ${MAX_LIST_ENTRIES} values, got ${parts.length}; using the default.`);
    return undefined;
  }
  const parsed = parts.map((s) => setting(s, name, problems, param));
  return parsed.every((n) => n !== undefined) ? (parsed as number[]) : undefined;
}

/** Largest batch the serving form accepts (each sequence holds its own KV cache): validate.ts's, the CLI's too. */
export { MAX_BATCH };

/**
 * Serving overrides: `requests`, `max-batch`, `rate` (req/s or inf), `prompt-len`, `output-len`,
 * `chunk` (0 = off), `slo` (as the CLI's --slo), `sweep-batch=1,2`, `sweep-rate=1`.
 */
function parseServeParams(get: (name: string) => string | undefined, problems: string[]): Partial<ServeSettings> | undefined {
  const serve: Partial<ServeSettings> = {};
  const int = (name: SettingName) => {
    const raw = get(name);
    return raw === undefined ? undefined : setting(raw, name, problems);
  };
  const requests = int('requests');
  if (requests) serve.requests = requests;
  const batch = int('max-batch');
  if (batch) serve.max_batch = batch;
  const prompt = int('prompt-len');
  if (prompt) serve.prompt = { kind: 'fixed', tokens: prompt };
  const output = int('output-len');
  if (output) serve.output = { kind: 'fixed', tokens: output };
  const rate = get('rate');
  if (rate !== undefined) {
    if (rate === 'inf') serve.rate = Infinity;
    else {
      const n = setting(rate, 'rate', problems);
      if (n !== undefined) serve.rate = n;
    }
  }
  const chunk = get('chunk');
  if (chunk !== undefined) serve.chunk = chunk === '0' ? null : (setting(chunk, 'chunk', problems) ?? 32);
  const slo = get('slo');
  if (slo !== undefined) {
    try {
      serve.slo = parseSlo(slo);
    } catch {
      problems.push(`?slo=${slo.slice(0, 40)} is not an SLO such as ttft=500,tpot=50; using none.`);
    }
  }
  const sweep = get('sweep-batch');
  if (sweep !== undefined) {
    const list = parseList(sweep, MAX_BATCH);
    if (list) serve.sweep_batch = list;
    else problems.push(`?sweep-batch= must be batch sizes from 1 to ${MAX_BATCH}, separated by commas.`);
  }
  if (get('sweep-rate') !== undefined) serve.sweep_rate = get('sweep-rate') === '1';
  const cache = get('prefix-cache');
  if (cache !== undefined) {
    if (cache === 'on' || cache === 'off') serve.prefix_cache = cache === 'on';
    else problems.push(`?prefix-cache= must be on or off; using on.`);
  }
  // The serve-mode numbers the CLI takes under the same names (validate.ts's ranges).
  const optionalInts: [
    keyof ServeSettings & ('shared_prefix' | 'conversations' | 'turns' | 'max_queue' | 'timeout_ms' | 'degrade_over' | 'degrade_to' | 'sla_percent'),
    SettingName,
  ][] = [
    ['shared_prefix', 'shared-prefix'],
    ['conversations', 'conversations'],
    ['turns', 'turns'],
    ['max_queue', 'max-queue'],
    ['timeout_ms', 'timeout-ms'],
    ['degrade_over', 'degrade-over'],
    ['degrade_to', 'degrade-to'],
    ['sla_percent', 'sla'],
  ];
  for (const [key, name] of optionalInts) {
    const n = int(name);
    if (n !== undefined) serve[key] = n;
  }
  return Object.keys(serve).length ? serve : undefined;
}

/**
 * `?mode=roofs|latency|llama-bench|serve&preset=ID&quant=q4_0&lengths=8,16&gen=8&reps=2&profile=1&probe-mib=4&probe-reps=2&probe-grids=16,64`.
 * A bad value is reported (and ignored) rather than failing the page.
 */
export function parsePageParams(search: string): { params: PageParams; problems: string[] } {
  const q = new URLSearchParams(search);
  const params: PageParams = {};
  const problems: string[] = [];
  const get = (name: string) => q.get(name) ?? undefined;
  const mode = get('mode');
  if (mode !== undefined) {
    if ((MODES as readonly string[]).includes(mode)) params.mode = mode as Mode;
    else problems.push(`?mode= must be one of ${MODES.join(', ')}; using the default.`);
  }
  const preset = get('preset');
  if (preset !== undefined) {
    if (findPreset(preset)) params.preset = preset.toLowerCase();
    else problems.push(`?preset=${preset.slice(0, 40)} is not a known preset; using the default.`);
  }
  const quant = get('quant');
  if (quant !== undefined) {
    if ((QUANTS as readonly string[]).includes(quant)) params.quant = quant as Quantization;
    else problems.push(`?quant= must be one of ${QUANTS.join(', ')}; using the default.`);
  }
  const lengths = get('lengths');
  if (lengths !== undefined) params.lengths = settings(lengths, 'prompt-lengths', problems, 'lengths');
  const grids = get('probe-grids');
  if (grids !== undefined) params.probeGrids = settings(grids, 'probe-grids', problems);
  const ints: [keyof PageParams & ('gen' | 'reps' | 'probeMiB' | 'probeReps'), SettingName][] = [
    ['gen', 'gen'],
    ['reps', 'reps'],
    ['probeMiB', 'probe-mib'],
    ['probeReps', 'probe-reps'],
  ];
  for (const [key, name] of ints) {
    const raw = get(name);
    if (raw !== undefined) params[key] = setting(raw, name, problems);
  }
  const profile = get('profile');
  if (profile !== undefined) params.profile = profile === '1' || profile === 'true';
  params.serve = parseServeParams(get, problems);
  return { params, problems };
}

/** The serving defaults, as the CLI's (`npm run bench -- --serve`): small on CPU adapters. */
export function defaultServe(cpuLike: boolean): ServeSettings {
  return {
    requests: 16,
    rate: Infinity,
    burstiness: 1,
    prompt: { kind: 'fixed', tokens: cpuLike ? 32 : 256 },
    output: { kind: 'fixed', tokens: cpuLike ? 16 : 128 },
    max_batch: 4,
    max_tokens_per_step: cpuLike ? 64 : 512,
    chunk: 32,
    slo: {},
    seed: 42,
    prefix_cache: true,
  };
}

/** Whether any SLO is set. */
export function hasSlo(slo: Slo): boolean {
  return Object.values(slo).some((v) => v !== undefined);
}

/** `defaultJob(caps)` as a setup, with the URL's overrides on top. */
export function defaultSetup(caps: Pick<Capabilities, 'cpuLike'>, params: PageParams = {}): RunSetup {
  const job = defaultJob(caps);
  const latency = job.latency as LatencyJob;
  return {
    mode: params.mode ?? 'latency',
    model: { kind: 'preset', id: params.preset ?? job.model?.preset ?? 'stories15m', quant: params.quant ?? job.model?.quant ?? 'q4_0' },
    sweep: {
      promptLengths: params.lengths ?? latency.promptLengths,
      gen: params.gen ?? latency.gen,
      reps: params.reps ?? latency.reps,
      profile: params.profile ?? latency.profile ?? false,
    },
    serve: { ...defaultServe(caps.cpuLike), ...params.serve },
    llamaBench: { nPrompt: LLAMA_BENCH_DEFAULTS.nPrompt, nGen: LLAMA_BENCH_DEFAULTS.nGen },
    probeMiB: params.probeMiB,
    probeReps: params.probeReps,
    probeGrids: params.probeGrids,
  };
}

/** A fixed number of timed repetitions per roof (no minimum duration). */
function probeProtocol(reps: number | undefined): RepeatProtocol | undefined {
  return reps ? { warmup: 1, minReps: reps, maxReps: reps, minDurationMs: 0 } : undefined;
}

/** Why the setup cannot run yet, in one sentence, or null when it can. */
export function setupProblem(setup: RunSetup): string | null {
  const m = setup.model;
  if (setup.mode === 'roofs') return null;
  if (m.kind === 'webllm' && setup.mode !== 'latency') return 'WebLLM models run the latency sweep only: choose “Latency sweep”.';
  if (m.kind === 'url' && m.url.trim().startsWith('hf://')) {
    try {
      hfFileUrl(m.url);
    } catch (e) {
      return (e as Error).message;
    }
  } else if (m.kind === 'url' && !/^(https?:\/\/|\/|\.\.?\/)/.test(m.url.trim()))
    return 'Enter the address of a GGUF file (https://… or hf://ORG/REPO/FILE.gguf).';
  if (m.kind === 'file' && !m.file) return 'Choose a GGUF file on this computer.';
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    if (s.promptLengths.length === 0) return 'Give at least one prompt length.';
    const problem =
      listProblem('prompt-lengths', s.promptLengths, FORM_LABELS['prompt-lengths']) ??
      rangeProblem('gen', s.gen, FORM_LABELS.gen) ??
      rangeProblem('reps', s.reps, FORM_LABELS.reps);
    if (problem) return `${problem}.`;
  }
  if (setup.mode === 'serve') {
    const v = setup.serve;
    const longest = (d: LengthDistribution) => (d.kind === 'fixed' ? d.tokens : d.max);
    const problem =
      rangeProblem('requests', v.requests, FORM_LABELS.requests) ??
      (v.rate === Infinity ? null : rangeProblem('rate', v.rate, FORM_LABELS.rate)) ??
      rangeProblem('max-batch', v.max_batch, FORM_LABELS['max-batch']) ??
      rangeProblem('prompt-len', longest(v.prompt), FORM_LABELS['prompt-len']) ??
      rangeProblem('output-len', longest(v.output), FORM_LABELS['output-len']) ??
      (v.chunk === null ? null : rangeProblem('chunk', v.chunk, FORM_LABELS.chunk)) ??
      optionalProblem(v);
    if (problem) return `${problem}.`;
    if (v.sweep_rate && !hasSlo(v.slo)) return 'The rate sweep needs at least one SLO (TTFT, TPOT or E2EL).';
    if (v.turns !== undefined && v.conversations === undefined) return 'Turns per conversation need a number of conversations.';
    if (v.degrade_to !== undefined && v.degrade_over === undefined) return 'An output cap for degraded requests needs a queue depth to degrade over.';
    const need = servePositions(v);
    if (need > MAX_PROMPT) return `The longest request needs ${need} positions (shared prefix + turns × (prompt + output)), over ${MAX_PROMPT}.`;
  }
  return null;
}

/** The first problem of the serve settings that may be left out (prefix workloads, admission, the SLA). */
function optionalProblem(v: ServeSettings): string | null {
  const checks: [number | undefined, SettingName][] = [
    [v.shared_prefix, 'shared-prefix'],
    [v.conversations, 'conversations'],
    [v.turns, 'turns'],
    [v.max_queue, 'max-queue'],
    [v.timeout_ms, 'timeout-ms'],
    [v.degrade_over, 'degrade-over'],
    [v.degrade_to, 'degrade-to'],
    [v.sla_percent, 'sla'],
  ];
  for (const [value, name] of checks) {
    const problem = value === undefined ? null : rangeProblem(name, value, FORM_LABELS[name]);
    if (problem) return problem;
  }
  return null;
}

/** How the form names each setting it holds (the problems above and the work bound say these). */
export const FORM_LABELS: Partial<Record<SettingName, string>> &
  Record<'prompt-lengths' | 'gen' | 'reps' | 'requests' | 'rate' | 'max-batch' | 'prompt-len' | 'output-len' | 'chunk', string> = {
  'prompt-lengths': 'Prompt lengths',
  gen: 'Output tokens',
  reps: 'Repetitions per length',
  requests: 'Requests',
  rate: 'Arrival rate',
  'max-batch': 'Max batch',
  'prompt-len': 'Prompt tokens',
  'output-len': 'Output tokens',
  chunk: 'Chunk size',
  'shared-prefix': 'Shared prefix tokens',
  conversations: 'Conversations',
  turns: 'Turns per conversation',
  'max-queue': 'Max queue',
  'timeout-ms': 'Timeout (ms)',
  'degrade-over': 'Degrade over queue depth',
  'degrade-to': 'Degraded output tokens',
  sla: 'Availability SLA (%)',
};

/** The work a setup plans (validate.ts's PlannedWork), for the bound on what runs without a confirmation. */
export function plannedWorkOf(setup: RunSetup): PlannedWork {
  return plannedWork(jobOf(setup).job);
}

/** The job a setup runs, and the local file it reads (if any). */
export function jobOf(setup: RunSetup): { job: BenchJob; file: File | null } {
  const job: BenchJob = { probe: true, probeMiB: setup.probeMiB, protocol: probeProtocol(setup.probeReps) };
  if (setup.probeGrids) job.probeShapes = { bandwidthWorkgroups: [...setup.probeGrids] };
  if (setup.mode === 'roofs') return { job, file: null };
  const m = setup.model;
  const quant = m.quant ?? undefined;
  let file: File | null = null;
  if (m.kind === 'webllm') {
    const preset = m.sideBySide ? matchingPreset(parseModelId(m.id)?.family ?? m.id) : undefined;
    if (preset) job.model = { preset: preset.id, quant: 'q4_0' };
    job.engine = 'webllm';
    job.webllm = { model: m.id };
  } else if (m.kind === 'preset') job.model = { preset: m.id, quant: m.quant };
  else if (m.kind === 'known') job.model = { url: findKnownFile(m.id)?.url ?? '', quant };
  else if (m.kind === 'url') job.model = { url: m.url.trim().startsWith('hf://') ? hfFileUrl(m.url) : m.url.trim(), quant };
  else {
    job.model = { quant };
    file = m.file;
  }
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    job.latency = { promptLengths: [...s.promptLengths], gen: s.gen, reps: s.reps, profile: s.profile };
  } else if (setup.mode === 'serve') {
    const v = setup.serve;
    // Conversations send conversations × turns requests (the CLI's rule too).
    job.serve = { ...v, slo: { ...v.slo }, ...(v.conversations !== undefined ? { requests: v.conversations * (v.turns ?? 2), turns: v.turns ?? 2 } : {}) };
  } else {
    job.llamaBench = { ...setup.llamaBench };
  }
  return { job, file };
}

/** "8, 16, 32" → [8, 16, 32]; null when any entry is not a whole number from 1 to `max`. */
export function parseList(text: string, max: number): number[] | null {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  const ns = parts.map(Number);
  return ns.length > 0 && ns.length <= MAX_LIST_ENTRIES && ns.every((n) => Number.isInteger(n) && n >= 1 && n <= max) ? ns : null;
}

/** Prompt lengths: {@link parseList} up to the longest prompt. */
export function parseLengths(text: string): number[] | null {
  return parseList(text, MAX_PROMPT);
}

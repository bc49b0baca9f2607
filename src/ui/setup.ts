/**
 * What the visitor chose to run (model, mode, sweep settings) and how it becomes a `BenchJob`.
 * Pure: no Lit, no DOM beyond `File`, so it is unit-tested in Node. The defaults are
 * `defaultJob(caps)`; URL parameters (see `parsePageParams`) override them, which is how the
 * tests keep a run short on SwiftShader without shrinking the visitor's default.
 */
import { findKnownFile, findPreset } from '../model/catalog.ts';
import { defaultJob, type BenchJob, type LatencyJob } from '../jobs/job.ts';
import type { RepeatProtocol } from '../measure/protocol.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import type { Quantization } from '../model/gpu-weights.ts';
import { parseSlo, type Slo } from '../serve/metrics.ts';
import type { ServeSettings } from '../serve/run.ts';
import { matchingPreset } from '../jobs/webllm-run.ts';
import { parseModelId } from '../webllm/catalog.ts';

export type Mode = 'roofs' | 'latency' | 'llama-bench' | 'serve';
export const MODES: readonly Mode[] = ['roofs', 'latency', 'llama-bench', 'serve'];
export const QUANTS: readonly Quantization[] = ['f32', 'f16', 'q8_0', 'q4_0'];

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
  /** Cap on the roofs' bandwidth working set, MiB (default: chosen per device). */
  probeMiB?: number;
  /** Timed repetitions per roof (default: the protocol's minimum duration). */
  probeReps?: number;
  /** Workgroup grids the bandwidth roofs try (default: chosen per device in kernels/select.ts). */
  probeGrids?: number[];
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

const MAX_PROMPT = 32768;

function positiveInt(raw: string, name: string, max: number, problems: string[]): number | undefined {
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1 && n <= max) return n;
  problems.push(`?${name}=${raw.slice(0, 40)} is not a whole number from 1 to ${max}; using the default.`);
  return undefined;
}

/** A comma-separated list of whole numbers from 1 to `max` (at most 16), or undefined with the problems noted. */
function positiveInts(raw: string, name: string, max: number, problems: string[]): number[] | undefined {
  const parsed = raw.split(',').map((s) => positiveInt(s.trim(), name, max, problems));
  return parsed.length <= 16 && parsed.every((n) => n !== undefined) ? (parsed as number[]) : undefined;
}

/** Largest batch the serving form accepts (each sequence holds its own KV cache). */
export const MAX_BATCH = 64;

/**
 * Serving overrides: `requests`, `max-batch`, `rate` (req/s or inf), `prompt-len`, `output-len`,
 * `chunk` (0 = off), `slo` (as the CLI's --slo), `sweep-batch=1,2`, `sweep-rate=1`.
 */
function parseServeParams(get: (name: string) => string | undefined, problems: string[]): Partial<ServeSettings> | undefined {
  const serve: Partial<ServeSettings> = {};
  const int = (name: string, max: number) => {
    const raw = get(name);
    return raw === undefined ? undefined : positiveInt(raw, name, max, problems);
  };
  const requests = int('requests', 10000);
  if (requests) serve.requests = requests;
  const batch = int('max-batch', MAX_BATCH);
  if (batch) serve.max_batch = batch;
  const prompt = int('prompt-len', MAX_PROMPT);
  if (prompt) serve.prompt = { kind: 'fixed', tokens: prompt };
  const output = int('output-len', 4096);
  if (output) serve.output = { kind: 'fixed', tokens: output };
  const rate = get('rate');
  if (rate !== undefined) {
    if (rate === 'inf' || Number(rate) > 0) serve.rate = rate === 'inf' ? Infinity : Number(rate);
    else problems.push('?rate= must be a positive number of requests/s or inf; using the default.');
  }
  const chunk = get('chunk');
  if (chunk !== undefined) serve.chunk = chunk === '0' ? null : (positiveInt(chunk, 'chunk', MAX_PROMPT, problems) ?? 32);
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
  if (lengths !== undefined) params.lengths = positiveInts(lengths, 'lengths', MAX_PROMPT, problems);
  const grids = get('probe-grids');
  if (grids !== undefined) params.probeGrids = positiveInts(grids, 'probe-grids', 65536, problems);
  const ints: [keyof PageParams & ('gen' | 'reps' | 'probeMiB' | 'probeReps'), string, number][] = [
    ['gen', 'gen', 4096],
    ['reps', 'reps', 1000],
    ['probeMiB', 'probe-mib', 4096],
    ['probeReps', 'probe-reps', 1000],
  ];
  for (const [key, name, max] of ints) {
    const raw = get(name);
    if (raw !== undefined) params[key] = positiveInt(raw, name, max, problems);
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
  if (m.kind === 'url' && !/^(https?:\/\/|\/|\.\.?\/)/.test(m.url.trim())) return 'Enter the address of a GGUF file (https://…).';
  if (m.kind === 'file' && !m.file) return 'Choose a GGUF file on this computer.';
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    if (s.promptLengths.length === 0) return 'Give at least one prompt length.';
    if (s.gen < 1 || s.reps < 1) return 'Output tokens and repetitions must be at least 1.';
  }
  if (setup.mode === 'serve' && setup.serve.sweep_rate && !hasSlo(setup.serve.slo)) return 'The rate sweep needs at least one SLO (TTFT, TPOT or E2EL).';
  return null;
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
  else if (m.kind === 'url') job.model = { url: m.url.trim(), quant };
  else {
    job.model = { quant };
    file = m.file;
  }
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    job.latency = { promptLengths: [...s.promptLengths], gen: s.gen, reps: s.reps, profile: s.profile };
  } else if (setup.mode === 'serve') {
    job.serve = { ...setup.serve, slo: { ...setup.serve.slo } };
  } else {
    job.llamaBench = true;
  }
  return { job, file };
}

/** "8, 16, 32" → [8, 16, 32]; null when any entry is not a whole number from 1 to `max`. */
export function parseList(text: string, max: number): number[] | null {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  const ns = parts.map(Number);
  return ns.length > 0 && ns.length <= 16 && ns.every((n) => Number.isInteger(n) && n >= 1 && n <= max) ? ns : null;
}

/** Prompt lengths: {@link parseList} up to the longest prompt. */
export function parseLengths(text: string): number[] | null {
  return parseList(text, MAX_PROMPT);
}

/**
 * What the visitor chose to run (model, mode, sweep settings) and how it becomes a `BenchJob`.
 * Pure: no Lit, no DOM beyond `File`, so it is unit-tested in Node. The defaults are
 * `defaultJob(caps)`; URL parameters (see `parsePageParams`) override them, which is how the
 * tests keep a run short on SwiftShader without shrinking the visitor's default.
 */
import { findKnownFile, findPreset } from '../../models/catalog.ts';
import { defaultJob, type BenchJob, type LatencyJob } from '../bench/job.ts';
import type { RepeatProtocol } from '../bench/protocol.ts';
import type { Capabilities } from '../gpu/capabilities.ts';
import type { Quantization } from '../model/gpu-weights.ts';

export type Mode = 'roofs' | 'latency' | 'llama-bench';
export const MODES: readonly Mode[] = ['roofs', 'latency', 'llama-bench'];
export const QUANTS: readonly Quantization[] = ['f32', 'f16', 'q8_0', 'q4_0'];

/** Which model: a synthetic preset, a known public GGUF, any GGUF URL, or a file on this computer. */
export type ModelPick =
  | { kind: 'preset'; id: string; quant: Quantization }
  | { kind: 'known'; id: string; quant: Quantization | null }
  | { kind: 'url'; url: string; quant: Quantization | null }
  | { kind: 'file'; file: File | null; quant: Quantization | null };

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
  /** Cap on the roofs' bandwidth working set, MiB (default: chosen per device). */
  probeMiB?: number;
  /** Timed repetitions per roof (default: the protocol's minimum duration). */
  probeReps?: number;
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
}

const MAX_PROMPT = 32768;

function positiveInt(raw: string, name: string, max: number, problems: string[]): number | undefined {
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1 && n <= max) return n;
  problems.push(`?${name}=${raw.slice(0, 40)} is not a whole number from 1 to ${max}; using the default.`);
  return undefined;
}

/**
 * `?mode=roofs|latency|llama-bench&preset=ID&quant=q4_0&lengths=8,16&gen=8&reps=2&profile=1&probe-mib=4&probe-reps=2`.
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
  if (lengths !== undefined) {
    const parsed = lengths.split(',').map((s) => positiveInt(s.trim(), 'lengths', MAX_PROMPT, problems));
    if (parsed.length > 0 && parsed.length <= 16 && parsed.every((n) => n !== undefined)) params.lengths = parsed as number[];
  }
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
  return { params, problems };
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
    probeMiB: params.probeMiB,
    probeReps: params.probeReps,
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
  if (m.kind === 'url' && !/^(https?:\/\/|\/|\.\.?\/)/.test(m.url.trim())) return 'Enter the address of a GGUF file (https://…).';
  if (m.kind === 'file' && !m.file) return 'Choose a GGUF file on this computer.';
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    if (s.promptLengths.length === 0) return 'Give at least one prompt length.';
    if (s.gen < 1 || s.reps < 1) return 'Output tokens and repetitions must be at least 1.';
  }
  return null;
}

/** The job a setup runs, and the local file it reads (if any). */
export function jobOf(setup: RunSetup): { job: BenchJob; file: File | null } {
  const job: BenchJob = { probe: true, probeMiB: setup.probeMiB, protocol: probeProtocol(setup.probeReps) };
  if (setup.mode === 'roofs') return { job, file: null };
  const m = setup.model;
  const quant = m.quant ?? undefined;
  let file: File | null = null;
  if (m.kind === 'preset') job.model = { preset: m.id, quant: m.quant };
  else if (m.kind === 'known') job.model = { url: findKnownFile(m.id)?.url ?? '', quant };
  else if (m.kind === 'url') job.model = { url: m.url.trim(), quant };
  else {
    job.model = { quant };
    file = m.file;
  }
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    job.latency = { promptLengths: [...s.promptLengths], gen: s.gen, reps: s.reps, profile: s.profile };
  } else {
    job.llamaBench = true;
  }
  return { job, file };
}

/** "8, 16, 32" → [8, 16, 32]; null when any entry is not a whole number in range. */
export function parseLengths(text: string): number[] | null {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  const ns = parts.map(Number);
  return ns.length > 0 && ns.length <= 16 && ns.every((n) => Number.isInteger(n) && n >= 1 && n <= MAX_PROMPT) ? ns : null;
}

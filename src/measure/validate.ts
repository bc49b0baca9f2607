/**
 * Validation of what comes from outside: a result (a permalink, an imported file, the CLI's JSON),
 * where every section in RESULT_SECTIONS is checked against its declaration — types, plausible
 * ranges, length caps — so a hostile or stale document gets a clear error naming the field instead
 * of a broken or frozen page; and the settings of a run (the CLI's flags, the page's form and URL),
 * checked against one table of ranges before any GPU work.
 */
import { TokenscopeError } from '../errors.ts';
import { resultSchema, SCHEMA_VERSION, type BenchResult } from './schema.ts';
import { SchemaError } from './schema-kit.ts';

export { SchemaError };

export function expectObject(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SchemaError(path, 'must be an object');
  return v as Record<string, unknown>;
}

/** Check a parsed JSON document and return it typed. */
export function validateResult(doc: unknown): BenchResult {
  const r = expectObject(doc, 'result');
  const version = r.schema_version;
  if (typeof version !== 'number' || !Number.isFinite(version)) throw new SchemaError('schema_version', 'must be a finite number');
  if (version !== SCHEMA_VERSION) {
    throw new TokenscopeError(
      'bad-input',
      `This result uses schema version ${version}; this tokenscope reads version ${SCHEMA_VERSION}.`,
      version > SCHEMA_VERSION ? 'Open it with a newer tokenscope.' : 'Re-run the benchmark to get a current result.',
    );
  }
  // Top-level fields are named without a prefix ("latency.rows[0]…", not "result.latency…").
  for (const [key, schema] of Object.entries(resultSchema.shape)) schema.check(r[key], key);
  if (Number.isNaN(Date.parse(r.created_at as string))) throw new SchemaError('created_at', 'must be an ISO date');
  return r as unknown as BenchResult;
}

/**
 * A number setting's allowed values. One table serves the CLI's flags, the page's form and its URL
 * parameters, so `--reps 0`, `?reps=0` and the form's repetitions field are refused with the same
 * range, before any GPU work.
 */
export interface SettingRange {
  /** Whole numbers only. */
  integer: boolean;
  min: number;
  max: number;
  /** The minimum itself is refused (a probability mass, a price: they must be above it). */
  aboveMin?: boolean;
  /** What else the setting takes, said after the range (e.g. "or inf"). */
  orElse?: string;
}

const whole = (min: number, max: number): SettingRange => ({ integer: true, min, max });
const real = (min: number, max: number, aboveMin = false): SettingRange => ({ integer: false, min, max, aboveMin });

/** Longest prompt the CLI and the page accept, in tokens. */
export const MAX_PROMPT_TOKENS = 32768;
/** Most entries of a list setting (prompt lengths, batch sizes). */
export const MAX_LIST_ENTRIES = 16;
/** Largest batch serving accepts (each sequence holds its own KV cache). */
export const MAX_BATCH = 64;

/**
 * Every number setting, by its CLI flag name (the page's URL parameters use the same names). The
 * bounds are wide — well past any run that finishes in an hour — and keep each value where the
 * code that uses it stays correct: a rate under 0.001 req/s puts arrivals years away, a Gamma
 * shape under 0.01 underflows its draws to 0, a context or vocabulary past config.ts's plausible
 * ranges is no real model's.
 */
export const SETTING_RANGES = {
  reps: whole(1, 1000),
  warmup: whole(0, 100),
  gen: whole(1, 4096),
  'prompt-lengths': whole(1, MAX_PROMPT_TOKENS),
  'cached-prefix': whole(1, MAX_PROMPT_TOKENS),
  temperature: real(0, 100),
  'top-k': whole(0, 1 << 22),
  'top-p': real(0, 1, true),
  context: whole(1, 1 << 24),
  chunk: whole(1, MAX_PROMPT_TOKENS),
  seed: whole(0, 2 ** 32 - 1),
  'memory-gib': real(0, 1024, true),
  rate: { ...real(0.001, 1e6), orElse: 'or inf' },
  burstiness: real(0.01, 1000),
  requests: whole(1, 10000),
  'max-batch': whole(1, MAX_BATCH),
  'max-tokens-per-step': whole(1, MAX_PROMPT_TOKENS),
  'prompt-len': whole(1, MAX_PROMPT_TOKENS),
  'output-len': whole(1, 4096),
  'sweep-batch': whole(1, MAX_BATCH),
  'dollars-per-hour': real(0, 1e5, true),
  watts: real(0, 1e6, true),
  'max-queue': whole(0, 100_000),
  'timeout-ms': real(0, 1e7, true),
  'degrade-over': whole(0, 100_000),
  'degrade-to': whole(1, 4096),
  sla: real(0, 100, true),
  'shared-prefix': whole(1, MAX_PROMPT_TOKENS),
  conversations: whole(1, 10000),
  turns: whole(1, 256),
  'metric-percentiles': real(0, 100),
  'probe-mib': whole(1, 4096),
  // llama-bench's -p / -n / -d (0 skips that test, as llama-bench does) and -r.
  'n-prompt': whole(0, MAX_PROMPT_TOKENS),
  'n-gen': whole(0, 4096),
  'n-depth': whole(0, MAX_PROMPT_TOKENS),
  repetitions: whole(1, 1000),
  'probe-reps': whole(1, 1000),
  'probe-grids': whole(1, 65536),
} as const satisfies Record<string, SettingRange>;

export type SettingName = keyof typeof SETTING_RANGES;

/** "an integer from 1 to 1000", "a number above 0 and at most 1". */
export function describeRange(r: SettingRange): string {
  const kind = r.integer ? 'an integer' : 'a number';
  const span = r.aboveMin ? `above ${r.min} and at most ${r.max}` : `from ${r.min} to ${r.max}`;
  return `${kind} ${span}${r.orElse ? ` ${r.orElse}` : ''}`;
}

/**
 * Null when `value` (a number, or the text as typed) is within the setting's range; otherwise the
 * problem in the user's words: "--reps must be an integer from 1 to 1000, got 0". `spelled` is how
 * the surface names the setting (the CLI's "--reps", a URL's "?reps=").
 */
export function rangeProblem(name: SettingName, value: number | string, spelled = `--${name}`): string | null {
  const r: SettingRange = SETTING_RANGES[name];
  const text = String(value).trim();
  const n = text === '' ? NaN : Number(text);
  const inRange = Number.isFinite(n) && (r.aboveMin ? n > r.min : n >= r.min) && n <= r.max && (!r.integer || Number.isInteger(n));
  if (inRange) return null;
  const shown = Number.isNaN(n) ? JSON.stringify(text.slice(0, 40)) : text.slice(0, 40);
  return `${spelled} must be ${describeRange(r)}, got ${shown}`;
}

/** A list setting: at most MAX_LIST_ENTRIES entries, each within the range; null when it is. */
export function listProblem(name: SettingName, values: readonly (number | string)[], spelled = `--${name}`): string | null {
  if (values.length === 0) return `${spelled} needs at least one value`;
  if (values.length > MAX_LIST_ENTRIES) return `${spelled} takes at most ${MAX_LIST_ENTRIES} values, got ${values.length}`;
  for (const v of values) {
    const problem = rangeProblem(name, v, `each value of ${spelled}`);
    if (problem) return problem;
  }
  return null;
}

/**
 * llama-bench's integer lists: comma-separated values and ranges `first-last` (step 1),
 * `first-last+step` and `first-last*factor`, e.g. "32,64" or "128-512*2" → 128,256,512. Each value
 * within the setting's range, at most MAX_LIST_ENTRIES in all. The values, or the problem.
 */
export function parseIntRanges(name: SettingName, text: string, spelled = `--${name}`): number[] | string {
  const values: number[] = [];
  for (const part of text.split(',').map((s) => s.trim())) {
    const range = /^(\d+)-(\d+)(?:([+*])(\d+))?$/.exec(part);
    if (!range) {
      const problem = rangeProblem(name, part, `each value of ${spelled}`);
      if (problem) return `${problem} (values are N, N,N or FIRST-LAST[+STEP|*FACTOR])`;
      values.push(Number(part));
      continue;
    }
    const [first, last, step] = [Number(range[1]), Number(range[2]), Number(range[4] ?? 1)];
    const times = range[3] === '*';
    if (first > last) return `${spelled}: the range ${part} is empty (${first} > ${last})`;
    if (times ? step < 2 || first === 0 : step < 1)
      return `${spelled}: the range ${part} never advances; use ${times ? '*2 or more from a first value above 0' : '+1 or more'}`;
    for (let v = first; v <= last; v = times ? v * step : v + step) {
      if (values.length >= MAX_LIST_ENTRIES) return `${spelled} takes at most ${MAX_LIST_ENTRIES} values; ${text} gives more`;
      values.push(v);
    }
  }
  if (values.length > MAX_LIST_ENTRIES) return `${spelled} takes at most ${MAX_LIST_ENTRIES} values, got ${values.length}`;
  for (const v of values) {
    const problem = rangeProblem(name, v, `each value of ${spelled}`);
    if (problem) return problem;
  }
  return values;
}

/** What a run will do, in the settings' terms (before anything is measured). */
export interface PlannedWork {
  latency?: { promptLengths: readonly number[]; gen: number; reps: number; warmup: number };
  /** `runs`: how many times the workload runs (1, plus one per swept batch size, plus the rate sweep's probes). */
  serve?: { requests: number; rate: number; longestPrompt: number; longestOutput: number; runs: number };
}

/**
 * The most tokens (prompt + output, every repetition and warm-up) a run processes without a
 * confirmation. There is no duration estimate before the roofs are measured (the page's preflight
 * needs them), so the work is bounded instead: 250,000 tokens is ~25× the GPU default sweep and
 * ~40× the default serving workload.
 */
export const MAX_UNCONFIRMED_TOKENS = 250_000;
/** The longest a workload's arrivals may take (requests ÷ rate, seconds) without a confirmation. */
export const MAX_UNCONFIRMED_ARRIVAL_S = 3600;
/**
 * The longest they may take at all: a week, well inside what one timer can wait (2^31 ms, 24.8
 * days; past it Node fires at once with a TimeoutOverflowWarning, and the scheduler would spin).
 */
export const MAX_ARRIVAL_S = 7 * 24 * 3600;

/** Tokens the work processes: Σ over prompt lengths of (warm-ups + reps) × (P + gen), and requests × lengths × runs. */
export function plannedTokens(work: PlannedWork): number {
  const l = work.latency;
  const s = work.serve;
  const latency = l ? l.promptLengths.reduce((sum, p) => sum + (l.warmup + l.reps) * (p + l.gen), 0) : 0;
  const serve = s ? s.requests * (s.longestPrompt + s.longestOutput) * s.runs : 0;
  return latency + serve;
}

/**
 * Null when the work is within the unconfirmed bounds; otherwise why, and what to change.
 * `confirm` says how this surface confirms ("add --yes").
 */
export function workProblem(work: PlannedWork, confirm: string, spell: (name: SettingName) => string = (n) => `--${n}`): string | null {
  const tokens = plannedTokens(work);
  const count = (n: number) => Math.round(n).toLocaleString('en-US');
  if (tokens > MAX_UNCONFIRMED_TOKENS) {
    const lower = work.latency ? [spell('reps'), spell('prompt-lengths'), spell('gen')] : [spell('requests'), spell('prompt-len'), spell('output-len')];
    return (
      `This run would process about ${count(tokens)} tokens (prompt + output, every repetition), more than the ` +
      `${count(MAX_UNCONFIRMED_TOKENS)} allowed without confirmation; lower ${lower.join(', ')}, or ${confirm}`
    );
  }
  const s = work.serve;
  if (s && Number.isFinite(s.rate) && s.requests / s.rate > MAX_UNCONFIRMED_ARRIVAL_S) {
    return (
      `${s.requests} requests at ${s.rate} req/s take ${count(s.requests / s.rate)} s to arrive, more than the ` +
      `${MAX_UNCONFIRMED_ARRIVAL_S} s allowed without confirmation; raise ${spell('rate')}, lower ${spell('requests')}, or ${confirm}`
    );
  }
  return null;
}

/** Null unless the arrivals would take longer than MAX_ARRIVAL_S, which no confirmation allows. */
export function arrivalLimitProblem(work: PlannedWork, spell: (name: SettingName) => string = (n) => `--${n}`): string | null {
  const s = work.serve;
  if (!s || !Number.isFinite(s.rate) || s.requests / s.rate <= MAX_ARRIVAL_S) return null;
  const count = (n: number) => Math.round(n).toLocaleString('en-US');
  return (
    `${s.requests} requests at ${s.rate} req/s take ${count(s.requests / s.rate)} s to arrive; a run waits at most ` +
    `${count(MAX_ARRIVAL_S)} s (a week) for its arrivals: raise ${spell('rate')} or lower ${spell('requests')}`
  );
}

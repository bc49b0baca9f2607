/**
 * A small, strict flag parser: every flag is declared with its type (and, for numbers, its range
 * in validate.ts's one table); unknown flags, flags the chosen run does not use and bad values are
 * errors that carry the usage text (the CLI prints it and exits 2) — all before any GPU work.
 */
import { describeRange, listProblem, parseIntRanges, rangeProblem, SETTING_RANGES, type SettingName } from '../src/measure/validate.ts';

export type FlagType = 'boolean' | 'string' | 'int' | 'number' | 'list' | 'ranges';

export interface FlagSpec {
  type: FlagType;
  help: string;
  /** Shown in the usage line, e.g. "FILE". */
  value?: string;
  /** For string flags: the allowed values (with `range`: the words allowed besides a number, e.g. "inf"). */
  choices?: readonly string[];
  /** For int, number and list flags (and strings that hold a number): the allowed range, from SETTING_RANGES. */
  range?: SettingName;
  /** A one-letter (or llama-bench style) short form, typed with one dash: "m" for -m, "pg" for -pg. */
  short?: string;
  /** Long names other tools give this flag (vLLM's `request-rate` for `rate`): taken as this flag. */
  aliases?: readonly string[];
  /** For string flags with choices: any letter case is taken ("Q4_K_M" as "q4_k_m", as llama.cpp's tools write them). */
  caseless?: boolean;
  /** Given more than once, every value is kept (joined with ";"), as llama-bench's repeated `-pg` adds a test each time. */
  repeatable?: boolean;
  /** Takes every following word up to the next flag, joined with spaces (vLLM's `--goodput ttft:500 tpot:50`). */
  variadic?: boolean;
}

export type FlagValue = boolean | string | number | string[] | number[];

/** The flags as typed: the raw text of each (true for a boolean), before values are parsed. */
export type GivenFlags = ReadonlyMap<string, string | true>;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function usage(command: string, summary: string, flags: Record<string, FlagSpec>): string {
  const lines = Object.entries(flags).map(([name, spec]) => {
    const value = spec.type === 'boolean' ? '' : ` ${spec.value ?? (spec.choices ? spec.choices.join('|') : spec.type.toUpperCase())}`;
    const range = spec.range ? ` [${describeRange(SETTING_RANGES[spec.range])}]` : '';
    const aliases = spec.aliases?.length ? ` (also ${spec.aliases.map((a) => `--${a}`).join(', ')})` : '';
    const left = `  ${spec.short ? `-${spec.short}, ` : ''}--${name}${value}`;
    return (left.length >= 34 ? `${left}  ` : left.padEnd(34)) + spec.help + aliases + range;
  });
  return `Usage: ${command} [options]\n\n${summary}\n\nOptions:\n${lines.join('\n')}\n`;
}

/**
 * Parse `argv` against `flags`. `misplaced` (optional) is asked about each flag given, with all the
 * flags as typed, before any value is parsed: a flag the chosen mode ignores is refused first, so
 * `--rate abc` without `--mode serve` says where --rate belongs rather than what it must hold.
 */
export function parseFlags(
  argv: readonly string[],
  flags: Record<string, FlagSpec>,
  misplaced?: (name: string, given: GivenFlags) => string | null,
): Map<string, FlagValue> {
  const given = new Map<string, string | true>();
  /** How a flag was typed when not by its own name (-p, vLLM's --request-rate): errors name what the user typed. */
  const typedAs = new Map<string, string>();
  const spelled = (name: string) => typedAs.get(name) ?? `--${name}`;
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let shortForm: string | undefined;
    if (/^-[a-z]/i.test(arg)) {
      // A short form (-m, -p): the same flag under its long name.
      const short = arg.slice(1).split('=')[0];
      const long = Object.entries(flags).find(([, s]) => s.short === short)?.[0];
      if (!long) throw new UsageError(`Unknown flag -${short}.`);
      arg = `--${long}${arg.slice(1 + short.length)}`;
      shortForm = `-${short}`;
    }
    if (!arg.startsWith('--')) throw new UsageError(`Unexpected argument "${arg}" (flags start with --).`);
    const eq = arg.indexOf('=');
    const typed = arg.slice(2, eq === -1 ? undefined : eq);
    const name = flags[typed] ? typed : (Object.entries(flags).find(([, s]) => s.aliases?.includes(typed))?.[0] ?? typed);
    const spec = flags[name];
    if (!spec) throw new UsageError(`Unknown flag --${name}.`);
    if (shortForm) typedAs.set(name, shortForm);
    else if (typed !== name) typedAs.set(name, `--${typed}`);
    else typedAs.delete(name);
    if (spec.type === 'boolean') {
      if (eq !== -1) throw new UsageError(`${spelled(name)} takes no value.`);
      given.set(name, true);
      continue;
    }
    let raw = eq !== -1 ? arg.slice(eq + 1) : argv[++i];
    const isFlag = (t: string) => t.startsWith('--') || Object.values(flags).some((s) => s.short !== undefined && t === `-${s.short}`);
    if (raw === undefined || (eq === -1 && isFlag(raw))) throw new UsageError(`${spelled(name)} needs a value (${spec.value ?? spec.type}).`);
    while (spec.variadic && argv[i + 1] !== undefined && !argv[i + 1].startsWith('-')) raw += ` ${argv[++i]}`;
    const before = given.get(name);
    given.set(name, spec.repeatable && typeof before === 'string' ? `${before};${raw}` : raw);
  }
  for (const name of given.keys()) {
    const problem = misplaced?.(name, given);
    // The mode's rules speak of flags by their own names; a short form or alias is named as typed.
    const typed = typedAs.get(name);
    if (problem) throw new UsageError(`${typed ? problem.replace(new RegExp(`--${name}(?![\\w-])`, 'g'), typed) : problem}.`);
  }
  const out = new Map<string, FlagValue>();
  for (const [name, raw] of given) out.set(name, raw === true ? true : parseValue(spelled(name), flags[name], raw));
  return out;
}

/** `flag` is the flag as the user typed it ("--request-rate"), for the messages. */
function parseValue(flag: string, spec: FlagSpec, raw: string): FlagValue {
  const inRange = (text: string) => {
    const problem = spec.range ? rangeProblem(spec.range, text, flag) : null;
    if (problem) throw new UsageError(`${problem}.`);
  };
  switch (spec.type) {
    case 'int': {
      inRange(raw);
      if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${flag} must be a non-negative integer, got "${raw}".`);
      return Number(raw);
    }
    case 'number': {
      inRange(raw);
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag} must be a number, got "${raw}".`);
      return n;
    }
    case 'list': {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (!spec.range) return items;
      const problem = listProblem(spec.range, items, flag);
      if (problem) throw new UsageError(`${problem}.`);
      return items.map(Number);
    }
    case 'ranges': {
      const values = spec.range ? parseIntRanges(spec.range, raw, flag) : `${flag}: no range declared`;
      if (typeof values === 'string') throw new UsageError(`${values}.`);
      return values;
    }
    case 'string':
      if (spec.choices?.includes(raw)) return raw;
      if (spec.caseless && spec.choices?.includes(raw.toLowerCase())) return raw.toLowerCase();
      if (spec.range) {
        inRange(raw);
        return raw;
      }
      if (spec.choices) throw new UsageError(`${flag} must be one of ${spec.choices.join(', ')}; got "${raw}".`);
      return raw;
    default:
      throw new UsageError(`${flag}: unsupported flag type.`);
  }
}

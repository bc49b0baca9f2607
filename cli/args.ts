/**
 * A small, strict flag parser: every flag is declared with its type; unknown flags and bad
 * values are errors that carry the usage text (the CLI prints it and exits 2).
 */

export type FlagType = 'boolean' | 'string' | 'int' | 'number' | 'list';

export interface FlagSpec {
  type: FlagType;
  help: string;
  /** Shown in the usage line, e.g. "FILE". */
  value?: string;
  /** For string flags: the allowed values. */
  choices?: readonly string[];
}

export type FlagValue = boolean | string | number | string[];

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function usage(command: string, summary: string, flags: Record<string, FlagSpec>): string {
  const lines = Object.entries(flags).map(([name, spec]) => {
    const value = spec.type === 'boolean' ? '' : ` ${spec.value ?? (spec.choices ? spec.choices.join('|') : spec.type.toUpperCase())}`;
    return `  --${name}${value}`.padEnd(34) + spec.help;
  });
  return `Usage: ${command} [options]\n\n${summary}\n\nOptions:\n${lines.join('\n')}\n`;
}

export function parseFlags(argv: readonly string[], flags: Record<string, FlagSpec>): Map<string, FlagValue> {
  const out = new Map<string, FlagValue>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new UsageError(`Unexpected argument "${arg}" (flags start with --).`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const spec = flags[name];
    if (!spec) throw new UsageError(`Unknown flag --${name}.`);
    if (spec.type === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value.`);
      out.set(name, true);
      continue;
    }
    let raw: string | undefined;
    if (eq !== -1) raw = arg.slice(eq + 1);
    else raw = argv[++i];
    if (raw === undefined || (eq === -1 && raw.startsWith('--'))) throw new UsageError(`--${name} needs a value (${spec.value ?? spec.type}).`);
    out.set(name, parseValue(name, spec, raw));
  }
  return out;
}

function parseValue(name: string, spec: FlagSpec, raw: string): FlagValue {
  switch (spec.type) {
    case 'int': {
      if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a non-negative integer, got "${raw}".`);
      return Number(raw);
    }
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got "${raw}".`);
      return n;
    }
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'string':
      if (spec.choices && !spec.choices.includes(raw)) {
        throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')}; got "${raw}".`);
      }
      return raw;
    default:
      throw new UsageError(`--${name}: unsupported flag type.`);
  }
}

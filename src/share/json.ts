/**
 * Parsing JSON that came from outside (a link, an imported file), with errors that say where the
 * text went wrong. Nesting is capped before parsing: validation reads only the fields it knows,
 * so without the cap an unknown field could carry a structure deep enough to overflow the stack
 * of whatever serialises or copies the result later.
 */
import { TokenscopeError } from '../errors.ts';

/** Deepest nesting of arrays and objects accepted; a result needs 5, a comparison 6. */
export const MAX_JSON_DEPTH = 16;

export type Source = 'link' | 'file';

const HINTS: Record<Source, string> = {
  link: 'Ask for a fresh link, or share the exported JSON file instead.',
  file: 'Choose a JSON file exported by tokenscope (Export → JSON, or the CLI’s --json).',
};

export const badInput = (source: Source, message: string, cause?: unknown) => new TokenscopeError('bad-input', message, HINTS[source], { cause });

/** 1-based line and column of a character offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Where the engine's JSON.parse message says the error is: V8 gives an offset, Firefox line and column. */
function errorPlace(text: string, message: string): string {
  const offset = /at position (\d+)/.exec(message);
  if (offset) {
    const { line, column } = lineColumn(text, Number(offset[1]));
    return ` at line ${line}, column ${column}`;
  }
  const place = /line (\d+) column (\d+)/.exec(message);
  return place ? ` at line ${place[1]}, column ${place[2]}` : '';
}

/** Offset of the first bracket that nests deeper than `maxDepth`, or -1. Strings are skipped. */
function tooDeepAt(text: string, maxDepth: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > maxDepth) return i;
    } else if (c === 93 || c === 125) depth--;
  }
  return -1;
}

/** JSON.parse with a nesting cap and errors that say where. */
export function parseJson(text: string, source: Source): unknown {
  const deep = tooDeepAt(text, MAX_JSON_DEPTH);
  if (deep >= 0) {
    const { line, column } = lineColumn(text, deep);
    throw badInput(
      source,
      `The ${source} nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels (line ${line}, column ${column}); a tokenscope result never does.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw badInput(source, `The ${source} is not valid JSON${errorPlace(text, message)}: ${message.slice(0, 200)}`, e);
  }
}

/**
 * Validation of a result that came from outside (a permalink, an imported file, the CLI's JSON):
 * every section in RESULT_SECTIONS is checked against its declaration — types, plausible ranges,
 * length caps — so a hostile or stale document gets a clear error naming the field instead of a
 * broken or frozen page.
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

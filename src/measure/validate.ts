/**
 * Validation of a result that came from outside (a permalink, an imported file, the CLI's JSON):
 * every field the report reads is checked for type and range, so a hostile or stale document
 * gets a clear error instead of a broken page.
 */
import { TokenscopeError } from '../errors.ts';
import { CEILING_KEYS, SCHEMA_VERSION, type BenchResult } from './schema.ts';

type Json = unknown;

export class SchemaError extends TokenscopeError {
  constructor(path: string, what: string) {
    super('bad-input', `Invalid result: ${path} ${what}.`, 'The link or file is damaged or was not made by tokenscope; ask for a fresh one.');
  }
}

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function expectObject(v: Json, path: string): Record<string, Json> {
  if (!isObject(v)) throw new SchemaError(path, 'must be an object');
  return v;
}

export function expectString(v: Json, path: string, maxLength = 4096): string {
  if (typeof v !== 'string') throw new SchemaError(path, 'must be a string');
  if (v.length > maxLength) throw new SchemaError(path, `is longer than ${maxLength} characters`);
  return v;
}

export function expectNumber(v: Json, path: string, opts: { min?: number; integer?: boolean } = {}): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new SchemaError(path, 'must be a finite number');
  if (opts.integer && !Number.isInteger(v)) throw new SchemaError(path, 'must be an integer');
  if (opts.min !== undefined && v < opts.min) throw new SchemaError(path, `must be ≥ ${opts.min}`);
  return v;
}

export function expectBoolean(v: Json, path: string): boolean {
  if (typeof v !== 'boolean') throw new SchemaError(path, 'must be true or false');
  return v;
}

export function expectArray(v: Json, path: string, maxLength = 1_000_000): Json[] {
  if (!Array.isArray(v)) throw new SchemaError(path, 'must be an array');
  if (v.length > maxLength) throw new SchemaError(path, `has more than ${maxLength} items`);
  return v;
}

function validateEnvironment(v: Json, path: string): void {
  const e = expectObject(v, path);
  const runtime = expectString(e.runtime, `${path}.runtime`);
  if (runtime !== 'browser' && runtime !== 'node') throw new SchemaError(`${path}.runtime`, 'must be "browser" or "node"');
  expectString(e.user_agent, `${path}.user_agent`);
  const a = expectObject(e.adapter, `${path}.adapter`);
  for (const k of ['vendor', 'architecture', 'device', 'description']) expectString(a[k], `${path}.adapter.${k}`, 512);
  expectBoolean(a.isFallbackAdapter, `${path}.adapter.isFallbackAdapter`);
  expectArray(e.features, `${path}.features`, 256).forEach((f, i) => expectString(f, `${path}.features[${i}]`, 128));
  const limits = expectObject(e.limits, `${path}.limits`);
  for (const [k, n] of Object.entries(limits)) expectNumber(n, `${path}.limits.${k}`, { min: 0 });
  expectArray(e.disabled_features, `${path}.disabled_features`, 16).forEach((f, i) => expectString(f, `${path}.disabled_features[${i}]`, 64));
  expectBoolean(e.cpu_adapter, `${path}.cpu_adapter`);
  if (e.timestamp_quantization !== undefined && e.timestamp_quantization !== null) {
    const q = expectObject(e.timestamp_quantization, `${path}.timestamp_quantization`);
    expectBoolean(q.quantized, `${path}.timestamp_quantization.quantized`);
    expectNumber(q.quantum_ns, `${path}.timestamp_quantization.quantum_ns`, { min: 1 });
  }
}

function validateCeilings(v: Json, path: string): void {
  const c = expectObject(v, path);
  expectNumber(c.working_set_bytes, `${path}.working_set_bytes`, { min: 0 });
  const measurements = expectObject(c.measurements, `${path}.measurements`);
  for (const key of CEILING_KEYS) {
    const value = c[key];
    const m = measurements[key];
    if (value === null && key === 'f16_gflops') {
      if (m !== null) throw new SchemaError(`${path}.measurements.${key}`, 'must be null when the value is null');
      continue;
    }
    expectNumber(value, `${path}.${key}`, { min: 0 });
    const mm = expectObject(m, `${path}.measurements.${key}`);
    for (const f of ['value', 'min', 'max', 'work_per_rep']) expectNumber(mm[f], `${path}.measurements.${key}.${f}`, { min: 0 });
    expectNumber(mm.n, `${path}.measurements.${key}.n`, { min: 1, integer: true });
    const unit = expectString(mm.unit, `${path}.measurements.${key}.unit`);
    if (unit !== 'GB/s' && unit !== 'GFLOP/s') throw new SchemaError(`${path}.measurements.${key}.unit`, 'must be GB/s or GFLOP/s');
    const clock = expectString(mm.clock, `${path}.measurements.${key}.clock`);
    if (clock !== 'gpu-timestamp' && clock !== 'host') throw new SchemaError(`${path}.measurements.${key}.clock`, 'must be gpu-timestamp or host');
    expectArray(mm.samples, `${path}.measurements.${key}.samples`, 10_000).forEach((s, i) => expectNumber(s, `${path}.measurements.${key}.samples[${i}]`, { min: 0 }));
    expectString(mm.shape, `${path}.measurements.${key}.shape`, 256);
    expectBoolean(mm.verified, `${path}.measurements.${key}.verified`);
  }
}

/** Section validators registered by the parts of the schema that add sections (model runs, serving). */
const sectionValidators = new Map<string, (v: Json, path: string) => void>([['ceilings', validateCeilings]]);

export function registerSection(name: string, validate: (v: Json, path: string) => void): void {
  sectionValidators.set(name, validate);
}

/** Check a parsed JSON document and return it typed. */
export function validateResult(doc: Json): BenchResult {
  const r = expectObject(doc, 'result');
  const version = expectNumber(r.schema_version, 'schema_version', { integer: true });
  if (version !== SCHEMA_VERSION) {
    throw new TokenscopeError(
      'bad-input',
      `This result uses schema version ${version}; this tokenscope reads version ${SCHEMA_VERSION}.`,
      version > SCHEMA_VERSION ? 'Open it with a newer tokenscope.' : 'Re-run the benchmark to get a current result.',
    );
  }
  const tool = expectObject(r.tool, 'tool');
  expectString(tool.name, 'tool.name', 64);
  expectString(tool.version, 'tool.version', 64);
  const created = expectString(r.created_at, 'created_at', 64);
  if (Number.isNaN(Date.parse(created))) throw new SchemaError('created_at', 'must be an ISO date');
  validateEnvironment(r.environment, 'environment');
  if (r.notes !== undefined) expectArray(r.notes, 'notes', 100).forEach((n, i) => expectString(n, `notes[${i}]`, 1000));
  for (const [name, validate] of sectionValidators) if (r[name] !== undefined) validate(r[name], name);
  return r as BenchResult;
}

/**
 * A small declarative schema: one declaration per result section gives its TypeScript type
 * (`Infer`), its validator (`check`, errors that name the field) and its JSON Schema (`toJson`).
 *
 * Every number carries a plausible range, not just "finite": a value like 1.5e308 in a chart
 * field would otherwise reach Chart.js, whose tick builder never finishes on it. Objects are open
 * (unknown keys pass unchecked and unused), so a newer tokenscope's extra fields do not break an
 * older reader; `schema_version` changes only when an existing field changes meaning.
 */
import { TokenscopeError } from '../errors.ts';

export class SchemaError extends TokenscopeError {
  constructor(path: string, what: string) {
    super('bad-input', `Invalid result: ${path} ${what}.`, 'The link or file is damaged or was not made by tokenscope; ask for a fresh one.');
  }
}

/** JSON Schema (draft 2020-12) of one node. */
export type JsonSchema = { [key: string]: unknown };

export abstract class Schema<T> {
  /** Phantom: the TypeScript type this declaration describes. */
  declare readonly infer: T;
  description?: string;
  /** Throws a SchemaError naming `path` when `v` does not match. */
  abstract check(v: unknown, path: string): void;
  protected abstract jsonNode(): JsonSchema;
  toJson(): JsonSchema {
    return this.description ? { description: this.description, ...this.jsonNode() } : this.jsonNode();
  }
  /** The same declaration with a description (carried into the JSON Schema). */
  describe(text: string): this {
    const copy = Object.create(Object.getPrototypeOf(this)) as this;
    Object.assign(copy, this, { description: text });
    return copy;
  }
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

export interface NumberRange {
  min: number;
  max: number;
  integer?: boolean;
}

class NumberSchema extends Schema<number> {
  constructor(readonly range: NumberRange) {
    super();
  }
  check(v: unknown, path: string): void {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new SchemaError(path, 'must be a finite number');
    if (this.range.integer && !Number.isInteger(v)) throw new SchemaError(path, 'must be an integer');
    if (v < this.range.min) throw new SchemaError(path, `must be ≥ ${this.range.min}`);
    if (v > this.range.max) throw new SchemaError(path, `must be ≤ ${this.range.max}`);
  }
  protected jsonNode(): JsonSchema {
    return { type: this.range.integer ? 'integer' : 'number', minimum: this.range.min, maximum: this.range.max };
  }
}

class StringSchema extends Schema<string> {
  constructor(readonly maxLength: number) {
    super();
  }
  check(v: unknown, path: string): void {
    if (typeof v !== 'string') throw new SchemaError(path, 'must be a string');
    if (v.length > this.maxLength) throw new SchemaError(path, `is longer than ${this.maxLength} characters`);
  }
  protected jsonNode(): JsonSchema {
    return { type: 'string', maxLength: this.maxLength };
  }
}

class BooleanSchema extends Schema<boolean> {
  check(v: unknown, path: string): void {
    if (typeof v !== 'boolean') throw new SchemaError(path, 'must be true or false');
  }
  protected jsonNode(): JsonSchema {
    return { type: 'boolean' };
  }
}

class EnumSchema<T extends string> extends Schema<T> {
  constructor(readonly options: readonly T[]) {
    super();
  }
  check(v: unknown, path: string): void {
    if (typeof v !== 'string') throw new SchemaError(path, 'must be a string');
    if (!(this.options as readonly string[]).includes(v)) throw new SchemaError(path, `must be one of ${this.options.join(', ')}`);
  }
  protected jsonNode(): JsonSchema {
    return { type: 'string', enum: [...this.options] };
  }
}

class ArraySchema<T> extends Schema<T[]> {
  constructor(
    readonly item: Schema<T>,
    readonly maxItems: number,
  ) {
    super();
  }
  check(v: unknown, path: string): void {
    if (!Array.isArray(v)) throw new SchemaError(path, 'must be an array');
    if (v.length > this.maxItems) throw new SchemaError(path, `has more than ${this.maxItems} items`);
    v.forEach((x, i) => this.item.check(x, `${path}[${i}]`));
  }
  protected jsonNode(): JsonSchema {
    return { type: 'array', maxItems: this.maxItems, items: this.item.toJson() };
  }
}

class NullableSchema<T> extends Schema<T | null> {
  constructor(readonly inner: Schema<T>) {
    super();
  }
  check(v: unknown, path: string): void {
    if (v !== null) this.inner.check(v, path);
  }
  protected jsonNode(): JsonSchema {
    return { anyOf: [this.inner.toJson(), { type: 'null' }] };
  }
}

/** Marks an object field that may be absent (checked when present). */
export class OptionalSchema<T> extends Schema<T | undefined> {
  constructor(readonly inner: Schema<T>) {
    super();
  }
  check(v: unknown, path: string): void {
    if (v !== undefined) this.inner.check(v, path);
  }
  protected jsonNode(): JsonSchema {
    return this.inner.toJson();
  }
}

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends OptionalSchema<unknown> ? K : never }[keyof S];
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type ObjectOf<S extends Shape> = Simplify<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Exclude<Infer<S[K]>, undefined> }
>;

export interface ObjectOptions {
  /** A rule across fields, run after every field passed. */
  refine?: (o: Record<string, unknown>, path: string) => void;
  /** Length cap of strings under keys the declaration does not name (e.g. vLLM's own keys). */
  otherStrings?: number;
}

export class ObjectSchema<S extends Shape> extends Schema<ObjectOf<S>> {
  constructor(
    readonly shape: S,
    readonly options: ObjectOptions = {},
  ) {
    super();
  }
  check(v: unknown, path: string): void {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SchemaError(path, 'must be an object');
    const o = v as Record<string, unknown>;
    for (const [k, s] of Object.entries(this.shape)) s.check(o[k], `${path}.${k}`);
    if (this.options.otherStrings !== undefined) {
      const cap = new StringSchema(this.options.otherStrings);
      for (const [k, x] of Object.entries(o)) if (!(k in this.shape) && typeof x === 'string') cap.check(x, `${path}.${k}`);
    }
    this.options.refine?.(o, path);
  }
  protected jsonNode(): JsonSchema {
    const required = Object.entries(this.shape)
      .filter(([, s]) => !(s instanceof OptionalSchema))
      .map(([k]) => k);
    return { type: 'object', properties: Object.fromEntries(Object.entries(this.shape).map(([k, s]) => [k, s.toJson()])), required };
  }
  /** The declaration with more fields (a section that extends another). */
  extend<E extends Shape>(more: E): ObjectSchema<Omit<S, keyof E> & E> {
    return new ObjectSchema({ ...this.shape, ...more } as Omit<S, keyof E> & E, this.options);
  }
}

class RecordSchema<K extends string, T> extends Schema<Partial<Record<K, T>>> {
  constructor(
    readonly value: Schema<T>,
    readonly keys: readonly K[] | undefined,
    readonly maxKeys: number,
  ) {
    super();
  }
  check(v: unknown, path: string): void {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SchemaError(path, 'must be an object');
    const entries = Object.entries(v);
    if (entries.length > this.maxKeys) throw new SchemaError(path, `has more than ${this.maxKeys} keys`);
    for (const [k, x] of entries) {
      if (this.keys && !(this.keys as readonly string[]).includes(k)) throw new SchemaError(path, `must be one of ${this.keys.join(', ')}`);
      this.value.check(x, `${path}.${k}`);
    }
  }
  protected jsonNode(): JsonSchema {
    const node: JsonSchema = { type: 'object', additionalProperties: this.value.toJson(), maxProperties: this.maxKeys };
    if (this.keys) node.propertyNames = { enum: [...this.keys] };
    return node;
  }
}

/** One of two shapes, told apart by `pick` (JSON Schema: anyOf). */
class EitherSchema<A, B> extends Schema<A | B> {
  constructor(
    readonly pick: (v: unknown) => 'a' | 'b',
    readonly a: Schema<A>,
    readonly b: Schema<B>,
  ) {
    super();
  }
  check(v: unknown, path: string): void {
    (this.pick(v) === 'a' ? this.a : this.b).check(v, path);
  }
  protected jsonNode(): JsonSchema {
    return { anyOf: [this.a.toJson(), this.b.toJson()] };
  }
}

/** A number in [min, max]. */
export const num = (min: number, max: number): Schema<number> => new NumberSchema({ min, max });
/** An integer in [min, max]. */
export const int = (min: number, max: number): Schema<number> => new NumberSchema({ min, max, integer: true });
export const str = (maxLength: number): Schema<string> => new StringSchema(maxLength);
export const bool = (): Schema<boolean> => new BooleanSchema();
export const oneOf = <T extends string>(options: readonly T[]): Schema<T> => new EnumSchema(options);
export const array = <T>(item: Schema<T>, maxItems: number): Schema<T[]> => new ArraySchema(item, maxItems);
export const nullable = <T>(inner: Schema<T>): Schema<T | null> => new NullableSchema(inner);
export const optional = <T>(inner: Schema<T>): OptionalSchema<T> => new OptionalSchema(inner);
export const object = <S extends Shape>(shape: S, options?: ObjectOptions): ObjectSchema<S> => new ObjectSchema(shape, options);
export const record = <T, K extends string = string>(value: Schema<T>, opts: { keys?: readonly K[]; maxKeys: number }): Schema<Partial<Record<K, T>>> =>
  new RecordSchema(value, opts.keys, opts.maxKeys);
export const either = <A, B>(pick: (v: unknown) => 'a' | 'b', a: Schema<A>, b: Schema<B>): Schema<A | B> => new EitherSchema(pick, a, b);
/** The same fields for every key of a list (e.g. vLLM's mean_ttft_ms … p99_e2el_ms). */
export function fieldsOf<K extends string, T>(keys: readonly K[], value: Schema<T>): { [P in K]: Schema<T> } {
  return Object.fromEntries(keys.map((k) => [k, value])) as { [P in K]: Schema<T> };
}

/**
 * Compile-time agreement of a declaration's type with a producer's interface declared elsewhere
 * (a layer the result schema cannot import, or one with its own doc comments): each must be
 * assignable to the other and name the same keys. Use as `const x: Agrees<A, B> = true`.
 */
export type Agrees<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A] extends [keyof B]
      ? [keyof B] extends [keyof A]
        ? true
        : false
      : false
    : false
  : false;

/**
 * Typed reads of GGUF metadata. A key that is present with the wrong type is a `model-format`
 * error naming the key and both types; `required` turns a missing key into one too.
 */
import { TokenscopeError } from '../../errors.ts';
import { GGUFValueType as T, valueTypeName, type GGUFMetadata, type GGUFValue } from './types.ts';

const INTEGER_TYPES = new Set<number>([T.UINT8, T.INT8, T.UINT16, T.INT16, T.UINT32, T.INT32, T.UINT64, T.INT64]);

function wrongType(key: string, value: GGUFValue, expected: string): TokenscopeError {
  const got = value.type === T.ARRAY ? `ARRAY of ${valueTypeName(value.itemType)}` : valueTypeName(value.type);
  return new TokenscopeError(
    'model-format',
    `metadata key '${key}' has type ${got}, expected ${expected}`,
    'The file was written by a converter tokenscope does not know; re-convert it with a current llama.cpp.',
  );
}

export function required<V>(value: V | undefined, key: string): V {
  if (value === undefined) {
    throw new TokenscopeError(
      'model-format',
      `required metadata key '${key}' is missing`,
      'The file is incomplete for its architecture; re-convert it with a current llama.cpp.',
    );
  }
  return value;
}

export function metaString(meta: GGUFMetadata, key: string): string | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type !== T.STRING) throw wrongType(key, v, 'STRING');
  return v.value;
}

/** Any integer type, as a non-negative safe integer (counts, sizes and token ids). */
export function metaUint(meta: GGUFMetadata, key: string): number | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type === T.ARRAY || !INTEGER_TYPES.has(v.type)) throw wrongType(key, v, 'an unsigned integer');
  const n = Number(v.value);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new TokenscopeError(
      'model-format',
      `metadata key '${key}' is ${String(v.value)}, not a usable count`,
      'The file is damaged or was written by a buggy converter.',
    );
  }
  return n;
}

export function metaFloat(meta: GGUFMetadata, key: string): number | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type !== T.FLOAT32 && v.type !== T.FLOAT64) throw wrongType(key, v, 'FLOAT32');
  return v.value;
}

export function metaBool(meta: GGUFMetadata, key: string): boolean | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type !== T.BOOL) throw wrongType(key, v, 'BOOL');
  return v.value;
}

export function metaStrings(meta: GGUFMetadata, key: string): string[] | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type !== T.ARRAY || v.itemType !== T.STRING) throw wrongType(key, v, 'ARRAY of STRING');
  return v.items;
}

export function metaFloats(meta: GGUFMetadata, key: string): Float32Array | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type !== T.ARRAY || v.itemType !== T.FLOAT32) throw wrongType(key, v, 'ARRAY of FLOAT32');
  return v.items;
}

export function metaInts(meta: GGUFMetadata, key: string): Int32Array | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type !== T.ARRAY || v.itemType !== T.INT32) throw wrongType(key, v, 'ARRAY of INT32');
  return v.items;
}

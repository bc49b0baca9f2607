/**
 * The GGUF data model: metadata value types and the GGML tensor types tokenscope reads.
 *
 * Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md. Only little-endian
 * files are read; v2 and v3 share one layout (v3 only added the big-endian variant).
 */

/** "GGUF" read as a little-endian u32. */
export const GGUF_MAGIC = 0x46554747;
/** Tensor data alignment when `general.alignment` is absent. */
export const GGUF_DEFAULT_ALIGNMENT = 32;

export function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

/** Metadata value type ids, as stored in the file. */
export const GGUFValueType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
export type GGUFValueType = (typeof GGUFValueType)[keyof typeof GGUFValueType];

const T = GGUFValueType;

/** The JS value of each scalar type (64-bit integers stay exact as bigint). */
interface ScalarOf {
  [T.UINT8]: number;
  [T.INT8]: number;
  [T.UINT16]: number;
  [T.INT16]: number;
  [T.UINT32]: number;
  [T.INT32]: number;
  [T.FLOAT32]: number;
  [T.BOOL]: boolean;
  [T.STRING]: string;
  [T.UINT64]: bigint;
  [T.INT64]: bigint;
  [T.FLOAT64]: number;
}

/** The JS container for the items of an array of each type. */
interface ItemsOf {
  [T.UINT8]: Uint8Array;
  [T.INT8]: Int8Array;
  [T.UINT16]: Uint16Array;
  [T.INT16]: Int16Array;
  [T.UINT32]: Uint32Array;
  [T.INT32]: Int32Array;
  [T.FLOAT32]: Float32Array;
  [T.BOOL]: boolean[];
  [T.STRING]: string[];
  [T.ARRAY]: GGUFArray[];
  [T.UINT64]: BigUint64Array;
  [T.INT64]: BigInt64Array;
  [T.FLOAT64]: Float64Array;
}

export type GGUFScalarType = keyof ScalarOf;
export type GGUFScalar = { [K in GGUFScalarType]: { type: K; value: ScalarOf[K] } }[GGUFScalarType];
export type GGUFArray =
  | {
      [K in keyof ItemsOf]: { type: typeof T.ARRAY; itemType: K; items: ItemsOf[K] };
    }[keyof ItemsOf]
  | GGUFCountedArray;
/**
 * An array of strings, bools or arrays that the reader walked and counted but did not keep
 * (nothing tokenscope reads, and too long to keep just in case): only its length is known.
 */
export interface GGUFCountedArray {
  type: typeof T.ARRAY;
  itemType: typeof T.STRING | typeof T.BOOL | typeof T.ARRAY;
  count: number;
  items?: undefined;
}
export type GGUFValue = GGUFScalar | GGUFArray;
export type GGUFMetadata = ReadonlyMap<string, GGUFValue>;

/** Bytes one scalar of each fixed-size type takes (strings and arrays are variable). */
export const FIXED_VALUE_SIZE: Partial<Record<GGUFValueType, number>> = {
  [T.UINT8]: 1,
  [T.INT8]: 1,
  [T.BOOL]: 1,
  [T.UINT16]: 2,
  [T.INT16]: 2,
  [T.UINT32]: 4,
  [T.INT32]: 4,
  [T.FLOAT32]: 4,
  [T.UINT64]: 8,
  [T.INT64]: 8,
  [T.FLOAT64]: 8,
};

/** The fewest bytes a value of this type can occupy: bounds counts before anything is allocated. */
export function minValueSize(type: GGUFValueType): number {
  if (type === T.STRING) return 8; // u64 length, empty text
  if (type === T.ARRAY) return 12; // u32 item type + u64 count, no items
  return FIXED_VALUE_SIZE[type]!;
}

export function isValueType(type: number): type is GGUFValueType {
  return Number.isInteger(type) && type >= T.UINT8 && type <= T.FLOAT64;
}

export function valueTypeName(type: number): string {
  const entry = Object.entries(GGUFValueType).find(([, id]) => id === type);
  return entry ? entry[0] : `unknown type ${type}`;
}

/** Metadata value constructors, so callers build typed values without spelling type ids. */
export const meta = {
  u8: (value: number): GGUFValue => ({ type: T.UINT8, value }),
  i8: (value: number): GGUFValue => ({ type: T.INT8, value }),
  u16: (value: number): GGUFValue => ({ type: T.UINT16, value }),
  i16: (value: number): GGUFValue => ({ type: T.INT16, value }),
  u32: (value: number): GGUFValue => ({ type: T.UINT32, value }),
  i32: (value: number): GGUFValue => ({ type: T.INT32, value }),
  u64: (value: bigint): GGUFValue => ({ type: T.UINT64, value }),
  i64: (value: bigint): GGUFValue => ({ type: T.INT64, value }),
  f32: (value: number): GGUFValue => ({ type: T.FLOAT32, value }),
  f64: (value: number): GGUFValue => ({ type: T.FLOAT64, value }),
  bool: (value: boolean): GGUFValue => ({ type: T.BOOL, value }),
  str: (value: string): GGUFValue => ({ type: T.STRING, value }),
  strings: (items: string[]): GGUFArray => ({ type: T.ARRAY, itemType: T.STRING, items }),
  f32s: (items: Float32Array): GGUFArray => ({ type: T.ARRAY, itemType: T.FLOAT32, items }),
  i32s: (items: Int32Array): GGUFArray => ({ type: T.ARRAY, itemType: T.INT32, items }),
} as const;

/** GGML tensor type ids that tokenscope reads (ids as in ggml.h's enum ggml_type). */
export const GGMLType = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q5_0: 6,
  Q5_1: 7,
  Q8_0: 8,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  BF16: 30,
} as const;
export type GGMLType = (typeof GGMLType)[keyof typeof GGMLType];
export type GGMLTypeName = keyof typeof GGMLType;

/**
 * Elements per block and bytes per block (ggml-common.h). Legacy blocks of 32: Q4_0 {d; 16 B
 * nibbles}, Q4_1 {d, m; 16 B}, Q5_0 {d; 4 B high bits; 16 B}, Q5_1 {d, m; 4 B; 16 B}, Q8_0 {d; 32
 * int8}. K-quant super-blocks of 256: Q4_K {d, dmin; 12 B of 6-bit scales and mins; 128 B
 * nibbles}, Q5_K {same + 32 B high bits}, Q6_K {128 B low nibbles; 64 B high 2 bits; 16 int8
 * scales; d}. Every d/m is f16.
 */
export const GGML_BLOCK: Record<GGMLType, { elements: number; bytes: number }> = {
  [GGMLType.F32]: { elements: 1, bytes: 4 },
  [GGMLType.F16]: { elements: 1, bytes: 2 },
  [GGMLType.BF16]: { elements: 1, bytes: 2 },
  [GGMLType.Q4_0]: { elements: 32, bytes: 18 },
  [GGMLType.Q4_1]: { elements: 32, bytes: 20 },
  [GGMLType.Q5_0]: { elements: 32, bytes: 22 },
  [GGMLType.Q5_1]: { elements: 32, bytes: 24 },
  [GGMLType.Q8_0]: { elements: 32, bytes: 34 },
  [GGMLType.Q4_K]: { elements: 256, bytes: 144 },
  [GGMLType.Q5_K]: { elements: 256, bytes: 176 },
  [GGMLType.Q6_K]: { elements: 256, bytes: 210 },
};

/** "F32, F16, BF16, Q4_0, …": the types tokenscope reads, for error messages. */
export function supportedTypeNames(): string {
  return (Object.keys(GGMLType) as GGMLTypeName[]).join(', ');
}

/** Every type id ggml has defined (gaps were removed types), for naming what we do not read. */
const GGML_TYPE_NAMES = [
  'F32',
  'F16',
  'Q4_0',
  'Q4_1',
  'Q4_2',
  'Q4_3',
  'Q5_0',
  'Q5_1',
  'Q8_0',
  'Q8_1',
  'Q2_K',
  'Q3_K',
  'Q4_K',
  'Q5_K',
  'Q6_K',
  'Q8_K',
  'IQ2_XXS',
  'IQ2_XS',
  'IQ3_XXS',
  'IQ1_S',
  'IQ4_NL',
  'IQ3_S',
  'IQ2_S',
  'IQ4_XS',
  'I8',
  'I16',
  'I32',
  'I64',
  'F64',
  'IQ1_M',
  'BF16',
  'Q4_0_4_4',
  'Q4_0_4_8',
  'Q4_0_8_8',
  'TQ1_0',
  'TQ2_0',
  'IQ4_NL_4_4',
  'IQ4_NL_4_8',
  'IQ4_NL_8_8',
  'MXFP4',
] as const;

export function ggmlTypeName(type: number): string | undefined {
  return GGML_TYPE_NAMES[type];
}

export function isSupportedType(type: number): type is GGMLType {
  return Object.hasOwn(GGML_BLOCK, type);
}

/** Why a shape cannot hold this type, or undefined when it can. */
export function shapeProblem(type: GGMLType, dims: readonly number[]): string | undefined {
  const block = GGML_BLOCK[type];
  if (dims[0] % block.elements !== 0) {
    return `row length ${dims[0]} is not a multiple of the ${GGML_TYPE_NAMES[type]} block size ${block.elements}`;
  }
  return undefined;
}

/** Bytes a tensor of this type and shape takes; the caller has checked `shapeProblem`. */
export function tensorByteSize(type: GGMLType, dims: readonly number[]): number {
  const block = GGML_BLOCK[type];
  return (elementCount(dims) / block.elements) * block.bytes;
}

export function elementCount(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

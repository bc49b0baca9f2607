/**
 * GGUF v3 writer (little-endian). The header is built in memory; tensor data is streamed to a
 * sink one tensor at a time, each padded to the alignment, as llama.cpp's gguf writer lays it out.
 */
import { TokenscopeError } from '../../errors.ts';
import { concatBytes } from './source.ts';
import {
  GGUFValueType as T,
  FIXED_VALUE_SIZE,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  ggmlTypeName,
  isPowerOfTwo,
  shapeProblem,
  tensorByteSize,
  type GGMLType,
  type GGUFArray,
  type GGUFMetadata,
  type GGUFScalar,
  type GGUFValue,
} from './types.ts';

export interface TensorSpec {
  name: string;
  type: GGMLType;
  /** GGML order: dims[0] is the row length. */
  dims: readonly number[];
}

export interface TensorToWrite extends TensorSpec {
  data: Uint8Array;
}

export interface ByteSink {
  write(bytes: Uint8Array): Promise<void> | void;
}

const utf8 = new TextEncoder();
const MAX_NAME_BYTES = 63; // GGML_MAX_NAME - 1: llama.cpp refuses longer tensor names

/** Writes a whole file to `sink`, asking `data` for each tensor's bytes in order. Returns the bytes written. */
export async function writeGGUF(
  sink: ByteSink,
  metadata: GGUFMetadata,
  tensors: readonly TensorSpec[],
  data: (tensor: TensorSpec, index: number) => Promise<Uint8Array> | Uint8Array,
): Promise<number> {
  const layout = ggufLayout(metadata, tensors);
  await sink.write(layout.header);
  for (let i = 0; i < tensors.length; i++) {
    const bytes = await data(tensors[i], i);
    checkData(tensors[i], bytes, layout.sizes[i]);
    await sink.write(bytes);
    await sink.write(layout.padding(layout.sizes[i]));
  }
  return layout.fileSize;
}

/** The whole file in memory (tests, synthetic models). */
export function encodeGGUF(metadata: GGUFMetadata, tensors: readonly TensorToWrite[]): Uint8Array<ArrayBuffer> {
  const layout = ggufLayout(metadata, tensors);
  const parts: Uint8Array[] = [layout.header];
  tensors.forEach((t, i) => {
    checkData(t, t.data, layout.sizes[i]);
    parts.push(t.data, layout.padding(layout.sizes[i]));
  });
  return concatBytes(parts, layout.fileSize);
}

/** The header (padded to the alignment) and the size of each tensor's data. */
export function ggufLayout(metadata: GGUFMetadata, tensors: readonly TensorSpec[]) {
  const alignment = alignmentOf(metadata);
  const pad = (n: number) => (alignment - (n % alignment)) % alignment;
  const sizes = tensors.map(tensorSize);
  const names = new Set<string>();
  const w = new ByteWriter();
  w.u32(GGUF_MAGIC);
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.size);
  for (const [key, value] of metadata) {
    if (key === '') throw badInput('a metadata key is empty');
    w.string(key);
    w.u32(value.type);
    writeValue(w, value, key);
  }
  let offset = 0;
  tensors.forEach((t, i) => {
    if (names.has(t.name)) throw badInput(`tensor '${t.name}' is listed twice`);
    names.add(t.name);
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.type);
    w.u64(offset);
    offset += sizes[i] + pad(sizes[i]);
  });
  w.bytes(new Uint8Array(pad(w.length)));
  const header = w.finish();
  return { header, sizes, fileSize: header.length + offset, padding: (size: number) => new Uint8Array(pad(size)) };
}

function alignmentOf(metadata: GGUFMetadata): number {
  const v = metadata.get('general.alignment');
  if (v === undefined) return GGUF_DEFAULT_ALIGNMENT;
  if (v.type !== T.UINT32 || !isPowerOfTwo(v.value)) {
    throw badInput('general.alignment must be a UINT32 power of two');
  }
  return v.value;
}

function tensorSize(t: TensorSpec): number {
  const nameBytes = utf8.encode(t.name).length;
  if (nameBytes === 0 || nameBytes > MAX_NAME_BYTES) throw badInput(`tensor name '${t.name}' must be 1 to ${MAX_NAME_BYTES} bytes`);
  if (t.dims.length < 1 || t.dims.length > 4 || t.dims.some((d) => !Number.isSafeInteger(d) || d < 1)) {
    throw badInput(`tensor '${t.name}' has invalid dims [${t.dims.join(', ')}]`);
  }
  const problem = shapeProblem(t.type, t.dims);
  if (problem) throw badInput(`tensor '${t.name}': ${problem}`);
  return tensorByteSize(t.type, t.dims);
}

function checkData(t: TensorSpec, data: Uint8Array, size: number): void {
  if (data.length !== size) {
    throw badInput(`tensor '${t.name}' (${ggmlTypeName(t.type)} [${t.dims.join(', ')}]) needs ${size} bytes, got ${data.length}`);
  }
}

function writeValue(w: ByteWriter, v: GGUFValue, key: string): void {
  if (v.type === T.ARRAY) writeArray(w, v, key);
  else writeScalar(w, v, key);
}

function writeArray(w: ByteWriter, a: GGUFArray, key: string): void {
  if (a.items === undefined) throw badInput(`metadata key '${key}' holds an array whose items were not kept when it was read`);
  w.u32(a.itemType);
  w.u64(a.items.length);
  switch (a.itemType) {
    case T.ARRAY:
      for (const inner of a.items) writeArray(w, inner, key);
      return;
    case T.STRING:
      for (const s of a.items) w.string(s);
      return;
    case T.BOOL:
      w.bytes(Uint8Array.from(a.items, (b) => (b ? 1 : 0)));
      return;
    default:
      // Typed arrays: the host byte order is little-endian on every platform tokenscope runs on.
      w.bytes(new Uint8Array(a.items.buffer, a.items.byteOffset, a.items.byteLength));
  }
}

const INT_RANGE: Partial<Record<number, [bigint, bigint]>> = {
  [T.UINT8]: [0n, 0xffn],
  [T.INT8]: [-0x80n, 0x7fn],
  [T.UINT16]: [0n, 0xffffn],
  [T.INT16]: [-0x8000n, 0x7fffn],
  [T.UINT32]: [0n, 0xffffffffn],
  [T.INT32]: [-0x80000000n, 0x7fffffffn],
  [T.UINT64]: [0n, 2n ** 64n - 1n],
  [T.INT64]: [-(2n ** 63n), 2n ** 63n - 1n],
};

/** Integer values must fit their type: DataView would silently wrap them. */
function checkInteger(v: GGUFScalar, key: string): void {
  const range = INT_RANGE[v.type];
  if (!range) return;
  const n = v.value as number | bigint; // integer types hold numbers or bigints
  const ok = (typeof n === 'bigint' || Number.isInteger(n)) && BigInt(n) >= range[0] && BigInt(n) <= range[1];
  if (!ok) throw badInput(`metadata '${key}': ${String(v.value)} does not fit its integer type`);
}

function writeScalar(w: ByteWriter, v: GGUFScalar, key: string): void {
  checkInteger(v, key);
  const at = w.reserve(FIXED_VALUE_SIZE[v.type] ?? 0);
  switch (v.type) {
    case T.UINT8:
      return w.view.setUint8(at, v.value);
    case T.INT8:
      return w.view.setInt8(at, v.value);
    case T.UINT16:
      return w.view.setUint16(at, v.value, true);
    case T.INT16:
      return w.view.setInt16(at, v.value, true);
    case T.UINT32:
      return w.view.setUint32(at, v.value, true);
    case T.INT32:
      return w.view.setInt32(at, v.value, true);
    case T.FLOAT32:
      return w.view.setFloat32(at, v.value, true);
    case T.FLOAT64:
      return w.view.setFloat64(at, v.value, true);
    case T.UINT64:
      return w.view.setBigUint64(at, v.value, true);
    case T.INT64:
      return w.view.setBigInt64(at, v.value, true);
    case T.BOOL:
      return w.view.setUint8(at, v.value ? 1 : 0);
    case T.STRING:
      return w.string(v.value);
  }
}

function badInput(what: string): TokenscopeError {
  return new TokenscopeError('bad-input', `cannot write GGUF: ${what}`, 'Fix the metadata or tensor list passed to the writer.');
}

/** A growable little-endian byte buffer. */
class ByteWriter {
  private buf = new Uint8Array(1 << 16);
  view = new DataView(this.buf.buffer);
  length = 0;

  /** Makes room for `n` bytes and returns where they start. */
  reserve(n: number): number {
    if (this.length + n > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
      grown.set(this.buf.subarray(0, this.length));
      this.buf = grown;
      this.view = new DataView(grown.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  // Each method reserves before it touches `buf` or `view`: reserving may replace both.
  bytes(b: Uint8Array): void {
    const at = this.reserve(b.length);
    this.buf.set(b, at);
  }

  u32(n: number): void {
    const at = this.reserve(4);
    this.view.setUint32(at, n, true);
  }

  u64(n: number): void {
    const at = this.reserve(8);
    this.view.setBigUint64(at, BigInt(n), true);
  }

  string(s: string): void {
    const b = utf8.encode(s);
    this.u64(b.length);
    this.bytes(b);
  }

  finish(): Uint8Array<ArrayBuffer> {
    return this.buf.slice(0, this.length);
  }
}

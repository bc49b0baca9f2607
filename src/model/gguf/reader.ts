/**
 * GGUF v2/v3 reader over a random-access `ByteSource`.
 *
 * The header is parsed from a window at the start of the file that grows (doubling, capped)
 * until the whole header fits: the parser is synchronous and restarts on a bigger window, so
 * only the header is ever read up front. Tensor data stays in the source until `tensorBytes`.
 *
 * Every count, length and offset is checked against the file size before it is used, so a
 * truncated or hostile file fails fast with a `model-format` error that names the byte offset.
 */
import { TokenscopeError } from '../../errors.ts';
import { concatBytes, type ByteSource } from './source.ts';
import {
  GGUFValueType as T,
  FIXED_VALUE_SIZE,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  ggmlTypeName,
  isPowerOfTwo,
  isSupportedType,
  minValueSize,
  isValueType,
  shapeProblem,
  supportedTypeNames,
  tensorByteSize,
  valueTypeName,
  type GGMLType,
  type GGUFArray,
  type GGUFMetadata,
  type GGUFValue,
} from './types.ts';

export interface GGUFTensorInfo {
  readonly name: string;
  readonly type: GGMLType;
  /** GGML order: dims[0] is the fastest-varying (the row length). */
  readonly dims: readonly number[];
  /** Absolute byte offset of the data in the file. */
  readonly offset: number;
  readonly byteSize: number;
}

export interface ReadOptions {
  /** Refuse headers (metadata + tensor table) larger than this. Default 256 MiB. */
  maxHeaderBytes?: number;
  /**
   * Refuse metadata with more variable-size items than this: keys, strings and bools in arrays,
   * nested arrays (numeric arrays count as bytes, not items). Default 2 Mi, several times the
   * largest real tokenizer (about 260k tokens plus 280k merges).
   */
  maxMetadataItems?: number;
  /** Refuse metadata whose keys, strings and array items take more bytes than this. Default 64 MiB. */
  maxMetadataBytes?: number;
}

const INITIAL_WINDOW = 1 << 20;
const DEFAULT_MAX_HEADER = 256 << 20;
const DEFAULT_MAX_ITEMS = 1 << 21;
const DEFAULT_MAX_METADATA_BYTES = 64 << 20;
/** More tensors than any real model has (large MoE files hold a few thousand). */
const MAX_TENSORS = 1 << 16;
/** More metadata keys than any real model has (a few dozen; a few hundred at most). */
const MAX_KEYS = 1 << 16;
const MAX_DIMS = 4; // GGML_MAX_DIMS
const MAX_ARRAY_NESTING = 8;
/**
 * Arrays of strings, bools or arrays are kept as JS values only when the engine reads them
 * (the tokenizer's) or while they are small; any other one is counted and skipped, so a header
 * of millions of tiny items cannot become millions of objects.
 */
const KEEP_ANY_ARRAY_UP_TO = 256;
const KEEP_OTHER_ITEMS = 1 << 16;
const KEPT_ARRAY_KEYS = /^tokenizer\.ggml\./;
/** Smallest encodings, used to bound counts: key len + type + a 1-byte value; name len + n_dims + 1 dim + type + offset. */
const MIN_KV_BYTES = 8 + 4 + 1;
const MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8;

export class GGUF {
  private readonly byName: ReadonlyMap<string, GGUFTensorInfo>;

  constructor(
    readonly source: ByteSource,
    readonly version: 2 | 3,
    readonly metadata: GGUFMetadata,
    /** In file order. */
    readonly tensors: readonly GGUFTensorInfo[],
    readonly alignment: number,
    /** Absolute offset of the (aligned) data section. */
    readonly dataOffset: number,
  ) {
    this.byName = new Map(tensors.map((t) => [t.name, t]));
  }

  tensor(name: string): GGUFTensorInfo | undefined {
    return this.byName.get(name);
  }

  /** One tensor's bytes, read from the source now. */
  tensorBytes(tensor: string | GGUFTensorInfo): Promise<Uint8Array> {
    const info = typeof tensor === 'string' ? this.byName.get(tensor) : tensor;
    if (!info) {
      throw new TokenscopeError(
        'bad-input',
        `${this.source.name} has no tensor '${String(tensor)}'`,
        'List the tensors with gguf.tensors to see what the file holds.',
      );
    }
    return this.source.read(info.offset, info.byteSize);
  }
}

export async function readGGUF(source: ByteSource, options: ReadOptions = {}): Promise<GGUF> {
  const cap = Math.min(source.size, options.maxHeaderBytes ?? DEFAULT_MAX_HEADER);
  const parser = new HeaderParser(source.size, source.name, {
    items: options.maxMetadataItems ?? DEFAULT_MAX_ITEMS,
    bytes: options.maxMetadataBytes ?? DEFAULT_MAX_METADATA_BYTES,
  });
  let start = 0;
  let window = await source.read(0, Math.min(cap, INITIAL_WINDOW));
  for (;;) {
    try {
      const h = parser.parse(window, start);
      return new GGUF(source, h.version, h.metadata, h.tensors, h.alignment, h.dataOffset);
    } catch (e) {
      if (!(e instanceof NeedMoreBytes)) throw e;
      if (e.end > cap) {
        throw formatError(
          source.name,
          `the header needs more than ${cap} bytes, the limit`,
          'Raise maxHeaderBytes if this is a real model with an enormous vocabulary.',
        );
      }
      // Keep only the bytes from the parser's last finished entry on; the window past it at least
      // doubles, so an entry that spans many windows is re-read a geometric (linear) number of times.
      const have = start + window.length;
      const keep = parser.resumeAt;
      const next = Math.min(cap, Math.max(e.end, have + (have - keep), have + INITIAL_WINDOW));
      window = concatBytes([window.subarray(keep - start), await source.read(have, next - have)]);
      start = keep;
    }
  }
}

/** Thrown by the parser when the window ends before the file does; not an error. */
class NeedMoreBytes {
  constructor(readonly end: number) {}
}

function formatError(file: string, what: string, hint = 'The file is damaged or not a GGUF model: download it again.') {
  return new TokenscopeError('model-format', `${file}: ${what}`, hint);
}

// ignoreBOM keeps a leading U+FEFF: Gemma 3 has tokens such as '\uFEFF//' beside '//'.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A description for messages, built only when a message needs it (millions of items need none). */
type Label = string | (() => string);
const text = (label: Label) => (typeof label === 'string' ? label : label());
const itemLabel =
  (what: Label, i: number): Label =>
  () =>
    `${text(what)}[${i}]`;

interface Spent {
  items: number;
  bytes: number;
}

/**
 * Parses the header from a window of bytes [start, start + length) that the caller grows. State
 * is committed after each metadata entry and each tensor entry; when the window ends mid-entry,
 * `NeedMoreBytes` is thrown and the next `parse` resumes at the last commit (`resumeAt`), so
 * nothing before it is parsed or held twice.
 */
class HeaderParser {
  private pos = 0;
  private start = 0;
  private bytes: Uint8Array = new Uint8Array(0);
  private view: DataView = new DataView(this.bytes.buffer);
  private committed = 0;
  /** How many more items of arrays nothing reads may be kept as JS values. */
  private spareKept = KEEP_OTHER_ITEMS;
  private committedSpareKept = KEEP_OTHER_ITEMS;
  private spent: Spent = { items: 0, bytes: 0 };
  private committedSpent: Spent = { items: 0, bytes: 0 };
  private head?: { version: 2 | 3; tensorCount: number; kvCount: number };
  private readonly metadata = new Map<string, GGUFValue>();
  private readonly infos: ReturnType<HeaderParser['tensorInfo']>[] = [];

  constructor(
    private readonly fileSize: number,
    private readonly file: string,
    private readonly budget: Spent,
  ) {}

  /** Absolute offset the next window must start at or before. */
  get resumeAt(): number {
    return this.committed;
  }

  parse(window: Uint8Array, start: number) {
    this.bytes = window;
    this.start = start;
    this.view = new DataView(window.buffer, window.byteOffset, window.byteLength);
    this.pos = this.committed;
    this.spent = { ...this.committedSpent };
    this.spareKept = this.committedSpareKept;

    if (!this.head) {
      const magic = this.u32('magic');
      if (magic !== GGUF_MAGIC) {
        const seen = [...this.bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
        throw formatError(
          this.file,
          `not a GGUF file: it starts with bytes ${seen}, not "GGUF"`,
          "Pick a .gguf file (convert others with llama.cpp's convert_hf_to_gguf.py).",
        );
      }
      const version = this.version();
      const tensorCount = this.count('tensor count', MIN_TENSOR_INFO_BYTES);
      if (tensorCount > MAX_TENSORS) throw this.error(`tensor count ${tensorCount} is more than ${MAX_TENSORS}, beyond any real model`);
      const kvCount = this.count('metadata key/value count', MIN_KV_BYTES);
      if (kvCount > MAX_KEYS) {
        throw this.error(`the metadata declares ${kvCount} keys, more than ${MAX_KEYS} (real models have a few dozen)`);
      }
      this.spendItems(kvCount, 'metadata key/value count');
      this.head = { version, tensorCount, kvCount };
      this.commit();
    }
    const { version, tensorCount, kvCount } = this.head;

    while (this.metadata.size < kvCount) {
      const i = this.metadata.size;
      const at = this.pos;
      const key = this.metaString(() => `metadata key #${i}`);
      if (key === '') throw this.error(`metadata key #${i} at byte ${at} is empty`);
      if (this.metadata.has(key)) throw this.error(`metadata key '${key}' at byte ${at} appears twice`);
      const what = () => `'${key}'`;
      const type = this.u32(() => `type of '${key}'`);
      const value = type === T.ARRAY ? this.array(what, 0, KEPT_ARRAY_KEYS.test(key)) : this.value(type, what);
      this.metadata.set(key, value);
      this.commit();
    }
    const alignment = this.alignment(this.metadata.get('general.alignment'));

    while (this.infos.length < tensorCount) {
      this.infos.push(this.tensorInfo(this.infos.length));
      this.commit();
    }
    const dataOffset = Math.ceil(this.pos / alignment) * alignment;
    const tensors = this.infos.map((t) => this.placeTensor(t, dataOffset, alignment));
    this.checkNoOverlap(tensors);
    return { version, metadata: this.metadata as GGUFMetadata, tensors, alignment, dataOffset };
  }

  private commit(): void {
    this.committed = this.pos;
    this.committedSpent = { ...this.spent };
    this.committedSpareKept = this.spareKept;
  }

  private spendItems(n: number, what: Label): void {
    this.spent.items += n;
    if (this.spent.items > this.budget.items) {
      throw this.budgetError(`more than ${this.budget.items} items (keys, strings and nested arrays; reached at ${text(what)})`, 'maxMetadataItems');
    }
  }

  private spendBytes(n: number, what: Label): void {
    this.spent.bytes += n;
    if (this.spent.bytes > this.budget.bytes) {
      throw this.budgetError(`more than ${this.budget.bytes} bytes of keys, strings and arrays (reached at ${text(what)})`, 'maxMetadataBytes');
    }
  }

  private budgetError(what: string, option: string): TokenscopeError {
    return new TokenscopeError(
      'model-format',
      `${this.file}: the metadata holds ${what}, the limit`,
      `No real model's header comes near this; the file is damaged or hostile. If it is a real model, raise ${option}.`,
    );
  }

  private version(): 2 | 3 {
    const version = this.u32('version');
    if (version === 2 || version === 3) return version;
    const swapped = (((version & 0xff) << 24) | ((version & 0xff00) << 8) | ((version >>> 8) & 0xff00) | (version >>> 24)) >>> 0;
    const what = swapped === 2 || swapped === 3 ? `a big-endian GGUF v${swapped}` : `GGUF version ${version}`;
    const hint = version === 1 ? 'Re-convert it with a current llama.cpp.' : 'Use a little-endian GGUF v2 or v3 file.';
    throw new TokenscopeError('model-unsupported', `${this.file}: ${what}; tokenscope reads little-endian v2 and v3`, hint);
  }

  private alignment(value: GGUFValue | undefined): number {
    if (value === undefined) return GGUF_DEFAULT_ALIGNMENT;
    if (value.type !== T.UINT32) {
      throw this.error(`general.alignment has type ${valueTypeName(value.type)}, expected UINT32`);
    }
    if (!isPowerOfTwo(value.value)) throw this.error(`general.alignment ${value.value} is not a power of two`);
    return value.value;
  }

  private tensorInfo(i: number) {
    const at = this.pos;
    const name = this.string(`tensor #${i} name`);
    if (name === '') throw this.error(`tensor #${i} at byte ${at} has an empty name`);
    const what = `tensor '${name}'`;
    const dimsAt = this.pos;
    const nDims = this.u32(`${what} dimension count`);
    if (nDims < 1 || nDims > MAX_DIMS) throw this.error(`${what} has ${nDims} dimensions at byte ${dimsAt} (1 to ${MAX_DIMS} allowed)`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) {
      const dimAt = this.pos;
      const n = this.u64(`${what} dimension ${d}`);
      // Every type stores an element in more than half a byte, so no dim can exceed twice the file size.
      if (n < 1n || n > 2n * BigInt(this.fileSize)) throw this.error(`${what} dimension ${d} is ${n} at byte ${dimAt}, impossible in this file`);
      dims.push(Number(n));
    }
    const typeAt = this.pos;
    const type = this.u32(`${what} type`);
    if (!isSupportedType(type)) {
      const typeName = ggmlTypeName(type);
      if (typeName === undefined) throw this.error(`${what} has unknown tensor type id ${type} at byte ${typeAt}`);
      throw new TokenscopeError(
        'model-unsupported',
        `${this.file}: ${what} has type ${typeName} (${type}); tokenscope reads ${supportedTypeNames()}`,
        'Use a file of those types (e.g. Q4_K_M, Q8_0), or requantize an F16 one with `npm run quantize`.',
      );
    }
    const problem = shapeProblem(type, dims);
    if (problem) throw this.error(`${what}: ${problem}`);
    const offsetAt = this.pos;
    const offset = this.u64(`${what} offset`);
    return { name, type, dims, offset, offsetAt };
  }
  private placeTensor(t: ReturnType<HeaderParser['tensorInfo']>, dataOffset: number, alignment: number): GGUFTensorInfo {
    const what = `tensor '${t.name}'`;
    const byteSize = tensorByteSize(t.type, t.dims);
    if (t.offset % BigInt(alignment) !== 0n) {
      throw this.error(`${what} has offset ${t.offset} (at byte ${t.offsetAt}), not a multiple of the alignment ${alignment}`);
    }
    const end = BigInt(dataOffset) + t.offset + BigInt(byteSize);
    if (!Number.isSafeInteger(byteSize) || end > BigInt(this.fileSize)) {
      throw this.error(
        `${what} (${t.dims.join('×')}, ${byteSize} bytes at data offset ${t.offset}) ends at byte ${end}, ` +
          `past the end of the file (${this.fileSize} bytes)`,
      );
    }
    return { name: t.name, type: t.type, dims: t.dims, offset: dataOffset + Number(t.offset), byteSize };
  }

  private checkNoOverlap(tensors: readonly GGUFTensorInfo[]): void {
    const seen = new Set<string>();
    for (const t of tensors) {
      if (seen.has(t.name)) throw this.error(`tensor '${t.name}' appears twice in the tensor table`);
      seen.add(t.name);
    }
    const sorted = [...tensors].sort((a, b) => a.offset - b.offset);
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1];
      if (sorted[i].offset < prev.offset + prev.byteSize) {
        throw this.error(`tensors '${prev.name}' and '${sorted[i].name}' overlap at byte ${sorted[i].offset}`);
      }
    }
  }

  private value(type: number, what: Label): GGUFValue {
    switch (type) {
      case T.UINT8:
        return { type, value: this.view.getUint8(this.need(1, what)) };
      case T.INT8:
        return { type, value: this.view.getInt8(this.need(1, what)) };
      case T.UINT16:
        return { type, value: this.view.getUint16(this.need(2, what), true) };
      case T.INT16:
        return { type, value: this.view.getInt16(this.need(2, what), true) };
      case T.UINT32:
        return { type, value: this.u32(what) };
      case T.INT32:
        return { type, value: this.view.getInt32(this.need(4, what), true) };
      case T.FLOAT32:
        return { type, value: this.view.getFloat32(this.need(4, what), true) };
      case T.UINT64:
        return { type, value: this.u64(what) };
      case T.INT64:
        return { type, value: this.view.getBigInt64(this.need(8, what), true) };
      case T.FLOAT64:
        return { type, value: this.view.getFloat64(this.need(8, what), true) };
      case T.BOOL:
        return { type, value: this.bool(what) };
      case T.STRING:
        return { type, value: this.metaString(what) };
      case T.ARRAY:
        return this.array(what, 0, false);
      default:
        throw this.error(`${text(what)} has unknown value type ${type} at byte ${this.pos - 4}`);
    }
  }

  /**
   * An array: numeric items as one typed array (bytes budget), strings, bools and nested arrays
   * as JS values when `needed` or few enough, otherwise walked, counted and dropped.
   */
  /** `needed`: the engine reads this array whatever its length (the tokenizer's). */
  private array(what: Label, depth: number, needed: boolean): GGUFArray {
    if (depth >= MAX_ARRAY_NESTING) throw this.error(`${text(what)} nests arrays more than ${MAX_ARRAY_NESTING} deep at byte ${this.pos}`);
    const typeAt = this.pos;
    const itemType = this.u32(() => `${text(what)} item type`);
    if (!isValueType(itemType)) throw this.error(`${text(what)} has unknown array item type ${itemType} at byte ${typeAt}`);
    const n = this.count(() => `${text(what)} item count`, minValueSize(itemType));
    const size = FIXED_VALUE_SIZE[itemType];
    if (size !== undefined && itemType !== T.BOOL) {
      this.spendBytes(n * size, what);
      const raw = () => this.raw(n * size, () => `${text(what)} items`);
      switch (itemType) {
        case T.UINT8:
          return { type: T.ARRAY, itemType, items: new Uint8Array(raw()) };
        case T.INT8:
          return { type: T.ARRAY, itemType, items: new Int8Array(raw()) };
        case T.UINT16:
          return { type: T.ARRAY, itemType, items: new Uint16Array(raw()) };
        case T.INT16:
          return { type: T.ARRAY, itemType, items: new Int16Array(raw()) };
        case T.UINT32:
          return { type: T.ARRAY, itemType, items: new Uint32Array(raw()) };
        case T.INT32:
          return { type: T.ARRAY, itemType, items: new Int32Array(raw()) };
        case T.FLOAT32:
          return { type: T.ARRAY, itemType, items: new Float32Array(raw()) };
        case T.UINT64:
          return { type: T.ARRAY, itemType, items: new BigUint64Array(raw()) };
        case T.INT64:
          return { type: T.ARRAY, itemType, items: new BigInt64Array(raw()) };
        case T.FLOAT64:
          return { type: T.ARRAY, itemType, items: new Float64Array(raw()) };
      }
    }
    this.spendItems(n, what);
    const kept = needed || (n <= KEEP_ANY_ARRAY_UP_TO && n <= this.spareKept);
    if (kept && !needed) this.spareKept -= n;
    const read = (item: (label: Label) => unknown) => {
      const items = kept ? new Array<unknown>(n) : undefined;
      for (let i = 0; i < n; i++) {
        const v = item(itemLabel(what, i));
        if (items) items[i] = v;
      }
      return items;
    };
    switch (itemType) {
      case T.STRING: {
        const items = read((label) => this.metaString(label, kept));
        return items ? { type: T.ARRAY, itemType, items: items as string[] } : { type: T.ARRAY, itemType, count: n };
      }
      case T.BOOL: {
        const items = read((label) => this.bool(label));
        return items ? { type: T.ARRAY, itemType, items: items as boolean[] } : { type: T.ARRAY, itemType, count: n };
      }
      default: {
        const items = read((label) => this.array(label, depth + 1, false));
        return items ? { type: T.ARRAY, itemType: T.ARRAY, items: items as GGUFArray[] } : { type: T.ARRAY, itemType: T.ARRAY, count: n };
      }
    }
  }

  /**
   * A copy of the next `n` bytes in a fresh (aligned) buffer, for typed arrays. Typed arrays use
   * the host's byte order; every platform with WebGPU is little-endian, like the file.
   */
  private raw(n: number, what: Label): ArrayBuffer {
    const at = this.need(n, what);
    return this.bytes.slice(at, at + n).buffer;
  }

  /**
   * Advances past `n` bytes and returns where they start in the window (the file offset minus
   * `start`), or throws if the file or the window ends first.
   */
  private need(n: number, what: Label): number {
    const at = this.pos;
    if (at + n > this.fileSize) {
      throw this.error(`truncated: ${text(what)} at byte ${at} needs ${n} bytes, but the file ends at byte ${this.fileSize}`);
    }
    if (at + n > this.start + this.bytes.length) throw new NeedMoreBytes(at + n);
    this.pos = at + n;
    return at - this.start;
  }

  private u32(what: Label): number {
    return this.view.getUint32(this.need(4, what), true);
  }

  private u64(what: Label): bigint {
    return this.view.getBigUint64(this.need(8, what), true);
  }

  /** A u64 count of items that each take at least `minItemBytes`: bounded by what the rest of the file could hold. */
  private count(what: Label, minItemBytes: number): number {
    const at = this.pos;
    const off = this.need(8, what);
    const lo = this.view.getUint32(off, true);
    const hi = this.view.getUint32(off + 4, true);
    const n = hi * 2 ** 32 + lo; // exact below 2^53; anything near that fails the bound below anyway
    const room = this.fileSize - this.pos;
    if (n * minItemBytes > room) {
      const exact = (BigInt(hi) << 32n) | BigInt(lo);
      throw this.error(`${text(what)} at byte ${at} is ${exact}, more than the remaining ${room} bytes could hold (truncated or corrupt)`);
    }
    return n;
  }

  private bool(what: Label): boolean {
    const at = this.need(1, what);
    const b = this.bytes[at];
    if (b > 1) throw this.error(`${text(what)} at byte ${at + this.start} is a bool with value ${b}`);
    return b === 1;
  }

  /** A string in the metadata, which counts against the bytes budget; decoded only when `keep`. */
  private metaString(what: Label, keep = true): string {
    const length = this.count(() => `${text(what)} length`, 1);
    this.spendBytes(length, what);
    return this.decoded(length, what, keep);
  }

  private string(what: Label): string {
    return this.decoded(
      this.count(() => `${text(what)} length`, 1),
      what,
      true,
    );
  }

  private decoded(length: number, what: Label, decode: boolean): string {
    const at = this.need(length, what);
    if (!decode || length === 0) return '';
    try {
      return utf8.decode(this.bytes.subarray(at, at + length));
    } catch {
      throw this.error(`${text(what)} at byte ${at + this.start} is not valid UTF-8`);
    }
  }

  private error(what: string): TokenscopeError {
    return formatError(this.file, what);
  }
}

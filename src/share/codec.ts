/**
 * The bytes of a shared link: a URL fragment `#<key>=` + base64url (RFC 4648 §5, no padding) of
 * the deflate-raw compressed UTF-8 JSON. Decoding treats the fragment as hostile: its length is
 * capped before anything is decoded, and the decompressed size is capped while streaming, so a
 * decompression bomb stops after a few megabytes instead of allocating its full size.
 * Runs in browsers and in Node 20 (CompressionStream, atob/btoa and TextDecoder are global in both).
 */
import { TokenscopeError } from '../errors.ts';
import { concatBytes } from '../model/gguf/source.ts';
import { badInput, parseJson } from './json.ts';

/** Longest fragment we decode (characters). Browsers keep far longer URLs; chat apps do not. */
export const MAX_FRAGMENT_CHARS = 64 * 1024;
/** Most bytes a fragment may decompress to; a full-size result is well under this. */
export const MAX_DECOMPRESSED_BYTES = 2 * 1024 * 1024;
/**
 * Compressed bytes handed to the decompressor at a time. Deflate expands at most ~1032×, and
 * browsers inflate a whole input chunk before backpressure applies, so this bounds the overshoot
 * past the cap to about 1 MB.
 */
const INFLATE_SLICE_BYTES = 1024;

const badLink = (message: string, cause?: unknown) => badInput('link', message, cause);

export function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Strict base64url: only `A–Z a–z 0–9 - _`, no padding, no whitespace, a length that is not 1 mod 4. */
function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw badLink('The link is damaged: it has characters that base64url does not use.');
  if (text.length % 4 === 1) throw badLink('The link is damaged: its base64url text has an impossible length (it was probably cut off).');
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function deflateRaw(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A stream of `bytes` in small slices, one per pull. */
function sliced(bytes: Uint8Array<ArrayBuffer>): ReadableStream<Uint8Array<ArrayBuffer>> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + INFLATE_SLICE_BYTES));
      offset += INFLATE_SLICE_BYTES;
    },
  });
}

/** Inflate deflate-raw data, giving up as soon as the output passes `maxBytes`. */
export async function inflateRawCapped(bytes: Uint8Array<ArrayBuffer>, maxBytes: number): Promise<Uint8Array> {
  const reader = sliced(bytes).pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch (e) {
      throw badLink('The link is damaged: its data is not valid deflate (it may have been cut off).', e);
    }
    if (next.done) break;
    total += next.value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw badLink(`The link expands to more than ${maxBytes} bytes; no tokenscope report is that large.`);
    }
    chunks.push(next.value);
  }
  return concatBytes(chunks, total);
}

/**
 * Significant digits a link keeps of each non-integer number. Timings arrive as differences of
 * clock readings (`121.09999999962747` for 121.1 ms): past nine digits a double carries only that
 * residue, which no timer resolves and which makes up about a seventh of a compressed report. The
 * JSON export keeps every digit.
 */
export const LINK_DIGITS = 9;

/** x to LINK_DIGITS significant digits (integers and non-finite values as they are). */
export function linkPrecision(x: number): number {
  return Number.isInteger(x) || !Number.isFinite(x) ? x : Number(x.toPrecision(LINK_DIGITS));
}

const linkNumber = (_key: string, value: unknown): unknown => (typeof value === 'number' ? linkPrecision(value) : value);

/** The value as a link carries it: a JSON copy with every non-integer number to LINK_DIGITS significant digits. */
export function linkRounded<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, linkNumber)) as T;
}

/** `#<key>=` + base64url(deflate-raw(UTF-8 JSON of value, numbers to LINK_DIGITS significant digits)). */
export async function encodeFragment(key: string, value: unknown): Promise<string> {
  const json = new TextEncoder().encode(JSON.stringify(value, linkNumber));
  return `#${key}=${toBase64Url(await deflateRaw(json))}`;
}

/** The fragment, unless it is longer than decoding accepts. */
export function checkedLength(fragment: string): string {
  if (fragment.length > MAX_FRAGMENT_CHARS) {
    throw new TokenscopeError(
      'bad-input',
      `This is too large for a link even trimmed (${fragment.length} characters; links hold ${MAX_FRAGMENT_CHARS}).`,
      'Share the exported JSON file instead.',
    );
  }
  return fragment;
}

/** The parsed JSON a fragment carries (not yet validated); the leading `#` is optional. */
export async function decodeFragment(key: string, fragment: string): Promise<unknown> {
  if (fragment.length > MAX_FRAGMENT_CHARS) {
    throw badLink(`The link is ${fragment.length} characters long; tokenscope links are at most ${MAX_FRAGMENT_CHARS}.`);
  }
  const prefix = `${key}=`;
  const body = fragment.startsWith('#') ? fragment.slice(1) : fragment;
  if (!body.startsWith(prefix))
    throw badLink(`The link does not carry a tokenscope ${key === 'r' ? 'report' : 'comparison'} (it should start with #${prefix}).`);
  const compressed = fromBase64Url(body.slice(prefix.length));
  const json = await inflateRawCapped(compressed, MAX_DECOMPRESSED_BYTES);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(json);
  } catch (e) {
    throw badLink('The link is damaged: its text is not valid UTF-8.', e);
  }
  return parseJson(text, 'link');
}

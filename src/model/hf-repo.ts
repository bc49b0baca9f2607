/**
 * llama.cpp's `-hf ORG/REPO[:QUANT]`: a Hugging Face repository and a quant tag, resolved to one
 * GGUF file of it. The repository's file list comes from the Hub's model API
 * (`GET {base}/api/models/ORG/REPO` → `siblings[].rfilename`), read with http.ts's bounds; the tag
 * (default Q4_K_M, as llama.cpp's) picks the file whose name holds it, a single file before split
 * parts. Browser-safe: the page's URL field takes the same form.
 */
import { TokenscopeError } from '../errors.ts';
import { HF_BASE, hfFileUrl } from './catalog.ts';
import { boundedFetch, type FetchOptions } from './gguf/http.ts';

/** The tag llama.cpp takes when `-hf` names none. */
export const DEFAULT_HF_QUANT = 'Q4_K_M';
/** A model listing is a few KiB; a bigger answer is not one. */
const LISTING_CAP_BYTES = 8 << 20;

export interface HfRepoRef {
  org: string;
  repo: string;
  /** As typed; undefined when no `:QUANT` was given. */
  quant?: string;
}

/** "org/repo" or "org/repo:Q8_0" → its parts; null for anything else (a path, a URL). */
export function parseHfRepoRef(text: string): HfRepoRef | null {
  const m = /^([\w.-]+)\/([\w.-]+)(?::([\w.-]+))?$/.exec(text.trim());
  if (!m || m[1].startsWith('.') || m[2].startsWith('.') || /\.gguf$/i.test(m[2])) return null;
  return { org: m[1], repo: m[2], ...(m[3] ? { quant: m[3] } : {}) };
}

const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/i;

/** The quant tag in a GGUF file name ("Llama-3.2-1B-Instruct-Q4_K_M.gguf" → "Q4_K_M"), or null. */
export function quantTagOf(file: string): string | null {
  const name = file.split('/').pop()!.replace(SPLIT_PART, '.gguf');
  const m = /(?:^|[^a-z0-9])((?:I?Q\d(?:_[A-Z0-9]+)*)|BF16|F16|F32)(?=[.-])/i.exec(name);
  return m ? m[1].toUpperCase() : null;
}

/**
 * The file of `files` that `quant` names (case-insensitively, as a whole tag: Q4_K does not pick
 * Q4_K_M), a single file before the first part of a split one; mmproj files (vision projectors)
 * are never the model. A typed error lists the tags the repository has when none matches.
 */
export function pickGgufFile(files: readonly string[], ref: HfRepoRef): string {
  const tag = ref.quant ?? DEFAULT_HF_QUANT;
  const ggufs = files.filter((f) => /\.gguf$/i.test(f) && !/mmproj/i.test(f));
  const where = `${ref.org}/${ref.repo}`;
  if (ggufs.length === 0) {
    throw new TokenscopeError('bad-input', `${where} has no .gguf file on Hugging Face`, 'Pick a repository of GGUF files (their names usually end in -GGUF).');
  }
  const escaped = tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const holdsTag = new RegExp(`(?:^|[^a-z0-9])${escaped}(?![a-z0-9_])`, 'i');
  const matching = ggufs.filter((f) => holdsTag.test(f.split('/').pop()!.replace(SPLIT_PART, '.gguf')));
  const single = matching.find((f) => !SPLIT_PART.test(f));
  if (single) return single;
  const firstPart = matching.find((f) => SPLIT_PART.exec(f)?.[1] === '00001');
  if (firstPart) {
    throw new TokenscopeError(
      'model-unsupported',
      `${where}:${tag} is split into parts (${firstPart.split('/').pop()} …), and tokenscope reads single-file GGUFs`,
      'Pick a smaller quant of it, or merge the parts with llama.cpp (llama-gguf-split --merge) and open the file.',
    );
  }
  const tags = [...new Set(ggufs.map(quantTagOf).filter((t): t is string => t !== null))].sort();
  throw new TokenscopeError(
    'bad-input',
    `${where} has no ${tag} file${ref.quant ? '' : ` (the tag taken when none is given)`}; its quants: ${tags.length ? tags.join(', ') : ggufs.slice(0, 12).join(', ')}`,
    `Name one after a colon, e.g. ${where}:${tags[0] ?? 'Q8_0'}.`,
  );
}

/**
 * `ORG/REPO[:QUANT]` → the chosen file's URL on the main branch (`base` defaults to huggingface.co),
 * reading the repository's listing with bounded waits and size.
 */
export async function resolveHfRepo(ref: HfRepoRef, base = HF_BASE, options: FetchOptions = {}): Promise<{ file: string; url: string }> {
  const root = base.replace(/\/$/, '');
  const listing = `${root}/api/models/${encodeURIComponent(ref.org)}/${encodeURIComponent(ref.repo)}`;
  let text = '';
  try {
    const response = await boundedFetch(listing, { headers: { Accept: 'application/json' } }, options);
    const decoder = new TextDecoder();
    for await (const chunk of response.body(LISTING_CAP_BYTES, `the file list of ${ref.org}/${ref.repo}`)) text += decoder.decode(chunk, { stream: true });
  } catch (e) {
    if (e instanceof TokenscopeError && /answered HTTP (401|403|404)\b/.test(e.message)) {
      throw new TokenscopeError(
        'bad-input',
        `Hugging Face has no public repository ${ref.org}/${ref.repo} (${e.message})`,
        'Check the spelling (ORG/REPO as in the model page address); gated or private repositories are not supported.',
        { cause: e },
      );
    }
    throw e;
  }
  let siblings: unknown;
  try {
    siblings = (JSON.parse(text) as { siblings?: unknown }).siblings;
  } catch {
    siblings = undefined;
  }
  if (!Array.isArray(siblings)) {
    throw new TokenscopeError(
      'io',
      `${listing} did not answer with a model listing (no siblings[] in its JSON)`,
      'Check the Hugging Face base URL, or try again later.',
    );
  }
  const files = siblings.map((s) => (s as { rfilename?: unknown })?.rfilename).filter((f): f is string => typeof f === 'string');
  const file = pickGgufFile(files, ref);
  return { file, url: hfFileUrl(`hf://${ref.org}/${ref.repo}/${file}`, root) };
}

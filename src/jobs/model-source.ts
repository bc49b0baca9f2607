/**
 * From a serialisable model spec (a preset id, a URL, a path in Node) or a byte source the page
 * holds (a local File) to a model choice the engine can load, with its tokenizer.
 */
import { TokenscopeError } from '../errors.ts';
import type { NetLimits } from '../model/gguf/http.ts';
import type { ByteSource } from '../model/gguf/source.ts';
import { keptOrDownload, modelCacheAvailable } from '../model/gguf/model-cache.ts';
import { urlSource } from '../model/gguf/url-source.ts';
import type { Quantization } from '../model/gpu-weights.ts';
import { fmtBytes } from '../model/memory.ts';
import { presetChoice, type ModelChoice } from '../model/choice.ts';
import { openModel } from '../model/open.ts';
import type { Tokenizer } from '../model/tokenizer/index.ts';

export interface ModelSpec {
  /** A preset id from src/model/catalog.ts (synthetic weights). */
  preset?: string;
  /** A GGUF over HTTP(S) (streamed with Range requests when the server allows). */
  url?: string;
  /** A GGUF on disk (Node runtime only; the CLI serves it to the browser runtime as a URL). */
  path?: string;
  /** Weight format: for presets the format synthesised; for F32/F16 files, quantize on load. */
  quant?: Quantization;
  seed?: number;
}

export interface ResolvedModel {
  choice: ModelChoice;
  tokenizer: Tokenizer | null;
  parseMs: number;
  /** Closes what resolveModel opened itself (a file on disk); absent where there is nothing to close. Call once the run is done with the model. */
  release?: () => Promise<void>;
}

export interface ResolveOptions {
  /** A source the caller already holds (the page's local File); wins over url/path. */
  source?: ByteSource;
  onProgress?: (step: string, fraction: number) => void;
  signal?: AbortSignal;
  /** A URL's timeouts (tests shorten them; the defaults, 30 s, are for users). */
  net?: NetLimits;
}

export async function resolveModel(spec: ModelSpec, opts: ResolveOptions = {}): Promise<ResolvedModel> {
  if (spec.preset && !opts.source) {
    return { choice: presetChoice(spec.preset, spec.quant ?? 'q4_0', spec.seed ?? 1), tokenizer: null, parseMs: 0 };
  }
  let source = opts.source;
  let release: (() => Promise<void>) | undefined;
  if (!source && spec.url) {
    const onProgress = (loaded: number, total: number) =>
      opts.onProgress?.(`downloading ${spec.url}: ${fmtBytes(loaded)} of ${fmtBytes(total)}`, total ? loaded / total : 0);
    // In a browser the file is downloaded once and kept (Cache API); elsewhere it is read by ranges.
    source = modelCacheAvailable()
      ? (await keptOrDownload(spec.url, { ...opts.net, signal: opts.signal, onProgress })).source
      : await urlSource(spec.url, { ...opts.net, signal: opts.signal, onProgress });
  }
  if (!source && spec.path) {
    if (typeof process === 'undefined' || !process.versions?.node) {
      throw new TokenscopeError('bad-input', 'A file path can only be opened in the Node runtime.', 'Pick the file with the page’s file chooser instead.');
    }
    // A computed specifier keeps the Node-only module out of the page's bundle.
    const nodeSource = '../model/gguf/node-source.ts';
    const { fileSource } = (await import(/* @vite-ignore */ nodeSource)) as typeof import('../model/gguf/node-source.ts');
    const file = await fileSource(spec.path);
    source = file;
    release = () => file.close();
  }
  if (!source) throw new TokenscopeError('bad-input', 'No model given.', 'Name a preset (--model llama-3.2-1b), a GGUF path or a URL.');
  try {
    const t0 = performance.now();
    const model = await openModel(source);
    const parseMs = performance.now() - t0;
    const name = source.name.split(/[\\/]/).pop() ?? source.name;
    // Loaded with the first model file: the page's entry chunk carries no tokenizer (prompts are encoded in a worker there).
    const { createTokenizer } = await import('../model/tokenizer/index.ts');
    return {
      choice: { kind: 'gguf', model, quant: spec.quant, id: name },
      tokenizer: createTokenizer(model.gguf.metadata),
      parseMs,
      ...(release ? { release } : {}),
    };
  } catch (e) {
    await release?.();
    throw e;
  }
}

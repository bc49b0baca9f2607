/**
 * WebLLM's failures arrive in many shapes — its own Error classes (named, e.g.
 * "ShaderF16SupportError"), the browser's DOMExceptions and TypeErrors from the Cache API and
 * fetch (each browser words them differently), bare strings (an aborted fetch rejects with the
 * abort reason), and plain objects. This is the one place they become typed TokenscopeErrors.
 */
import { TokenscopeError, type ErrorCode } from '../errors.ts';

export const DOWNLOAD_HINT =
  'WebLLM downloads model weights from huggingface.co and its WASM from raw.githubusercontent.com; check your connection or pick a tokenscope preset.';

interface Rule {
  code: ErrorCode;
  /** Matches the error's name or message. */
  test: RegExp;
  hint: string;
}

/** First match wins: storage and secure-context failures before the generic network ones. */
const RULES: readonly Rule[] = [
  // Not a bare /aborted/: Emscripten's fatal "Aborted(OOM)" is no cancellation.
  {
    code: 'cancelled',
    test: /^AbortError$|Engine\.unload\(\) is called|signal is aborted|operation was aborted|aborted a request/i,
    hint: 'Start it again when ready.',
  },
  {
    code: 'feature-missing',
    test: /ShaderF16SupportError|FeatureSupportError|shader-f16|requires feature/i,
    hint: 'Pick a q4f32_1 or q0f32 WebLLM model, or a browser and GPU that offer shader-f16.',
  },
  {
    code: 'feature-missing',
    test: /Content Security Policy|blocked by CSP|Refused to compile or instantiate WebAssembly/i,
    hint: "This page's Content-Security-Policy blocks WebAssembly: WebLLM needs 'wasm-unsafe-eval' in script-src.",
  },
  {
    code: 'webgpu-unavailable',
    test: /WebGPUNotAvailableError|WebGPUNotFoundError|WebGPU is not supported|Cannot find WebGPU/i,
    hint: 'WebLLM needs WebGPU: try Chrome or Edge 113+, or enable WebGPU in your browser settings.',
  },
  {
    code: 'model-too-large',
    test: /DeviceLostError|device was lost|out of memory|\bOOM\b|allocation failed/i,
    hint: 'Pick a smaller WebLLM model or a -1k (short context) variant, and close other GPU-heavy tabs.',
  },
  {
    code: 'bad-input',
    test: /ContextWindowSizeExceededError|exceed context window/i,
    hint: 'Use a shorter prompt or fewer output tokens, or a model with a longer context window.',
  },
  {
    code: 'bad-input',
    test: /ModelNotFoundError|Cannot find model record/i,
    hint: 'Pick a model from WebLLM 0.2.86’s prebuilt list.',
  },
  {
    code: 'io',
    test: /QuotaExceededError|quota/i,
    hint: 'The browser’s storage for downloaded models is full (private windows allow little): free disk space, leave private mode, or delete cached WebLLM models.',
  },
  {
    code: 'io',
    test: /caches is not defined/i,
    hint: 'WebLLM caches models with the Cache API, which browsers offer only on https:// pages and localhost.',
  },
  {
    code: 'io',
    test: /Failed to fetch|fetch failed|NetworkError|network error|Load failed|Cache\.add|on 'Cache'|Cannot fetch|ERR_[A-Z_]+|status (4|5)\d\d/i,
    hint: DOWNLOAD_HINT,
  },
];

/** The name and message of anything thrown. */
export function errorText(e: unknown): { name: string; message: string } {
  if (typeof e === 'string') return { name: '', message: e };
  if (typeof e === 'object' && e !== null) {
    const { name, message } = e as { name?: unknown; message?: unknown };
    return {
      name: typeof name === 'string' ? name : '',
      message: typeof message === 'string' ? message : String(e),
    };
  }
  return { name: '', message: String(e) };
}

/**
 * A typed error for anything WebLLM (or the browser under it) threw; `doing` says what failed,
 * e.g. "Loading Qwen2.5-0.5B-Instruct-q4f32_1-MLC". TokenscopeErrors pass through unchanged.
 * Unrecognised failures are 'model-unsupported': WebLLM could not run this model here.
 */
export function normalizeWebLLMError(e: unknown, doing: string): TokenscopeError {
  if (e instanceof TokenscopeError) return e;
  const { name, message } = errorText(e);
  const text = name && !message.startsWith(name) ? `${name}: ${message}` : message;
  const rule = RULES.find((r) => r.test.test(name) || r.test.test(message));
  if (rule?.code === 'cancelled') return new TokenscopeError('cancelled', `${doing} was cancelled.`, rule.hint, { cause: e });
  return new TokenscopeError(rule?.code ?? 'model-unsupported', `${doing} failed: ${text}`, rule?.hint ?? 'Try another WebLLM model or a tokenscope preset.', {
    cause: e,
  });
}

/**
 * Typed, actionable errors shared by every layer.
 *
 * Each error says what happened (`message`) and what the user can do about it (`hint`).
 * The UI shows both as text; the CLI prints both and exits non-zero. `code` is stable and
 * is what tests and callers branch on — never the message text.
 */
export type ErrorCode =
  /** `navigator.gpu` is missing: the browser has no WebGPU or it is disabled. */
  | 'webgpu-unavailable'
  /** `requestAdapter()` resolved to null. */
  | 'no-adapter'
  /** A feature the work needs is not offered by the adapter. */
  | 'feature-missing'
  /** A limit the work needs exceeds what the adapter offers. */
  | 'limit-too-low'
  /** The device was lost (driver reset, tab backgrounded, `destroy()`). */
  | 'device-lost'
  /** A WebGPU validation / out-of-memory / internal error was raised. */
  | 'gpu-validation'
  /** A WGSL module failed to compile. */
  | 'shader-compile'
  /** A kernel produced a result that does not match its CPU check. */
  | 'kernel-mismatch'
  /** A model file is malformed, truncated or hostile. */
  | 'model-format'
  /** A model file is well-formed but uses something we do not support. */
  | 'model-unsupported'
  /** A model does not fit the device's limits or memory. */
  | 'model-too-large'
  /** User input (a flag, a permalink, a JSON file, a setting) is invalid. */
  | 'bad-input'
  /** A download or file read failed. */
  | 'io'
  /** The user cancelled the run. */
  | 'cancelled';

export class TokenscopeError extends Error {
  override readonly name = 'TokenscopeError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** What to do about it, in one sentence. */
    readonly hint: string = '',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** "message — hint", for logs and the CLI. */
  describe(): string {
    return this.hint ? `${this.message} — ${this.hint}` : this.message;
  }
}

export function isTokenscopeError(e: unknown, code?: ErrorCode): e is TokenscopeError {
  return e instanceof TokenscopeError && (code === undefined || e.code === code);
}

/** Any thrown value as one readable line (typed errors keep their hint). */
export function describeError(e: unknown): string {
  if (e instanceof TokenscopeError) return e.describe();
  if (e instanceof Error) return e.message;
  return String(e);
}

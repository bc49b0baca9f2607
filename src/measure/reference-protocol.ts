/**
 * The messages between the page and its CPU-reference worker (reference-thread.ts, reference-worker.ts).
 * Errors travel as plain fields: a TokenscopeError or a RangeError does not survive structured
 * cloning as itself.
 */
import { TokenscopeError, type ErrorCode } from '../errors.ts';
import type { ModelConfig } from '../model/config.ts';
import type { GGUFTensorInfo } from '../model/gguf/reader.ts';
import type { Quantization } from '../model/recipes.ts';
import type { ModelTensors } from '../model/tensors.ts';

/** An error as fields: a TokenscopeError's code and hint, or another error's name (RangeError: memory). */
export interface ErrorFields {
  name: string;
  code?: ErrorCode;
  message: string;
  hint?: string;
}

export type ToReferenceWorker =
  | { type: 'start'; config: ModelConfig; tensors: ModelTensors; quant?: Quantization; seqLen: number; ids: number[]; ahead: number }
  | { type: 'bytes'; id: number; bytes: Uint8Array }
  /** Positions below `upTo` may be computed. */
  | { type: 'more'; upTo: number };

export type FromReferenceWorker =
  | { type: 'read'; id: number; tensor: GGUFTensorInfo }
  | { type: 'loaded'; ms: number }
  | { type: 'logits'; pos: number; logits: Float32Array; ms: number }
  | { type: 'error'; error: ErrorFields };

export function errorFields(e: unknown): ErrorFields {
  if (e instanceof TokenscopeError) return { name: e.name, code: e.code, message: e.message, hint: e.hint };
  if (e instanceof Error) return { name: e.name, message: e.message };
  return { name: 'Error', message: String(e) };
}

/** The error the fields describe: a TokenscopeError again, a RangeError again (runAccuracy reads a failed allocation from it), else an Error. */
export function reviveError(f: ErrorFields): Error {
  if (f.code) return new TokenscopeError(f.code, f.message, f.hint ?? '');
  if (f.name === 'RangeError') return new RangeError(f.message);
  return new Error(f.message);
}

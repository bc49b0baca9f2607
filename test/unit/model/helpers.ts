/** Assertions shared by the model tests. */
import { expect } from 'vitest';
import { TokenscopeError, type ErrorCode } from '../../../src/errors.ts';
import type { GGUF } from '../../../src/model/gguf/reader.ts';

/** Runs `action` and checks it fails with a TokenscopeError of `code` whose message matches. Returns the error. */
export async function expectTokenscopeError(action: () => unknown, code: ErrorCode, message: RegExp): Promise<TokenscopeError> {
  let thrown: unknown;
  try {
    await action();
  } catch (e) {
    thrown = e;
  }
  expect(thrown, 'expected a TokenscopeError').toBeInstanceOf(TokenscopeError);
  const error = thrown as TokenscopeError;
  expect({ code: error.code, message: error.message }).toMatchObject({ code, message: expect.stringMatching(message) });
  expect(error.hint.length).toBeGreaterThan(0);
  return error;
}

/**
 * llama.cpp's gguf.cpp requires each tensor's offset to be exactly the padded sizes of the ones
 * before it, in table order, starting at the aligned data section.
 */
export function expectLlamaCppLayout(gguf: GGUF): void {
  let expected = gguf.dataOffset;
  for (const t of gguf.tensors) {
    expect(t.offset, t.name).toBe(expected);
    expected += Math.ceil(t.byteSize / gguf.alignment) * gguf.alignment;
  }
}

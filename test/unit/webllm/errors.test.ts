import { describe, expect, it } from 'vitest';
import { TokenscopeError } from '../../../src/errors.ts';
import { DOWNLOAD_HINT, errorText, normalizeWebLLMError } from '../../../src/webllm/errors.ts';

/** An Error with the `name` WebLLM's own error classes set (they are not exported by 0.2.86). */
const named = (name: string, message: string) => Object.assign(new Error(message), { name });

/**
 * Recorded failures: WebLLM 0.2.86's error messages verbatim from lib/index.js; browser messages
 * as reported in mlc-ai/web-llm issues #144, #257, #313, #389, #474 and by each engine's fetch.
 */
const RECORDED: [string, unknown, string, RegExp?][] = [
  ['Chrome offline fetch', new TypeError('Failed to fetch'), 'io', /huggingface\.co/],
  ['Firefox offline fetch', new TypeError('NetworkError when attempting to fetch resource.'), 'io', /huggingface\.co/],
  ['Safari offline fetch', new TypeError('Load failed'), 'io', /huggingface\.co/],
  ['Node fetch', new TypeError('fetch failed'), 'io', /huggingface\.co/],
  [
    'Cache.add network error (#313, #389)',
    new DOMException("Failed to execute 'add' on 'Cache': Cache.add() encountered a network error", 'NetworkError'),
    'io',
    /huggingface\.co/,
  ],
  ['Cache.add non-200 or blocked (#474)', new TypeError("Failed to execute 'add' on 'Cache': Request failed"), 'io', /huggingface\.co/],
  [
    'WebLLM ArtifactCache',
    new Error('Cannot fetch https://huggingface.co/mlc-ai/Qwen2.5-0.5B-Instruct-q4f32_1-MLC/resolve/main/mlc-chat-config.json'),
    'io',
    /huggingface\.co/,
  ],
  ['storage quota (#144)', new DOMException("Failed to execute 'add' on 'Cache': Quota exceeded.", 'QuotaExceededError'), 'io', /storage/],
  ['insecure context (#257)', new ReferenceError('caches is not defined'), 'io', /https:\/\//],
  [
    'ShaderF16SupportError',
    named(
      'ShaderF16SupportError',
      'This model requires WebGPU extension shader-f16, which is not enabled in this browser. You can try to launch Chrome Canary in command line with flag "--enable-dawn-features=allow_unsafe_apis".',
    ),
    'feature-missing',
    /q4f32_1/,
  ],
  [
    'Chrome: CSP without wasm-unsafe-eval',
    new WebAssembly.CompileError(
      "WebAssembly.instantiate(): Refused to compile or instantiate WebAssembly module because 'unsafe-eval' is not an allowed source of script in the following Content Security Policy directive: \"script-src 'self'\"",
    ),
    'feature-missing',
    /wasm-unsafe-eval/,
  ],
  [
    'Firefox: CSP without wasm-unsafe-eval',
    new WebAssembly.CompileError('call to WebAssembly.instantiate() blocked by CSP'),
    'feature-missing',
    /wasm-unsafe-eval/,
  ],
  [
    'FeatureSupportError',
    named('FeatureSupportError', 'This model requires feature subgroups, which is not yet supported by this browser.'),
    'feature-missing',
  ],
  [
    'DeviceLostError (OOM in reload)',
    named(
      'DeviceLostError',
      'The WebGPU device was lost while loading the model. This issue often occurs due to running out of memory (OOM). To resolve this, try reloading with a model that has fewer parameters or uses a smaller context length.',
    ),
    'model-too-large',
    /smaller/,
  ],
  ['Emscripten abort on OOM', new WebAssembly.RuntimeError('Aborted(OOM). Build with -sASSERTIONS for more info.'), 'model-too-large'],
  [
    'WebGPUNotAvailableError',
    named(
      'WebGPUNotAvailableError',
      'WebGPU is not supported in your current environment, but it is necessary to run the WebLLM engine. Please make sure that your browser supports WebGPU and that it is enabled in your browser settings.',
    ),
    'webgpu-unavailable',
  ],
  [
    'ContextWindowSizeExceededError',
    named(
      'ContextWindowSizeExceededError',
      'Prompt tokens exceed context window size: number of prompt tokens: 5000; context window size: 4096\nConsider shortening the prompt, or increase `context_window_size`, or using sliding window via `sliding_window_size`.',
    ),
    'bad-input',
  ],
  [
    'ModelNotFoundError',
    named(
      'ModelNotFoundError',
      'Cannot find model record in appConfig for Foo-q4f32_1-MLC. Please check if the model ID is correct and included in the model_list configuration.',
    ),
    'bad-input',
  ],
  ['fetch aborted', new DOMException('signal is aborted without reason', 'AbortError'), 'cancelled'],
  ['WebLLM unload() abort reason (a bare string)', 'Engine.unload() is called.', 'cancelled'],
  ['unknown WebLLM failure', new Error('InternalError: failed to sample a valid token.'), 'model-unsupported'],
  ['a plain object', { message: 'something odd' }, 'model-unsupported'],
  ['a number', 42, 'model-unsupported'],
];

describe('normalizeWebLLMError on recorded failures', () => {
  it.each(RECORDED)('%s → %s', (_label, thrown, code, hint) => {
    const e = normalizeWebLLMError(thrown, 'Loading Qwen2.5-0.5B-Instruct-q4f32_1-MLC');
    expect(e).toBeInstanceOf(TokenscopeError);
    expect(e.code).toBe(code);
    expect(e.message).toMatch(/^Loading Qwen2\.5-0\.5B-Instruct-q4f32_1-MLC (failed: |was cancelled)/);
    expect(e.hint.length).toBeGreaterThan(0);
    if (hint) expect(e.hint).toMatch(hint);
    expect(e.cause).toBe(thrown);
  });

  it('gives download failures the hint that names both hosts', () => {
    expect(normalizeWebLLMError(new TypeError('Failed to fetch'), 'Loading X').hint).toBe(DOWNLOAD_HINT);
    expect(DOWNLOAD_HINT).toMatch(/raw\.githubusercontent\.com/);
  });

  it('keeps the original name and message in the text', () => {
    const e = normalizeWebLLMError(new DOMException("Failed to execute 'add' on 'Cache': Quota exceeded.", 'QuotaExceededError'), 'Loading X');
    expect(e.message).toBe("Loading X failed: QuotaExceededError: Failed to execute 'add' on 'Cache': Quota exceeded.");
  });

  it('passes TokenscopeErrors through unchanged', () => {
    const ours = new TokenscopeError('bad-input', 'no', 'yes');
    expect(normalizeWebLLMError(ours, 'Loading X')).toBe(ours);
  });
});

describe('errorText', () => {
  it('reads name and message from every shape', () => {
    expect(errorText('plain')).toEqual({ name: '', message: 'plain' });
    expect(errorText(new RangeError('r'))).toEqual({ name: 'RangeError', message: 'r' });
    expect(errorText({ name: 'X', message: 'm' })).toEqual({ name: 'X', message: 'm' });
    expect(errorText(null)).toEqual({ name: '', message: 'null' });
    expect(errorText(undefined)).toEqual({ name: '', message: 'undefined' });
  });
});

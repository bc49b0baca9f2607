/**
 * `--agreement llama.cpp` (issue 22): accepted where llama.cpp can read the very file the engine
 * runs, refused with the reason before any GPU work everywhere else; it turns the accuracy pass on.
 * The run itself (llama.cpp's logits beside ours) is test/e2e/cli-agreement.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { benchJob as job, usageError } from './bench-args.ts';

const refusal = (argv: string[]) => usageError(() => job(argv), argv.join(' '));

describe('--agreement llama.cpp', () => {
  it('with a local GGUF file, a latency or --prompt run gets the accuracy pass on', () => {
    expect(job(['--model', 'm.gguf', '--agreement', 'llama.cpp']).accuracy).toBe('on');
    expect(job(['--model', 'm.gguf', '--prompt', 'hi', '--agreement', 'llama.cpp']).accuracy).toBe('on');
    expect(job(['--model', 'm.gguf', '--agreement', 'llama.cpp', '--accuracy', 'auto']).accuracy).toBe('auto');
  });

  it.each([
    [['--model', 'm.gguf', '--agreement', 'llama.cpp', '--runtime', 'browser'], /runs llama\.cpp in Node; drop --runtime browser/],
    [['--model', 'stories15m', '--agreement', 'llama.cpp'], /needs --model PATH to a local GGUF file/],
    [['--agreement', 'llama.cpp'], /needs --model PATH to a local GGUF file/],
    [['--model', 'https://example.test/m.gguf', '--agreement', 'llama.cpp'], /needs --model PATH/],
    [['--model', 'm.gguf', '--quant', 'q4_0', '--agreement', 'llama.cpp'], /--quant re-encodes it on load; quantize the file first/],
    [['--model', 'm.gguf', '--accuracy', 'off', '--agreement', 'llama.cpp'], /which --accuracy off turns off/],
    [['--mode', 'serve', '--model', 'm.gguf', '--agreement', 'llama.cpp'], /--mode serve does not run/],
    [['--model', 'm.gguf', '--agreement', 'vllm'], /must be one of llama\.cpp/],
  ])('%j is refused, saying why', (argv, message) => {
    expect(refusal(argv)).toMatch(message);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { parseFlags, UsageError } from '../../../cli/args.ts';
import { BENCH_FLAGS, misplacedFlag } from '../../../cli/bench-flags.ts';
import { huggingFaceUrl, modelSpec } from '../../../cli/bench-job.ts';
import { findKnownFile } from '../../../src/model/catalog.ts';

describe('model ids users paste', () => {
  afterEach(() => {
    delete process.env.TOKENSCOPE_HF_BASE;
  });

  it('takes --list-models catalog ids with --model, as --inspect does', () => {
    const known = findKnownFile('llama-3.2-1b-instruct-q4_k_m')!;
    expect(modelSpec('llama-3.2-1b-instruct-q4_k_m')).toEqual({ url: known.url });
    expect(modelSpec('stories15m')).toEqual({ preset: 'stories15m' });
    expect(modelSpec('./x.gguf')).toEqual({ path: './x.gguf' });
    expect(modelSpec('https://example.org/m.gguf')).toEqual({ url: 'https://example.org/m.gguf' });
  });

  it('reads hf://ORG/REPO/FILE.gguf as the file on the main branch, the base overridable', () => {
    expect(modelSpec('hf://bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q4_K_M.gguf')).toEqual({
      url: 'https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    });
    expect(huggingFaceUrl('hf://org/repo/sub dir/a+b.gguf')).toBe('https://huggingface.co/org/repo/resolve/main/sub%20dir/a%2Bb.gguf');
    process.env.TOKENSCOPE_HF_BASE = 'http://127.0.0.1:8080/';
    expect(huggingFaceUrl('hf://org/repo/m.gguf')).toBe('http://127.0.0.1:8080/org/repo/resolve/main/m.gguf');
  });

  it('refuses hf:// forms that name no file, or climb out of the repository', () => {
    for (const bad of ['hf://org/repo', 'hf://org/repo/', 'hf://org/m.gguf', 'hf://org/repo/../x.gguf', 'hf://org/repo/a.bin']) {
      expect(() => huggingFaceUrl(bad), bad).toThrow(UsageError);
    }
    expect(() => huggingFaceUrl('hf://org/repo')).toThrow(/--model hf:\/\/org\/repo: a Hugging Face file reads hf:\/\/ORG\/REPO\/FILE\.gguf/);
  });

  it('takes quant names in llama.cpp’s upper case', () => {
    expect(parseFlags(['--quant', 'Q4_K_M'], BENCH_FLAGS).get('quant')).toBe('q4_k_m');
    expect(parseFlags(['--quant', 'q8_0'], BENCH_FLAGS).get('quant')).toBe('q8_0');
    expect(() => parseFlags(['--quant', 'Q3_K'], BENCH_FLAGS)).toThrow(/--quant must be one of/);
  });
});

describe("vLLM's serving flag names", () => {
  it('takes --request-rate, --num-prompts and --max-concurrency as --rate, --requests and --max-batch', () => {
    const f = parseFlags(['--mode', 'serve', '--request-rate', '2.5', '--num-prompts', '50', '--max-concurrency', '8'], BENCH_FLAGS);
    expect(Object.fromEntries(f)).toEqual({ mode: 'serve', rate: '2.5', requests: 50, 'max-batch': 8 });
    expect(() => parseFlags(['--num-prompts', '0'], BENCH_FLAGS)).toThrow(/--num-prompts must be an integer from 1/);
  });

  it('names the flag as typed in its errors when an alias was typed', () => {
    const parse = (argv: string[]) => parseFlags(argv, BENCH_FLAGS, misplacedFlag);
    expect(() => parse(['--mode', 'serve', '--request-rate', 'abc'])).toThrow(/^--request-rate must be a number from 0\.001 to 1000000 or inf, got "abc"\.$/);
    expect(() => parse(['--request-rate', '2'])).toThrow(/^--request-rate is a serve-mode flag; add --mode serve\.$/);
    expect(() => parse(['--goodput', 'ttft:500'])).toThrow(/^--goodput is a serve-mode flag/);
    expect(() => parse(['--mode', 'serve', '--max-concurrency'])).toThrow(/^--max-concurrency needs a value/);
    expect(() => parse(['--mode', 'serve', '--max-concurrency', '0'])).toThrow(/^--max-concurrency must be an integer from 1/);
    // The flag's own name still reads as itself.
    expect(() => parse(['--mode', 'serve', '--rate', 'abc'])).toThrow(/^--rate must be a number/);
  });
});

import { describe, expect, it } from 'vitest';
import { describeDifferences } from '../../../src/webllm/differences.ts';

const qwenPreset = { id: 'qwen2.5-0.5b', name: 'Qwen2.5-0.5B (synthetic weights)', quantization: 'q4_0', synthetic: true };
const qwenWebLLM = { id: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC', family: 'Qwen2.5-0.5B', quantization: 'q4f32_1' };

const line = (lines: string[], start: string) => lines.find((l) => l.startsWith(start));

describe('describeDifferences', () => {
  it('names kernels, both quantization formats, sampling, the decode loop and the tokenizer', () => {
    const lines = describeDifferences(qwenPreset, qwenWebLLM);
    expect(lines.map((l) => l.split(':')[0])).toEqual(['Kernels', 'Weights', 'Weight values', 'Sampling', 'Decode loop', 'Tokenizer']);
    expect(line(lines, 'Kernels')).toMatch(/WGSL.*TVM/);
    const weights = line(lines, 'Weights')!;
    expect(weights).toMatch(/GGUF Q4_0: blocks of 32 .* one f16 scale .* \(q − 8\)/);
    expect(weights).toMatch(/q4f32_1 .* groups of 32 with one f32 scale .* \(q − 7\).* 5 bits per weight/);
    expect(line(lines, 'Sampling')).toMatch(/both sample on the GPU/);
    expect(line(lines, 'Decode loop')).toMatch(/device\.sync/);
  });

  it('says when the two sides are different models', () => {
    const lines = describeDifferences(qwenPreset, { id: 'Llama-3.2-1B-Instruct-q4f16_1-MLC', family: 'Llama-3.2-1B', quantization: 'q4f16_1' });
    expect(lines[0]).toMatch(/^Different models: tokenscope runs Qwen2\.5-0\.5B .*, WebLLM runs Llama-3\.2-1B-Instruct-q4f16_1-MLC/);
    expect(line(lines, 'Weights')).toMatch(/q4f16_1 .* f16 scale .* 4\.5 bits per weight/);
  });

  it('matches a GGUF file of the same family by id and describes each of its formats', () => {
    const gguf = { id: 'qwen2.5-0.5b-instruct-q4_0.gguf', name: 'Qwen2.5 0.5B Instruct', quantization: 'mixed (q4_0, f16)', synthetic: false };
    const lines = describeDifferences(gguf, qwenWebLLM);
    expect(line(lines, 'Different models')).toBeUndefined();
    expect(line(lines, 'Weight values')).toBeUndefined();
    // Without the accuracy pass's record: what the kernels do where the device allows it.
    expect(line(lines, 'Weights')).toMatch(
      /Q4_0: .*; f16 weights, with activations rounded to int8 as llama\.cpp rounds them where the device has packed 8-bit dot products .*, to f16 for f16 weights, else f32, and its KV cache\. WebLLM/,
    );
  });

  it("states the activations and KV cache our run used, from the accuracy pass's record of the decode step", () => {
    const gguf = {
      id: 'qwen2.5-0.5b-instruct-q4_0.gguf',
      name: 'Qwen2.5 0.5B Instruct',
      quantization: 'mixed (q4_0, f16)',
      synthetic: false,
      kv_cache: 'f16' as const,
    };
    const linears = [
      { format: 'f16', precision: 'f16' as const, linears: 1 },
      { format: 'q4_0', precision: 'int8' as const, linears: 20 },
      { format: 'q8_0', precision: 'int8' as const, linears: 4 },
    ];
    const weights = line(describeDifferences(gguf, qwenWebLLM, linears), 'Weights')!;
    expect(weights).toMatch(
      /with activations f16 for f16 weights; int8 as llama\.cpp rounds them \(Q8_0 blocks of 32 for q4_0\/q8_0, Q8_K blocks of 256 for the K-quants\) for q4_0, q8_0 weights, and an f16 KV cache\. WebLLM/,
    );
    expect(weights.split('. WebLLM')[0]).not.toMatch(/f32/);
  });

  it('falls back to the bare code for a quantization it does not know', () => {
    const lines = describeDifferences(qwenPreset, { ...qwenWebLLM, quantization: 'q4f16_2' });
    expect(line(lines, 'Weights')).toMatch(/WebLLM MLC quantization q4f16_2\.$/);
  });
});

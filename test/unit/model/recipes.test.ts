import { describe, expect, it } from 'vitest';
import { findPreset } from '../../../src/model/catalog.ts';
import { plannedMatrices, presetChoice } from '../../../src/model/choice.ts';
import { GGMLType, ggmlTypeName } from '../../../src/model/gguf/types.ts';
import { weightBytes } from '../../../src/kernels/weights.ts';
import { parseQuantization, tensorTypeFor, useMoreBits, type Quantization } from '../../../src/model/recipes.ts';

/** Tensor types of a Llama-shaped model's matrices under `q`, counted by type name. */
function census(q: Quantization, nLayers: number, dim: number, hidden: number, hasOutput: boolean): Record<string, number> {
  const names = ['token_embd.weight', ...(hasOutput ? ['output.weight'] : [])];
  for (let l = 0; l < nLayers; l++)
    for (const r of ['attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down']) names.push(`blk.${l}.${r}.weight`);
  const out: Record<string, number> = {};
  for (const name of names) {
    const t = ggmlTypeName(tensorTypeFor(q, { name, dims: [name.includes('ffn_down') ? hidden : dim, 8], type: GGMLType.F16 }, { nLayers, hasOutput }))!;
    out[t] = (out[t] ?? 0) + 1;
  }
  return out;
}

describe("llama-quantize's mixes (llama_tensor_get_type)", () => {
  it('use_more_bits: first and last eighth, and every third layer between', () => {
    expect(Array.from({ length: 16 }, (_, i) => i).filter((i) => useMoreBits(i, 16))).toEqual([0, 1, 4, 7, 10, 13, 14, 15]);
    expect(Array.from({ length: 5 }, (_, i) => i).filter((i) => useMoreBits(i, 5))).toEqual([2, 4]);
  });

  // Llama-3.2-1B (16 layers, tied embeddings): llama.cpp's loader reports "q4_K: 96 tensors,
  // q6_K: 17 tensors" for the Q4_K_M file (8 attn_v + 8 ffn_down + the tied token_embd in Q6_K).
  it('Q4_K_M of a 16-layer tied Llama: 96 Q4_K and 17 Q6_K', () => {
    expect(census('q4_k_m', 16, 2048, 8192, false)).toEqual({ Q4_K: 96, Q6_K: 17 });
  });

  it('Q4_K_S: attn_v of the first 4 layers and ffn_down of the first eighth in Q5_K; output Q6_K', () => {
    // 4 attn_v + 2 ffn_down (16/8) in Q5_K, output in Q6_K, the other 113 − 7 in Q4_K.
    expect(census('q4_k_s', 16, 2048, 8192, true)).toEqual({ Q4_K: 107, Q5_K: 6, Q6_K: 1 });
  });

  it('Q5_K_M, Q6_K and Q8_0: the LM head in Q6_K (Q8_0 keeps Q8_0)', () => {
    expect(census('q5_k_m', 16, 2048, 8192, true)).toEqual({ Q5_K: 97, Q6_K: 17 }); // 114 matrices: untied output + token_embd
    expect(census('q6_k', 16, 2048, 8192, true)).toEqual({ Q6_K: 114 });
    expect(census('q8_0', 16, 2048, 8192, true)).toEqual({ Q8_0: 114 });
  });

  it('falls back where rows do not split into 256: Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, then F16', () => {
    const t = (q: Quantization, name: string, nx: number) =>
      ggmlTypeName(tensorTypeFor(q, { name, dims: [nx, 8], type: GGMLType.F32 }, { nLayers: 5, hasOutput: true }));
    expect(t('q4_k_m', 'blk.0.attn_q.weight', 64)).toBe('Q5_0');
    expect(t('q5_k_m', 'blk.0.attn_q.weight', 64)).toBe('Q5_1');
    expect(t('q6_k', 'blk.0.attn_q.weight', 64)).toBe('Q8_0');
    expect(t('q4_k_m', 'blk.2.attn_v.weight', 64)).toBe('Q8_0'); // use_more_bits → Q6_K → Q8_0
    expect(t('q4_k_m', 'output.weight', 64)).toBe('Q8_0');
    expect(t('q4_k_m', 'blk.0.ffn_down.weight', 172)).toBe('F16');
    // A plain legacy type's blocks do not fit either: F16, as llama-quantize writes it.
    expect(t('q4_0', 'blk.0.ffn_down.weight', 172)).toBe('F16');
    expect(t('q8_0', 'blk.0.ffn_down.weight', 172)).toBe('F16');
    expect(t('q4_k_m', 'blk.0.attn_norm.weight', 64)).toBe('F32');
  });

  it('parses names case-insensitively and refuses unknown ones with the list', () => {
    expect(parseQuantization('Q4_K_M')).toBe('q4_k_m');
    expect(() => parseQuantization('q3_k')).toThrow(/Unknown quantization "q3_k".*/);
  });
});

describe('synthetic presets under a mix', () => {
  it('llama-3.2-1b q4_k_m plans the real file’s types, so its bytes are the real file’s', () => {
    const plan = plannedMatrices(presetChoice('llama-3.2-1b', 'q4_k_m'));
    const count: Record<string, number> = {};
    for (const m of plan) count[m.format] = (count[m.format] ?? 0) + 1;
    expect(count).toEqual({ q4_k: 96, q6_k: 17 });
    const c = findPreset('llama-3.2-1b')!.config;
    const bytes = plan.reduce((n, m) => n + weightBytes(m.format, m.rows, m.cols), 0);
    // 128256·2048 Q6_K embedding + per layer: q, o (2048²), k, v (512·2048), gate, up, down (8192·2048).
    const q6 = (n: number) => (n / 256) * 210;
    const q4 = (n: number) => (n / 256) * 144;
    let want = q6(c.vocabSize * c.dim);
    for (let l = 0; l < 16; l++) {
      const more = useMoreBits(l, 16);
      want += 2 * q4(2048 * 2048) + q4(512 * 2048) + (more ? q6 : q4)(512 * 2048) + 2 * q4(8192 * 2048) + (more ? q6 : q4)(8192 * 2048);
    }
    expect(bytes).toBe(want);
  });
});

import { describe, expect, it } from 'vitest';
import { KNOWN_FILES, findKnownFile } from '../../../src/model/catalog.ts';

describe('the catalog of known GGUF files', () => {
  it('lists the everyday files by URL, each id unique, sizes and hashes well-formed or null (unknown until the header is read)', () => {
    for (const id of [
      'llama-3.2-1b-instruct-q4_k_m',
      'qwen2.5-0.5b-instruct-q4_k_m',
      'qwen3-0.6b-q8_0',
      'smollm2-360m-instruct-q8_0',
      'gemma-3-1b-it-q4_k_m',
    ]) {
      expect(findKnownFile(id), id).toBeDefined();
    }
    expect(new Set(KNOWN_FILES.map((f) => f.id)).size).toBe(KNOWN_FILES.length);
    for (const f of KNOWN_FILES) {
      expect(f.url).toMatch(/^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+\/resolve\/[\w.-]+\/[\w./-]+\.gguf$/);
      expect(f.size === null || (Number.isSafeInteger(f.size) && f.size > 0)).toBe(true);
      expect(f.sha256 === null || /^[0-9a-f]{64}$/.test(f.sha256)).toBe(true);
    }
  });
});

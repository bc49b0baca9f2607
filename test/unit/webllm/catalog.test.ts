import { readFileSync } from 'node:fs';
import type { ModelRecord } from '@mlc-ai/web-llm';
import { describe, expect, it } from 'vitest';
import {
  catalogEntry,
  matchingPreset,
  needsShaderF16,
  parseModelId,
  sameFamily,
  webllmCatalog,
  type CatalogCapabilities,
} from '../../../src/webllm/catalog.ts';
import { MODEL } from '../share/fixtures.ts';

const excerpt: { model_list: ModelRecord[] } = JSON.parse(readFileSync(new URL('./fixtures/model-list-excerpt.json', import.meta.url), 'utf8'));
const MiB = 2 ** 20;
/** A desktop GPU: shader-f16, 1 GiB bindings. */
const desktop: CatalogCapabilities = { shaderF16: true, limits: { maxStorageBufferBindingSize: 1024 * MiB } };
/** Chromium's SwiftShader / a WebGPU-compat device: no shader-f16, the 128 MiB default binding. */
const small: CatalogCapabilities = { shaderF16: false, limits: { maxStorageBufferBindingSize: 128 * MiB } };

const byId = (models: ReturnType<typeof webllmCatalog>) => new Map(models.map((m) => [m.id, m]));

describe('parseModelId', () => {
  it.each([
    ['Qwen2.5-0.5B-Instruct-q4f32_1-MLC', 'Qwen2.5-0.5B', 'q4f32_1'],
    ['gemma-2b-it-q4f32_1-MLC-1k', 'gemma-2b', 'q4f32_1'],
    ['TinyLlama-1.1B-Chat-v1.0-q4f32_1-MLC-1k', 'TinyLlama-1.1B-v1.0', 'q4f32_1'],
    ['Llama-2-7b-chat-hf-q4f16_1-MLC', 'Llama-2-7b', 'q4f16_1'],
    ['Ministral-3-3B-Instruct-2512-BF16-q4f32_1-MLC', 'Ministral-3-3B-2512-BF16', 'q4f32_1'],
    ['Llama-3.1-70B-Instruct-q3f16_1-MLC', 'Llama-3.1-70B', 'q3f16_1'],
    ['SmolLM2-135M-Instruct-q0f16-MLC', 'SmolLM2-135M', 'q0f16'],
  ])('%s → %s, %s', (id, family, quantization) => {
    expect(parseModelId(id)).toEqual({ family, quantization });
  });

  it('returns null for ids outside MLC naming', () => {
    expect(parseModelId('my-custom-model')).toBeNull();
    expect(parseModelId('Qwen2.5-0.5B-q4f32_1')).toBeNull();
  });
});

describe('needsShaderF16', () => {
  it('follows required_features and, where the list omits it, the f16 quantization code', () => {
    expect(needsShaderF16({ model_id: 'SmolLM2-360M-Instruct-q4f16_1-MLC', required_features: ['shader-f16'] })).toBe(true);
    expect(needsShaderF16({ model_id: 'Llama-3.2-1B-Instruct-q4f16_1-MLC' })).toBe(true);
    expect(needsShaderF16({ model_id: 'Qwen2.5-0.5B-Instruct-q0f16-MLC' })).toBe(true);
    expect(needsShaderF16({ model_id: 'Llama-3.2-1B-Instruct-q4f32_1-MLC' })).toBe(false);
    // "BF16" in the name is the source checkpoint's dtype, not the runtime's.
    expect(needsShaderF16({ model_id: 'Ministral-3-3B-Instruct-2512-BF16-q4f32_1-MLC' })).toBe(false);
  });
});

describe('webllmCatalog on the recorded excerpt', () => {
  it('keeps the list order and describes every record', () => {
    const models = webllmCatalog(excerpt.model_list, desktop);
    expect(models.map((m) => m.id)).toEqual(excerpt.model_list.map((r) => r.model_id));
    const qwen = byId(models).get('Qwen2.5-0.5B-Instruct-q4f32_1-MLC')!;
    expect(qwen).toEqual({ id: qwen.id, family: 'Qwen2.5-0.5B', quantization: 'q4f32_1', vramMB: 1060.2, lowResource: true, contextWindow: 4096 });
  });

  it('a desktop GPU runs everything but the embedding model', () => {
    const excluded = webllmCatalog(excerpt.model_list, desktop).filter((m) => m.code);
    expect(excluded.map((m) => [m.id, m.code])).toEqual([['snowflake-arctic-embed-s-q0f32-MLC-b4', 'model-unsupported']]);
  });

  it('without shader-f16 every f16 model is out, listed or not; small bindings exclude gemma-2b', () => {
    const models = byId(webllmCatalog(excerpt.model_list, small));
    for (const id of [
      'Llama-3.2-1B-Instruct-q4f16_1-MLC',
      'SmolLM2-360M-Instruct-q4f16_1-MLC',
      'Qwen2.5-0.5B-Instruct-q0f16-MLC',
      'Llama-3.1-70B-Instruct-q3f16_1-MLC',
    ]) {
      expect(models.get(id)!.code).toBe('feature-missing');
      expect(models.get(id)!.reason).toMatch(/shader-f16/);
    }
    const gemma = models.get('gemma-2b-it-q4f32_1-MLC-1k')!;
    expect(gemma.code).toBe('model-too-large');
    expect(gemma.reason).toBe('needs storage buffers of 250 MiB; this device binds at most 128 MiB');
    expect(models.get('Qwen2.5-0.5B-Instruct-q4f32_1-MLC')!.reason).toBeUndefined();
    expect(models.get('Phi-3.5-vision-instruct-q4f32_1-MLC')!.reason).toBeUndefined();
  });

  it('a VRAM budget excludes what WebLLM says needs more', () => {
    const models = byId(webllmCatalog(excerpt.model_list, desktop, { vramBudgetMB: 1100 }));
    expect(models.get('Qwen2.5-0.5B-Instruct-q4f32_1-MLC')!.code).toBeUndefined(); // 1060.2 MB
    expect(models.get('Llama-3.2-1B-Instruct-q4f32_1-MLC')!.code).toBe('model-too-large'); // 1128.82 MB
    expect(models.get('Llama-3.2-1B-Instruct-q4f32_1-MLC')!.reason).toBe('needs about 1129 MB of GPU memory; the budget is 1100 MB');
  });

  it('catalogEntry without capabilities runs only the device-independent checks', () => {
    const [f16, embed] = ['SmolLM2-360M-Instruct-q4f16_1-MLC', 'snowflake-arctic-embed-s-q0f32-MLC-b4'].map((id) =>
      excerpt.model_list.find((r) => r.model_id === id)!,
    );
    expect(catalogEntry(f16, null).code).toBeUndefined();
    expect(catalogEntry(embed, null).code).toBe('model-unsupported');
  });
});

describe('webllmCatalog on the real prebuiltAppConfig (0.2.86, imported in Node)', async () => {
  const { prebuiltAppConfig } = await import('@mlc-ai/web-llm');
  const list = prebuiltAppConfig.model_list;

  it('parses every model id', () => {
    const unparsed = webllmCatalog(list, desktop).filter((m) => m.quantization === 'unknown');
    expect(unparsed.map((m) => m.id)).toEqual([]);
  });

  it('leaves only f32 models to a device without shader-f16, and some of them', () => {
    const runnable = webllmCatalog(list, small).filter((m) => !m.code);
    expect(runnable.length).toBeGreaterThan(20);
    expect(runnable.every((m) => /f32/.test(m.quantization))).toBe(true);
    expect(runnable.map((m) => m.id)).toContain('Qwen2.5-0.5B-Instruct-q4f32_1-MLC');
  });

  it('excludes exactly the embedding models on a large desktop GPU', () => {
    const excluded = webllmCatalog(list, desktop).filter((m) => m.code);
    expect(excluded.length).toBeGreaterThan(0);
    expect(excluded.every((m) => m.id.startsWith('snowflake-arctic-embed'))).toBe(true);
  });
});

describe('matching a WebLLM model to tokenscope', () => {
  it('finds the preset of a family and recognises our models of it', () => {
    expect(matchingPreset('Qwen2.5-0.5B')?.id).toBe('qwen2.5-0.5b');
    expect(matchingPreset('SmolLM2-360M')?.id).toBe('smollm2-360m');
    expect(matchingPreset('Phi-3.5-mini')).toBeUndefined();
    expect(sameFamily(MODEL, 'Llama-3.2-1B')).toBe(true);
    expect(sameFamily({ id: 'qwen2.5-0.5b-instruct-q4_0.gguf', name: 'Qwen2.5 0.5B Instruct' }, 'Qwen2.5-0.5B')).toBe(true);
    expect(sameFamily(MODEL, 'Llama-3.2-3B')).toBe(false);
  });
});

/**
 * WebLLM's prebuilt models for the model picker. The adapter (and with it WebLLM's 6 MB runtime)
 * is imported only when this is called, so a visitor who never opens the WebLLM group loads none
 * of it (test/e2e/webllm-bundle.test.ts, test/e2e/page-webllm.test.ts).
 */
import type { Environment } from '../measure/schema.ts';
import { matchingPreset, type WebLLMModel } from '../webllm/catalog.ts';

/** A WebLLM model as the picker lists it: `reason` says why it cannot be chosen. */
export interface WebLLMChoice {
  id: string;
  label: string;
  reason: string | null;
}

/** Every prebuilt model, with why each one cannot run here (the device, or no preset of its family). */
export async function loadWebLLMChoices(env: Environment): Promise<WebLLMChoice[]> {
  const { listWebLLMModels } = await import('../webllm/adapter.ts');
  const caps = {
    shaderF16: env.features.includes('shader-f16') && !env.disabled_features.includes('shader-f16'),
    limits: { maxStorageBufferBindingSize: env.limits.maxStorageBufferBindingSize ?? 0 },
  };
  return (await listWebLLMModels(caps)).map((m: WebLLMModel) => ({
    id: m.id,
    label: `${m.id}${m.vramMB ? ` · ${(m.vramMB / 1024).toFixed(1)} GB` : ''}`,
    reason: m.reason ?? (matchingPreset(m.family) ? null : `no tokenscope preset of the ${m.family} family (its vocabulary sets the prompt ids)`),
  }));
}

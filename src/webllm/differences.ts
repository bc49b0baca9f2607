/**
 * What differs between a tokenscope run and a WebLLM run shown side by side, in plain language.
 * The WebLLM statements are about 0.2.86 as read from its source (lib/index.js) and MLC-LLM's
 * quantization registry (python/mlc_llm/quantization/quantization.py); ours from this repo.
 */
import type { LinearArithmetic } from '../measure/accuracy.ts';
import type { ModelInfo } from '../model/load.ts';
import type { WebLLMModel } from './catalog.ts';

/** MLC quantization codes in WebLLM's prebuilt list. */
const MLC_FORMATS: Record<string, string> = {
  q4f16_1:
    'q4f16_1 (MLC group quantization): 4-bit weights in groups of 32 with one f16 scale each, symmetric: w = (q − 7)·s with s = max|w| / 7, so 15 of the 16 codes are used; 4.5 bits per weight; embedding and LM head quantized too; f16 activations and KV cache',
  q4f32_1:
    'q4f32_1 (MLC group quantization): 4-bit weights in groups of 32 with one f32 scale each, symmetric: w = (q − 7)·s with s = max|w| / 7, so 15 of the 16 codes are used; 5 bits per weight; embedding and LM head quantized too; f32 activations and KV cache',
  q3f16_1:
    'q3f16_1 (MLC group quantization): 3-bit weights in groups of 40 with one f16 scale each, w = (q − 3)·s with s = max|w| / 3; 3.6 bits per weight; f16 activations and KV cache',
  q0f16: 'q0f16: unquantized f16 weights, f16 activations and KV cache',
  q0f32: 'q0f32: unquantized f32 weights, f32 activations and KV cache',
};

/** Our GPU weight formats (src/kernels/weights.ts); the activations and KV cache they run with: ourArithmetic. */
const OUR_FORMATS: Record<string, string> = {
  q4_0: 'GGUF Q4_0: blocks of 32 weights with one f16 scale each: w = (q − 8)·d with d = m / −8, m the signed weight of largest magnitude, so all 16 codes are used; 18 bytes per block, 4.5 bits per weight',
  q8_0: 'GGUF Q8_0: blocks of 32 int8 weights with one f16 scale each, w = q·d with d = max|w| / 127; 8.5 bits per weight',
  f16: 'f16 weights',
  f32: 'f32 weights',
};

/** Letters and digits only, so "qwen2.5-0.5b" and "Qwen2.5-0.5B" compare equal. */
const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

function ourFormat(quantization: string): string {
  const formats = quantization.match(/q4_0|q8_0|f16|f32/g) ?? [];
  const described = [...new Set(formats)].map((f) => OUR_FORMATS[f]);
  return described.length > 0 ? described.join('; ') : quantization;
}

const ROUNDING: Record<LinearArithmetic['precision'], string> = {
  int8: 'int8 as llama.cpp rounds them (Q8_0 blocks of 32 for q4_0/q8_0, Q8_K blocks of 256 for the K-quants)',
  f16: 'f16',
  f32: 'f32',
};

/**
 * The activations and KV cache our run used: per weight format from the accuracy pass's record of
 * the decode step (`linears`), else what the kernels do where the device allows it.
 */
function ourArithmetic(kvCache: ModelInfo['kv_cache'], linears: readonly LinearArithmetic[] | undefined): string {
  const kv = kvCache ? `an ${kvCache} KV cache` : 'its KV cache';
  if (!linears?.length) {
    return `with activations rounded to int8 as llama.cpp rounds them where the device has packed 8-bit dot products (Q8_0 blocks for q4_0/q8_0, Q8_K for the K-quants), to f16 for f16 weights, else f32, and ${kv}`;
  }
  const byPrecision = [...new Set(linears.map((l) => l.precision))].map(
    (p) => `${ROUNDING[p]} for ${[...new Set(linears.filter((l) => l.precision === p).map((l) => l.format))].join(', ')} weights`,
  );
  return `with activations ${byPrecision.join('; ')}, and ${kv}`;
}

/**
 * Plain-language differences between our model and the WebLLM model measured beside it; `linears`:
 * the precision each weight format's products ran in (the accuracy section's arithmetic), where measured.
 */
export function describeDifferences(
  ourModel: Pick<ModelInfo, 'id' | 'name' | 'quantization' | 'synthetic' | 'kv_cache'>,
  webllmModel: Pick<WebLLMModel, 'id' | 'family' | 'quantization'>,
  linears?: readonly LinearArithmetic[],
): string[] {
  const lines: string[] = [];
  const family = squash(webllmModel.family);
  if (!squash(ourModel.id).includes(family) && !squash(ourModel.name).includes(family)) {
    lines.push(
      `Different models: tokenscope runs ${ourModel.name}, WebLLM runs ${webllmModel.id}. Compare them per byte of weights read per token, not request for request.`,
    );
  }
  lines.push(
    'Kernels: tokenscope runs its own hand-written WGSL kernels (shaders/*.wgsl), chosen per device in one visible switch; WebLLM runs kernels that MLC-LLM generated and tuned with Apache TVM ahead of time, shipped as a WebAssembly model library that creates the WGSL pipelines, with a paged KV cache.',
  );
  lines.push(
    `Weights: tokenscope ${ourFormat(ourModel.quantization)}, ${ourArithmetic(ourModel.kv_cache, linears)}. WebLLM ${MLC_FORMATS[webllmModel.quantization] ?? `MLC quantization ${webllmModel.quantization}`}.`,
  );
  if (ourModel.synthetic) {
    lines.push(
      'Weight values: tokenscope’s preset runs synthetic weights of the real shape (speed only); WebLLM runs the published weights, so speeds compare but the generated text does not.',
    );
  }
  lines.push(
    'Sampling: both sample on the GPU. tokenscope runs an argmax kernel for greedy decoding; WebLLM 0.2.86 runs softmax with temperature, an argsort and top-p sampling as TVM kernels even for temperature 0 (clamped to 1e-6, which is greedy).',
  );
  lines.push(
    'Decode loop: WebLLM waits for every sampled token on the CPU (device.sync and a 4-byte copy) and submits the next step from there; in a chat completion it also detokenises the whole output after every token to stream text. tokenscope feeds the sampled token back on the GPU and keeps one decode step in flight.',
  );
  lines.push(
    'Tokenizer: tokenscope’s own TypeScript SentencePiece and byte-level BPE from the GGUF metadata; WebLLM’s HuggingFace tokenizers compiled to WebAssembly (@mlc-ai/web-tokenizers, bundled) from tokenizer.json, or SentencePiece from tokenizer.model. With token-id prompts neither is timed; a text prompt goes through WebLLM’s chat template, so its prompt tokens include the template.',
  );
  return lines;
}

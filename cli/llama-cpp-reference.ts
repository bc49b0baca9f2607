/**
 * `--agreement llama.cpp`: llama.cpp itself (node-llama-cpp's prebuilt CPU binary, never a GPU
 * build, never compiled here) as a second reference for the accuracy pass — the same file, the
 * same teacher-forced ids, its next-token distribution at every position. It runs as llama.cpp's
 * users run it: its default F16 KV cache and its own 8-bit rounding of activations for quantized
 * weights (Q8_0 blocks for Q4_0/Q8_0, Q8_K for the K-quants), so "llama.cpp vs the f32 reference"
 * is what llama.cpp's arithmetic costs, beside ours. Node only; node-llama-cpp is a devDependency
 * of this project, imported only when asked for.
 */
import { TokenscopeError } from '../src/errors.ts';
import type { SecondReference } from '../src/measure/accuracy.ts';

/** node-llama-cpp's version this project pins (package.json). */
export const NODE_LLAMA_CPP_VERSION = '3.21.1';

/** Log-probabilities below this (float32's smallest subnormal is e^−103.3) are read as this: a probability that underflowed. */
const LOG_FLOOR = -104;

export async function openLlamaCppReference(path: string): Promise<SecondReference> {
  let lib: typeof import('node-llama-cpp');
  try {
    lib = await import('node-llama-cpp');
  } catch (e) {
    throw new TokenscopeError(
      'feature-missing',
      `--agreement llama.cpp needs node-llama-cpp, which could not be loaded (${(e as Error).message.split('\n')[0]})`,
      `Install it with \`npm install\` (it is a devDependency, ${NODE_LLAMA_CPP_VERSION}), or drop --agreement.`,
    );
  }
  const llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error });
  let model: import('node-llama-cpp').LlamaModel;
  try {
    model = await llama.loadModel({ modelPath: path });
  } catch (e) {
    throw new TokenscopeError('model-unsupported', `llama.cpp could not load ${path}: ${(e as Error).message}`, 'Drop --agreement llama.cpp for this file.');
  }
  const version = `llama.cpp from node-llama-cpp ${NODE_LLAMA_CPP_VERSION} (prebuilt, CPU)`;
  return {
    name: 'llama.cpp',
    version,
    settings: 'CPU build, default F16 KV cache, flash attention off, its own 8-bit activation rounding',
    async logits(ids, vocabSize) {
      const context = await model.createContext({ contextSize: Math.max(ids.length, 16), batchSize: Math.max(ids.length, 16), flashAttention: false });
      try {
        const sequence = context.getSequence();
        type Item = Parameters<typeof sequence.controlledEvaluate>[0][number];
        const input: Item[] = ids.map((id) => [id as import('node-llama-cpp').Token, { generateNext: { probabilities: true, options: { temperature: 0 } } }]);
        const results = await sequence.controlledEvaluate(input);
        return results.map((r, pos) => {
          const probabilities = r?.next?.probabilities;
          if (!probabilities) throw new TokenscopeError('io', `llama.cpp returned no distribution at position ${pos}`, 'Drop --agreement llama.cpp.');
          // The greedy sampler keeps every token: probabilities are the softmax of the raw logits.
          const logProbs = new Float32Array(vocabSize).fill(LOG_FLOOR);
          for (const [token, p] of probabilities) if (token < vocabSize) logProbs[token] = Math.max(LOG_FLOOR, Math.log(p));
          return logProbs;
        });
      } finally {
        await context.dispose();
      }
    },
    async dispose() {
      await model.dispose();
    },
  };
}

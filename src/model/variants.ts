/**
 * The per-architecture choices of the forward pass, each computed on the host by one function:
 * RoPE's inverse frequencies, the sliding attention window, the embedding scale and the gate
 * activation, all read from the config (config.ts derives them per architecture). The kernels read
 * them as a table, a uniform or an override constant; the CPU reference reads the same functions.
 */
import type { GateActivation } from '../kernels/linear.ts';
import type { ModelConfig } from './config.ts';

/** freq_i = theta^(−2i/ropeDim) for i < ropeDim/2, rounded once to f32 (the GPU and the CPU read the same table). */
export function ropeFrequencies(ropeDim: number, theta: number): Float32Array<ArrayBuffer> {
  return Float32Array.from({ length: ropeDim / 2 }, (_, i) => Math.pow(theta, (-2 * i) / ropeDim));
}

/** Whether layer `l` attends through a sliding window (and uses ropeThetaSliding). */
export function isSlidingLayer(c: Pick<ModelConfig, 'slidingWindow' | 'slidingPattern'>, l: number): boolean {
  return c.slidingWindow > 0 && l % c.slidingPattern < c.slidingPattern - 1;
}

/**
 * The inverse RoPE frequencies of layer `l`, (ropeDim/2) values: pair i turns by pos · invFreq[i].
 * invFreq[i] = scale · base^(−2i/ropeDim) / factor[i], as ggml_rope_ext with freq_factors. The one
 * place the llama3 factors, linear scaling and Gemma's per-layer base enter RoPE (CPU and GPU).
 */
export function ropeInvFreq(
  c: Pick<ModelConfig, 'ropeDim' | 'ropeTheta' | 'ropeThetaSliding' | 'ropeFreqScale' | 'ropeFreqFactors' | 'slidingWindow' | 'slidingPattern'>,
  l: number,
): Float32Array<ArrayBuffer> {
  const sliding = isSlidingLayer(c, l);
  const base = sliding ? c.ropeThetaSliding : c.ropeTheta;
  const scale = sliding ? 1 : c.ropeFreqScale;
  return Float32Array.from({ length: c.ropeDim / 2 }, (_, i) => (scale * base ** (-(2 * i) / c.ropeDim)) / (c.ropeFreqFactors[i] ?? 1));
}

/** Keys layer `layer` attends to behind each position, itself included (0 = all). */
export function slidingWindow(config: Pick<ModelConfig, 'slidingWindow' | 'slidingPattern'>, layer: number): number {
  return isSlidingLayer(config, layer) ? config.slidingWindow : 0;
}

/** The factor the embedding gather multiplies by (1; Gemma: √dim). */
export function embeddingScale(config: Pick<ModelConfig, 'embedScale'>): number {
  return config.embedScale;
}

/** The gate|up activation (SiLU for Llama and Qwen; GELU-tanh for Gemma). */
export function gateActivation(config: Pick<ModelConfig, 'activation'>): GateActivation {
  return config.activation;
}

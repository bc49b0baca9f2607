/**
 * The per-architecture choices of the forward pass, each computed on the host by one function:
 * RoPE's inverse frequencies, the sliding attention window, the embedding scale and the gate
 * activation. A new architecture (Qwen3, Gemma 3, Llama 3.x rope scaling) changes these, not
 * the kernels, which read them as a table, a uniform or an override constant.
 */
import type { GateActivation } from '../kernels/linear.ts';
import type { ModelConfig } from './config.ts';

/** freq_i = theta^(−2i/ropeDim) for i < ropeDim/2, rounded once to f32 (the GPU and the CPU read the same table). */
export function ropeFrequencies(ropeDim: number, theta: number): Float32Array<ArrayBuffer> {
  return Float32Array.from({ length: ropeDim / 2 }, (_, i) => Math.pow(theta, (-2 * i) / ropeDim));
}

/** The inverse frequencies layer `layer` rotates q and k with, (ropeDim/2) f32. */
export function ropeInvFreq(config: Pick<ModelConfig, 'ropeDim' | 'ropeTheta'>, layer: number): Float32Array<ArrayBuffer> {
  void layer; // llama and qwen2 share one base across layers; Gemma 3's local layers will differ here
  return ropeFrequencies(config.ropeDim, config.ropeTheta);
}

/** Keys a layer attends to behind each position (0 = all: llama, qwen2). */
export function slidingWindow(config: ModelConfig, layer: number): number {
  void config;
  void layer;
  return 0;
}

/** The factor the embedding gather multiplies by (1; Gemma: √dim). */
export function embeddingScale(config: ModelConfig): number {
  void config;
  return 1;
}

/** The gate|up activation (SiLU for llama and qwen2; GELU-tanh for Gemma). */
export function gateActivation(config: ModelConfig): GateActivation {
  void config;
  return 'silu';
}

/**
 * The llama.cpp comparison the browser can run: llama.cpp's answers for a small-vocabulary tiny
 * Gemma 3 file, recorded in test/gpu/fixtures by a Node test (which re-checks them against
 * llama.cpp on every run), read by the GPU tests in Node and in Chromium.
 */
import type { TinyArch } from './tiny-models.ts';

export const FIXTURE_ARCH: TinyArch = 'gemma3';
/** 15 tokens: three times Gemma's tiny sliding window of 5, so the window and the global layer both matter. */
export const FIXTURE_PROMPT = [1, 300, 41, 260, 77, 290, 35, 270, 100, 310, 5, 288, 150, 299, 64];
export const FIXTURE_STEPS = 16;

export interface LlamaCppFixture {
  arch: TinyArch;
  prompt: number[];
  /** llama.cpp's log-softmax after the prompt, rounded to 7 significant digits. */
  logProbs: number[];
  /** llama.cpp's greedy tokens after the prompt. */
  tokens: number[];
}

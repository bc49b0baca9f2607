/**
 * What llama-bench's protocol runs (llama-bench-run.ts runs it): its settings, llama.cpp's
 * defaults and the list of tests they give. Pure: the page's setup form and the job's planning
 * read it without loading the engine.
 */
export interface LlamaBenchSettings {
  nPrompt: number;
  nGen: number;
  reps: number;
  warmup: number;
  seed: number;
  /** llama-bench's -p / -n / -d lists (CLI llama-bench mode); without them, pp`nPrompt` and tg`nGen` at depth 0. 0 skips a test. */
  nPrompts?: number[];
  nGens?: number[];
  depths?: number[];
  /** llama-bench's -pg pairs: a prompt of nPrompt tokens, then nGen generated ("pp512+tg128", tokens/s over both). */
  promptGens?: { nPrompt: number; nGen: number }[];
}

export interface LlamaBenchTestSpec {
  nPrompt: number;
  nGen: number;
  depth: number;
}

/** The tests llama-bench runs for its lists, in its order: per depth, every pp, every tg (0 skips), then every pp+tg. */
export function llamaBenchTests(s: LlamaBenchSettings): LlamaBenchTestSpec[] {
  const tests: LlamaBenchTestSpec[] = [];
  for (const depth of s.depths ?? [0]) {
    for (const nPrompt of s.nPrompts ?? [s.nPrompt]) if (nPrompt > 0) tests.push({ nPrompt, nGen: 0, depth });
    for (const nGen of s.nGens ?? [s.nGen]) if (nGen > 0) tests.push({ nPrompt: 0, nGen, depth });
    for (const pg of s.promptGens ?? []) tests.push({ ...pg, depth });
  }
  return tests;
}

export const LLAMA_BENCH_DEFAULTS: LlamaBenchSettings = { nPrompt: 512, nGen: 128, reps: 5, warmup: 1, seed: 42 };

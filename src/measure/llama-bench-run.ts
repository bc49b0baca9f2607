/**
 * llama-bench's single-stream protocol on our engine: `pp<n>` = n prompt tokens (seeded random
 * ids, BOS first) in one batched prefill, timed to the first token; `tg<n>` = n single-token
 * decode steps after a one-token prompt; `pp<p>+tg<n>` = both in one request, (p + n) tokens over
 * the whole time. One warm-up, then `reps` repetitions; the reported
 * value is mean ± sample std of per-repetition tokens/s. Differences from llama-bench: our
 * prefill also runs the LM head on its last row, and our decode keeps one step queued ahead of
 * the host instead of synchronising after each token.
 */
import type { Engine } from '../model/engine.ts';
import { generate } from '../model/generate.ts';
import type { ModelInfo } from '../model/load.ts';
import { randomPrompt } from './latency.ts';
import { e2elMs, llamaBenchRow, llamaBenchTestName, ttftMs, type LlamaBenchRow } from './metrics.ts';
import { throwIfCancelled } from './protocol.ts';
import { LLAMA_BENCH_DEFAULTS, llamaBenchTests, type LlamaBenchSettings } from './llama-bench-spec.ts';

/** llama-bench's model column, e.g. "llama 1.24B Q4_0 (synthetic)". */
export function llamaBenchModelName(info: ModelInfo): string {
  const p = info.parameters;
  const size = p >= 1e9 ? `${(p / 1e9).toFixed(2)}B` : p >= 1e6 ? `${(p / 1e6).toFixed(0)}M` : `${(p / 1e3).toFixed(0)}K`;
  return `${info.architecture} ${size} ${info.quantization.toUpperCase()}${info.synthetic ? ' (synthetic)' : ''}`;
}

export async function runLlamaBench(
  engine: Engine,
  info: ModelInfo,
  backend: string,
  settings: LlamaBenchSettings = LLAMA_BENCH_DEFAULTS,
  hooks: { signal?: AbortSignal; onProgress?: (step: string, fraction: number) => void } = {},
): Promise<LlamaBenchRow[]> {
  const c = engine.config;
  const tests = llamaBenchTests(settings);
  const total = tests.length * (settings.warmup + settings.reps);
  let done = 0;
  const model = llamaBenchModelName(info);
  const rows: LlamaBenchRow[] = [];
  for (const t of tests) {
    const test = llamaBenchTestName(t.nPrompt, t.nGen, t.depth);
    const values: number[] = [];
    for (let i = -settings.warmup; i < settings.reps; i++) {
      throwIfCancelled(hooks.signal);
      hooks.onProgress?.(`llama-bench ${test}${i < 0 ? ' warm-up' : ` ${i + 1}/${settings.reps}`}`, done++ / total);
      // The context is filled (untimed) before each repetition, as llama-bench does for -d.
      if (t.depth > 0) await generate(engine, randomPrompt(t.depth, c.vocabSize, c.bosId, settings.seed + 1000 + i), 1, { gpuTiming: 'off' });
      const startPos = t.depth;
      let v: number;
      if (t.nPrompt > 0) {
        const prompt = randomPrompt(t.nPrompt, c.vocabSize, c.bosId, settings.seed + i);
        // pp+tg: the prompt's token, then nGen decode steps; llama-bench divides both counts by the whole time.
        const g = await generate(engine, startPos > 0 ? prompt.slice(1).concat(prompt[1] ?? c.bosId) : prompt, 1 + t.nGen, { gpuTiming: 'off', startPos });
        const timing = { promptTokens: t.nPrompt, tSend: g.tSend, tTokens: g.tTokens };
        v = (t.nPrompt + t.nGen) / ((t.nGen > 0 ? e2elMs(timing)! : ttftMs(timing)!) / 1000);
      } else {
        const g = await generate(engine, [c.bosId], t.nGen + 1, { gpuTiming: 'off', startPos });
        const timing = { promptTokens: 1, tSend: g.tSend, tTokens: g.tTokens };
        v = t.nGen / ((e2elMs(timing)! - ttftMs(timing)!) / 1000);
      }
      if (i >= 0) values.push(v);
    }
    rows.push(llamaBenchRow(model, info.weight_bytes, info.parameters, backend, test, values));
  }
  return rows;
}

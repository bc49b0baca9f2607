/**
 * llama-bench's single-stream protocol on our engine: `pp<n>` = n prompt tokens (seeded random
 * ids, BOS first) in one batched prefill, timed to the first token; `tg<n>` = n single-token
 * decode steps after a one-token prompt. One warm-up, then `reps` repetitions; the reported
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

export interface LlamaBenchSettings {
  nPrompt: number;
  nGen: number;
  reps: number;
  warmup: number;
  seed: number;
}

export const LLAMA_BENCH_DEFAULTS: LlamaBenchSettings = { nPrompt: 512, nGen: 128, reps: 5, warmup: 1, seed: 42 };

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
  const total = 2 * (settings.warmup + settings.reps);
  let done = 0;
  const repeat = async (test: string, once: (rep: number) => Promise<number>) => {
    const values: number[] = [];
    for (let i = -settings.warmup; i < settings.reps; i++) {
      throwIfCancelled(hooks.signal);
      hooks.onProgress?.(`llama-bench ${test}${i < 0 ? ' warm-up' : ` ${i + 1}/${settings.reps}`}`, done++ / total);
      const v = await once(i);
      if (i >= 0) values.push(v);
    }
    return values;
  };
  const pp = await repeat(`pp${settings.nPrompt}`, async (rep) => {
    const g = await generate(engine, randomPrompt(settings.nPrompt, c.vocabSize, c.bosId, settings.seed + rep), 1, { gpuTiming: 'off' });
    return settings.nPrompt / (ttftMs({ promptTokens: settings.nPrompt, tSend: g.tSend, tTokens: g.tTokens })! / 1000);
  });
  const tg = await repeat(`tg${settings.nGen}`, async () => {
    const g = await generate(engine, [c.bosId], settings.nGen + 1, { gpuTiming: 'off' });
    const t = { promptTokens: 1, tSend: g.tSend, tTokens: g.tTokens };
    return settings.nGen / ((e2elMs(t)! - ttftMs(t)!) / 1000);
  });
  const model = llamaBenchModelName(info);
  return [
    llamaBenchRow(model, info.weight_bytes, info.parameters, backend, llamaBenchTestName(settings.nPrompt, 0), pp),
    llamaBenchRow(model, info.weight_bytes, info.parameters, backend, llamaBenchTestName(0, settings.nGen), tg),
  ];
}

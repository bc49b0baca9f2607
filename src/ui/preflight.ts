/**
 * Checks made before a run starts: do the settings fit the model's context (and the device)?
 * When they do not, the page says why and offers the nearest setup that does, instead of failing
 * after the roofs. Pure, unit-tested.
 */
import { findPreset } from '../../models/catalog.ts';
import type { RunSetup } from './setup.ts';

export interface Preflight {
  /** Why this setup cannot run, in one sentence. */
  problem: string;
  /** The nearest setup that runs, and a button label for it. */
  fix: { label: string; setup: RunSetup } | null;
}

/** The model's context length, when it is known before anything is downloaded (presets). */
export function knownContext(setup: RunSetup): { name: string; context: number } | null {
  const m = setup.model;
  if (m.kind !== 'preset') return null;
  const p = findPreset(m.id);
  return p ? { name: p.title, context: p.config.contextLength } : null;
}

/** Largest power of two ≤ n (n ≥ 1). */
const floorPow2 = (n: number) => 2 ** Math.floor(Math.log2(n));

/** Null when the setup fits; otherwise the problem and the nearest valid choice. */
export function preflight(setup: RunSetup): Preflight | null {
  if (setup.mode === 'roofs') return null;
  const known = knownContext(setup);
  if (!known) return null;
  const { name, context } = known;
  if (setup.mode === 'llama-bench') {
    const { nPrompt, nGen } = setup.llamaBench;
    if (nPrompt <= context && nGen + 1 <= context) return null;
    const pp = Math.min(nPrompt, context);
    const tg = Math.min(nGen, floorPow2(context - 1));
    return {
      problem: `llama-bench's pp${nPrompt} · tg${nGen} needs ${Math.max(nPrompt, nGen + 1)} positions; ${name} holds ${context}.`,
      fix: { label: `Use pp${pp} · tg${tg} instead`, setup: { ...setup, llamaBench: { nPrompt: pp, nGen: tg } } },
    };
  }
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    const longest = Math.max(...s.promptLengths);
    if (longest + s.gen - 1 <= context) return null;
    const gen = Math.min(s.gen, Math.max(1, context - Math.min(...s.promptLengths) + 1));
    const lengths = s.promptLengths.filter((p) => p + gen - 1 <= context);
    return {
      problem: `A ${longest}-token prompt plus ${s.gen} output tokens needs ${longest + s.gen - 1} positions; ${name} holds ${context}.`,
      fix: lengths.length ? { label: `Use prompts ${lengths.join(', ')} with ${gen} output tokens`, setup: { ...setup, sweep: { ...s, promptLengths: lengths, gen } } } : null,
    };
  }
  const prompt = setup.serve.prompt.kind === 'fixed' ? setup.serve.prompt.tokens : setup.serve.prompt.max;
  const output = setup.serve.output.kind === 'fixed' ? setup.serve.output.tokens : setup.serve.output.max;
  if (prompt + output - 1 <= context) return null;
  const p = Math.min(prompt, floorPow2(context / 2));
  const o = Math.min(output, context - p + 1);
  return {
    problem: `Requests of ${prompt} prompt + ${output} output tokens need ${prompt + output - 1} positions; ${name} holds ${context}.`,
    fix: { label: `Use ${p} prompt + ${o} output tokens`, setup: { ...setup, serve: { ...setup.serve, prompt: { kind: 'fixed', tokens: p }, output: { kind: 'fixed', tokens: o } } } },
  };
}

/**
 * Checks made before a run starts: do the settings fit the model's context (and the device)?
 * When they do not, the page says why and offers the nearest setup that does, instead of failing
 * after the roofs. Pure, unit-tested.
 */
import { findPreset } from '../model/catalog.ts';
import { plannedMatrices, presetChoice } from '../model/choice.ts';
import { costOfStep, weightPlan } from '../model/step.ts';
import { prefillRows } from '../kernels/rows.ts';
import { FORM_LABELS, plannedWorkOf, type RunSetup } from './setup.ts';
import { arrivalLimitProblem, plannedTokens, workProblem, type SettingName } from '../measure/validate.ts';

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

/**
 * Null when the setup fits; otherwise the problem and the nearest valid choice. Work past the bound
 * that the CLI runs only with --yes (validate.ts's workProblem) is offered as "Run it anyway".
 */
export function preflight(setup: RunSetup): Preflight | null {
  if (setup.mode === 'roofs') return null;
  const work = plannedWorkOf(setup);
  const label = (n: SettingName) => FORM_LABELS[n] ?? n;
  const never = arrivalLimitProblem(work, label);
  if (never) return { problem: `${never}.`, fix: null };
  const tokens = plannedTokens(work);
  const tooMuch = tokens > (setup.confirmedWork ?? -1) ? workProblem(work, 'run it anyway', label) : null;
  if (tooMuch) return { problem: `${tooMuch}.`, fix: { label: 'Run it anyway', setup: { ...setup, confirmedWork: tokens } } };
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
      fix: lengths.length
        ? { label: `Use prompts ${lengths.join(', ')} with ${gen} output tokens`, setup: { ...setup, sweep: { ...s, promptLengths: lengths, gen } } }
        : null,
    };
  }
  const prompt = setup.serve.prompt.kind === 'fixed' ? setup.serve.prompt.tokens : setup.serve.prompt.max;
  const output = setup.serve.output.kind === 'fixed' ? setup.serve.output.tokens : setup.serve.output.max;
  if (prompt + output - 1 <= context) return null;
  const p = Math.min(prompt, floorPow2(context / 2));
  const o = Math.min(output, context - p + 1);
  return {
    problem: `Requests of ${prompt} prompt + ${output} output tokens need ${prompt + output - 1} positions; ${name} holds ${context}.`,
    fix: {
      label: `Use ${p} prompt + ${o} output tokens`,
      setup: { ...setup, serve: { ...setup.serve, prompt: { kind: 'fixed', tokens: p }, output: { kind: 'fixed', tokens: o } } },
    },
  };
}

/** The phases a setup runs, in order (the progress says "step k of n"). */
export function phasePlan(setup: RunSetup): string[] {
  if (setup.mode === 'roofs') return ['roofs'];
  const work = setup.mode === 'latency' ? 'latency' : setup.mode === 'serve' ? 'serve' : 'llama-bench';
  return ['roofs', 'model', work];
}

/** Which step of the plan a progress label ("latency: prompt 16 …") belongs to, 1-based; 0 when unknown. */
export function stepOf(plan: readonly string[], label: string): number {
  const phase = label.split(':')[0].trim();
  return plan.indexOf(phase === 'WebLLM model' || phase === 'WebLLM latency' ? 'latency' : phase) + 1;
}

/**
 * Seconds the roofs take, as observed on this kind of device (the roofs repeat each measurement
 * to a minimum duration, so this is their protocol's length, not a guess from the first percent).
 */
export function roofsSeconds(cpuLike: boolean, quick: boolean): number {
  if (quick) return cpuLike ? 15 : 3;
  return cpuLike ? 45 : 8;
}

/**
 * The fastest the model phases can go on these roofs (their roofline floor), seconds, from
 * step.ts's costOfStep: prefill of P tokens ≥ max(FLOPs ÷ matmul roof, bytes ÷ bandwidth), one
 * decode step ≥ max(bytes ÷ bandwidth, FLOPs ÷ FMA peak). Null when the model's size is unknown before
 * a download. Overhead adds to it (on CPU adapters many times over), so the page says "at least".
 */
export function modelFloorSeconds(setup: RunSetup, roofs: { bandwidthGBps: number; computeGflops: number; matmulGflops: number }): number | null {
  const m = setup.model;
  if (setup.mode === 'roofs' || m.kind !== 'preset') return null;
  const p = findPreset(m.id);
  if (!p) return null;
  // step.ts's count over the matrices this preset's quantization gives (a llama-quantize mix included).
  const weights = weightPlan(p.config, plannedMatrices(presetChoice(m.id, m.quant)));
  const cost = (P: number) => costOfStep(p.config, weights, { rows: prefillRows(0, 0, P), headRows: 1, kv: 'f32' }).total;
  const prefill = (P: number) => Math.max(cost(P).flops / (roofs.matmulGflops * 1e9), cost(P).bytes / (roofs.bandwidthGBps * 1e9));
  const decode = cost(1);
  const step = Math.max(decode.bytes / (roofs.bandwidthGBps * 1e9), decode.flops / (roofs.computeGflops * 1e9));
  if (setup.mode === 'latency') {
    const s = setup.sweep;
    return s.promptLengths.reduce((t, P) => t + (s.reps + 1) * (prefill(P) + (s.gen - 1) * step), 0);
  }
  if (setup.mode === 'llama-bench') return 6 * (prefill(setup.llamaBench.nPrompt) + setup.llamaBench.nGen * step);
  const prompt = setup.serve.prompt.kind === 'fixed' ? setup.serve.prompt.tokens : setup.serve.prompt.max;
  const output = setup.serve.output.kind === 'fixed' ? setup.serve.output.tokens : setup.serve.output.max;
  return setup.serve.requests * (prefill(prompt) + output * step);
}

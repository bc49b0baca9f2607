/**
 * WebLLM's latency sweep under our protocol (src/measure/latency.ts): for each prompt length,
 * `warmup` untimed full-length requests, then `reps` timed ones, a cool-down between requests,
 * and in the page only while the tab is visible. Prompts are exact-length token ids through the
 * adapter's token path — the same seeded ids our engine gets (sweepPrompt) — so no tokenizer or
 * chat template is timed. Rows and stats are the same pure functions of the records as ours
 * (latency-summary.ts); beside every request, our clock against WebLLM's own statistics.
 *
 * WebLLM has no cost model. The rows' FLOP- and byte-derived fields and the roofline verdicts
 * come from the cost model of a matching tokenscope model when the caller has one — an estimate
 * of WebLLM's work, since its kernels and quantization differ — and are null otherwise;
 * `cost_source` says which.
 */
import type { Agrees } from '../measure/schema-kit.ts';
import type { WebLLMSectionData } from '../measure/sections/webllm.ts';
import { TokenscopeError } from '../errors.ts';
import type { WebLLMAdapter } from '../webllm/adapter.ts';
import type { WebLLMModel } from '../webllm/catalog.ts';
import { compareSample, toRequestRecord, type SampleComparison, type WebLLMRequestRecord } from '../webllm/mapping.ts';
import { protocolRequest, sweepPrompt, type LatencyHooks, type LatencySection, type LatencySettings } from '../measure/latency.ts';
import { latencyRow, phaseVerdicts, timingRow, type LatencyRow, type LengthCosts, type Roofs, type TimingRow } from '../measure/latency-summary.ts';

/** Our sweep's protocol settings, and what the random prompt ids need. */
export interface WebLLMSettings extends Pick<LatencySettings, 'prompt_lengths' | 'output_tokens' | 'reps' | 'warmup' | 'cooldown_ms' | 'seed'> {
  /**
   * Random prompt ids are drawn below this, and `bos_id` leads each prompt: the matching tokenscope
   * preset's (WebLLM 0.2.86 exposes no tokenizer). Only the count of ids is timed.
   */
  vocab_size: number;
  bos_id: number;
}

/** The cost model of the tokenscope model that stands in for WebLLM's. */
export interface WebLLMCostModel {
  model_id: string;
  quantization: string;
  /** FLOPs and bytes at each prompt length of the sweep (our kernels' cost models). */
  costsAt: (promptTokens: number) => LengthCosts;
  roofs: Roofs;
}

/** The fields of a row only a cost model gives (and the GPU clock, which WebLLM does not expose). */
type CostKey = Exclude<keyof LatencyRow, keyof TimingRow | 'decode_of_read_beside'>;

/** A row like ours; the cost-derived fields are null without a cost model. */
export type WebLLMRow = TimingRow & { [K in CostKey]: LatencyRow[K] | null };

const COST_KEYS: readonly CostKey[] = [
  'prefill_flops',
  'prefill_gflops',
  'prefill_of_matmul_roof',
  'decode_bytes_per_token',
  'decode_bandwidth_gbps',
  'decode_efficiency',
  'decode_ceiling_tokens_per_s',
  'gpu_prefill_ms',
  'gpu_decode_ms',
  'host_overhead_ms',
  'overhead_vs_floor_ms',
];

/** Our clock against WebLLM's own statistics for one timed request. */
export interface RequestComparison extends SampleComparison {
  prompt_tokens: number;
  rep: number;
}

export interface WebLLMSection {
  model: Pick<WebLLMModel, 'id' | 'family' | 'quantization' | 'vramMB'>;
  settings: WebLLMSettings;
  /** Whose cost model the FLOP- and byte-derived numbers are (an estimate); null when there was none. */
  cost_source: { model_id: string; quantization: string } | null;
  requests: WebLLMRequestRecord[];
  rows: WebLLMRow[];
  /** Roofline verdicts per prompt length, on the estimated costs; empty without a cost model. */
  verdicts: LatencySection['verdicts'];
  comparisons: RequestComparison[];
  /** Timed requests on which our clock and WebLLM's disagree by more than 15% on some metric. */
  flagged_count: number;
}

export interface WebLLMHooks extends Omit<LatencyHooks, 'onRequest'> {
  /** Called with the section so far after each timed request and each finished row. */
  onRequest?: (section: WebLLMSection) => void;
}

function uncostedRow(timing: TimingRow): WebLLMRow {
  return { ...timing, ...(Object.fromEntries(COST_KEYS.map((k) => [k, null])) as { [K in CostKey]: null }) };
}

export async function runWebLLMLatency(
  adapter: WebLLMAdapter,
  settings: WebLLMSettings,
  hooks: WebLLMHooks = {},
  costModel?: WebLLMCostModel,
): Promise<WebLLMSection> {
  const { model } = adapter;
  const gen = settings.output_tokens;
  for (const P of settings.prompt_lengths) {
    if (P < 1 || (model.contextWindow !== null && P + gen - 1 > model.contextWindow)) {
      throw new TokenscopeError(
        'bad-input',
        `Prompt length ${P} with ${gen} output tokens does not fit ${model.id}'s ${model.contextWindow}-position context.`,
        'Use shorter prompt lengths or fewer output tokens.',
      );
    }
  }
  const section: WebLLMSection = {
    model: { id: model.id, family: model.family, quantization: model.quantization, vramMB: model.vramMB },
    settings,
    cost_source: costModel ? { model_id: costModel.model_id, quantization: costModel.quantization } : null,
    requests: [],
    rows: [],
    verdicts: [],
    comparisons: [],
    flagged_count: 0,
  };
  const total = settings.prompt_lengths.length * (settings.warmup + settings.reps);
  let done = 0;
  const run = async (P: number, rep: number, what: string) => {
    hooks.onProgress?.(what, done / total);
    const promptTokenIds = sweepPrompt(P, rep, settings.seed, settings.vocab_size, settings.bos_id);
    const outcome = await protocolRequest(hooks, settings.cooldown_ms, () => adapter.runRequest({ promptTokenIds, outputTokens: gen, signal: hooks.signal }));
    done++;
    return outcome;
  };

  for (const P of settings.prompt_lengths) {
    for (let w = 0; w < settings.warmup; w++) await run(P, -1 - w, `warm-up, prompt ${P}`);
    for (let rep = 0; rep < settings.reps; rep++) {
      const { value: sample, disturbed } = await run(P, rep, `prompt ${P} tokens, repetition ${rep + 1}/${settings.reps}`);
      const comparison = compareSample(sample);
      section.requests.push(toRequestRecord(sample, rep, disturbed));
      section.comparisons.push({ prompt_tokens: P, rep, ...comparison });
      if (comparison.flagged.length > 0) section.flagged_count++;
      hooks.onRequest?.(section);
    }
    const requests = section.requests.filter((r) => r.prompt_tokens === P);
    if (costModel) {
      const costs = costModel.costsAt(P);
      const row = latencyRow(requests, costs, costModel.roofs);
      section.rows.push(row);
      section.verdicts.push({ prompt_tokens: P, ...phaseVerdicts(row, costs, costModel.roofs) });
    } else {
      section.rows.push(uncostedRow(timingRow(requests)));
    }
    hooks.onRequest?.(section);
  }
  hooks.onProgress?.('summarising', 1);
  return section;
}

// The result's declaration of this section (measure/sections/webllm.ts) and these interfaces agree.
const webllmAgrees: Agrees<WebLLMSection, WebLLMSectionData> = true;
void webllmAgrees;

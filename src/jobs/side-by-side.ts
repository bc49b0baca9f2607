/**
 * Our engine and WebLLM on the same device, the same protocol and the same prompt lengths: the
 * medians of both by prompt length with WebLLM ÷ tokenscope ratios, what differs between the two
 * runs in plain language, and both engines' phases on the roofline. Pure: a function of the two
 * sections.
 */
import type { Agrees } from '../measure/schema-kit.ts';
import type { SideBySideData } from '../measure/sections/webllm.ts';
import type { ModelInfo } from '../model/load.ts';
import { describeDifferences } from '../webllm/differences.ts';
import type { LinearArithmetic } from '../measure/accuracy.ts';
import type { ComparedMetric, ComparedMetrics } from '../webllm/mapping.ts';
import type { LatencySection } from '../measure/latency.ts';
import type { LatencyReport } from '../measure/schema.ts';
import type { TimingRow } from '../measure/latency-summary.ts';
import type { WebLLMSection } from './webllm-run.ts';

export interface SideBySideRow {
  prompt_tokens: number;
  /** Medians of each engine's row: TTFT, TPOT, prompt tokens / TTFT, 1 / TPOT. */
  tokenscope: ComparedMetrics;
  webllm: ComparedMetrics;
  /**
   * WebLLM ÷ tokenscope per metric, null where either side has none: above 1 on a time
   * (TTFT, TPOT) WebLLM is slower, above 1 on a rate (tokens/s) it is faster.
   */
  ratio: Record<ComparedMetric, number | null>;
}

/** One engine's phase at one prompt length on the roofline. */
export interface RooflinePoint {
  engine: 'tokenscope' | 'webllm';
  prompt_tokens: number;
  phase: 'prefill' | 'decode';
  /** FLOP per byte of the cost model. */
  intensity: number;
  gflops: number;
  gbps: number;
  /**
   * True for WebLLM's points: its FLOPs and bytes are our matching model's cost model (WebLLM
   * reports none), divided by WebLLM's measured times — an estimate.
   */
  estimate: boolean;
}

export interface SideBySide {
  tokenscope_model: string;
  webllm_model: string;
  rows: SideBySideRow[];
  differences: string[];
  points: RooflinePoint[];
}

const METRICS: readonly ComparedMetric[] = ['ttft_ms', 'tpot_ms', 'prefill_tokens_per_s', 'decode_tokens_per_s'];

function medians(row: TimingRow): ComparedMetrics {
  return {
    ttft_ms: row.ttft.p50,
    tpot_ms: row.tpot?.p50 ?? null,
    prefill_tokens_per_s: row.prefill_tokens_per_s,
    decode_tokens_per_s: row.decode_tokens_per_s,
  };
}

function pointsOf(engine: RooflinePoint['engine'], verdicts: LatencySection['verdicts']): RooflinePoint[] {
  return verdicts.flatMap(({ prompt_tokens, prefill, decode }) =>
    [['prefill', prefill] as const, ['decode', decode] as const].flatMap(([phase, v]) =>
      v
        ? [
            {
              engine,
              prompt_tokens,
              phase,
              intensity: v.intensity,
              gflops: v.achievedFlopsPerS / 1e9,
              gbps: v.achievedBytesPerS / 1e9,
              estimate: engine === 'webllm',
            },
          ]
        : [],
    ),
  );
}

export function sideBySide(ours: { latency: LatencyReport; model: ModelInfo; linears?: readonly LinearArithmetic[] }, webllm: WebLLMSection): SideBySide {
  const rows = ours.latency.rows.flatMap((row): SideBySideRow[] => {
    const theirs = webllm.rows.find((r) => r.prompt_tokens === row.prompt_tokens);
    if (!theirs) return [];
    const a = medians(row);
    const b = medians(theirs);
    const ratioOf = (x: number | null, y: number | null) => (x !== null && y !== null && x > 0 ? y / x : null);
    const ratio = Object.fromEntries(METRICS.map((m) => [m, ratioOf(a[m], b[m])])) as SideBySideRow['ratio'];
    return [{ prompt_tokens: row.prompt_tokens, tokenscope: a, webllm: b, ratio }];
  });
  return {
    tokenscope_model: ours.model.id,
    webllm_model: webllm.model.id,
    rows,
    differences: describeDifferences(ours.model, webllm.model, ours.linears),
    points: [...pointsOf('tokenscope', ours.latency.verdicts ?? []), ...pointsOf('webllm', webllm.verdicts)],
  };
}

// The result's declaration of this section (measure/sections/webllm.ts) and these interfaces agree.
const sideBySideAgrees: Agrees<SideBySide, SideBySideData> = true;
void sideBySideAgrees;

/**
 * vLLM `bench serve --save-result`'s file for a serve run: its top-level keys (date, backend,
 * model_id, tokenizer_id, num_prompts, request_rate, burstiness, max_concurrency), then the
 * benchmark result with its metric keys — the mean/median/std and the chosen percentiles of the
 * chosen metrics only, as vLLM writes them — and its file name pattern. Without --save-detailed
 * the per-request arrays are left out, as vLLM leaves them out.
 */
import type { BenchResult } from '../src/measure/schema.ts';
import { percentileKey, type LatencyMetric } from '../src/measure/metrics.ts';

/** Our name in vLLM's `backend` key and file-name label. */
export const VLLM_LABEL = 'tokenscope';
/** What vLLM drops unless --save-detailed (generated_texts: we keep no text). */
const DETAILED = ['input_lens', 'output_lens', 'ttfts', 'itls', 'errors'] as const;
const ALL_METRICS: readonly LatencyMetric[] = ['ttft', 'tpot', 'itl', 'e2el'];

export interface VllmSaveOptions {
  /** What --model named (vLLM's model_id); its last path segment goes into the file name. */
  modelId: string;
  /** --max-concurrency / --max-batch as given; null when not given (vLLM's None). */
  maxConcurrency: number | null;
  detailed: boolean;
}

/** Python's str(float): 2 → "2.0", 2.5 → "2.5", Infinity → "inf". */
function pythonFloat(x: number): string {
  if (x === Infinity) return 'inf';
  return Number.isInteger(x) ? `${x}.0` : String(x);
}

/** strftime("%Y%m%d-%H%M%S") of an ISO time, in local time as vLLM's datetime.now(). */
export function vllmDate(iso: string): string {
  const d = new Date(iso);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${two(d.getMonth() + 1)}${two(d.getDate())}-${two(d.getHours())}${two(d.getMinutes())}${two(d.getSeconds())}`;
}

/** vLLM's default name: "{label}-{rate}qps[-concurrency{N}]-{model}-{date}.json". */
export function vllmResultFileName(result: BenchResult, options: VllmSaveOptions): string {
  const rate = result.serve?.settings?.rate ?? null;
  const concurrency = options.maxConcurrency === null ? '' : `-concurrency${options.maxConcurrency}`;
  const model =
    options.modelId
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() || 'model';
  return `${VLLM_LABEL}-${pythonFloat(rate ?? Infinity)}qps${concurrency}-${model}-${vllmDate(result.created_at)}.json`;
}

/** The JSON object vLLM would save for this serve run; null when the result has no serve run. */
export function vllmResultJson(result: BenchResult, options: VllmSaveOptions): Record<string, unknown> | null {
  const run = result.serve?.run;
  const settings = result.serve?.settings;
  if (!run) return null;
  const r = run.result as unknown as Record<string, unknown>;
  const metrics = settings?.percentile_metrics ?? ALL_METRICS;
  const percentiles = settings?.metric_percentiles ?? [90, 95, 99];
  const out: Record<string, unknown> = {
    date: vllmDate(result.created_at),
    backend: VLLM_LABEL,
    label: null,
    model_id: options.modelId,
    tokenizer_id: options.modelId,
    num_prompts: settings?.requests ?? run.result.completed + run.result.failed,
    request_rate: settings?.rate == null || settings.rate === Infinity ? 'inf' : settings.rate,
    burstiness: settings?.burstiness ?? 1,
    max_concurrency: options.maxConcurrency,
  };
  for (const key of [
    'duration',
    'completed',
    'failed',
    'total_input_tokens',
    'total_output_tokens',
    'request_throughput',
    'request_goodput',
    'output_throughput',
    'total_token_throughput',
  ]) {
    out[key] = r[key];
  }
  if (options.detailed) for (const key of DETAILED) out[key] = r[key];
  for (const metric of metrics) {
    for (const stat of ['mean', 'median', 'std']) out[`${stat}_${metric}_ms`] = r[`${stat}_${metric}_ms`];
    for (const p of percentiles) {
      const key = percentileKey(p, metric);
      if (r[key] !== undefined) out[key] = r[key];
    }
  }
  return out;
}

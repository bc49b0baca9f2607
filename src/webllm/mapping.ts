/**
 * From what the WebLLM adapter recorded (our host-clock timestamps plus WebLLM's own report,
 * both kept raw) to our result schema: a RequestRecord like our engine's, and the side-by-side
 * of our timing and WebLLM's. Pure; every formula is the one in src/measure/metrics.ts.
 *
 * Chunks and tokens. A streamed chat completion yields one chunk per decode step, except that
 * WebLLM holds back a chunk whose text would end inside a UTF-8 character and sends it merged
 * with the next one, so a chunk can carry several tokens. The true count comes from
 * `usage.completion_tokens`. A token counts as available when the chunk carrying it arrived, so a
 * chunk of k tokens gives k equal timestamps: one long gap and k − 1 gaps of 0. Which chunks
 * merged is not visible, so the N − K tokens beyond the K chunks take the last chunk's
 * timestamp; the pooled ITL values (a multiset) and TTFT, E2EL and TPOT are the same wherever
 * the merged tokens sit. TTFT is the first chunk's arrival: if the first token was held back,
 * that is one decode step late, as for any streaming client (vLLM's TTFT is the same).
 */
import type { CompletionUsage } from '@mlc-ai/web-llm';
import type { RequestRecord } from '../measure/latency-summary.ts';
import { decodeTokensPerS, prefillTokensPerS, tpotMs, ttftMs, type RequestTiming } from '../measure/metrics.ts';
import { TokenscopeError } from '../errors.ts';

/** One WebLLM request as the adapter recorded it. Times are performance.now() ms. */
export interface WebLLMSample {
  model_id: string;
  /**
   * 'tokens': exact prompt ids through `forwardTokensAndSample`, one call (and timestamp) per
   * output token; 'chat': one streamed `chat.completions.create`, one timestamp per chunk.
   */
  path: 'tokens' | 'chat';
  /** Just before the request was issued. */
  t_send: number;
  /** When each output token ('tokens') or each content chunk ('chat') reached our code. */
  t_chunks: number[];
  /** Exact ids for 'tokens'; `usage.prompt_tokens` (chat template included) for 'chat'. */
  prompt_tokens: number;
  /** The requested count for 'tokens'; `usage.completion_tokens` for 'chat'. */
  output_tokens: number;
  /** 'chat': the usage chunk verbatim; `usage.extra` is WebLLM's own timing. */
  usage: CompletionUsage | null;
  /** 'tokens': `engine.runtimeStatsText()` after the request, verbatim. */
  runtime_stats: string | null;
}

/** A WebLLM request in our engine's stored shape (no GPU clock: WebLLM exposes none). */
export interface WebLLMRequestRecord extends RequestRecord {
  engine: 'webllm';
  model_id: string;
  path: WebLLMSample['path'];
  /** Timestamps the token times come from; fewer than output_tokens when chunks merged tokens. */
  chunks: number;
}

/** The per-request numbers both sides report; null where undefined (e.g. TPOT of one token). */
export interface ComparedMetrics {
  ttft_ms: number | null;
  tpot_ms: number | null;
  prefill_tokens_per_s: number | null;
  decode_tokens_per_s: number | null;
}
export type ComparedMetric = keyof ComparedMetrics;

export interface SampleComparison {
  /** tokenscope's host clock around WebLLM's calls. */
  ours: ComparedMetrics;
  /** What WebLLM itself reported (usage.extra, or runtimeStatsText on the token path). */
  webllm: ComparedMetrics;
  /** (ours − webllm) / webllm per metric both sides define. */
  disagreement: Partial<Record<ComparedMetric, number>>;
  /** Metrics whose |disagreement| exceeds the threshold. */
  flagged: ComparedMetric[];
}

/** Above this relative difference our clock and WebLLM's are said to disagree. */
export const DISAGREEMENT_THRESHOLD = 0.15;

const METRICS: readonly ComparedMetric[] = ['ttft_ms', 'tpot_ms', 'prefill_tokens_per_s', 'decode_tokens_per_s'];

function invalid(sample: WebLLMSample, why: string): TokenscopeError {
  return new TokenscopeError('bad-input', `WebLLM sample of ${sample.model_id}: ${why}`, 'Record it again with the WebLLM adapter.');
}

/** Per-token availability times (see the file comment for chunks that carry several tokens). */
export function tokenTimes(sample: WebLLMSample): number[] {
  const chunks = sample.t_chunks;
  const n = sample.output_tokens;
  if (chunks.length > n) throw invalid(sample, `${chunks.length} timestamps for ${n} output tokens`);
  if (n > 0 && chunks.length === 0) throw invalid(sample, `${n} output tokens but no timestamps`);
  if (chunks.some((t, i) => t < (i === 0 ? sample.t_send : chunks[i - 1]))) throw invalid(sample, 'timestamps go backwards');
  return [...chunks, ...new Array<number>(n - chunks.length).fill(chunks[chunks.length - 1])];
}

export function timingOfSample(sample: WebLLMSample): RequestTiming {
  return { promptTokens: sample.prompt_tokens, tSend: sample.t_send, tTokens: tokenTimes(sample) };
}

export function toRequestRecord(sample: WebLLMSample, rep: number, disturbed: boolean): WebLLMRequestRecord {
  const timing = timingOfSample(sample);
  return {
    engine: 'webllm',
    model_id: sample.model_id,
    path: sample.path,
    chunks: sample.t_chunks.length,
    prompt_tokens: sample.prompt_tokens,
    output_tokens: sample.output_tokens,
    rep,
    token_ms: timing.tTokens.map((t) => t - timing.tSend),
    gpu_prefill_ms: null,
    gpu_decode_ms: null,
    disturbed,
  };
}

const finite = (x: number | undefined): number | null => (x !== undefined && Number.isFinite(x) ? x : null);
const positive = (x: number | undefined): number | null => (x !== undefined && Number.isFinite(x) && x > 0 ? x : null);

/** Our metrics of the request, by the definitions in src/measure/metrics.ts. */
export function ourMetrics(sample: WebLLMSample): ComparedMetrics {
  const timing = timingOfSample(sample);
  return {
    ttft_ms: finite(ttftMs(timing)),
    tpot_ms: finite(tpotMs(timing)),
    prefill_tokens_per_s: finite(prefillTokensPerS(timing)),
    decode_tokens_per_s: finite(decodeTokensPerS(timing)),
  };
}

/**
 * "prefill: 1234.5678 tokens/sec, decoding: 56.7890 tokens/sec" — WebLLM 0.2.86's
 * runtimeStatsText(); NaN (no decode step yet) reads null.
 */
export function parseRuntimeStats(text: string): { prefill_tokens_per_s: number | null; decode_tokens_per_s: number | null } {
  const m = /prefill:\s*([-\d.eE+]+|NaN|Infinity)\s*tokens\/sec,\s*decoding:\s*([-\d.eE+]+|NaN|Infinity)\s*tokens\/sec/.exec(text);
  if (!m)
    throw new TokenscopeError(
      'bad-input',
      `Unrecognised WebLLM runtime stats: "${text}"`,
      'Expected "prefill: X tokens/sec, decoding: Y tokens/sec" (WebLLM 0.2.86).',
    );
  return { prefill_tokens_per_s: positive(Number(m[1])), decode_tokens_per_s: positive(Number(m[2])) };
}

/**
 * WebLLM's own numbers in our units. usage.extra: time_to_first_token_s is its prefill time
 * (tokenizing the templated prompt, the forward pass and sampling the first token);
 * time_per_output_token_s its decode time / decode steps (N_out − 1); both exclude the
 * per-token detokenisation and streaming around them. runtimeStatsText (token path) gives
 * only rates: TTFT = prompt tokens / prefill rate, TPOT = 1 / decode rate.
 */
export function webllmMetrics(sample: WebLLMSample): ComparedMetrics {
  const decodes = sample.output_tokens > 1;
  if (sample.usage) {
    const x = sample.usage.extra;
    return {
      ttft_ms: positive(x.time_to_first_token_s * 1000),
      tpot_ms: decodes ? positive(x.time_per_output_token_s * 1000) : null,
      prefill_tokens_per_s: positive(x.prefill_tokens_per_s),
      decode_tokens_per_s: decodes ? positive(x.decode_tokens_per_s) : null,
    };
  }
  if (sample.runtime_stats !== null) {
    const rates = parseRuntimeStats(sample.runtime_stats);
    const decode = decodes ? rates.decode_tokens_per_s : null;
    return {
      ttft_ms: rates.prefill_tokens_per_s !== null ? (sample.prompt_tokens / rates.prefill_tokens_per_s) * 1000 : null,
      tpot_ms: decode !== null ? 1000 / decode : null,
      prefill_tokens_per_s: rates.prefill_tokens_per_s,
      decode_tokens_per_s: decode,
    };
  }
  throw invalid(sample, 'neither usage nor runtime stats were recorded');
}

/** Our clock beside WebLLM's, with every metric that differs by more than `threshold` flagged. */
export function compareSample(sample: WebLLMSample, threshold = DISAGREEMENT_THRESHOLD): SampleComparison {
  const ours = ourMetrics(sample);
  const webllm = webllmMetrics(sample);
  const disagreement: Partial<Record<ComparedMetric, number>> = {};
  for (const metric of METRICS) {
    const a = ours[metric];
    const b = webllm[metric];
    if (a !== null && b !== null) disagreement[metric] = (a - b) / b;
  }
  const flagged = METRICS.filter((m) => Math.abs(disagreement[m] ?? 0) > threshold);
  return { ours, webllm, disagreement, flagged };
}

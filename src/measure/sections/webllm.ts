/** The `webllm` section (jobs/webllm-run.ts) and `side_by_side` (jobs/side-by-side.ts). */
import { array, bool, nullable, object, oneOf, record, str, type Infer } from '../schema-kit.ts';
import { costRowShape, requestShape, sweepSettingsShape, timingRowShape, verdictsSchema } from './latency.ts';
import { num } from '../schema-kit.ts';
import { count, gbps, gflops, intensity, MAX_NAME, MAX_REQUESTS, MAX_ROWS, MAX_SENTENCE, signedRatio, tokenId, tokensPerS } from './units.ts';

const COMPARED_METRICS = ['ttft_ms', 'tpot_ms', 'prefill_tokens_per_s', 'decode_tokens_per_s'] as const;
const name = () => str(MAX_NAME);

/** The per-request numbers both engines report; null where undefined (e.g. TPOT of one token). */
const comparedSchema = object({
  ttft_ms: nullable(num(0, 1e7)),
  tpot_ms: nullable(num(0, 1e7)),
  prefill_tokens_per_s: nullable(tokensPerS()),
  decode_tokens_per_s: nullable(tokensPerS()),
});

const costless = Object.fromEntries(Object.entries(costRowShape).map(([k, s]) => [k, nullable(s)])) as {
  [K in keyof typeof costRowShape]: ReturnType<typeof nullable<Infer<(typeof costRowShape)[K]> & {}>>;
};

export const webllmSchema = object({
  model: object({ id: name(), family: name(), quantization: name(), vramMB: num(0, 1e9) }),
  settings: object({ ...sweepSettingsShape, vocab_size: tokenId(), bos_id: tokenId() }),
  cost_source: nullable(object({ model_id: name(), quantization: name() })).describe('Whose cost model the FLOP- and byte-derived numbers are (an estimate).'),
  requests: array(
    object({ ...requestShape, engine: oneOf(['webllm'] as const), model_id: name(), path: oneOf(['tokens', 'chat'] as const), chunks: count() }),
    MAX_REQUESTS,
  ),
  rows: array(object({ ...timingRowShape, ...costless }), MAX_ROWS).describe('Rows like ours; the cost-derived fields are null without a cost model.'),
  verdicts: verdictsSchema,
  comparisons: array(
    object({
      prompt_tokens: count(),
      rep: count(),
      ours: comparedSchema,
      webllm: comparedSchema,
      disagreement: record(signedRatio(), { keys: COMPARED_METRICS, maxKeys: COMPARED_METRICS.length }),
      flagged: array(oneOf(COMPARED_METRICS), COMPARED_METRICS.length),
    }),
    MAX_REQUESTS,
  ),
  flagged_count: count(),
});
export type WebLLMSectionData = Infer<typeof webllmSchema>;

export const sideBySideSchema = object({
  tokenscope_model: name(),
  webllm_model: name(),
  rows: array(
    object({
      prompt_tokens: count(),
      tokenscope: comparedSchema,
      webllm: comparedSchema,
      ratio: object({
        ttft_ms: nullable(num(0, 1e6)),
        tpot_ms: nullable(num(0, 1e6)),
        prefill_tokens_per_s: nullable(num(0, 1e6)),
        decode_tokens_per_s: nullable(num(0, 1e6)),
      }),
    }),
    MAX_ROWS,
  ),
  differences: array(str(MAX_SENTENCE), MAX_ROWS),
  points: array(
    object({
      engine: oneOf(['tokenscope', 'webllm'] as const),
      prompt_tokens: count(),
      phase: oneOf(['prefill', 'decode'] as const),
      intensity: intensity(),
      gflops: gflops(),
      gbps: gbps(),
      estimate: bool(),
    }),
    4 * MAX_ROWS,
  ),
});
export type SideBySideData = Infer<typeof sideBySideSchema>;

/**
 * The `webllm` section (jobs/webllm-run.ts) and `side_by_side` (jobs/side-by-side.ts); the text
 * report prints the side-by-side in WebLLM's block.
 */
import { fixedOrDash, pctOrDash, table } from '../format.ts';
import type { BenchResult } from '../schema.ts';
import { array, bool, nullable, object, oneOf, record, str, type Infer } from '../schema-kit.ts';
import type { SectionModule } from '../section.ts';
import { costRowShape, requestShape, sweepSettingsShape, timingCells, timingRowShape, verdictsSchema } from './latency.ts';
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

/** Flagged requests listed one per line; the rest are counted. */
const FLAGGED_SHOWN = 8;
const ratio = (x: number | null) => (x === null ? '—' : `×${x.toFixed(2)}`);
const signedPct = (x: number | undefined) => (x === undefined ? '—' : `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)}%`);

/** WebLLM's rows (our protocol and clock), where WebLLM's own statistics disagree, and the side-by-side. */
function formatWebLLM(w: WebLLMSectionData, r: BenchResult): string {
  if (!w.rows) return '';
  const rows = w.rows.map((row) => [
    ...timingCells(row),
    row.decode_tokens_per_s === null ? '—' : row.decode_tokens_per_s.toFixed(1),
    row.decode_bandwidth_gbps === null ? '—' : row.decode_bandwidth_gbps.toFixed(2),
    pctOrDash(row.decode_efficiency),
  ]);
  const cost = w.cost_source;
  const out = [
    `WebLLM ${w.model.id} (${w.model.quantization}; ~${Math.ceil(w.model.vramMB)} MB GPU memory by WebLLM's estimate), latency by prompt length (host clock, token-id prompts, our protocol):`,
    table(
      ['prompt', 'out', 'n', 'TTFT p50', 'TTFT p99', 'TPOT p50', 'TPOT p99', 'prefill tok/s', 'decode tok/s', 'decode GB/s', 'of read roof'],
      rows,
      rows[0]?.map(() => true),
    ),
    cost
      ? `decode GB/s is an estimate: bytes per token from tokenscope's cost model of ${cost.model_id} (${cost.quantization}); WebLLM's kernels and ${w.model.quantization} weights move other bytes.`
      : 'WebLLM reports no bytes or FLOPs and no tokenscope model of its family ran in this job, so the byte-derived columns are empty.',
    '',
    w.flagged_count === 0
      ? `WebLLM's own statistics agree with our clock within 15% on all ${w.comparisons.length} requests.`
      : `WebLLM's own statistics disagree with our clock by more than 15% on ${w.flagged_count} of ${w.comparisons.length} requests (ours vs WebLLM's):`,
  ];
  const flagged = w.comparisons.filter((c) => c.flagged.length > 0);
  for (const c of flagged.slice(0, FLAGGED_SHOWN)) {
    out.push(
      `  prompt ${c.prompt_tokens}, repetition ${c.rep + 1}: ${c.flagged.map((m) => `${m} ${fixedOrDash(c.ours[m])} vs ${fixedOrDash(c.webllm[m])} (${signedPct(c.disagreement[m])})`).join('; ')}`,
    );
  }
  if (flagged.length > FLAGGED_SHOWN) out.push(`  … and ${flagged.length - FLAGGED_SHOWN} more (all in the JSON's webllm.comparisons).`);
  const s = r.side_by_side;
  if (s) {
    out.push('', `Side by side, tokenscope ${s.tokenscope_model} vs WebLLM ${s.webllm_model} (medians; × = WebLLM ÷ tokenscope):`);
    out.push(
      table(
        ['prompt', 'TTFT ms', 'WebLLM', '×', 'TPOT ms', 'WebLLM', '×', 'prefill tok/s', 'WebLLM', '×', 'decode tok/s', 'WebLLM', '×'],
        s.rows.map((x) => [
          String(x.prompt_tokens),
          ...(['ttft_ms', 'tpot_ms', 'prefill_tokens_per_s', 'decode_tokens_per_s'] as const).flatMap((m) => [
            fixedOrDash(x.tokenscope[m]),
            fixedOrDash(x.webllm[m]),
            ratio(x.ratio[m]),
          ]),
        ]),
        new Array(13).fill(true),
      ),
    );
    const decode = s.points.filter((p) => p.phase === 'decode');
    if (decode.length) {
      out.push('', "Decode on the roofline (WebLLM's bytes and FLOPs estimated from tokenscope's cost model):");
      out.push(
        table(
          ['engine', 'prompt', 'FLOP/byte', 'GFLOP/s', 'GB/s'],
          decode.map((p) => [
            p.estimate ? `${p.engine} (est.)` : p.engine,
            String(p.prompt_tokens),
            p.intensity.toFixed(2),
            p.gflops.toFixed(2),
            p.gbps.toFixed(2),
          ]),
          [false, true, true, true, true],
        ),
      );
    }
    out.push('', 'What differs between the two runs:', ...s.differences.map((d) => `  - ${d}`));
  }
  return out.join('\n');
}

export const webllmSection = { schema: webllmSchema, trim: null, compare: null, csv: null, report: formatWebLLM } satisfies SectionModule<'webllm'>;

export const sideBySideSection = {
  schema: sideBySideSchema,
  trim: null,
  compare: null,
  csv: null,
  report: { in: 'webllm' },
} satisfies SectionModule<'side_by_side'>;

/**
 * The `accuracy` section (measure/accuracy-run.ts, whose interfaces must agree): the engine's
 * next-token distributions against the f32 CPU reference on the same weights over a fixed,
 * teacher-forced sequence — or why nothing was measured.
 */
import type { AccuracySummary } from '../accuracy.ts';
import type { AccuracyMeasurement, AccuracyResult, AccuracySkipped } from '../accuracy-run.ts';
import { table } from '../format.ts';
import { compareMetrics, PER_TOKEN_NOTE, type Metric, type SectionModule } from '../section.ts';
import { array, either, int, num, nullable, object, oneOf, optional, str, type Agrees, type Infer } from '../schema-kit.ts';
import { count, fraction, MAX_NAME, MAX_SENTENCE, MAX_TOKENS, ms, seed, tokenId } from './units.ts';

/** A KL divergence in nats (0 for the same distributions; a few nats for unrelated ones). */
const nats = () => num(0, 1e6);

/** An AccuracySummary: positions, KLD mean and p99, top-1 agreement, first disagreement. */
const summarySchema = () =>
  object({
    positions: count(),
    kld_mean: nats(),
    kld_p99: nats(),
    top1_agreement: fraction(),
    first_disagreement: nullable(int(0, MAX_TOKENS)),
  });

const agreementSchema = object({
  with: oneOf(['llama.cpp'] as const).describe('The second reference (--agreement llama.cpp).'),
  version: str(MAX_SENTENCE),
  settings: str(MAX_SENTENCE).describe('How it ran: build, KV cache type, its activation rounding.'),
  against_reference: summarySchema().describe('KL(f32 reference ‖ it) and top-1 agreement: what its own arithmetic costs.'),
  engine_against_it: summarySchema().describe('KL(it ‖ engine) and top-1 agreement: how far the engine lies from it.'),
  wall_ms: ms(),
});

const measuredSchema = object({
  reference: oneOf(['cpu-f32'] as const).describe('The reference: the same weights dequantized to f32, every sum in float64 (model/reference.ts).'),
  sequence: object({ seed: seed(), token_ids: array(tokenId(), MAX_TOKENS) }).describe('BOS, then seeded ordinary token ids.'),
  positions: count(),
  kld_mean: nats().describe('Mean over positions of KL(reference ‖ engine) over the softmax of the logits, float64, nats.'),
  kld_p99: nats().describe("99th percentile (numpy's linear) of the per-position KL divergences."),
  top1_agreement: fraction().describe("Share of positions whose top-1 token is the reference's."),
  first_disagreement: nullable(int(0, MAX_TOKENS)).describe('First position (0-based) whose top-1 token differs; null when none does.'),
  kld_per_position: optional(array(nats(), MAX_TOKENS)),
  arithmetic: object({
    linears: array(object({ format: str(MAX_NAME), precision: oneOf(['int8', 'f16', 'f32'] as const), linears: count() }), 64).describe(
      "One decode step's linear dispatches by weight format and the precision X was rounded to.",
    ),
    kv_cache: oneOf(['f16', 'f32'] as const),
  }),
  wall_ms: ms().describe('The whole pass: reading the reference weights, its forward passes, the engine steps and logits readbacks.'),
  reference_load_ms: ms(),
  reference_ms: ms(),
  engine_ms: ms(),
  reference_thread: optional(oneOf(['worker', 'main'] as const)).describe(
    "Where the reference ran: a page's worker, its passes overlapping the engine's steps, or the calling thread (Node).",
  ),
  agreement: optional(agreementSchema),
});
const skippedSchema = object({ skipped: str(MAX_SENTENCE).describe('Why nothing was measured.') });

export const accuracySchema = either((v) => (typeof v === 'object' && v !== null && 'skipped' in v ? 'b' : 'a'), measuredSchema, skippedSchema);
export type AccuracySection = Infer<typeof accuracySchema>;

const measuredAgrees: Agrees<Infer<typeof measuredSchema>, AccuracyMeasurement> = true;
const skippedAgrees: Agrees<Infer<typeof skippedSchema>, AccuracySkipped> = true;
void [measuredAgrees, skippedAgrees];

export function isMeasured(a: AccuracyResult): a is AccuracyMeasurement {
  return !('skipped' in a);
}

/** KLD in the form llama-perplexity prints it: 3 significant digits, exponent below 0.001. */
export function formatKld(x: number): string {
  return x === 0 ? '0' : x < 1e-3 ? x.toExponential(2) : x.toPrecision(3);
}

/** "q4_0 int8 ×16, f32 f32 ×5; KV cache f16". */
export function formatArithmetic(a: AccuracyMeasurement['arithmetic']): string {
  return `${a.linears.map((l) => `${l.format} weights × ${l.precision} activations (${l.linears} linears)`).join(', ')}; KV cache ${a.kv_cache}`;
}

function formatAccuracy(a: AccuracySection): string {
  if (!isMeasured(a)) return `Accuracy: not measured — ${a.skipped}.`;
  return [
    `Accuracy against the CPU reference (same weights, f32, sums in float64) over ${a.positions} teacher-forced positions (seed ${a.sequence.seed}):`,
    table(
      ['KLD mean', 'KLD p99', 'same top-1', 'first disagreement'],
      [
        [
          formatKld(a.kld_mean),
          formatKld(a.kld_p99),
          `${(a.top1_agreement * 100).toFixed(1)}%`,
          a.first_disagreement === null ? 'none' : `position ${a.first_disagreement}`,
        ],
      ],
      [true, true, true, true],
    ),
    `Arithmetic: ${formatArithmetic(a.arithmetic)}.`,
    `Cost: ${a.wall_ms.toFixed(0)} ms (reference weights ${a.reference_load_ms.toFixed(0)} ms, reference ${a.reference_ms.toFixed(0)} ms, engine ${a.engine_ms.toFixed(0)} ms)${referenceWhere(a)}.`,
    ...(a.agreement ? ['', formatAgreement(a)] : []),
  ].join('\n');
}

/** Where the reference ran, as the cost line's tail. */
function referenceWhere(a: AccuracyMeasurement): string {
  if (a.reference_thread === 'worker') return "; the reference ran in a worker, beside the engine's steps";
  return a.reference_thread === 'main' ? '; the reference ran between the engine steps' : '';
}

/** The same positions three ways: the engine and llama.cpp each against the f32 reference, and the engine against llama.cpp. */
function formatAgreement(a: AccuracyMeasurement): string {
  const g = a.agreement!;
  const row = (what: string, s: AccuracySummary) => [
    what,
    formatKld(s.kld_mean),
    formatKld(s.kld_p99),
    `${(s.top1_agreement * 100).toFixed(1)}%`,
    s.first_disagreement === null ? 'none' : `position ${s.first_disagreement}`,
  ];
  return [
    `Agreement with ${g.version} — ${g.settings}:`,
    table(
      ['', 'KLD mean', 'KLD p99', 'same top-1', 'first disagreement'],
      [row('tokenscope vs f32 reference', a), row(`${g.with} vs f32 reference`, g.against_reference), row(`tokenscope vs ${g.with}`, g.engine_against_it)],
      [false, true, true, true, true],
    ),
    `Each row is KL(the side after "vs" ‖ the side before it): the side after "vs" weighs the terms. ${g.with} ran the ${a.positions} positions in ${g.wall_ms.toFixed(0)} ms.`,
  ].join('\n');
}

const METRICS: Metric<AccuracySection>[] = [
  { key: 'kld_mean', metric: 'mean KLD vs the f32 reference', unit: 'nats', direction: 'lower-is-better', value: (a) => (isMeasured(a) ? a.kld_mean : null) },
  { key: 'kld_p99', metric: 'p99 KLD vs the f32 reference', unit: 'nats', direction: 'lower-is-better', value: (a) => (isMeasured(a) ? a.kld_p99 : null) },
  {
    key: 'top1_agreement',
    metric: 'same top-1 as the reference',
    unit: 'share',
    direction: 'higher-is-better',
    value: (a) => (isMeasured(a) ? a.top1_agreement : null),
  },
];

export const accuracySection = {
  schema: accuracySchema,
  trim: {
    'per-token': {
      note: PER_TOKEN_NOTE,
      trim: (a) => {
        if (!isMeasured(a) || !a.kld_per_position) return null;
        const { kld_per_position: _dropped, ...kept } = a;
        return kept;
      },
    },
  },
  compare: { title: 'Accuracy', rows: (a, b) => compareMetrics(METRICS, a, b) },
  csv: {
    header: ['kld_mean', 'kld_p99', 'top1_agreement', 'first_disagreement', 'positions', 'skipped'],
    rows: (a) => [
      isMeasured(a) ? [a.kld_mean, a.kld_p99, a.top1_agreement, a.first_disagreement, a.positions, null] : [null, null, null, null, null, a.skipped],
    ],
  },
  report: formatAccuracy,
} satisfies SectionModule<'accuracy'>;

/**
 * The verdict card's accuracy box: its big figure and the sentence under it — what the engine's
 * arithmetic cost against the f32 reference — or why nothing was measured.
 */
export function accuracyHeadline(a: AccuracySection): { figure: string; words: string; detail?: string; agreement?: string } {
  if (!isMeasured(a)) return { figure: '—', words: `accuracy not measured: ${a.skipped}` };
  // The card is one narrow box: formats grouped by precision ("q4_k, q6_k × int8"), details below it.
  const precisions = [...new Set(a.arithmetic.linears.filter((l) => l.precision !== 'f32').map((l) => l.precision))];
  const lowered = precisions.map(
    (p) =>
      `${a.arithmetic.linears
        .filter((l) => l.precision === p)
        .map((l) => l.format)
        .join(', ')} × ${p}`,
  );
  const kernels = lowered.length ? `the fast kernels (${lowered.join('; ')}; ${a.arithmetic.kv_cache} KV)` : `f32 arithmetic (${a.arithmetic.kv_cache} KV)`;
  const parted = a.first_disagreement === null ? 'never parts from the reference' : `first parts from the reference at position ${a.first_disagreement}`;
  return {
    figure: `KLD ${formatKld(a.kld_mean)}`,
    words: `what ${kernels} cost in accuracy: mean KL from the f32 reference; top-1 the same ${(a.top1_agreement * 100).toFixed(1)}%`,
    detail: `Accuracy over ${a.positions} teacher-forced positions: KLD p99 ${formatKld(a.kld_p99)}; greedy decoding ${parted}. The pass took ${(a.wall_ms / 1000).toFixed(1)} s${referenceWhere(a)}.`,
    ...(a.agreement ? { agreement: agreementWords(a.agreement) } : {}),
  };
}

/** The second reference in one sentence: what its own arithmetic costs, and how far ours lies from it. */
function agreementWords(g: NonNullable<AccuracyMeasurement['agreement']>): string {
  const parted = (s: AccuracySummary) => (s.first_disagreement === null ? 'never parts' : `first parts at position ${s.first_disagreement}`);
  return `Against ${g.version} on the same file: its own arithmetic lies KLD ${formatKld(g.against_reference.kld_mean)} from the f32 reference (${parted(g.against_reference)}); ours lies ${formatKld(g.engine_against_it.kld_mean)} from it (same top-1 ${(g.engine_against_it.top1_agreement * 100).toFixed(1)}%, ${parted(g.engine_against_it)}).`;
}

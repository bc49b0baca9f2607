/** The `llama_bench` section: llama-bench's table rows (measure/metrics.ts LlamaBenchRow). */
import { formatLlamaBenchTable, type LlamaBenchRow } from '../metrics.ts';
import type { SectionModule } from '../section.ts';
import { array, int, num, object, str, type Agrees, type Infer } from '../schema-kit.ts';
import { bytes, MAX_NAME, MAX_ROWS, tokensPerS } from './units.ts';

const rowSchema = object({
  model: str(MAX_NAME),
  sizeBytes: bytes(),
  params: num(0, 1e14),
  backend: str(MAX_NAME),
  ngl: int(-1, 100_000).describe("GPU layers; llama-bench's default −1 means all."),
  test: str(MAX_NAME).describe('pp512, tg128, pp512+tg128 or "… @ d4096".'),
  meanTokensPerS: tokensPerS(),
  stdTokensPerS: tokensPerS(),
  samples: array(tokensPerS(), MAX_ROWS),
});
export const llamaBenchSchema = array(rowSchema, MAX_ROWS);

// The row's `test` is a template-literal type in metrics.ts; the result holds any string.
const rowAgrees: Agrees<Omit<Infer<typeof rowSchema>, 'test'>, Omit<LlamaBenchRow, 'test'>> = true;
void rowAgrees;

export const llamaBenchSection = {
  schema: llamaBenchSchema,
  trim: null,
  compare: null,
  csv: null,
  report: (rows) =>
    rows.length
      ? `llama-bench (pp: prompt tokens/s; tg: generated tokens/s; mean ± sample std of ${rows[0].samples.length} repetitions):\n${formatLlamaBenchTable(rows)}`
      : '',
} satisfies SectionModule<'llama_bench'>;

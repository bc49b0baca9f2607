/** The `generation` section: a prompt's greedy continuation (jobs/job.ts). */
import type { SectionModule } from '../section.ts';
import { array, nullable, num, object, optional, str, type Infer } from '../schema-kit.ts';
import { MAX_SENTENCE, MAX_TEXT, MAX_TOKENS, tokenId } from './units.ts';

export const generationSchema = object({
  prompt_token_ids: array(tokenId(), MAX_TOKENS),
  token_ids: array(tokenId(), MAX_TOKENS),
  text: nullable(str(MAX_TEXT)).describe('null when the model has no tokenizer (synthetic weights).'),
  note: optional(str(MAX_SENTENCE)),
  timing: optional(
    object({
      ttft_ms: num(0, 1e9).describe('Send to the first token, host clock (cold: this run has no warm-up).'),
      e2el_ms: num(0, 1e9).describe('Send to the last token.'),
      decode_tokens_per_s: nullable(num(0, 1e9)).describe('Tokens after the first ÷ the time after the first; null for one token.'),
    }),
  ).describe('How long the generation took (absent in older results).'),
});
export type GenerationSection = Infer<typeof generationSchema>;

export const generationSection = {
  schema: generationSchema,
  trim: null,
  compare: null,
  csv: null,
  report: (g) => {
    const body = g.text !== null ? g.text : `token ids: ${g.token_ids.join(' ')}`;
    const t = g.timing;
    const stats = t
      ? `TTFT ${t.ttft_ms.toFixed(1)} ms · ${t.decode_tokens_per_s === null ? 'no decode rate (one token)' : `${t.decode_tokens_per_s.toFixed(1)} tok/s decode`} · ${g.token_ids.length} tokens in ${t.e2el_ms.toFixed(0)} ms`
      : null;
    return [
      `Generated ${g.token_ids.length} tokens from a ${g.prompt_token_ids.length}-token prompt${g.note ? ` (${g.note})` : ''}:`,
      body,
      ...(stats ? ['', stats] : []),
    ].join('\n');
  },
} satisfies SectionModule<'generation'>;

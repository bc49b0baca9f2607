/** The `generation` section: a prompt's greedy continuation (jobs/job.ts). */
import type { SectionModule } from '../section.ts';
import { array, nullable, object, optional, str, type Infer } from '../schema-kit.ts';
import { MAX_SENTENCE, MAX_TEXT, MAX_TOKENS, tokenId } from './units.ts';

export const generationSchema = object({
  prompt_token_ids: array(tokenId(), MAX_TOKENS),
  token_ids: array(tokenId(), MAX_TOKENS),
  text: nullable(str(MAX_TEXT)).describe('null when the model has no tokenizer (synthetic weights).'),
  note: optional(str(MAX_SENTENCE)),
});
export type GenerationSection = Infer<typeof generationSchema>;

export const generationSection = {
  schema: generationSchema,
  trim: null,
  compare: null,
  csv: null,
  report: (g) => {
    const body = g.text !== null ? g.text : `token ids: ${g.token_ids.join(' ')}`;
    return [`Generated ${g.token_ids.length} tokens from a ${g.prompt_token_ids.length}-token prompt${g.note ? ` (${g.note})` : ''}:`, body].join('\n');
  },
} satisfies SectionModule<'generation'>;

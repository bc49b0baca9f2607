/** The `trimmed` flag: share/permalink.ts sets it when a link dropped or rounded something (the notes say what). */
import { bool } from '../schema-kit.ts';
import type { SectionModule } from '../section.ts';

export const trimmedSection = {
  schema: bool().describe('The result was trimmed to fit a link (notes say what went).'),
  trim: null,
  compare: null,
  csv: null,
  report: null,
} satisfies SectionModule<'trimmed'>;

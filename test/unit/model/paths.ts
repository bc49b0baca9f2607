/**
 * Where tests find the real test model. It is data, not part of the repository: the project's
 * sibling `../shared/models/` first, then `models/cache/` (filled by hand or by a download script).
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const SEARCHED = [resolve(REPO_ROOT, '../shared/models'), resolve(REPO_ROOT, 'models/cache')];

/** The first existing copy of a model file, or undefined. */
export function findModelFile(name: string): string | undefined {
  return SEARCHED.map((dir) => resolve(dir, name)).find((p) => existsSync(p));
}

export const STORIES_GGUF = findModelFile('stories260K.gguf');
export const STORIES_EXPECTED = findModelFile('stories260K.expected.json');

/** A describe title that says why it is skipped when the model is absent. */
export function storiesTitle(title: string): string {
  return STORIES_GGUF && STORIES_EXPECTED ? title : `${title} — SKIPPED: stories260K.gguf / .expected.json not found in ${SEARCHED.join(' or ')}`;
}

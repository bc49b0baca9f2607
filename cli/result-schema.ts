/**
 * Writes docs/result.schema.json from the result's declarations (src/measure/sections/), for people
 * who consume result files. `npm run schema`; a unit test fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { resultJsonSchema } from '../src/measure/schema.ts';

export const RESULT_SCHEMA_PATH = resolve(import.meta.dirname, '../docs/result.schema.json');

export function resultSchemaText(): string {
  return `${JSON.stringify(resultJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(RESULT_SCHEMA_PATH, resultSchemaText());
  console.log(`wrote ${RESULT_SCHEMA_PATH}`);
}

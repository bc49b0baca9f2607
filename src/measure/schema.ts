/**
 * The versioned result the page, the CLI, permalinks and imports share: a closed record of optional
 * typed sections. Each section's declaration (src/measure/sections/) gives its type, its validator
 * and its JSON Schema; `RESULT_SECTIONS` lists them all (no registration by import).
 * `schema_version` changes only when an existing field changes meaning; new optional sections and
 * fields do not change it.
 */
import type { ColdStart, KernelShapes, ModelInfo } from '../model/load.ts';
import type { LatencySection } from './latency.ts';
import type { LlamaBenchRow } from './metrics.ts';
import { array, bool, int, object, optional, str, type Infer, type Schema } from './schema-kit.ts';
import { ceilingsSchema, environmentSchema, type Ceilings, type Environment } from './sections/environment.ts';
import { generationSchema, type GenerationSection } from './sections/generation.ts';
import { latencySchema } from './sections/latency.ts';
import { llamaBenchSchema } from './sections/llama-bench.ts';
import { coldStartSchema, kernelShapesSchema, modelSchema } from './sections/model.ts';
import { serveSchema, type BareVllmResult, type ServeRunSection } from './sections/serve.ts';
import { sideBySideSchema, webllmSchema, type SideBySideData, type WebLLMSectionData } from './sections/webllm.ts';

export { CEILING_KEYS, type CeilingKey, type CeilingMeasurement, type Ceilings, type Environment } from './sections/environment.ts';

export const SCHEMA_VERSION = 1;
export const TOOL_NAME = 'tokenscope';
export const TOOL_VERSION = '0.1.0';

/** Every optional section a result may carry, and its declaration. */
export const RESULT_SECTIONS = {
  ceilings: ceilingsSchema,
  model: modelSchema,
  cold_start: coldStartSchema,
  generation: generationSchema,
  latency: latencySchema,
  llama_bench: llamaBenchSchema,
  serve: serveSchema,
  webllm: webllmSchema,
  side_by_side: sideBySideSchema,
  kernel_shapes: kernelShapesSchema,
  trimmed: bool().describe('The result was trimmed to fit a link (notes say what went).'),
} as const;

/** The whole result as one declaration (the JSON Schema in docs/result.schema.json comes from it). */
export const resultSchema = object({
  schema_version: int(1, 1_000_000),
  tool: object({ name: str(64), version: str(64) }),
  created_at: str(64).describe('ISO 8601.'),
  environment: environmentSchema,
  notes: optional(array(str(1000), 100)).describe('Free-form notes (e.g. "samples trimmed for the permalink").'),
  ...(Object.fromEntries(Object.entries(RESULT_SECTIONS).map(([k, s]) => [k, optional(s as Schema<unknown>)])) as unknown as {
    [K in keyof typeof RESULT_SECTIONS]: ReturnType<typeof optional<Infer<(typeof RESULT_SECTIONS)[K]>>>;
  }),
});

export interface BenchResult {
  schema_version: number;
  tool: { name: string; version: string };
  /** ISO 8601. */
  created_at: string;
  environment: Environment;
  /** Free-form notes (e.g. "samples trimmed for the permalink"). */
  notes?: string[];
  ceilings?: Ceilings;
  model?: ModelInfo;
  cold_start?: ColdStart;
  generation?: GenerationSection;
  /** Complete, or (while a sweep runs, and in links of a stopped one) its requests and rows so far. */
  latency?: LatencyReport;
  llama_bench?: LlamaBenchRow[];
  /**
   * The job's section (complete, or as far as it got: every part optional), or a bare vLLM result
   * (imports): one type with both, as readers look for `run.result` first, then the flat keys.
   */
  serve?: Partial<ServeRunSection> & BareVllmResult;
  webllm?: WebLLMSectionData;
  side_by_side?: SideBySideData;
  kernel_shapes?: KernelShapes;
  trimmed?: boolean;
}

/** A latency section as far as it got: requests and rows always, the rest once the sweep ends. */
export type LatencyReport = Pick<LatencySection, 'requests' | 'rows'> & Partial<LatencySection>;

export function newResult(environment: Environment): BenchResult {
  return {
    schema_version: SCHEMA_VERSION,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    created_at: new Date().toISOString(),
    environment,
  };
}

/** The JSON Schema of a result, generated from the declarations (`npm run schema` writes docs/result.schema.json). */
export function resultJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://github.com/tokenscope/tokenscope/docs/result.schema.json',
    title: `tokenscope result, schema_version ${SCHEMA_VERSION}`,
    ...resultSchema.toJson(),
  };
}

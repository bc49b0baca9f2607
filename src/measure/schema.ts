/**
 * The versioned result the page, the CLI, permalinks and imports share: a closed record of optional
 * typed sections. Each section is one module in src/measure/sections/ (see section.ts): its
 * declaration (type, validator, JSON Schema), its trimming for links, comparison, CSV rows and
 * text report. `RESULT_SECTIONS` lists them all (no registration by import).
 * `schema_version` changes only when an existing field changes meaning; new optional sections and
 * fields do not change it.
 */
import type { ColdStart, KernelShapes, ModelInfo } from '../model/load.ts';
import type { LatencySection } from './latency.ts';
import type { LlamaBenchRow } from './metrics.ts';
import { array, int, object, optional, str, type Infer, type OptionalSchema, type Schema } from './schema-kit.ts';
import type { SectionKey, SectionModule } from './section.ts';
import { accuracySection, type AccuracySection } from './sections/accuracy.ts';
import { ceilingsSection, environmentSchema, type Ceilings, type Environment } from './sections/environment.ts';
import { generationSection, type GenerationSection } from './sections/generation.ts';
import { latencySection } from './sections/latency.ts';
import { llamaBenchSection } from './sections/llama-bench.ts';
import { coldStartSection, kernelShapesSection, modelSection } from './sections/model.ts';
import { serveSection, type BareVllmResult, type ServeRunSection } from './sections/serve.ts';
import { trimmedSection } from './sections/trimmed.ts';
import { sideBySideSection, webllmSection, type SideBySideData, type WebLLMSectionData } from './sections/webllm.ts';

export {
  CEILING_KEYS,
  CEILING_LABELS,
  computeRoof,
  NOT_RUN,
  prefillGemmRoof,
  type CeilingKey,
  type CeilingMeasurement,
  type ComputeRoofKey,
  type FmaPeak,
  type Ceilings,
  type Environment,
  type PrefillGemmKey,
} from './sections/environment.ts';

export const SCHEMA_VERSION = 1;
export const TOOL_NAME = 'tokenscope';
export const TOOL_VERSION = '0.1.0';

/**
 * Every optional section a result may carry, and its module. The order is the JSON Schema's, the
 * validator's, the comparison's and the trimming's within a step; the compiler checks that each
 * field of BenchResult below has a module whose pieces take its type.
 */
export const RESULT_SECTIONS = {
  ceilings: ceilingsSection,
  model: modelSection,
  cold_start: coldStartSection,
  generation: generationSection,
  latency: latencySection,
  accuracy: accuracySection,
  llama_bench: llamaBenchSection,
  serve: serveSection,
  webllm: webllmSection,
  side_by_side: sideBySideSection,
  kernel_shapes: kernelShapesSection,
  trimmed: trimmedSection,
} as const satisfies { [K in SectionKey]: SectionModule<K> };

/** The text report's blocks after the environment, in the order jobs/report.ts prints them: every section with a report of its own. */
export const REPORT_ORDER = [
  'ceilings',
  'model',
  'generation',
  'latency',
  'accuracy',
  'serve',
  'llama_bench',
  'webllm',
] as const satisfies readonly SectionKey[];

/** The whole result as one declaration (the JSON Schema in docs/result.schema.json comes from it). */
export const resultSchema = object({
  schema_version: int(1, 1_000_000),
  tool: object({ name: str(64), version: str(64) }),
  created_at: str(64).describe('ISO 8601.'),
  environment: environmentSchema,
  notes: optional(array(str(1000), 100)).describe('Free-form notes (e.g. "samples trimmed for the permalink").'),
  ...(Object.fromEntries(Object.entries(RESULT_SECTIONS).map(([k, m]) => [k, optional(m.schema as Schema<unknown>)])) as unknown as {
    [K in SectionKey]: OptionalSchema<Infer<(typeof RESULT_SECTIONS)[K]['schema']>>;
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
  /** The engine's logits against the f32 CPU reference on a fixed sequence, or why not measured (latency and generation runs). */
  accuracy?: AccuracySection;
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

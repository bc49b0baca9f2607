/**
 * The `model`, `cold_start` and `kernel_shapes` sections (written by model/load.ts, whose
 * interfaces must agree); the text report prints the three in one block.
 */
import type { ColdStart, ModelInfo } from '../../model/load.ts';
import type { ModelConfig } from '../../model/config.ts';
import { fixedOrDash } from '../format.ts';
import type { BenchResult } from '../schema.ts';
import type { SectionModule } from '../section.ts';
import { array, bool, int, num, object, oneOf, optional, record, str, type Agrees, type Infer, type Schema } from '../schema-kit.ts';
import { bytes, MAX_NAME, ms, tokenId } from './units.ts';

const name = () => str(MAX_NAME);
const dimension = () => int(0, 1 << 20);
/**
 * Free text typed as the config's union: architectures and RoPE styles grow with the model layer,
 * an older report may name one this build lacks, and the page shows the name as text.
 */
const textAs = <K extends keyof ModelConfig>() => name() as Schema<string> as Schema<ModelConfig[K]>;

export const modelSchema = object({
  id: name(),
  name: name(),
  architecture: name(),
  parameters: num(0, 1e14),
  weight_bytes: bytes().describe('Bytes of the weight matrices as the kernels read them (quantized data + scales).'),
  quantization: name(),
  synthetic: bool(),
  label: name().describe('"synthetic weights — speed only" or "real weights".'),
  kv_cache: optional(
    oneOf(['f16', 'f32'] as const).describe('Element type of the KV cache: f16 where the device has shader-f16 (absent in older results: f32).'),
  ),
  config: object({
    architecture: textAs<'architecture'>(),
    name: name(),
    dim: dimension(),
    hiddenDim: dimension(),
    nLayers: int(0, 10_000),
    nHeads: int(0, 10_000),
    nKvHeads: int(0, 10_000),
    headDim: dimension(),
    vocabSize: int(0, 1e8),
    contextLength: int(0, 1e9),
    ropeTheta: num(0, 1e12),
    ropeDim: dimension(),
    ropeStyle: textAs<'ropeStyle'>(),
    rmsEps: num(0, 1),
    qkvBias: bool(),
    tiedEmbeddings: bool(),
    bosId: tokenId(),
    eosId: tokenId(),
    // Architecture details added with Llama 3.x / Qwen3 / Gemma 3: optional, so reports written
    // before them still open.
    ropeFreqFactors: optional(array(num(0, 1e6), 1 << 16)),
    ropeFreqScale: optional(num(0, 1e6)),
    ropeThetaSliding: optional(num(0, 1e12)),
    qkNorm: optional(bool()),
    embedScale: optional(num(0, 1e6)),
    activation: optional(textAs<'activation'>()),
    postNorms: optional(bool()),
    slidingWindow: optional(int(0, 1e9)),
    slidingPattern: optional(int(0, 1e6)),
  }),
});
/** Config fields a report may lack (written before they existed). */
type LaterConfigKeys =
  'ropeFreqFactors' | 'ropeFreqScale' | 'ropeThetaSliding' | 'qkNorm' | 'embedScale' | 'activation' | 'postNorms' | 'slidingWindow' | 'slidingPattern';
type ReportedConfig = Omit<ModelConfig, LaterConfigKeys> & Partial<Pick<ModelConfig, LaterConfigKeys>>;
export type ModelSection = Infer<typeof modelSchema>;

export const coldStartSchema = object({
  parse_ms: ms().describe('Parsing the file header (0 for presets).'),
  upload_ms: ms().describe('Reading, converting and uploading (or generating) the weights.'),
  compile_ms: ms().describe('Building the pipelines and bind groups of the common step shapes.'),
  autotune_ms: optional(ms().describe('Timing the candidate shapes of the linear layers (0 when skipped).')),
});
export type ColdStartSection = Infer<typeof coldStartSchema>;

/** `kernel_shapes` (KernelShapes in model/load.ts): the linear shapes a run used, by problem. */
export const kernelShapesSchema = object({
  source: oneOf(['autotuned', 'static'] as const).describe('autotuned (timed at load or read from the cache) or static (select.ts).'),
  linear: record(
    object({
      kernel: oneOf(['matvec', 'matmul', 'rows'] as const),
      subgroups: optional(bool()),
      wide: optional(bool()),
      f16: optional(bool()),
      lanes: optional(int(1, 1024)),
      rowBlock: optional(int(1, 64)),
      rowsPerWorkgroup: optional(int(1, 1 << 16)),
      tokens: optional(int(1, 64)),
      tileM: optional(int(1, 1024)),
      tileN: optional(int(1, 1024)),
    }),
    { maxKeys: 256 },
  ).describe('linearProblemKey → shape.'),
  note: optional(str(2000)),
});

const modelAgrees: Agrees<Omit<ModelSection, 'config'>, Omit<ModelInfo, 'config'>> = true;
const configAgrees: Agrees<ModelSection['config'], ReportedConfig> = true;
const coldAgrees: Agrees<ColdStartSection, ColdStart> = true;
void [modelAgrees, configAgrees, coldAgrees];

/** The model, then its cold start and the kernel shapes it ran with. */
function formatModel(m: ModelInfo, r: BenchResult): string {
  const cold = r.cold_start;
  const size = m.weight_bytes >= 2 ** 30 ? `${(m.weight_bytes / 2 ** 30).toFixed(2)} GiB` : `${(m.weight_bytes / 2 ** 20).toFixed(1)} MiB`;
  const lines = [
    `Model: ${m.name} — ${m.architecture}, ${(m.parameters / 1e6).toFixed(1)} M parameters, ${m.quantization}, ${size} of weights, ${m.kv_cache ?? 'f32'} KV cache — ${m.label}`,
  ];
  if (cold)
    lines.push(
      `Cold start: parse ${fixedOrDash(cold.parse_ms, 1)} ms, ${m.synthetic ? 'generate' : 'upload'} weights ${fixedOrDash(cold.upload_ms, 1)} ms, ${cold.autotune_ms !== undefined ? `tune kernel shapes ${fixedOrDash(cold.autotune_ms, 1)} ms, ` : ''}compile pipelines ${fixedOrDash(cold.compile_ms, 1)} ms`,
    );
  const shapes = r.kernel_shapes;
  if (shapes)
    lines.push(
      `Kernel shapes: ${shapes.source === 'autotuned' ? `autotuned for ${Object.keys(shapes.linear).length} linear problems` : `static (${shapes.note ?? "select.ts's defaults"})`}`,
    );
  return lines.join('\n');
}

export const modelSection = { schema: modelSchema, trim: null, compare: null, csv: null, report: formatModel } satisfies SectionModule<'model'>;

export const coldStartSection = {
  schema: coldStartSchema,
  trim: null,
  compare: null,
  csv: null,
  report: { in: 'model' },
} satisfies SectionModule<'cold_start'>;

export const kernelShapesSection = {
  schema: kernelShapesSchema,
  trim: null,
  compare: null,
  csv: null,
  report: { in: 'model' },
} satisfies SectionModule<'kernel_shapes'>;

/**
 * A model choice (a preset, or an opened GGUF file) and the GPU format of each of its matrices,
 * known before anything is read or allocated. Pure: the page's preflight and the header
 * inspection plan with it without loading the engine; load.ts loads a choice.
 */
import { findPreset, type ModelPreset } from './catalog.ts';
import { TokenscopeError } from '../errors.ts';
import type { WeightFormat } from '../kernels/weights.ts';
import type { ModelConfig } from './config.ts';
import { GGMLType } from './gguf/types.ts';
import { matrixPlan, type MatrixPlan } from './memory.ts';
import type { OpenModel } from './open.ts';
import { tensorTypeFor, uploadType, type Quantization } from './recipes.ts';
import { formatOfType } from './weight-types.ts';

export type ModelChoice =
  { kind: 'preset'; preset: ModelPreset; quant: Quantization; seed?: number } | { kind: 'gguf'; model: OpenModel; quant?: Quantization; id: string };

/** Resolve "--model X" when X names a preset. */
export function presetChoice(id: string, quant: Quantization = 'q4_0', seed = 1): ModelChoice {
  const preset = findPreset(id);
  if (!preset) throw new TokenscopeError('bad-input', `Unknown model preset "${id}".`, 'List them with --list-models.');
  return { kind: 'preset', preset, quant, seed };
}

export function configOf(choice: ModelChoice): ModelConfig {
  return choice.kind === 'preset' ? choice.preset.config : choice.model.config;
}

/** The GPU format of every matrix, before anything is read or allocated. */
export function plannedMatrices(choice: ModelChoice): MatrixPlan[] {
  const config = configOf(choice);
  if (choice.kind === 'preset') return matricesUnder(config, choice.quant);
  const { gguf } = choice.model;
  const quant = choice.quant;
  return matrixPlan(config, (label) => {
    const info = gguf.tensor(`${label}.weight`);
    if (!info) throw new TokenscopeError('model-format', `${gguf.source.name}: tensor '${label}.weight' is missing.`, 'The file is incomplete; re-convert it.');
    // Every type the reader accepts has a GPU format (it refused the others, naming them, before anything was allocated).
    return formatOfType(uploadType(info, config, quant));
  });
}

/** Refuse a context longer than the model's (the header inspection asks the same). */
export function checkContext(config: ModelConfig, context: number): void {
  if (context > config.contextLength) {
    throw new TokenscopeError('bad-input', `A context of ${context} exceeds ${config.name}'s ${config.contextLength}.`, 'Use a shorter context.');
  }
}

/**
 * The GPU format a synthetic matrix (GGUF name `label`.weight, rows of `cols`) gets under a
 * quantization, as llama-quantize would give it from an F16 file (recipes.ts; a plain type as
 * `--pure`): so a preset's bytes are that file's. Rows that fit no block format stay f16.
 */
export function syntheticFormat(quant: Quantization, label: string, cols: number, config: Pick<ModelConfig, 'nLayers' | 'tiedEmbeddings'>): WeightFormat {
  const type = tensorTypeFor(
    quant,
    { name: `${label}.weight`, dims: [cols, 1], type: GGMLType.F16 },
    { nLayers: config.nLayers, hasOutput: !config.tiedEmbeddings },
  );
  return formatOfType(type);
}

/** The matrices of `config` in the formats llama-quantize's `quant` gives them (what a preset uploads). */
export function matricesUnder(config: ModelConfig, quant: Quantization): MatrixPlan[] {
  return matrixPlan(config, (label, cols) => syntheticFormat(quant, label, cols, config));
}

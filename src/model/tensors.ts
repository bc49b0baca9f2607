/**
 * The model's tensors by role, with every shape checked against the hyperparameters.
 * GGUF dims are fastest-varying first: a matrix [n, d] has d rows of length n and maps an
 * n-vector to a d-vector.
 */
import { TokenscopeError } from '../errors.ts';
import type { ModelConfig } from './config.ts';
import type { GGUF, GGUFTensorInfo } from './gguf/reader.ts';

export interface LayerTensors {
  attnNorm: GGUFTensorInfo; // [dim]
  wq: GGUFTensorInfo; // [dim, nHeads*headDim]
  wk: GGUFTensorInfo; // [dim, nKvHeads*headDim]
  wv: GGUFTensorInfo; // [dim, nKvHeads*headDim]
  bq?: GGUFTensorInfo; // [nHeads*headDim]
  bk?: GGUFTensorInfo; // [nKvHeads*headDim]
  bv?: GGUFTensorInfo; // [nKvHeads*headDim]
  wo: GGUFTensorInfo; // [nHeads*headDim, dim]
  ffnNorm: GGUFTensorInfo; // [dim]
  wGate: GGUFTensorInfo; // [dim, hiddenDim]
  wUp: GGUFTensorInfo; // [dim, hiddenDim]
  wDown: GGUFTensorInfo; // [hiddenDim, dim]
  qNorm?: GGUFTensorInfo; // [headDim] when config.qkNorm
  kNorm?: GGUFTensorInfo; // [headDim]
  postAttnNorm?: GGUFTensorInfo; // [dim] when config.postNorms
  postFfnNorm?: GGUFTensorInfo; // [dim]
}

export interface ModelTensors {
  tokenEmbd: GGUFTensorInfo; // [dim, vocabSize]
  layers: LayerTensors[];
  outputNorm: GGUFTensorInfo; // [dim]
  /** output.weight, or token_embd.weight when the embeddings are tied. */
  output: GGUFTensorInfo; // [dim, vocabSize]
}

/** Every role a tensor plays, for callers that iterate (e.g. choosing types per role). */
export type TensorRole = Exclude<keyof ModelTensors, 'layers'> | keyof LayerTensors;

/** The hyperparameters that fix tensor shapes. */
export type ShapeConfig = Pick<ModelConfig, 'dim' | 'hiddenDim' | 'nHeads' | 'nKvHeads' | 'headDim' | 'vocabSize'>;

/** The GGUF name and expected dims of each per-layer role. */
export function layerTensorSpecs(c: ShapeConfig, layer: number): Record<keyof LayerTensors, { name: string; dims: number[] }> {
  const qDim = c.nHeads * c.headDim;
  const kvDim = c.nKvHeads * c.headDim;
  const blk = (suffix: string, dims: number[]) => ({ name: `blk.${layer}.${suffix}`, dims });
  return {
    attnNorm: blk('attn_norm.weight', [c.dim]),
    wq: blk('attn_q.weight', [c.dim, qDim]),
    wk: blk('attn_k.weight', [c.dim, kvDim]),
    wv: blk('attn_v.weight', [c.dim, kvDim]),
    bq: blk('attn_q.bias', [qDim]),
    bk: blk('attn_k.bias', [kvDim]),
    bv: blk('attn_v.bias', [kvDim]),
    wo: blk('attn_output.weight', [qDim, c.dim]),
    ffnNorm: blk('ffn_norm.weight', [c.dim]),
    wGate: blk('ffn_gate.weight', [c.dim, c.hiddenDim]),
    wUp: blk('ffn_up.weight', [c.dim, c.hiddenDim]),
    wDown: blk('ffn_down.weight', [c.hiddenDim, c.dim]),
    qNorm: blk('attn_q_norm.weight', [c.headDim]),
    kNorm: blk('attn_k_norm.weight', [c.headDim]),
    postAttnNorm: blk('post_attention_norm.weight', [c.dim]),
    postFfnNorm: blk('post_ffw_norm.weight', [c.dim]),
  };
}

export function globalTensorSpecs(c: ShapeConfig): Record<Exclude<keyof ModelTensors, 'layers'>, { name: string; dims: number[] }> {
  return {
    tokenEmbd: { name: 'token_embd.weight', dims: [c.dim, c.vocabSize] },
    outputNorm: { name: 'output_norm.weight', dims: [c.dim] },
    output: { name: 'output.weight', dims: [c.dim, c.vocabSize] },
  };
}

/** Roles present only when a config flag says so. */
const OPTIONAL_ROLES: Partial<Record<keyof LayerTensors, (c: Pick<ModelConfig, 'qkvBias' | 'qkNorm' | 'postNorms'>) => boolean>> = {
  bq: (c) => c.qkvBias,
  bk: (c) => c.qkvBias,
  bv: (c) => c.qkvBias,
  qNorm: (c) => c.qkNorm,
  kNorm: (c) => c.qkNorm,
  postAttnNorm: (c) => c.postNorms,
  postFfnNorm: (c) => c.postNorms,
};

/** Whether a model of this config has a tensor in `role`. */
export function hasLayerRole(c: Pick<ModelConfig, 'qkvBias' | 'qkNorm' | 'postNorms'>, role: keyof LayerTensors): boolean {
  return OPTIONAL_ROLES[role]?.(c) ?? true;
}

export function modelTensors(gguf: GGUF, config: ModelConfig): ModelTensors {
  const get = (spec: { name: string; dims: number[] }) => {
    const t = gguf.tensor(spec.name);
    if (!t) {
      throw new TokenscopeError(
        'model-format',
        `${gguf.source.name}: tensor '${spec.name}' is missing`,
        'The file is incomplete for its architecture; re-convert it.',
      );
    }
    checkDims(gguf, t, spec.dims);
    return t;
  };
  const layers = Array.from({ length: config.nLayers }, (_, l) => {
    const specs = layerTensorSpecs(config, l);
    const entries = Object.entries(specs)
      .filter(([role]) => hasLayerRole(config, role as keyof LayerTensors))
      .map(([role, spec]) => [role, get(spec)]);
    return Object.fromEntries(entries) as LayerTensors;
  });
  for (const t of gguf.tensors) {
    const layer = /^blk\.(\d+)\./.exec(t.name);
    if (layer && Number(layer[1]) >= config.nLayers) {
      throw new TokenscopeError(
        'model-format',
        `${gguf.source.name}: tensor '${t.name}' is beyond block_count ${config.nLayers}`,
        'The metadata and the tensor table disagree; the file is damaged.',
      );
    }
  }
  const g = globalTensorSpecs(config);
  const tokenEmbd = get(g.tokenEmbd);
  return { tokenEmbd, layers, outputNorm: get(g.outputNorm), output: config.tiedEmbeddings ? tokenEmbd : get(g.output) };
}

function checkDims(gguf: GGUF, t: GGUFTensorInfo, expected: readonly number[]): void {
  if (t.dims.length !== expected.length || t.dims.some((d, i) => d !== expected[i])) {
    throw new TokenscopeError(
      'model-format',
      `${gguf.source.name}: tensor '${t.name}' has dims [${t.dims.join(', ')}], expected [${expected.join(', ')}] from the hyperparameters`,
      'The metadata and the tensor table disagree; the file is damaged.',
    );
  }
}

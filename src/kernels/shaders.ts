/**
 * Every WGSL file, imported as text in this one module (Vite's `?raw`; in the Node CLI the
 * loader in cli/raw-hooks.mjs provides the same).
 */
import fillHash from '../../shaders/fill_hash.wgsl?raw';
import streamRead from '../../shaders/stream_read.wgsl?raw';
import copy from '../../shaders/copy.wgsl?raw';
import fmaF32 from '../../shaders/fma_f32.wgsl?raw';
import fmaF16 from '../../shaders/fma_f16.wgsl?raw';
import rmsnorm from '../../shaders/rmsnorm.wgsl?raw';
import rmsnormSubgroups from '../../shaders/rmsnorm_subgroups.wgsl?raw';
import ropeStore from '../../shaders/rope_store.wgsl?raw';
import attentionDecode from '../../shaders/attention_decode.wgsl?raw';
import attentionCombine from '../../shaders/attention_combine.wgsl?raw';
import attentionPrefill from '../../shaders/attention_prefill.wgsl?raw';
import attentionDecodeSubgroups from '../../shaders/attention_decode_subgroups.wgsl?raw';
import kvLoadF32 from '../../shaders/kv_load_f32.wgsl?raw';
import kvLoadF16 from '../../shaders/kv_load_f16.wgsl?raw';
import kvStoreF32 from '../../shaders/kv_store_f32.wgsl?raw';
import kvStoreF16 from '../../shaders/kv_store_f16.wgsl?raw';
import swiglu from '../../shaders/swiglu.wgsl?raw';
import add from '../../shaders/add.wgsl?raw';
import argmax from '../../shaders/argmax.wgsl?raw';
import argmaxSubgroups from '../../shaders/argmax_subgroups.wgsl?raw';
import argmaxPartials from '../../shaders/argmax_partials.wgsl?raw';
import argmaxMerge from '../../shaders/argmax_merge.wgsl?raw';
import argmaxTree from '../../shaders/argmax_tree.wgsl?raw';
import sample from '../../shaders/sample.wgsl?raw';
import linearIo from '../../shaders/linear_io.wgsl?raw';
import matvecCore from '../../shaders/matvec_core.wgsl?raw';
import matvec from '../../shaders/matvec.wgsl?raw';
import matvecSubgroups from '../../shaders/matvec_subgroups.wgsl?raw';
import matvecWide from '../../shaders/matvec_wide.wgsl?raw';
import linearRows from '../../shaders/linear_rows.wgsl?raw';
import linearRowsQ4_0 from '../../shaders/linear_rows_q4_0.wgsl?raw';
import linearRowsQ4_0Loads from '../../shaders/linear_rows_q4_0_loads.wgsl?raw';
import linearRowsQ4_0Subgroups from '../../shaders/linear_rows_q4_0_subgroups.wgsl?raw';
import linearQ8dot from '../../shaders/linear_q8dot.wgsl?raw';
import linearQ8dotRows from '../../shaders/linear_q8dot_rows.wgsl?raw';
import linearQ8dotQ4_0 from '../../shaders/linear_q8dot_q4_0.wgsl?raw';
import linearQ8dotQ8_0 from '../../shaders/linear_q8dot_q8_0.wgsl?raw';
import matmulTiledCore from '../../shaders/matmul_tiled_core.wgsl?raw';
import matmulTiled from '../../shaders/matmul_tiled.wgsl?raw';
import matmulTiledF16 from '../../shaders/matmul_tiled_f16.wgsl?raw';
import embedding from '../../shaders/embedding.wgsl?raw';
import weightsF32 from '../../shaders/weights_f32.wgsl?raw';
import weightsF16 from '../../shaders/weights_f16.wgsl?raw';
import weightsQ8_0 from '../../shaders/weights_q8_0.wgsl?raw';
import weightsQ4_0 from '../../shaders/weights_q4_0.wgsl?raw';
import weightsBf16 from '../../shaders/weights_bf16.wgsl?raw';
import weightsQ4_1 from '../../shaders/weights_q4_1.wgsl?raw';
import weightsQ5_0 from '../../shaders/weights_q5_0.wgsl?raw';
import weightsQ5_1 from '../../shaders/weights_q5_1.wgsl?raw';
import weightsQ4K from '../../shaders/weights_q4_k.wgsl?raw';
import weightsQ5K from '../../shaders/weights_q5_k.wgsl?raw';
import weightsQ6K from '../../shaders/weights_q6_k.wgsl?raw';
import weightsNibbles from '../../shaders/weights_nibbles.wgsl?raw';
import weightsKScales from '../../shaders/weights_k_scales.wgsl?raw';
import weightsScales from '../../shaders/weights_scales.wgsl?raw';
import weightsFill from '../../shaders/weights_fill.wgsl?raw';

export const SHADERS = {
  fill_hash: fillHash,
  stream_read: streamRead,
  copy,
  fma_f32: fmaF32,
  fma_f16: fmaF16,
  rmsnorm,
  rmsnorm_subgroups: rmsnormSubgroups,
  rope_store: ropeStore,
  attention_decode: attentionDecode,
  attention_combine: attentionCombine,
  attention_prefill: attentionPrefill,
  attention_decode_subgroups: attentionDecodeSubgroups,
  // The KV cache's element type: joined with rope_store (store) and the attention bodies (load).
  kv_load_f32: kvLoadF32,
  kv_load_f16: kvLoadF16,
  kv_store_f32: kvStoreF32,
  kv_store_f16: kvStoreF16,
  swiglu,
  add,
  argmax,
  argmax_subgroups: argmaxSubgroups,
  argmax_partials: argmaxPartials,
  argmax_merge: argmaxMerge,
  argmax_tree: argmaxTree,
  sample,
  // Linear layers and embeddings: a kernel body joined with linear_io (bindings, output) and the
  // format's weight library (WEIGHT_LIBRARY in src/kernels/weights.ts); see src/kernels/linear.ts.
  linear_io: linearIo,
  matvec_core: matvecCore,
  matvec,
  matvec_subgroups: matvecSubgroups,
  matvec_wide: matvecWide,
  linear_rows: linearRows,
  linear_rows_q4_0: linearRowsQ4_0,
  linear_rows_q4_0_loads: linearRowsQ4_0Loads,
  linear_rows_q4_0_subgroups: linearRowsQ4_0Subgroups,
  linear_q8dot: linearQ8dot,
  linear_q8dot_rows: linearQ8dotRows,
  linear_q8dot_q4_0: linearQ8dotQ4_0,
  linear_q8dot_q8_0: linearQ8dotQ8_0,
  matmul_tiled_core: matmulTiledCore,
  matmul_tiled: matmulTiled,
  matmul_tiled_f16: matmulTiledF16,
  embedding,
  weights_f32: weightsF32,
  weights_f16: weightsF16,
  weights_q8_0: weightsQ8_0,
  weights_q4_0: weightsQ4_0,
  weights_bf16: weightsBf16,
  weights_q4_1: weightsQ4_1,
  weights_q5_0: weightsQ5_0,
  weights_q5_1: weightsQ5_1,
  weights_q4_k: weightsQ4K,
  weights_q5_k: weightsQ5K,
  weights_q6_k: weightsQ6K,
  weights_nibbles: weightsNibbles,
  weights_k_scales: weightsKScales,
  weights_scales: weightsScales,
  weights_fill: weightsFill,
} as const;

export type ShaderName = keyof typeof SHADERS;

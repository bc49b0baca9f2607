/**
 * Every WGSL file, imported as text in this one module (Vite's `?raw`; in the Node CLI the
 * loader in cli/raw-hooks.mjs provides the same).
 */
import fillHash from '../../shaders/fill_hash.wgsl?raw';
import streamRead from '../../shaders/stream_read.wgsl?raw';
import copy from '../../shaders/copy.wgsl?raw';
import fmaF32 from '../../shaders/fma_f32.wgsl?raw';
import fmaF16 from '../../shaders/fma_f16.wgsl?raw';
import matmulF32 from '../../shaders/matmul_f32.wgsl?raw';
import rmsnorm from '../../shaders/rmsnorm.wgsl?raw';
import rmsnormSubgroups from '../../shaders/rmsnorm_subgroups.wgsl?raw';
import swiglu from '../../shaders/swiglu.wgsl?raw';
import add from '../../shaders/add.wgsl?raw';

export const SHADERS = {
  fill_hash: fillHash,
  stream_read: streamRead,
  copy,
  fma_f32: fmaF32,
  fma_f16: fmaF16,
  matmul_f32: matmulF32,
  rmsnorm,
  rmsnorm_subgroups: rmsnormSubgroups,
  swiglu,
  add,
} as const;

export type ShaderName = keyof typeof SHADERS;

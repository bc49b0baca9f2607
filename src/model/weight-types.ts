/** Which GPU weight format (src/kernels/weight-formats.ts) holds each GGUF tensor type tokenscope reads. */
import type { WeightFormat } from '../kernels/weights.ts';
import { GGMLType } from './gguf/types.ts';

export const TYPE_OF_FORMAT: Record<WeightFormat, GGMLType> = {
  f32: GGMLType.F32,
  f16: GGMLType.F16,
  bf16: GGMLType.BF16,
  q8_0: GGMLType.Q8_0,
  q4_0: GGMLType.Q4_0,
  q4_1: GGMLType.Q4_1,
  q5_0: GGMLType.Q5_0,
  q5_1: GGMLType.Q5_1,
  q4_k: GGMLType.Q4_K,
  q5_k: GGMLType.Q5_K,
  q6_k: GGMLType.Q6_K,
};

/** The GPU format of a GGUF tensor type (every type the reader accepts has one). */
export function formatOfType(type: GGMLType): WeightFormat {
  return (Object.keys(TYPE_OF_FORMAT) as WeightFormat[]).find((f) => TYPE_OF_FORMAT[f] === type)!;
}

/**
 * Every shader variant joined from parts, by name → its ordered list of part files (shaders/<part>.wgsl;
 * `part@_1`: that file with its declarations renamed, for a second weight library beside the first).
 * WGSL declarations are order-free, so a variant is its parts concatenated; the body comes first so
 * that its `enable` directive leads the module. `npm run shaders` (cli/shader-variants.ts) writes
 * each variant to shaders/variants/<name with + as .>.wgsl and the index the kernels import
 * (src/kernels/shaders.generated.ts); nothing is joined at run time. Kernels name the variant they
 * want (`shader('matvec_wide+q4_k')`); a name not in this table does not type-check.
 *
 * Adding a variant is one entry here and `npm run shaders`: a new linear kernel body is one line in
 * LINEAR_BODIES (it is then built for every weight format), a new weight format one line in
 * WEIGHT_LIBRARIES (it is then built into every linear body and the embedding).
 * Every other WGSL file (no part of any variant) is a kernel on its own, imported as it is.
 */
import { WEIGHT_FORMATS, type WeightFormat } from './weight-formats.ts';

/**
 * Each weight format's WGSL library (the contract: w_raw, w_quants, w_scale, w_bias, W_HAS_BIAS,
 * w_dequant, CHUNK_VECS), joined after a kernel body that reads weights.
 */
export const WEIGHT_LIBRARIES: Record<WeightFormat, readonly string[]> = {
  f32: ['weights_f32'],
  f16: ['weights_f16'],
  bf16: ['weights_bf16'],
  q8_0: ['weights_q8_0', 'weights_scales'],
  q4_0: ['weights_q4_0', 'weights_scales'],
  q4_1: ['weights_q4_1', 'weights_nibbles'],
  q5_0: ['weights_q5_0', 'weights_nibbles', 'weights_scales'],
  q5_1: ['weights_q5_1', 'weights_nibbles'],
  q4_k: ['weights_q4_k', 'weights_nibbles', 'weights_k_scales'],
  q5_k: ['weights_q5_k', 'weights_nibbles', 'weights_k_scales'],
  q6_k: ['weights_q6_k', 'weights_scales'],
};

/**
 * The 8-bit-activation bodies' parts per format (their q8_raw and q8_block, and what they call): the
 * formats those bodies are built for (select.ts's Q8DOT_FORMATS).
 */
export const Q8DOT_PARTS = {
  q4_0: ['linear_q8dot_q4_0', 'linear_q8dot_nibbles', 'linear_q8dot_blocks32'],
  q8_0: ['linear_q8dot_q8_0', 'linear_q8dot_blocks32'],
  q4_k: ['linear_q8dot_q4_k', 'linear_q8dot_nibbles', 'linear_q8dot_blocks32'],
  q6_k: ['linear_q8dot_q6_k'],
} as const satisfies Partial<Record<WeightFormat, readonly string[]>>;

/** The SWAR body's part per format (where a row's blocks and scales sit): the formats it is built for (select.ts's SWAR_FORMATS). */
export const SWAR_PARTS = {
  q4_0: ['linear_q8dot_swar_q4_0'],
  q4_k: ['linear_q8dot_swar_q4_k'],
} as const satisfies Partial<Record<WeightFormat, readonly string[]>>;

/**
 * Linear-layer bodies (src/kernels/linear.ts): parts before linear_io (bindings, input prologue,
 * output epilogue) and the format's library; `formats` limits a body to the formats it decodes
 * (default: all); `formatParts` limits it to the formats it names and adds their parts after the
 * body's. The variant of body B for format F is named `B+F`.
 */
export const LINEAR_BODIES = {
  matvec: { parts: ['matvec', 'matvec_core'] },
  matvec_subgroups: { parts: ['matvec_subgroups', 'matvec_core'] },
  matvec_wide: { parts: ['matvec_wide', 'matvec_core'] },
  linear_rows: { parts: ['linear_rows'] },
  linear_rows_q4_0_loads: { parts: ['linear_rows_q4_0_loads', 'linear_rows_q4_0'], formats: ['q4_0'] },
  linear_rows_q4_0_subgroups: { parts: ['linear_rows_q4_0_subgroups', 'linear_rows_q4_0'], formats: ['q4_0'] },
  matmul_tiled: { parts: ['matmul_tiled', 'matmul_tiled_core'] },
  matmul_tiled_f16: { parts: ['matmul_tiled_f16', 'matmul_tiled_core'] },
  // 8-bit activations with dot4I8Packed (linear_q8dot.wgsl stages X, linear_q8dot_partials.wgsl sums
  // the blocks, Q8DOT_PARTS[format] dot a block).
  linear_q8dot_rows: { parts: ['linear_q8dot_rows', 'linear_q8dot', 'linear_q8dot_partials', 'linear_q8dot_dots'], formatParts: Q8DOT_PARTS },
  // Q4_0/Q4_K decode and prefill on CPU adapters: the 8-bit staging, products two at a time in 16-bit fields.
  linear_q8dot_swar: { parts: ['linear_q8dot_swar', 'linear_q8dot', 'linear_q8dot_swar_nibbles'], formatParts: SWAR_PARTS },
  // matvec_wide.wgsl's entry point over the 8-bit staging instead of matvec_core.
  linear_q8dot_wide: { parts: ['matvec_wide', 'linear_q8dot', 'linear_q8dot_partials', 'linear_q8dot_dots'], formatParts: Q8DOT_PARTS },
} satisfies Record<string, BodySpec>;

export type LinearBody = keyof typeof LINEAR_BODIES;

/** A linear body's entry: see LINEAR_BODIES. */
type BodySpec = { parts: readonly string[]; formats?: readonly WeightFormat[]; formatParts?: Partial<Record<WeightFormat, readonly string[]>> };

function bodyFormats(spec: BodySpec): readonly WeightFormat[] {
  if (spec.formatParts) return WEIGHT_FORMATS.filter((f) => spec.formatParts?.[f] !== undefined);
  return spec.formats ?? WEIGHT_FORMATS;
}

function formatParts(spec: BodySpec, f: WeightFormat): readonly string[] {
  return spec.formatParts?.[f] ?? [];
}

const linearVariants = Object.entries(LINEAR_BODIES).flatMap(([body, spec]) =>
  bodyFormats(spec).map((f): [string, readonly string[]] => [`${body}+${f}`, [...spec.parts, ...formatParts(spec, f), 'linear_io', ...WEIGHT_LIBRARIES[f]]]),
);

/**
 * Two matrices of different formats stacked by rows in one 8-bit-activation dispatch
 * (linear_q8dot_pair_dots.wgsl): the first's parts as in its own variant, then the second's
 * Q8DOT_PARTS and weight library joined again with their declarations suffixed _1. The pairs a
 * llama.cpp mix puts side by side: Q4_K_M's Q|K (q4_k) and V (q6_k).
 */
export const LINEAR_PAIRS = [['q4_k', 'q6_k']] as const satisfies readonly (readonly [keyof typeof Q8DOT_PARTS, keyof typeof Q8DOT_PARTS])[];

/** Whether a pair variant reads a matrix in `a` stacked over one in `b`. */
export function hasLinearPair(a: string, b: string): boolean {
  return LINEAR_PAIRS.some(([fa, fb]) => fa === a && fb === b);
}

/** The bodies that take a pair: the wide matvec (GPUs) and the register tile (CPU adapters). */
export const PAIR_BODIES = ['linear_q8dot_wide', 'linear_q8dot_rows'] as const;

const linearPairVariants = PAIR_BODIES.flatMap((body) =>
  LINEAR_PAIRS.map(([a, b]): [string, readonly string[]] => {
    const bodyParts = LINEAR_BODIES[body].parts.map((p) => (p === 'linear_q8dot_dots' ? 'linear_q8dot_pair_dots' : p));
    const after = WEIGHT_LIBRARIES[a].includes('weights_scales') ? 'w_binding_1_after_two' : 'w_binding_1_after_one';
    const second = ['linear_q8dot_partials', ...Q8DOT_PARTS[b], ...WEIGHT_LIBRARIES[b]].map((p) => `${p}@_1`);
    return [`${body}+${a}+${b}`, [...bodyParts, ...Q8DOT_PARTS[a], 'linear_io', ...WEIGHT_LIBRARIES[a], after, ...second]];
  }),
);

const embeddingVariants = WEIGHT_FORMATS.map((f): [string, readonly string[]] => [`embedding+${f}`, ['embedding', ...WEIGHT_LIBRARIES[f]]]);

/**
 * Two shards of a table in one gather (embedding_pair.wgsl): the format's library, then the same
 * library again with its declarations suffixed _1 (cli/shader-variants.ts renames a part written
 * `part@_1`), binding after the first's one or two bindings.
 */
const embeddingPairVariants = WEIGHT_FORMATS.map((f): [string, readonly string[]] => {
  const library = WEIGHT_LIBRARIES[f];
  const after = library.includes('weights_scales') ? 'w_binding_1_after_two' : 'w_binding_1_after_one';
  return [`embedding_pair+${f}`, ['embedding_pair', after, ...library, ...library.map((part) => `${part}@_1`)]];
});

/** Variant name → its parts, in order. */
export const VARIANTS: Readonly<Record<string, readonly string[]>> = {
  ...Object.fromEntries(linearVariants),
  ...Object.fromEntries(embeddingVariants),
  ...Object.fromEntries(embeddingPairVariants),
  ...Object.fromEntries(linearPairVariants),
  // Decode attention bodies read the KV cache through its element's loads (src/kernels/attention.ts);
  // the +rope variants rotate the queries and store the new key and value themselves.
  ...Object.fromEntries(
    (['attention_decode', 'attention_decode_subgroups'] as const).flatMap((body) =>
      (['f32', 'f16'] as const).flatMap((kv): [string, readonly string[]][] => [
        [`${body}+kv_load_${kv}`, [body, 'attention_decode_out', 'attention_decode_io', `kv_load_${kv}`]],
        [`${body}+rope+kv_rw_${kv}`, [body, 'attention_decode_out', 'attention_decode_rope_io', 'rope_math', `kv_rw_${kv}`]],
      ]),
    ),
  ),
  'attention_prefill+kv_load_f32': ['attention_prefill', 'attention_prefill_io', 'kv_load_f32'],
  'attention_prefill+kv_load_f16': ['attention_prefill', 'attention_prefill_io', 'kv_load_f16'],
  'attention_prefill_rows+kv_load_f32': ['attention_prefill_rows', 'attention_prefill_io', 'kv_load_f32'],
  'attention_prefill_rows+kv_load_f16': ['attention_prefill_rows', 'attention_prefill_io', 'kv_load_f16'],
  // RoPE writes the cache through its element's stores (src/kernels/rope-store.ts).
  'rope_store+kv_store_f32': ['rope_store', 'rope_math', 'kv_store_f32'],
  'rope_store+kv_store_f16': ['rope_store', 'rope_math', 'kv_store_f16'],
  // Greedy sampling's workgroup reductions without subgroups (src/kernels/sampling.ts).
  'argmax+argmax_tree': ['argmax', 'argmax_tree'],
  'argmax_partials+argmax_tree': ['argmax_partials', 'argmax_tree'],
  'argmax_merge+argmax_tree': ['argmax_merge', 'argmax_tree'],
  // The streaming-read roof's bodies (chunks or tiles), loads (vec4 or scalar) and reductions (workgroup
  // tree or one partial per invocation) (src/kernels/stream-read.ts).
  ...Object.fromEntries(
    (['stream_read', 'stream_read_tiles'] as const).flatMap((body) =>
      (['vec4', 'u32'] as const).flatMap((load) =>
        (['tree', 'lanes'] as const).map((reduce): [string, readonly string[]] => [
          `${body}+${load}+${reduce}`,
          [body, 'stream_read_io', `stream_read_${load}`, `stream_read_${reduce}`],
        ]),
      ),
    ),
  ),
};

/** A variant's file name in shaders/variants/: `matvec_wide+q4_k` → `matvec_wide.q4_k.wgsl`. */
export function variantFileName(name: string): string {
  if (!/^[a-z0-9_]+(\+[a-z0-9_]+)*$/.test(name)) throw new Error(`variant name ${name}: use [a-z0-9_] parts joined by +`);
  return `${name.replaceAll('+', '.')}.wgsl`;
}

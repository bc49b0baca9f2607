/**
 * llama.cpp's own quantizer, called in its shared libraries: ggml's `ggml_quantize_chunk` (what
 * llama-quantize runs on each tensor's rows) and `llama_model_quantize` (the whole file, with its
 * mixes), from node-llama-cpp's prebuilt linux-x64 CPU build, through koffi (a C FFI with prebuilt
 * binaries). The struct below is `llama_model_quantize_params` of the llama.cpp that build ships
 * (node-llama-cpp 3.21.1, include/llama.h in its llama/gitRelease.bundle); a pinned version keeps
 * the two in step.
 *
 * Node only, linux-x64 only: elsewhere `nativeQuantizer()` returns why it is not there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GGML_BLOCK, GGMLType } from '../../src/model/gguf/types.ts';
import { FILE_TYPE, type Quantization } from '../../src/model/recipes.ts';

export interface NativeQuantizer {
  /** `rows` rows of `x` encoded as `type` by ggml_quantize_chunk (no importance matrix). */
  quantizeRows(type: GGMLType, x: Float32Array, rows: number): Uint8Array;
  /** `n` values decoded from `type` blocks by ggml's dequantize_row_* (F16/BF16: its *_to_fp32_row). */
  dequantizeRow(type: GGMLType, bytes: Uint8Array, n: number): Float32Array;
  /**
   * x as llama.cpp's CPU backend rounds a product's input before it multiplies quantized weights:
   * its quantize_row_q8_0 (the AVX2 build's) or quantize_row_q8_K, decoded by dequantize_row_*.
   * Null where this CPU has no AVX2 (that build cannot run here).
   */
  roundActivations: ((x: Float32Array, rounding: 'q8_0' | 'q8_k') => Float32Array) | null;
  /**
   * llama-quantize on a whole file: `q`'s llama_ftype, with its mixes unless `pure` (every
   * matrix the ftype's base type, as `llama-quantize --pure`).
   */
  quantizeFile(input: string, output: string, q: Quantization, options?: { pure?: boolean }): void;
}

let cached: NativeQuantizer | string | undefined;

/** llama.cpp's quantizer, or a sentence saying why it cannot load here. */
export function nativeQuantizer(): NativeQuantizer | string {
  cached ??= load();
  return cached;
}

function load(): NativeQuantizer | string {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return `llama.cpp's libraries are loaded from node-llama-cpp's linux-x64 build (this is ${process.platform}-${process.arch})`;
  const require = createRequire(import.meta.url);
  let bins: string;
  try {
    // The package exports only dist/index.js; its binaries sit in ../bins beside it.
    bins = join(dirname(require.resolve('@node-llama-cpp/linux-x64')), '..', 'bins', 'linux-x64');
  } catch {
    return '@node-llama-cpp/linux-x64 is not installed (npm ci installs it with node-llama-cpp)';
  }
  const llamaLib = existsSync(bins) ? readdirSync(bins).find((f) => /^libllama(\.v[\d.]+)?\.so$/.test(f)) : undefined;
  if (!llamaLib) return `no libllama in ${bins}`;
  const koffi = require('koffi') as typeof import('koffi');
  const ggml = koffi.load(join(bins, 'libggml-base.so'));
  const llama = koffi.load(join(bins, llamaLib));

  const quantizeChunk = ggml.func(
    'size_t ggml_quantize_chunk(int type, const float *src, _Out_ uint8_t *dst, int64_t start, int64_t nrows, int64_t n_per_row, const float *imatrix)',
  );
  const Params = koffi.struct('llama_model_quantize_params', {
    nthread: 'int32_t',
    ftype: 'int',
    output_tensor_type: 'int',
    token_embedding_type: 'int',
    allow_requantize: 'bool',
    quantize_output_tensor: 'bool',
    only_copy: 'bool',
    pure: 'bool',
    keep_split: 'bool',
    dry_run: 'bool',
    imatrix: 'void *',
    kv_overrides: 'void *',
    tt_overrides: 'void *',
    prune_layers: 'void *',
    max_buf_size: 'size_t',
  });
  // llama-quantize reports every tensor through llama.cpp's log; the tests keep their output to themselves.
  const LogCallback = koffi.proto('void ggml_log_callback(int level, const char *text, void *user_data)');
  const setLog = llama.func('void llama_log_set(ggml_log_callback *callback, void *user_data)');
  setLog(
    koffi.register(() => {}, koffi.pointer(LogCallback)),
    null,
  );
  const defaults = llama.func('llama_model_quantize_default_params', Params, []);
  const quantize = llama.func('llama_model_quantize', 'uint32_t', ['const char *', 'const char *', koffi.pointer(Params)]);

  const DEQUANTIZE: Partial<Record<GGMLType, string>> = {
    [GGMLType.Q4_0]: 'dequantize_row_q4_0',
    [GGMLType.Q4_1]: 'dequantize_row_q4_1',
    [GGMLType.Q5_0]: 'dequantize_row_q5_0',
    [GGMLType.Q5_1]: 'dequantize_row_q5_1',
    [GGMLType.Q8_0]: 'dequantize_row_q8_0',
    [GGMLType.Q4_K]: 'dequantize_row_q4_K',
    [GGMLType.Q5_K]: 'dequantize_row_q5_K',
    [GGMLType.Q6_K]: 'dequantize_row_q6_K',
    [GGMLType.F16]: 'ggml_fp16_to_fp32_row',
    [GGMLType.BF16]: 'ggml_bf16_to_fp32_row',
  };
  const dequantizers = new Map<GGMLType, (bytes: Uint8Array, out: Float32Array, n: number) => void>();
  const dequantizer = (type: GGMLType) => {
    const name = DEQUANTIZE[type];
    if (!name) throw new Error(`no ggml dequantizer for type ${type}`);
    let f = dequantizers.get(type);
    if (!f) {
      f = ggml.func(`void ${name}(const uint8_t *x, _Out_ float *y, int64_t k)`) as (bytes: Uint8Array, out: Float32Array, n: number) => void;
      dequantizers.set(type, f);
    }
    return f;
  };

  // The CPU backend's activation quantizers live in its per-ISA builds; the AVX2 one (haswell)
  // runs on any x86-64 CPU with AVX2, and every AVX build shares its quantize_row_q8_0.
  const avx2 = existsSync('/proc/cpuinfo') && /^flags\s*:.*\bavx2\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  const cpu = avx2 && existsSync(join(bins, 'libggml-cpu-haswell.so')) ? koffi.load(join(bins, 'libggml-cpu-haswell.so')) : null;
  const activationQuantizers = cpu
    ? {
        q8_0: cpu.func('void quantize_row_q8_0(const float *x, _Out_ uint8_t *y, int64_t k)') as (x: Float32Array, y: Uint8Array, k: number) => void,
        q8_k: cpu.func('void quantize_row_q8_K(const float *x, _Out_ uint8_t *y, int64_t k)') as (x: Float32Array, y: Uint8Array, k: number) => void,
      }
    : null;
  const dequantizeQ8K = ggml.func('void dequantize_row_q8_K(const uint8_t *x, _Out_ float *y, int64_t k)') as (
    x: Uint8Array,
    y: Float32Array,
    k: number,
  ) => void;

  return {
    roundActivations: activationQuantizers
      ? (x, rounding) => {
          // block_q8_0: f16 d + 32 int8 (34 bytes); block_q8_K: f32 d + 256 int8 + 16 int16 sums (292).
          const blocks = new Uint8Array(rounding === 'q8_0' ? (x.length / 32) * 34 : (x.length / 256) * 292);
          activationQuantizers[rounding](x, blocks, x.length);
          const out = new Float32Array(x.length);
          if (rounding === 'q8_0') dequantizer(GGMLType.Q8_0)(blocks, out, x.length);
          else dequantizeQ8K(blocks, out, x.length);
          return out;
        }
      : null,
    dequantizeRow(type, bytes, n) {
      const out = new Float32Array(n);
      dequantizer(type)(bytes, out, n);
      return out;
    },
    quantizeRows(type, x, rows) {
      const { elements, bytes } = GGML_BLOCK[type];
      const perRow = x.length / rows;
      const out = new Uint8Array((perRow / elements) * bytes * rows);
      const written = Number(quantizeChunk(type, x, out, 0, rows, perRow, null));
      if (written !== out.length) throw new Error(`ggml_quantize_chunk wrote ${written} bytes, expected ${out.length}`);
      return out;
    },
    quantizeFile(input, output, q, options = {}) {
      const params = defaults();
      params.ftype = FILE_TYPE[q];
      params.nthread = 1;
      params.pure = options.pure ?? false;
      const rc = quantize(input, output, params);
      if (rc !== 0) throw new Error(`llama_model_quantize(${input} → ${q}) returned ${rc}`);
    },
  };
}

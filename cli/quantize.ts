/**
 * npm run quantize -- IN.gguf OUT.gguf TYPE
 *
 * Quantizes an F32/F16/BF16 GGUF model with ggml's reference rounding. TYPE is a plain type
 * (f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k: every weight matrix that type, as
 * `llama-quantize --pure`) or one of llama-quantize's mixes (q4_k_m, q4_k_s, q5_k_m, q6_k, q8_0:
 * per-tensor types as llama.cpp chooses them; src/model/recipes.ts). Norms and 1-D tensors keep
 * their type; rows no block fits become F16. The tensors are the ones llama-quantize writes, byte
 * for byte (test/unit/oracle/quantize-ggml.test.ts runs llama.cpp's own quantizer beside it).
 * Streams tensor by tensor, so memory holds one tensor at a time.
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TokenscopeError, describeError } from '../src/errors.ts';
import { fileSource } from '../src/model/gguf/node-source.ts';
import { readGGUF } from '../src/model/gguf/reader.ts';
import { GGML_BLOCK, elementCount, ggmlTypeName, meta, type GGUFValue } from '../src/model/gguf/types.ts';
import { readModelConfig } from '../src/model/config.ts';
import { writeGGUF, type TensorSpec } from '../src/model/gguf/writer.ts';
import { dequantize } from '../src/model/quant.ts';
import { encodeTensor } from '../src/model/quantize.ts';
import { FILE_TYPE, QUANTIZATIONS, isQuantization, tensorTypeFor, type Quantization } from '../src/model/recipes.ts';

const GGML_QNT_VERSION = 2;

export interface QuantizeSummary {
  quantized: number;
  kept: string[];
  /** Tensors written per type name, e.g. { Q4_K: 12, Q6_K: 4, F32: 11 }. */
  types: Record<string, number>;
  inBytes: number;
  outBytes: number;
}

export async function quantizeFile(inPath: string, outPath: string, target: Quantization): Promise<QuantizeSummary> {
  if (resolve(inPath) === resolve(outPath)) {
    throw new TokenscopeError('bad-input', 'the output would overwrite the input', 'Write to another file name.');
  }
  const source = await fileSource(inPath);
  try {
    const gguf = await readGGUF(source);
    const quantizedInput = gguf.tensors.find((t) => GGML_BLOCK[t.type].elements > 1);
    if (quantizedInput) {
      throw new TokenscopeError(
        'bad-input',
        `${source.name} is already quantized ('${quantizedInput.name}' is ${ggmlTypeName(quantizedInput.type)})`,
        'Quantize from the F32 or F16 file: requantizing adds the errors of both formats.',
      );
    }
    const config = readModelConfig(gguf);
    const model = { nLayers: config.nLayers, hasOutput: gguf.tensor('output.weight') !== undefined };
    const specs: TensorSpec[] = gguf.tensors.map((t) => ({ name: t.name, dims: t.dims, type: tensorTypeFor(target, t, model) }));
    const metadata = new Map<string, GGUFValue>(gguf.metadata);
    metadata.set('general.file_type', meta.u32(FILE_TYPE[target]));
    metadata.set('general.quantization_version', meta.u32(GGML_QNT_VERSION));

    const out = await open(outPath, 'w');
    let outBytes: number;
    try {
      outBytes = await writeGGUF({ write: (bytes) => writeAll(out, bytes) }, metadata, specs, async (spec, i) => {
        const input = gguf.tensors[i];
        const bytes = await gguf.tensorBytes(input);
        return spec.type === input.type ? bytes : encodeTensor(dequantize(input.type, bytes, elementCount(input.dims)), spec.type);
      });
      await out.close();
    } catch (e) {
      await out.close();
      await rm(outPath, { force: true });
      throw e;
    }
    const kept = specs.filter((s, i) => s.type === gguf.tensors[i].type).map((s) => s.name);
    const types: Record<string, number> = {};
    for (const s of specs) types[ggmlTypeName(s.type)!] = (types[ggmlTypeName(s.type)!] ?? 0) + 1;
    return { quantized: specs.length - kept.length, kept, types, inBytes: source.size, outBytes };
  } finally {
    await source.close();
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.length - at);
    at += bytesWritten;
  }
}

async function main(args: string[]): Promise<void> {
  const [inPath, outPath, target] = args;
  const wanted = target?.toLowerCase();
  if (args.length !== 3 || !isQuantization(wanted)) {
    throw new TokenscopeError(
      'bad-input',
      `usage: npm run quantize -- IN.gguf OUT.gguf ${QUANTIZATIONS.filter((q) => q !== 'f32').join('|')}`,
      'Give the input model, the output path and the target type or llama-quantize mix.',
    );
  }
  const s = await quantizeFile(inPath, outPath, wanted);
  const types = Object.entries(s.types)
    .map(([t, n]) => `${n} ${t}`)
    .join(', ');
  console.log(
    `${outPath}: ${wanted.toUpperCase()}: ${s.quantized} tensors converted, ${s.kept.length} kept as they were ` +
      `(norms and other 1-D tensors, or already that type); tensors now ${types}; ${s.inBytes.toLocaleString('en')} → ${s.outBytes.toLocaleString('en')} bytes`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(`quantize: ${describeError(e)}`);
    process.exitCode = 1;
  });
}

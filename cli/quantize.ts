/**
 * npm run quantize -- IN.gguf OUT.gguf q8_0|q4_0
 *
 * Quantizes an F32/F16 GGUF model the way `llama-quantize --pure` does (ggml's reference
 * rounding): 2-D weights whose rows split into 32-element blocks become Q8_0/Q4_0, the rest keep
 * their type. Streams tensor by tensor, so memory holds one tensor at a time.
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TokenscopeError, describeError } from '../src/errors.ts';
import { fileSource } from '../src/model/gguf/node-source.ts';
import { readGGUF } from '../src/model/gguf/reader.ts';
import { GGMLType, GGML_BLOCK, elementCount, ggmlTypeName, meta, type GGUFValue } from '../src/model/gguf/types.ts';
import { writeGGUF, type TensorSpec } from '../src/model/gguf/writer.ts';
import { dequantize } from '../src/model/quant.ts';
import { encodeTensor, quantizedType } from '../src/model/quantize.ts';

const TARGETS = {
  q8_0: { type: GGMLType.Q8_0, fileType: 7 }, // LLAMA_FTYPE_MOSTLY_Q8_0
  q4_0: { type: GGMLType.Q4_0, fileType: 2 }, // LLAMA_FTYPE_MOSTLY_Q4_0
} as const;
type Target = keyof typeof TARGETS;
const GGML_QNT_VERSION = 2;

export interface QuantizeSummary {
  quantized: number;
  kept: string[];
  inBytes: number;
  outBytes: number;
}

export async function quantizeFile(inPath: string, outPath: string, target: Target): Promise<QuantizeSummary> {
  if (resolve(inPath) === resolve(outPath)) {
    throw new TokenscopeError('bad-input', 'the output would overwrite the input', 'Write to another file name.');
  }
  const source = await fileSource(inPath);
  try {
    const gguf = await readGGUF(source);
    const quantizedInput = gguf.tensors.find((t) => GGML_BLOCK[t.type].elements > 1);
    if (quantizedInput) {
      throw new TokenscopeError('bad-input',
        `${source.name} is already quantized ('${quantizedInput.name}' is ${ggmlTypeName(quantizedInput.type)})`,
        'Quantize from the F32 or F16 file: requantizing adds the errors of both formats.');
    }
    const { type, fileType } = TARGETS[target];
    const specs: TensorSpec[] = gguf.tensors.map((t) => ({ name: t.name, dims: t.dims, type: quantizedType(t, type) }));
    const metadata = new Map<string, GGUFValue>(gguf.metadata);
    metadata.set('general.file_type', meta.u32(fileType));
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
    const kept = specs.filter((s) => s.type !== type).map((s) => s.name);
    return { quantized: specs.length - kept.length, kept, inBytes: source.size, outBytes };
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
  if (args.length !== 3 || !Object.hasOwn(TARGETS, target)) {
    throw new TokenscopeError('bad-input', `usage: npm run quantize -- IN.gguf OUT.gguf ${Object.keys(TARGETS).join('|')}`,
      'Give the input model, the output path and the target type.');
  }
  const s = await quantizeFile(inPath, outPath, target as Target);
  console.log(`${outPath}: ${s.quantized} tensors → ${target.toUpperCase()}, ${s.kept.length} kept as they were ` +
    `(1-D or rows not a multiple of 32); ${s.inBytes.toLocaleString('en')} → ${s.outBytes.toLocaleString('en')} bytes`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(`quantize: ${describeError(e)}`);
    process.exitCode = 1;
  });
}

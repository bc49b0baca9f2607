/**
 * Our quantizer is llama.cpp's, byte for byte: every type `npm run quantize` writes encodes rows as
 * ggml's `ggml_quantize_chunk` does (no importance matrix: the `_ref` encoders llama-quantize
 * runs), and every quantization writes the tensors `llama_model_quantize` writes for the same F32
 * file — the mixes as llama-quantize makes them, the plain types as `llama-quantize --pure`; and
 * every type decodes to the floats ggml's dequantize_row_* gives, bit for bit (what the CPU
 * reference and the weight upload read). All called in node-llama-cpp's own libraries
 * (test/oracle/ggml-native.ts). A float operation out
 * of C's order in an encoder shows here as a few percent of blocks with another scale: this test
 * found make_qkx2_quants' trial range fixed where ggml's follows the best minimum so far (Q4_K and
 * Q5_K differed in 117 of 200 random blocks).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { quantizeFile } from '../../../cli/quantize.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { buildTestModel } from '../../../src/model/gguf/synthetic.ts';
import { GGML_BLOCK, GGMLType, ggmlTypeName } from '../../../src/model/gguf/types.ts';
import { dequantize } from '../../../src/model/quant.ts';
import { roundActivations } from '../../../src/model/reference.ts';
import { encodeTensor } from '../../../src/model/quantize.ts';
import type { Quantization } from '../../../src/model/recipes.ts';
import { mulberry32 } from '../../../src/random.ts';
import { nativeQuantizer, type NativeQuantizer } from '../../oracle/ggml-native.ts';
import { STORIES_GGUF } from '../model/paths.ts';

const native = nativeQuantizer();
const missing = typeof native === 'string' ? native : '';
const ggml = native as NativeQuantizer;

/**
 * Rows of mixed character, 256 values each (one K-quant super-block): gaussian at scales 1e-6..1e3,
 * a 50× outlier, exact halves, sparse, all-positive and all-negative runs (Q4_K's minimum clamps at
 * 0), an all-zero row and a constant one.
 */
function rows(n: number, seed: number): Float32Array {
  const random = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  /** Value i of row r of character `kind`, from its gaussian draw g (drawn first, then any other draw). */
  const value = (r: number, kind: number, i: number, g: number, scale: number): number => {
    if (r === 0) return 0;
    if (r === 1) return 0.75;
    switch (kind) {
      case 0:
        return g;
      case 1:
        return (i % 37 === 5 ? 50 : 1) * g; // an outlier every 37
      case 2:
        return (Math.floor(random() * 33) - 16) * 0.5; // exact halves
      case 3:
        return random() < 0.8 ? 0 : g; // sparse
      case 4:
        return Math.abs(g);
      case 5:
        return -Math.abs(g) - scale;
      default:
        return g + (i % 32 < 16 ? 3 * scale : 0); // an offset half of every block
    }
  };
  const x = new Float32Array(256 * n);
  for (let r = 0; r < n; r++) {
    const scale = 10 ** ((r % 10) - 6);
    for (let i = 0; i < 256; i++) x[256 * r + i] = value(r, r % 7, i, gauss() * scale, scale);
  }
  return x;
}

const TYPES = [
  GGMLType.Q8_0,
  GGMLType.Q4_0,
  GGMLType.Q4_1,
  GGMLType.Q5_0,
  GGMLType.Q5_1,
  GGMLType.Q4_K,
  GGMLType.Q5_K,
  GGMLType.Q6_K,
  GGMLType.F16,
  GGMLType.BF16,
];

describe.skipIf(missing)(`our encoders and files against llama.cpp's quantizer${missing ? ` — SKIPPED: ${missing}` : ''}`, () => {
  it.each(TYPES.map((t) => [ggmlTypeName(t)!, t] as const))('%s rows encode as ggml_quantize_chunk encodes them', (_, type) => {
    const n = 280;
    const x = rows(n, 11);
    const theirs = ggml.quantizeRows(type, x, n);
    const ours = encodeTensor(x, type);
    const rowBytes = theirs.length / n;
    const differing: number[] = [];
    for (let r = 0; r < n; r++) {
      for (let i = r * rowBytes; i < (r + 1) * rowBytes; i++) {
        if (ours[i] !== theirs[i]) {
          differing.push(r);
          break;
        }
      }
    }
    expect(ours.length).toBe(theirs.length);
    expect(differing, `rows that differ: ${differing.slice(0, 12).join(', ')}`).toEqual([]);
  });

  it.each(TYPES.map((t) => [ggmlTypeName(t)!, t] as const))('%s blocks decode to the floats ggml decodes them to, bit for bit', (_, type) => {
    // Quantized rows of every character, and blocks of random bytes (any scale bits: subnormal, huge,
    // negative, ±0; NaN where an f16/bf16 pattern is one).
    const { elements, bytes } = GGML_BLOCK[type];
    const n = 256 * 64;
    const random = mulberry32(3);
    const noise = Uint8Array.from({ length: (n / elements) * bytes }, () => Math.floor(random() * 256));
    for (const data of [encodeTensor(rows(64, 5), type), noise]) {
      const theirs = ggml.dequantizeRow(type, data, n);
      const ours = dequantize(type, data, n);
      const differing = [];
      for (let i = 0; i < n && differing.length < 8; i++)
        if (!Object.is(ours[i], theirs[i]) && !(Number.isNaN(ours[i]) && Number.isNaN(theirs[i]))) differing.push(`[${i}] ${ours[i]} vs ${theirs[i]}`);
      expect(differing).toEqual([]);
    }
  });

  it.for(['q8_0', 'q8_k'] as const)(
    "the CPU reference's %s activation rounding is llama.cpp's, bit for bit (its CPU backend's quantizer, decoded)",
    (rounding, { skip }) => {
      if (!ggml.roundActivations) return skip('this CPU has no AVX2, which the backend build we call needs');
      const x = rows(96, 9);
      const ours = new Float32Array(x.length);
      roundActivations(ours, x, rounding);
      const theirs = ggml.roundActivations(x, rounding);
      const differing = [];
      for (let i = 0; i < x.length && differing.length < 8; i++)
        if (!Object.is(ours[i], theirs[i])) differing.push(`[${i}] ${x[i]} → ${ours[i]} vs ${theirs[i]}`);
      expect(differing).toEqual([]);
    },
  );

  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-llama-quantize-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const k256 = join(dir, 'llama-256x8.gguf');
  // dim 256: K-quant tensors stay K-quants; an untied head, so the mixes' output rule shows.
  writeFileSync(k256, buildTestModel({ architecture: 'llama', dim: 256, hiddenDim: 512, nLayers: 8, nHeads: 4, nKvHeads: 2, vocabSize: 320, seed: 5 }));
  const MIXES: Quantization[] = ['q4_k_m', 'q4_k_s', 'q5_k_m', 'q6_k', 'q8_0'];
  const PLAIN: Quantization[] = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q4_k', 'q5_k', 'f16', 'bf16'];
  const sources: [string, string | undefined][] = [
    ['256-wide Llama', k256],
    [
      `stories260K (rows of 64: K-quants fall back)${STORIES_GGUF ? '' : ' — SKIPPED: stories260K.gguf not found in ../shared/models or models/cache'}`,
      STORIES_GGUF,
    ],
  ];

  async function tensors(path: string) {
    const gguf = await readGGUF(bytesSource(new Uint8Array(readFileSync(path)), path));
    return new Map(await Promise.all(gguf.tensors.map(async (t) => [t.name, { type: ggmlTypeName(t.type), bytes: await gguf.tensorBytes(t) }] as const)));
  }

  for (const [name, source] of sources) {
    it.skipIf(!source).each([...MIXES.map((q) => [q, false] as const), ...PLAIN.map((q) => [q, true] as const)])(
      `${name}: npm run quantize %s writes the tensors llama-quantize writes (pure: %s)`,
      { timeout: 60_000 },
      async (q, pure) => {
        const ours = join(dir, `ours-${q}.gguf`);
        const theirs = join(dir, `llama-${q}.gguf`);
        await quantizeFile(source!, ours, q);
        ggml.quantizeFile(source!, theirs, q, { pure });
        const [a, b] = [await tensors(ours), await tensors(theirs)];
        expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
        const types = [...a].map(([n, t]) => `${n} ${t.type}`);
        expect(types).toEqual([...a.keys()].map((n) => `${n} ${b.get(n)!.type}`));
        const differing = [...a].filter(([n, t]) => Buffer.compare(Buffer.from(t.bytes), Buffer.from(b.get(n)!.bytes)) !== 0).map(([n]) => n);
        expect(differing).toEqual([]);
      },
    );
  }
});

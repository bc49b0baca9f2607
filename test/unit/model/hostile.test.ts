/**
 * Damaged and hostile GGUF files: each must fail fast with a typed error that says what and where,
 * never a RangeError, a huge allocation or a hang.
 */
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../../src/errors.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { testModelParts, type TestModelOptions } from '../../../src/model/gguf/synthetic.ts';
import { GGUFValueType as T, meta, type GGUFValue } from '../../../src/model/gguf/types.ts';
import { encodeGGUF, type TensorToWrite } from '../../../src/model/gguf/writer.ts';
import { openModel } from '../../../src/model/open.ts';
import { createTokenizer } from '../../../src/model/tokenizer/index.ts';
import { expectTokenscopeError } from './helpers.ts';

const SHAPE: TestModelOptions = { architecture: 'llama', dim: 32, hiddenDim: 64, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 260 };

/** A small valid model, optionally altered before it is written. */
function model(edit: (parts: { metadata: Map<string, GGUFValue>; tensors: TensorToWrite[] }) => void = () => {}) {
  const parts = testModelParts(SHAPE);
  edit(parts);
  return encodeGGUF(parts.metadata, parts.tensors);
}

const encoder = new TextEncoder();

/** Byte offset just past the length-prefixed string `s` (a key or a tensor name) in the file. */
function after(bytes: Uint8Array, s: string): number {
  const needle = encoder.encode(s);
  const prefixed = new Uint8Array(8 + needle.length);
  new DataView(prefixed.buffer).setBigUint64(0, BigInt(needle.length), true);
  prefixed.set(needle, 8);
  const at = Buffer.from(bytes).indexOf(prefixed);
  if (at < 0) throw new Error(`'${s}' not in the file`);
  return at + prefixed.length;
}

function patch(bytes: Uint8Array, edit: (view: DataView, bytes: Uint8Array) => void): Uint8Array<ArrayBuffer> {
  const copy = bytes.slice();
  edit(new DataView(copy.buffer), copy);
  return copy;
}

/** Where tensor `name`'s type and offset fields are (its table entry holds 2 dims in these models). */
function tensorFields(bytes: Uint8Array, name: string, nDims = 2) {
  const dims = after(bytes, name);
  const type = dims + 4 + 8 * nDims;
  return { nDims: dims, type, offset: type + 4 };
}

const base = model();

interface Case {
  name: string;
  bytes: Uint8Array<ArrayBuffer>;
  code: ErrorCode;
  message: RegExp;
  /** Fails in the header reader (default) or only once the config and tensor roles are checked. */
  stage?: 'read' | 'open';
}

const cases: Case[] = [
  { name: 'empty file', bytes: new Uint8Array(0), code: 'model-format', message: /truncated: magic at byte 0/ },
  {
    name: 'bad magic',
    bytes: patch(base, (_, b) => b.set(encoder.encode('GGML'), 0)),
    code: 'model-format',
    message: /not a GGUF file: it starts with bytes 47 47 4d 4c/,
  },
  { name: 'version 99', bytes: patch(base, (v) => v.setUint32(4, 99, true)), code: 'model-unsupported', message: /GGUF version 99/ },
  { name: 'version 1', bytes: patch(base, (v) => v.setUint32(4, 1, true)), code: 'model-unsupported', message: /GGUF version 1/ },
  { name: 'big-endian v3', bytes: patch(base, (v) => v.setUint32(4, 3, false)), code: 'model-unsupported', message: /big-endian GGUF v3/ },
  {
    name: 'tensor count 2^60',
    bytes: patch(base, (v) => v.setBigUint64(8, 2n ** 60n, true)),
    code: 'model-format',
    message: /tensor count at byte 8 is 1152921504606846976, more than the remaining/,
  },
  {
    name: 'kv count 2^60',
    bytes: patch(base, (v) => v.setBigUint64(16, 2n ** 60n, true)),
    code: 'model-format',
    message: /metadata key\/value count at byte 16 is 1152921504606846976/,
  },
  {
    name: 'string longer than the file',
    bytes: patch(base, (v) => v.setBigUint64(24, 2n ** 40n, true)),
    code: 'model-format',
    message: /metadata key #0 length at byte 24 is 1099511627776/,
  },
  {
    name: 'array of 2^40 elements',
    bytes: patch(base, (v, b) => v.setBigUint64(after(b, 'tokenizer.ggml.tokens') + 8, 2n ** 40n, true)),
    code: 'model-format',
    message: /'tokenizer.ggml.tokens' item count at byte \d+ is 1099511627776/,
  },
  {
    name: 'unknown value type',
    bytes: patch(base, (v, b) => v.setUint32(after(b, 'general.name'), 13, true)),
    code: 'model-format',
    message: /'general.name' has unknown value type 13 at byte \d+/,
  },
  {
    name: 'unknown array item type',
    bytes: patch(base, (v, b) => v.setUint32(after(b, 'tokenizer.ggml.scores') + 4, 77, true)),
    code: 'model-format',
    message: /'tokenizer.ggml.scores' has unknown array item type 77/,
  },
  {
    name: 'arrays nested too deep',
    bytes: (() => {
      let value: GGUFValue = meta.strings(['x']);
      for (let i = 0; i < 20; i++) value = { type: T.ARRAY, itemType: T.ARRAY, items: [value] };
      return encodeGGUF(new Map([['deep', value]]), []);
    })(),
    code: 'model-format',
    message: /'deep'(\[0\])+ nests arrays more than 8 deep/,
  },
  {
    name: 'bool that is not 0 or 1',
    bytes: patch(encodeGGUF(new Map([['flag', meta.bool(true)]]), []), (v, b) => v.setUint8(after(b, 'flag') + 4, 2)),
    code: 'model-format',
    message: /'flag' at byte \d+ is a bool with value 2/,
  },
  {
    name: 'invalid UTF-8 in a string',
    bytes: patch(base, (v, b) => v.setUint8(after(b, 'general.name') + 4 + 8, 0xff)),
    code: 'model-format',
    message: /'general.name' at byte \d+ is not valid UTF-8/,
  },
  {
    name: 'duplicate metadata key',
    bytes: patch(base, (_, b) => b.set(encoder.encode('bos'), after(b, 'tokenizer.ggml.eos_token_id') - 'bos_token_id'.length)),
    code: 'model-format',
    message: /metadata key 'tokenizer.ggml.bos_token_id' at byte \d+ appears twice/,
  },
  {
    name: 'alignment not a power of two',
    bytes: patch(
      model((p) => p.metadata.set('general.alignment', meta.u32(64))),
      (v, b) => v.setUint32(after(b, 'general.alignment') + 4, 48, true),
    ),
    code: 'model-format',
    message: /general.alignment 48 is not a power of two/,
  },
  {
    name: 'alignment of the wrong type',
    bytes: patch(
      model((p) => p.metadata.set('general.alignment', meta.u32(64))),
      (v, b) => v.setUint32(after(b, 'general.alignment'), T.INT32, true),
    ),
    code: 'model-format',
    message: /general.alignment has type INT32, expected UINT32/,
  },
  {
    name: 'five dimensions',
    bytes: patch(base, (v, b) => v.setUint32(tensorFields(b, 'token_embd.weight').nDims, 5, true)),
    code: 'model-format',
    message: /tensor 'token_embd.weight' has 5 dimensions at byte \d+/,
  },
  {
    name: 'dimension 0',
    bytes: patch(base, (v, b) => v.setBigUint64(tensorFields(b, 'token_embd.weight').nDims + 4, 0n, true)),
    code: 'model-format',
    message: /tensor 'token_embd.weight' dimension 0 is 0 at byte \d+/,
  },
  {
    name: 'unknown tensor type',
    bytes: patch(base, (v, b) => v.setUint32(tensorFields(b, 'blk.0.attn_q.weight').type, 99, true)),
    code: 'model-format',
    message: /tensor 'blk.0.attn_q.weight' has unknown tensor type id 99 at byte \d+/,
  },
  {
    name: 'unsupported tensor type (Q3_K)',
    bytes: patch(base, (v, b) => v.setUint32(tensorFields(b, 'blk.0.attn_q.weight').type, 11, true)),
    code: 'model-unsupported',
    message: /tensor 'blk.0.attn_q.weight' has type Q3_K \(11\); tokenscope reads F32, F16, .*Q4_K, Q5_K, Q6_K/,
  },
  {
    name: 'offset past the end',
    bytes: patch(base, (v, b) => v.setBigUint64(tensorFields(b, 'blk.1.ffn_down.weight').offset, 2n ** 32n, true)),
    code: 'model-format',
    message: /tensor 'blk.1.ffn_down.weight' \(64×32, 8192 bytes at data offset 4294967296\) ends at byte \d+, past the end/,
  },
  {
    name: 'misaligned offset',
    bytes: patch(base, (v, b) => {
      const at = tensorFields(b, 'blk.0.attn_k.weight').offset;
      v.setBigUint64(at, v.getBigUint64(at, true) + 4n, true);
    }),
    code: 'model-format',
    message: /tensor 'blk.0.attn_k.weight' has offset \d+ \(at byte \d+\), not a multiple of the alignment 32/,
  },
  {
    name: 'overlapping tensors',
    bytes: patch(base, (v, b) =>
      v.setBigUint64(tensorFields(b, 'blk.0.attn_v.weight').offset, v.getBigUint64(tensorFields(b, 'blk.0.attn_k.weight').offset, true), true),
    ),
    code: 'model-format',
    message: /tensors 'blk.0.attn_\w.weight' and 'blk.0.attn_\w.weight' overlap/,
  },
  {
    name: 'duplicate tensor',
    bytes: patch(base, (_, b) => b.set(encoder.encode('q'), after(b, 'blk.0.attn_k.weight') - 'k.weight'.length)),
    code: 'model-format',
    message: /tensor 'blk.0.attn_q.weight' appears twice/,
  },
  {
    name: 'wrong dims (attn_q)',
    stage: 'open',
    bytes: model((p) => {
      const t = p.tensors.find((x) => x.name === 'blk.1.attn_q.weight')!;
      Object.assign(t, { dims: [32, 16], data: t.data.subarray(0, 32 * 16 * 4) });
    }),
    code: 'model-format',
    message: /tensor 'blk.1.attn_q.weight' has dims \[32, 16\], expected \[32, 32\]/,
  },
  {
    name: 'token_embd rows differ from the vocabulary',
    stage: 'open',
    bytes: model((p) => {
      const t = p.tensors.find((x) => x.name === 'token_embd.weight')!;
      Object.assign(t, { dims: [32, 259], data: t.data.subarray(0, 32 * 259 * 4) });
    }),
    code: 'model-format',
    message: /tensor 'token_embd.weight' has dims \[32, 259\], expected \[32, 260\]/,
  },
  {
    name: 'missing tensor',
    stage: 'open',
    bytes: model((p) =>
      p.tensors.splice(
        p.tensors.findIndex((t) => t.name === 'blk.1.ffn_up.weight'),
        1,
      ),
    ),
    code: 'model-format',
    message: /tensor 'blk.1.ffn_up.weight' is missing/,
  },
  {
    name: 'tensor beyond block_count',
    stage: 'open',
    bytes: model((p) => p.metadata.set('llama.block_count', meta.u32(1))),
    code: 'model-format',
    message: /tensor 'blk.1.attn_norm.weight' is beyond block_count 1/,
  },
  {
    name: 'unknown architecture',
    stage: 'open',
    bytes: model((p) => p.metadata.set('general.architecture', meta.str('gpt9'))),
    code: 'model-unsupported',
    message: /general.architecture is 'gpt9'/,
  },
  {
    name: 'missing required key',
    stage: 'open',
    bytes: model((p) => p.metadata.delete('llama.embedding_length')),
    code: 'model-format',
    message: /required metadata key 'llama.embedding_length' is missing/,
  },
  {
    name: 'required key of the wrong type',
    stage: 'open',
    bytes: model((p) => p.metadata.set('llama.block_count', meta.str('2'))),
    code: 'model-format',
    message: /'llama.block_count' has type STRING, expected an unsigned integer/,
  },
  {
    name: 'head count that does not divide',
    stage: 'open',
    bytes: model((p) => p.metadata.set('llama.attention.head_count_kv', meta.u32(3))),
    code: 'model-format',
    message: /head_count 4 is not a multiple of head_count_kv 3/,
  },
  {
    name: 'RoPE scaling',
    stage: 'open',
    bytes: model((p) => p.metadata.set('llama.rope.scaling.type', meta.str('yarn'))),
    code: 'model-unsupported',
    message: /RoPE scaling \(yarn\)/,
  },
  {
    name: 'EOS outside the vocabulary',
    stage: 'open',
    bytes: model((p) => p.metadata.set('tokenizer.ggml.eos_token_id', meta.u32(260))),
    code: 'model-format',
    message: /tokenizer.ggml.eos_token_id 260 is outside the vocabulary of 260 tokens/,
  },
];

describe('hostile GGUF files', () => {
  it.each(cases)('$name', async ({ bytes, code, message, stage }) => {
    const started = performance.now();
    await expectTokenscopeError(() => (stage === 'open' ? openModel : readGGUF)(bytesSource(bytes, 'evil.gguf')), code, message);
    if (stage === 'open') await expect(readGGUF(bytesSource(bytes))).resolves.toBeDefined();
    // Fast means no allocation or loop sized by a hostile count.
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('every truncation fails: each prefix through the header, then a sample of the data', async () => {
    const full = await readGGUF(bytesSource(base));
    const lastEnd = Math.max(...full.tensors.map((t) => t.offset + t.byteSize));
    const lengths = [
      ...Array.from({ length: full.dataOffset + 1 }, (_, n) => n),
      ...Array.from({ length: 200 }, (_, i) => full.dataOffset + Math.floor(((lastEnd - full.dataOffset) * i) / 200)),
    ];
    const started = performance.now();
    for (const n of lengths.filter((l) => l < lastEnd)) {
      const e = await expectTokenscopeError(() => readGGUF(bytesSource(base.slice(0, n), 'cut.gguf')), 'model-format', /^cut.gguf: /);
      expect(e.message).toMatch(
        /truncated: .* at byte \d+ needs \d+ bytes, but the file ends at byte \d+|at byte \d+ is \d+, more than the remaining \d+ bytes could hold \(truncated or corrupt\)|past the end of the file/,
      );
    }
    expect(lengths.length).toBeGreaterThan(5000);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('names the metadata a truncation cut', async () => {
    const cut = after(base, 'tokenizer.ggml.tokens') + 12 + 2500; // past what the count check needs, inside the strings
    await expectTokenscopeError(
      () => readGGUF(bytesSource(base.slice(0, cut))),
      'model-format',
      /'tokenizer.ggml.tokens'\[\d+\] (length )?at byte \d+.*truncated/,
    );
  });
});

describe('hostile tokenizer metadata', () => {
  const metadataOf = (edit: (m: Map<string, GGUFValue>) => void) => {
    const m = testModelParts(SHAPE).metadata;
    edit(m);
    return m;
  };
  it.each([
    [
      'scores of the wrong length',
      (m: Map<string, GGUFValue>) => m.set('tokenizer.ggml.scores', meta.f32s(new Float32Array(3))),
      'model-format',
      /tokenizer.ggml.scores has 3 entries for 260 tokens/,
    ],
    [
      'an unknown tokenizer model',
      (m: Map<string, GGUFValue>) => m.set('tokenizer.ggml.model', meta.str('bert')),
      'model-unsupported',
      /tokenizer.ggml.model is 'bert'/,
    ],
    [
      'tokens that are not strings',
      (m: Map<string, GGUFValue>) => m.set('tokenizer.ggml.tokens', meta.f32s(new Float32Array(3))),
      'model-format',
      /'tokenizer.ggml.tokens' has type ARRAY of FLOAT32, expected ARRAY of STRING/,
    ],
  ] as const)('%s', async (_, edit, code, message) => {
    await expectTokenscopeError(() => createTokenizer(metadataOf(edit)), code, message);
  });

  it('checks byte-level BPE merges and pre-tokenizer names', async () => {
    const gpt2 = () => testModelParts({ ...SHAPE, tokenizer: 'gpt2' }).metadata;
    const badMerge = gpt2().set('tokenizer.ggml.merges', meta.strings(['Ġ q', 'nospace']));
    await expectTokenscopeError(() => createTokenizer(badMerge), 'model-format', /merge #0 'Ġ q' makes 'Ġq', which is not in the vocabulary/);
    const noSpace = gpt2().set('tokenizer.ggml.merges', meta.strings(['nospace']));
    await expectTokenscopeError(() => createTokenizer(noSpace), 'model-format', /merge #0 'nospace' is not two tokens/);
    const pre = gpt2().set('tokenizer.ggml.pre', meta.str('mystery'));
    await expectTokenscopeError(() => createTokenizer(pre), 'model-unsupported', /tokenizer.ggml.pre 'mystery'/);
  });
});

it('the hostile corpus itself is valid apart from its one defect', async () => {
  await expect(openModel(bytesSource(base))).resolves.toMatchObject({ config: { dim: 32, nLayers: 2 } });
});

import { describe, expect, it } from 'vitest';
import { parameterCount } from '../../../src/model/catalog.ts';
import { readModelConfig } from '../../../src/model/config.ts';
import { readGGUF } from '../../../src/model/gguf/reader.ts';
import { bytesSource } from '../../../src/model/gguf/source.ts';
import { buildTestModel, testModelParts } from '../../../src/model/gguf/synthetic.ts';
import { GGMLType, ggmlTypeName, meta } from '../../../src/model/gguf/types.ts';
import { encodeGGUF } from '../../../src/model/gguf/writer.ts';
import { inspectModel, inspectSource, typeShares } from '../../../src/measure/inspect.ts';
import { openModel } from '../../../src/model/open.ts';
import { describeError } from '../../../src/errors.ts';

const shape = { architecture: 'llama' as const, dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 320, contextLength: 1024 };
/** Q8_0 matrices except a Q4_0 output head; norms and the embedding table stay F32. */
const mixed = buildTestModel({ ...shape, types: { default: 'Q8_0', output: 'Q4_0', tokenEmbd: 'F32' } });
const big = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27 };

describe('typeShares', () => {
  it("sums each type's bytes from the tensor table and names it from the type table", async () => {
    const gguf = await readGGUF(bytesSource(mixed));
    const shares = typeShares(gguf);
    expect(shares.map((s) => s.type).sort()).toEqual(['F32', 'Q4_0', 'Q8_0']);
    for (const s of shares) {
      const own = gguf.tensors.filter((t) => ggmlTypeName(t.type) === s.type);
      expect(s.tensors).toBe(own.length);
      expect(s.bytes).toBe(own.reduce((n, t) => n + t.byteSize, 0));
    }
    // Largest first, shares add up to one.
    expect(shares.map((s) => s.bytes)).toEqual([...shares.map((s) => s.bytes)].sort((a, b) => b - a));
    expect(shares.reduce((n, s) => n + s.share, 0)).toBeCloseTo(1, 12);
    // Q4_0 output: 64·320 weights at 18 bytes per 32.
    expect(shares.find((s) => s.type === 'Q4_0')!.bytes).toBe(((64 * 320) / 32) * 18);
  });
});

describe('inspectModel', () => {
  it('reports architecture, parameters, sizes and the header extent', async () => {
    const gguf = await readGGUF(bytesSource(mixed, 'mixed.gguf'));
    const ins = inspectModel(gguf, { limits: big });
    expect(ins.source).toBe('mixed.gguf');
    expect(ins.architecture).toBe('llama');
    expect(ins.parameters).toBe(parameterCount(readModelConfig(gguf)));
    expect(ins.fileBytes).toBe(mixed.length);
    expect(ins.headerBytes).toBe(gguf.dataOffset);
    expect(ins.tensorBytes).toBe(gguf.tensors.reduce((n, t) => n + t.byteSize, 0));
    expect(ins.contextLength).toBe(1024);
    expect(ins.unsupported).toBeNull();
    expect(ins.memory!.checked).toBe(true);
    expect(ins.memory!.problem).toBeNull();
    expect(ins.memory!.context).toBe(1024);
  });

  it("predicts decode tokens/s as read roof ÷ bytes per token (the file's matrices once, an untied table gathered), and none without a roof", async () => {
    const gguf = await readGGUF(bytesSource(mixed));
    const embd = gguf.tensor('token_embd.weight')!;
    const vectors = gguf.tensors.filter((t) => t.dims.length === 1 || t.dims[1] === 1);
    // Untied: every matrix is read once, the embedding table (80 KiB) gathered one row per token; in a model this small
    // the activations (logits, Q|K|V, norms) add about 15%.
    const matrices = gguf.tensors.filter((t) => !vectors.includes(t) && t !== embd).reduce((n, t) => n + t.byteSize, 0) + embd.byteSize / 320;
    const withRoof = inspectModel(gguf, { readRoofGBs: 50 });
    const bytes = withRoof.decode!.bytesPerToken;
    expect(bytes).toBeGreaterThan(matrices);
    expect(bytes).toBeLessThan(1.2 * matrices);
    expect(withRoof.decode!.tokensPerS).toBeCloseTo(50e9 / bytes, 6);
    expect(inspectModel(gguf).decode!.tokensPerS).toBeNull();
    // KV-cache reads join the bytes at a depth: 2 (K, V) · layers · kvDim · 4 bytes per position.
    const deep = inspectModel(gguf, { readRoofGBs: 50, depth: 100 });
    expect(deep.decode!.bytesPerToken - bytes).toBe(2 * 2 * (2 * 16) * 4 * 100);
  });

  it('counts a tied embedding table whole (it is the LM head)', async () => {
    const untied = inspectModel(await readGGUF(bytesSource(buildTestModel({ ...shape }))));
    const tied = inspectModel(await readGGUF(bytesSource(buildTestModel({ ...shape, tiedEmbeddings: true }))));
    // Tied: the F32 table (320 × 64) is read whole by the LM head instead of an output matrix of the same size.
    expect(tied.decode!.bytesPerToken).toBe(untied.decode!.bytesPerToken);
  });

  it('checks the memory plan against the device limits and the budget', async () => {
    const gguf = await readGGUF(bytesSource(mixed));
    const tiny = inspectModel(gguf, { limits: { maxBufferSize: 4096, maxStorageBufferBindingSize: 4096 } });
    expect(tiny.memory!.problem).toMatch(/this device allows at most/);
    const budget = inspectModel(gguf, { limits: big, budgetBytes: 1000 });
    expect(budget.memory!.problem).toMatch(/budget/);
    const unknown = inspectModel(gguf);
    expect(unknown.memory!.checked).toBe(false);
    expect(unknown.memory!.problem).toBeNull();
    // The planned context is the option's; past the model's own context it is refused, as a run refuses it.
    expect(inspectModel(gguf, { context: 99 }).memory!.context).toBe(99);
    const tooLong = inspectModel(gguf, { context: 1 << 20 });
    expect(tooLong.unsupported).toMatch(/A context of 1048576 exceeds .*'s 1024\. — Use a shorter context\./);
    expect(tooLong.memory).toBeNull();
  });

  it('still describes a file whose architecture tokenscope does not run, and says why', async () => {
    const { metadata, tensors } = testModelParts(shape);
    metadata.set('general.architecture', meta.str('mamba'));
    const gguf = await readGGUF(bytesSource(encodeGGUF(metadata, tensors)));
    const ins = await inspectSource(gguf.source, { limits: big, readRoofGBs: 10 });
    expect(ins.architecture).toBe('mamba');
    expect(ins.unsupported).toMatch(/mamba/);
    expect(ins.memory).toBeNull();
    expect(ins.types.map((t) => t.type)).toEqual(['F32']);
    expect(ins.parameters).toBe(tensors.reduce((n, t) => n + t.dims.reduce((a, b) => a * b, 1), 0));
    // The engine cannot plan it, so no decode prediction.
    expect(ins.decode).toBeNull();
  });
});

describe('inspect agrees with run', () => {
  const small = { architecture: 'llama' as const, dim: 32, hiddenDim: 64, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 260 };
  const broken = (edit: (p: ReturnType<typeof testModelParts>) => void) => {
    const parts = testModelParts(small);
    edit(parts);
    return encodeGGUF(parts.metadata, parts.tensors);
  };
  const tensor = (p: ReturnType<typeof testModelParts>, name: string) => p.tensors.find((t) => t.name === name)!;
  it.each([
    ['context 0', broken((p) => p.metadata.set('llama.context_length', meta.u32(0))), /'llama.context_length' is 0/],
    ['n_head_kv 0', broken((p) => p.metadata.set('llama.attention.head_count_kv', meta.u32(0))), /'llama.attention.head_count_kv' is 0/],
    [
      'heads that do not divide',
      broken((p) => p.metadata.set('llama.attention.head_count_kv', meta.u32(3))),
      /head_count 4 is not a multiple of head_count_kv 3/,
    ],
    ['odd RoPE dims', broken((p) => p.metadata.set('llama.rope.dimension_count', meta.u32(7))), /rope.dimension_count 7 must be even/],
    ['a missing tensor', broken((p) => p.tensors.splice(p.tensors.indexOf(tensor(p, 'blk.1.ffn_up.weight')), 1)), /'blk.1.ffn_up.weight' is missing/],
    [
      'a vocabulary that does not match the embedding',
      broken((p) => {
        const t = tensor(p, 'token_embd.weight');
        Object.assign(t, { dims: [32, 259], data: t.data.subarray(0, 32 * 259 * 4) });
      }),
      /'token_embd.weight' has dims \[32, 259\], expected \[32, 260\]/,
    ],
    [
      'NaN rope_freqs',
      broken((p) =>
        p.tensors.push({ name: 'rope_freqs.weight', type: GGMLType.F32, dims: [4], data: new Uint8Array(new Float32Array([NaN, 1, 1, 1]).buffer) }),
      ),
      /rope_freqs.weight must hold positive finite values/,
    ],
  ])('%s: inspect says "cannot run" with the message the run gives', async (_, bytes, message) => {
    const source = () => bytesSource(bytes, 'broken.gguf');
    let runMessage = '';
    await openModel(source()).catch((e: unknown) => (runMessage = describeError(e)));
    expect(runMessage).toMatch(message);
    const ins = await inspectSource(source());
    expect(ins.unsupported).toBe(runMessage);
    expect(ins.memory).toBeNull();
  });
});

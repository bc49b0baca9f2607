import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource } from '../../../src/model/gguf/node-source.ts';
import { metaUint } from '../../../src/model/gguf/metadata.ts';
import { GGMLType } from '../../../src/model/gguf/types.ts';
import { openModel, type OpenModel } from '../../../src/model/open.ts';
import { argmax, loadReferenceWeights, ReferenceModel, type ReferenceWeights } from '../../../src/model/reference.ts';
import { expectLlamaCppLayout } from './helpers.ts';
import { REPO_ROOT, STORIES_EXPECTED, STORIES_GGUF, storiesTitle } from './paths.ts';

const run = promisify(execFile);
/** The CLI as `npm run quantize -- …` runs it. */
const quantize = (...args: string[]) => run('npm', ['run', '--silent', 'quantize', '--', ...args], { cwd: REPO_ROOT });

async function open(path: string): Promise<OpenModel & { weights: ReferenceWeights }> {
  const source = await fileSource(path);
  try {
    const model = await openModel(source);
    const weights = await loadReferenceWeights(model.gguf, model.config, model.tensors); // reads while the file is open
    return Object.assign(model, { weights });
  } finally {
    await source.close();
  }
}

describe.skipIf(!STORIES_GGUF || !STORIES_EXPECTED)(storiesTitle('npm run quantize on stories260K'), () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-quantize-'));
  const out = (name: string) => join(dir, name);
  let stdout: string;
  beforeAll(async () => {
    const results = await Promise.all([
      quantize(STORIES_GGUF!, out('q8.gguf'), 'q8_0'),
      quantize(STORIES_GGUF!, out('q8-again.gguf'), 'q8_0'),
      quantize(STORIES_GGUF!, out('q4.gguf'), 'q4_0'),
      quantize(STORIES_GGUF!, out('q4km.gguf'), 'Q4_K_M'),
    ]);
    stdout = results[0].stdout;
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a GGUF whose matrices are Q8_0, keeping norms in F32 and the 172-wide ffn_down (no block fits) in F16, as llama-quantize does', async () => {
    expect(stdout).toMatch(/Q8_0: 37 tensors converted, 11 kept as they were .*tensors now 32 Q8_0, 11 F32, 5 F16/);
    const { gguf, config } = await open(out('q8.gguf'));
    const typeOf = (name: string) => gguf.tensor(name)!.type;
    expect(gguf.tensors).toHaveLength(48);
    expect([typeOf('token_embd.weight'), typeOf('output.weight'), typeOf('blk.3.attn_q.weight'), typeOf('blk.3.ffn_up.weight')]).toEqual(
      Array(4).fill(GGMLType.Q8_0),
    );
    expect(typeOf('blk.3.ffn_down.weight')).toBe(GGMLType.F16);
    expect([typeOf('blk.3.attn_norm.weight'), typeOf('output_norm.weight')]).toEqual(Array(2).fill(GGMLType.F32));
    expect([metaUint(gguf.metadata, 'general.file_type'), metaUint(gguf.metadata, 'general.quantization_version')]).toEqual([7, 2]);
    expect(config).toMatchObject({ dim: 64, nLayers: 5, vocabSize: 512 });
    expect(gguf.version).toBe(3);
    expectLlamaCppLayout(gguf);
  });

  it('Q4_K_M as llama-quantize mixes it: rows of 64 fall back to Q5_0, the head and use_more_bits attn_v (layers 2, 4) to Q8_0, 172-wide ffn_down to F16', async () => {
    const { gguf } = await open(out('q4km.gguf'));
    const typeOf = (name: string) => gguf.tensor(name)!.type;
    expect([typeOf('blk.0.attn_q.weight'), typeOf('token_embd.weight'), typeOf('blk.0.attn_v.weight')]).toEqual(Array(3).fill(GGMLType.Q5_0));
    expect([typeOf('output.weight'), typeOf('blk.2.attn_v.weight'), typeOf('blk.4.attn_v.weight')]).toEqual(Array(3).fill(GGMLType.Q8_0));
    expect(typeOf('blk.1.ffn_down.weight')).toBe(GGMLType.F16);
    expect(metaUint(gguf.metadata, 'general.file_type')).toBe(15);
    expectLlamaCppLayout(gguf);
  });

  it('writes the same bytes every time', () => {
    expect(readFileSync(out('q8-again.gguf')).equals(readFileSync(out('q8.gguf')))).toBe(true);
  });

  it('keeps all metadata but the file type, and Q4_0 is MOSTLY_Q4_0', async () => {
    const [f32, q4] = [await open(STORIES_GGUF!), await open(out('q4.gguf'))];
    for (const [key, value] of f32.gguf.metadata) if (key !== 'general.file_type') expect(q4.gguf.metadata.get(key), key).toEqual(value);
    expect(metaUint(q4.gguf.metadata, 'general.file_type')).toBe(2);
    expect(q4.gguf.tensor('blk.0.attn_v.weight')!.type).toBe(GGMLType.Q4_0);
  });

  it('runs through the reference within quantization error of F32 (Q8_0 much closer than Q4_0)', async () => {
    const expected = JSON.parse(readFileSync(STORIES_EXPECTED!, 'utf8')) as { token_ids: number[] };
    const models = await Promise.all([STORIES_GGUF!, out('q8.gguf'), out('q4.gguf')].map(open));
    const [f32, q8, q4] = models.map((m) => new ReferenceModel(m.config, m.weights));
    const stats = { q8: { err: 0, agree: 0 }, q4: { err: 0, agree: 0 } };
    let norm = 0;
    // Teacher-forced on the F32 model's own generation, so each model sees the same context.
    const positions = expected.token_ids.slice(0, 64);
    positions.forEach((token, pos) => {
      const ref = Float32Array.from(f32.forward(token, pos));
      norm += ref.reduce((s, v) => s + v * v, 0);
      for (const [name, model] of [
        ['q8', q8],
        ['q4', q4],
      ] as const) {
        const logits = model.forward(token, pos);
        stats[name].err += logits.reduce((s, v, i) => s + (v - ref[i]) ** 2, 0);
        stats[name].agree += Number(argmax(logits) === argmax(ref));
      }
    });
    const rel = (name: 'q8' | 'q4') => Math.sqrt(stats[name].err / norm);
    // Measured: Q8_0 0.6% and Q4_0 13% RMS logit error, with Q8_0 keeping every argmax; Q8_0's per-weight
    // error is ≤ amax/254, Q4_0's ≤ amax/8 (amax/16 away from the clamp), so the bounds leave ~3× margin.
    expect(rel('q8')).toBeLessThan(0.02);
    expect(stats.q8.agree).toBeGreaterThanOrEqual(62);
    expect(rel('q4')).toBeLessThan(0.3);
    expect(rel('q8')).toBeLessThan(rel('q4') / 4);
  });

  it('refuses to requantize, and exits non-zero with the usage on bad arguments', async () => {
    await expect(quantize(out('q8.gguf'), out('again.gguf'), 'q4_0')).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/already quantized/) });
    await expect(quantize(STORIES_GGUF!, out('x.gguf'), 'q3_k')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/usage: npm run quantize -- IN.gguf OUT.gguf f16\|bf16\|q8_0\|.*\|q4_k_m\|q4_k_s\|q5_k_m/),
    });
  });
});

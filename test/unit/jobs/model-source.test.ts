import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/jobs/model-source.ts';
import { buildTestModel } from '../../../src/model/gguf/synthetic.ts';
import { openDescriptors } from './open-descriptors.ts';

describe('resolveModel over a file on disk', () => {
  let dir: string;
  let good: string;
  let bad: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tokenscope-source-'));
    good = join(dir, 'tiny.gguf');
    bad = join(dir, 'broken.gguf');
    writeFileSync(good, buildTestModel({ architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 1, nHeads: 2, nKvHeads: 2, vocabSize: 320, seed: 1 }));
    writeFileSync(bad, Buffer.from('GGUF but nothing a reader can use'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the file open for the run and closes it on release', async () => {
    const resolved = await resolveModel({ path: good });
    expect(resolved.choice.kind).toBe('gguf');
    expect(openDescriptors(good)).toBe(1);
    await resolved.release!();
    expect(openDescriptors(good)).toBe(0);
  });

  it('closes the file when it cannot be parsed', async () => {
    await expect(resolveModel({ path: bad })).rejects.toThrow(/GGUF|header|file/i);
    expect(openDescriptors(bad)).toBe(0);
  });

  it('has nothing to release for a source the caller holds', async () => {
    const { bytesSource } = await import('../../../src/model/gguf/source.ts');
    const resolved = await resolveModel(
      {},
      {
        source: bytesSource(
          buildTestModel({ architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 1, nHeads: 2, nKvHeads: 2, vocabSize: 320, seed: 1 }),
          'm.gguf',
        ),
      },
    );
    expect(resolved.release).toBeUndefined();
  });
});

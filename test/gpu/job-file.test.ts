/**
 * A job over a model file on disk (the CLI's --model PATH) closes the file when it is done with it:
 * after a run that read it to the end (weights, then the accuracy pass's reference) and after one
 * refused once the file was open. Node only: the page opens no paths.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { runJob } from '../../src/jobs/job.ts';
import { inBrowser, testGpu } from './context.ts';

const nodeImport = <T>(path: string): Promise<T> => import(/* @vite-ignore */ path) as Promise<T>;

describe.skipIf(inBrowser)(`a job over a file on disk${inBrowser ? ' — SKIPPED: the page opens no paths' : ''}`, () => {
  let ctx: GpuContext;
  let dir: string;
  let path: string;
  let openDescriptors: (path: string) => number;
  beforeAll(async () => {
    ctx = await testGpu();
    const fs = await nodeImport<typeof import('node:fs')>('node:fs');
    const os = await nodeImport<typeof import('node:os')>('node:os');
    const { buildTestModel } = await import('../../src/model/gguf/synthetic.ts');
    ({ openDescriptors } = await nodeImport<typeof import('../unit/jobs/open-descriptors.ts')>('../unit/jobs/open-descriptors.ts'));
    dir = fs.mkdtempSync(`${os.tmpdir()}/tokenscope-job-file-`);
    path = `${dir}/tiny.gguf`;
    fs.writeFileSync(path, buildTestModel({ architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 2, nKvHeads: 2, vocabSize: 320, seed: 3 }));
  });
  afterAll(async () => {
    ctx?.destroy();
    if (dir) (await nodeImport<typeof import('node:fs')>('node:fs')).rmSync(dir, { recursive: true, force: true });
  });

  it('closes the file after a generation and its accuracy pass', async () => {
    const result = await runJob(ctx, { probe: false, model: { path }, generate: { prompt: 'Once', gen: 3 }, accuracy: 'on' }, new Set());
    expect(result.generation?.token_ids).toHaveLength(3);
    expect(result.accuracy).toMatchObject({ reference: 'cpu-f32' });
    expect(openDescriptors(path)).toBe(0);
  });

  it('closes the file when the job is refused after opening it', async () => {
    // A context the file does not hold: refused once its header is read, before anything runs.
    await expect(runJob(ctx, { probe: false, model: { path }, generate: { prompt: 'Once', gen: 4000 } }, new Set())).rejects.toThrow(/positions/);
    expect(openDescriptors(path)).toBe(0);
  });
});

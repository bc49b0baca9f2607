/**
 * Records (UPDATE_FIXTURES=1) or re-checks test/gpu/fixtures/gemma3-llama-cpp.json: llama.cpp's
 * logits and greedy tokens for the small-vocabulary tiny Gemma 3 file, which the browser GPU test
 * compares our engine with (the browser cannot run llama.cpp).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { nmse } from '../../oracle/compare.ts';
import { FIXTURE_ARCH, FIXTURE_PROMPT, FIXTURE_STEPS, type LlamaCppFixture } from '../../oracle/gpu-fixture.ts';
import { openLlamaCpp } from '../../oracle/llama-cpp.ts';
import { smallVocab, tinyModel } from '../../oracle/tiny-models.ts';
import { REPO_ROOT } from '../model/paths.ts';

const FIXTURE = resolve(REPO_ROOT, `test/gpu/fixtures/${FIXTURE_ARCH}-llama-cpp.json`);
const dir = mkdtempSync(join(tmpdir(), 'tokenscope-fixture-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it(`llama.cpp still gives the recorded answers for the tiny ${FIXTURE_ARCH} file`, async () => {
  const path = join(dir, `${FIXTURE_ARCH}.gguf`);
  writeFileSync(path, tinyModel(FIXTURE_ARCH, { vocab: smallVocab(FIXTURE_ARCH) }));
  const oracle = await openLlamaCpp(path, { contextSize: 64 });
  try {
    const { logProbs, tokens } = await oracle.run(FIXTURE_PROMPT, FIXTURE_STEPS);
    const now: LlamaCppFixture = { arch: FIXTURE_ARCH, prompt: FIXTURE_PROMPT, logProbs: Array.from(logProbs, (v) => Number(v.toPrecision(7))), tokens };
    if (process.env.UPDATE_FIXTURES || !existsSync(FIXTURE)) writeFileSync(FIXTURE, `${JSON.stringify(now)}\n`);
    const recorded = JSON.parse(readFileSync(FIXTURE, 'utf8')) as LlamaCppFixture;
    expect({ prompt: recorded.prompt, tokens: recorded.tokens }).toEqual({ prompt: now.prompt, tokens: now.tokens });
    expect(nmse(recorded.logProbs, now.logProbs)).toBeLessThan(1e-12);
  } finally {
    await oracle.dispose();
  }
});

import { describe, expect, it } from 'vitest';
import { runContext, servePositions } from '../../../src/jobs/job-spec.ts';
import { checkPrefixWorkload } from '../../../src/serve/run.ts';
import { benchJob, parseBench, usageError } from './bench-args.ts';

const job = (argv: string[]) => benchJob(['--mode', 'serve', '-m', 'stories15m', ...argv]);
/** The usage error's message (exit 2, before any GPU work). */
const refusal = (argv: string[]) => usageError(() => job(argv), argv.join(' '));

describe('prefix-caching flags', () => {
  it('turn into serve settings: the cache on by default, a shared prefix, conversations × turns requests', () => {
    expect(job([]).serve).toMatchObject({ prefix_cache: true, requests: 16 });
    expect(job(['--prefix-cache', 'off']).serve?.prefix_cache).toBe(false);
    const s = job(['--shared-prefix', '64', '--conversations', '3', '--turns', '4', '--prompt-len', '8', '--output-len', '4']).serve!;
    expect(s).toMatchObject({ shared_prefix: 64, conversations: 3, turns: 4, requests: 12 });
    // The last turn holds the prefix and every turn's message and answer (less the last output).
    expect(servePositions(s)).toBe(64 + 4 * (8 + 4) - 1);
    expect(job(['--conversations', '2']).serve).toMatchObject({ turns: 2, requests: 4 });
  });

  it('refuses zero, negative and contradictory values, and a prefix past the context, with a usage error', () => {
    expect(refusal(['--shared-prefix', '0'])).toMatch(/--shared-prefix must be an integer from 1 to/);
    expect(refusal(['--shared-prefix', '-3'])).toMatch(/--shared-prefix/);
    expect(refusal(['--conversations', '0'])).toMatch(/--conversations must be an integer from 1/);
    expect(refusal(['--conversations', '2', '--turns', '0'])).toMatch(/--turns must be an integer from 1/);
    expect(refusal(['--turns', '3'])).toMatch(/--turns needs --conversations/);
    expect(refusal(['--conversations', '2', '--requests', '8'])).toMatch(/leave --requests out/);
    expect(refusal(['--prefix-cache', 'maybe'])).toMatch(/--prefix-cache must be on or off/);
    expect(refusal(['--shared-prefix', '200', '--context', '128'])).toMatch(/needs 247 positions .*--context 128/);
    expect(refusal(['--conversations', '2', '--turns', '200', '--prompt-len', '100', '--output-len', '100'])).toMatch(/over 32768/);
  });

  it('are serve-mode flags', () => {
    expect(() => parseBench(['--shared-prefix', '64'])).toThrow(/--shared-prefix is a serve-mode flag/);
  });

  it("refuse a prefix past the model's context when no --context is given, before any GPU work", () => {
    const j = job(['--shared-prefix', '120', '--prompt-len', '16', '--output-len', '8']);
    expect(() => runContext(j, { name: 'stories260K', contextLength: 128 })).toThrow(/needs 143 positions .*with the shared prefix.*holds 128/);
    expect(runContext(job(['--shared-prefix', '64', '--prompt-len', '16', '--output-len', '8']), { name: 'm', contextLength: 512 })).toBe(128);
  });

  it("are checked again where the page's settings reach the engine (the serving run)", () => {
    const s = job(['--shared-prefix', '64', '--prompt-len', '16', '--output-len', '8']).serve!;
    expect(() => checkPrefixWorkload(s, 128)).not.toThrow();
    expect(() => checkPrefixWorkload(s, 64)).toThrow(/needs 87 positions .*context holds 64/);
    expect(() => checkPrefixWorkload({ ...s, shared_prefix: 0 }, 128)).toThrow(/shared prefix must be an integer ≥ 1/);
    expect(() => checkPrefixWorkload({ ...s, turns: 2 }, 128)).toThrow(/need a conversation count/);
    expect(() => checkPrefixWorkload({ ...s, conversations: 2, turns: -1 }, 128)).toThrow(/turns per conversation must be/);
  });
});

/**
 * `--cached-prefix C,C` (issue 23: the latency sweep's TTFT saved at each cached length): parsed into
 * the job (sorted, deduplicated), refused where no prompt length is longer, in serve mode and out of
 * range; the report prints its table.
 */
import { describe, expect, it } from 'vitest';
import { latencySection } from '../../../src/measure/sections/latency.ts';
import { benchJob as job, usageError } from './bench-args.ts';

const refusal = (argv: string[]) => usageError(() => job(argv), argv.join(' '));

describe('--cached-prefix', () => {
  it('goes into the latency job, sorted and without repeats', () => {
    expect(job(['--prompt-lengths', '32,64', '--cached-prefix', '48,16,16']).latency?.cachedPrefixes).toEqual([16, 48]);
    expect(job(['--prompt-lengths', '32,64']).latency?.cachedPrefixes).toBeUndefined();
  });

  it.each([
    [['--prompt-lengths', '32,64', '--cached-prefix', '64'], /--cached-prefix 64 is not shorter than any prompt length \(the longest is 64\)/],
    [['--cached-prefix', '0'], /each value of --cached-prefix must be an integer from 1 to/],
    [['--mode', 'serve', '--cached-prefix', '16'], /--cached-prefix is a flag of the latency sweep/],
  ])('%j is refused, saying why', (argv, message) => {
    expect(refusal(argv)).toMatch(message);
  });

  it('prints a table of TTFT with and without the cached prefix', () => {
    const ttft = { count: 3, mean: 5.3, std: 0.1, min: 5.2, p50: 5.29, p90: 10.67, p95: 10.8, p99: 10.9, max: 11 };
    const text = latencySection.report({
      requests: [],
      rows: [],
      prefix_ttft: [{ prompt_tokens: 64, cached_tokens: 48, n: 3, ttft, uncached_ttft_p50_ms: 14.17, saved_ms: 8.88, saved_share: 0.6267 }],
    });
    expect(text).toContain('TTFT with a cached prefix');
    expect(text).toMatch(/prompt\s+cached\s+n\s+TTFT p50\s+TTFT p90\s+uncached p50\s+saved ms\s+saved/);
    expect(text).toMatch(/64\s+48\s+3\s+5\.29\s+10\.67\s+14\.17\s+8\.88\s+63%/);
  });
});

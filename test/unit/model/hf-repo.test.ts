import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHfRepoRef, pickGgufFile, quantTagOf, resolveHfRepo } from '../../../src/model/hf-repo.ts';
import { parseFlags } from '../../../cli/args.ts';
import { describeError } from '../../../src/errors.ts';
import { jobFromFlags } from '../../../cli/bench-job.ts';
import { BENCH_FLAGS, misplacedFlag } from '../../../cli/bench-flags.ts';

const BARTOWSKI = [
  '.gitattributes',
  'README.md',
  'Llama-3.2-1B-Instruct-IQ3_M.gguf',
  'Llama-3.2-1B-Instruct-Q4_K.gguf',
  'Llama-3.2-1B-Instruct-Q4_K_M.gguf',
  'Llama-3.2-1B-Instruct-Q4_K_S.gguf',
  'Llama-3.2-1B-Instruct-Q8_0.gguf',
  'Llama-3.2-1B-Instruct-f16.gguf',
  'mmproj-Llama-3.2-1B-Instruct-Q8_0.gguf',
];
const ref = (text: string) => parseHfRepoRef(text)!;

describe('-hf ORG/REPO[:QUANT]', () => {
  it('reads the repository and the optional tag, and nothing that is a path or a file', () => {
    expect(parseHfRepoRef('bartowski/Llama-3.2-1B-Instruct-GGUF:q8_0')).toEqual({ org: 'bartowski', repo: 'Llama-3.2-1B-Instruct-GGUF', quant: 'q8_0' });
    expect(parseHfRepoRef('org/repo')).toEqual({ org: 'org', repo: 'repo' });
    for (const notARepo of ['./m.gguf', '../shared/models/x.gguf', 'models/m.gguf', 'a/b/c', 'https://x/y', 'org/repo:', 'stories15m']) {
      expect(parseHfRepoRef(notARepo), notARepo).toBeNull();
    }
  });

  it('picks the file whose name holds the tag as a whole, case-insensitively, Q4_K_M by default; never an mmproj', () => {
    expect(pickGgufFile(BARTOWSKI, ref('b/r'))).toBe('Llama-3.2-1B-Instruct-Q4_K_M.gguf');
    expect(pickGgufFile(BARTOWSKI, ref('b/r:q4_k'))).toBe('Llama-3.2-1B-Instruct-Q4_K.gguf');
    expect(pickGgufFile(BARTOWSKI, ref('b/r:Q8_0'))).toBe('Llama-3.2-1B-Instruct-Q8_0.gguf');
    expect(pickGgufFile(BARTOWSKI, ref('b/r:F16'))).toBe('Llama-3.2-1B-Instruct-f16.gguf');
    expect(pickGgufFile(['qwen2.5-0.5b-instruct-q4_k_m.gguf', 'model.Q4_K_M.gguf'], ref('q/r'))).toBe('qwen2.5-0.5b-instruct-q4_k_m.gguf');
  });

  it('prefers a single file over split parts, and says so when only parts exist', () => {
    const files = ['Q4_K_M/M-Q4_K_M-00001-of-00002.gguf', 'Q4_K_M/M-Q4_K_M-00002-of-00002.gguf', 'M-Q4_K_M.gguf', 'M-Q8_0-00001-of-00003.gguf'];
    expect(pickGgufFile(files, ref('o/r'))).toBe('M-Q4_K_M.gguf');
    expect(() => pickGgufFile(files, ref('o/r:Q8_0'))).toThrow(/o\/r:Q8_0 is split into parts \(M-Q8_0-00001-of-00003\.gguf …\)/);
  });

  it('lists the quants the repository has when none matches', () => {
    expect(() => pickGgufFile(BARTOWSKI, ref('b/r:Q5_K_M'))).toThrow('b/r has no Q5_K_M file; its quants: F16, IQ3_M, Q4_K, Q4_K_M, Q4_K_S, Q8_0');
    let error: unknown;
    try {
      pickGgufFile(['M-Q8_0.gguf'], ref('b/r'));
    } catch (e) {
      error = e;
    }
    expect(describeError(error)).toBe('b/r has no Q4_K_M file (the tag taken when none is given); its quants: Q8_0 — Name one after a colon, e.g. b/r:Q8_0.');
    expect(() => pickGgufFile(['README.md'], ref('b/r'))).toThrow(/b\/r has no \.gguf file/);
    expect(quantTagOf('Q4_K_M/M-Q4_K_M-00001-of-00002.gguf')).toBe('Q4_K_M');
  });

  describe('against a local Hub', () => {
    let server: Server;
    let base = '';
    const paths: string[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        paths.push(req.url ?? '');
        if (req.url === '/api/models/bartowski/Llama-3.2-1B-Instruct-GGUF') {
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: 'x', siblings: BARTOWSKI.map((rfilename) => ({ rfilename })) }));
        } else if (req.url === '/api/models/org/html') res.writeHead(200).end('<html>');
        else res.writeHead(404).end('{"error":"Repository not found"}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('resolves the repository listing to the file URL on the main branch', async () => {
      const got = await resolveHfRepo(ref('bartowski/Llama-3.2-1B-Instruct-GGUF:q8_0'), base);
      expect(got).toEqual({
        file: 'Llama-3.2-1B-Instruct-Q8_0.gguf',
        url: `${base}bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q8_0.gguf`,
      });
      expect(paths).toContain('/api/models/bartowski/Llama-3.2-1B-Instruct-GGUF');
    });

    it('says which repository does not exist, and what a non-listing answer is', async () => {
      await expect(resolveHfRepo(ref('nobody/missing'), base)).rejects.toThrow(/Hugging Face has no public repository nobody\/missing/);
      await expect(resolveHfRepo(ref('org/html'), base)).rejects.toThrow(/did not answer with a model listing/);
    });
  });

  it('is a flag of model runs: refused beside --model, with --inspect or --probe, and in a bad form', () => {
    const parse = (argv: string[]) => parseFlags(argv, BENCH_FLAGS, misplacedFlag);
    expect(parse(['-hf', 'o/r:Q8_0', '-p', '16']).get('hf-repo')).toBe('o/r:Q8_0');
    expect(() => parse(['-hf', 'o/r', '-m', 'x.gguf'])).toThrow(/-hf and --model both name the model/);
    expect(() => parse(['-hf', 'o/r', '--probe'])).toThrow(/^-hf does not apply to --probe/);
    expect(() => jobFromFlags(parse(['-hf', 'o/r/x.gguf']), true)).toThrow(/-hf takes ORG\/REPO or ORG\/REPO:QUANT/);
  });
});

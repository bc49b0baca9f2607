import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeFiles, parseMergeArgs, readResultFile } from '../../../cli/merge.ts';
import { LIST_KIND, parseResultsText } from '../../../src/share/result-list.ts';
import { smallResult } from '../share/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'ts-merge-'));
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

describe('--merge', () => {
  it('takes files and --json; refuses other flags and an empty list', () => {
    expect(parseMergeArgs(['--merge', 'a.json', 'b.json', '--json', 'out.json'])).toEqual({ files: ['a.json', 'b.json'], out: 'out.json' });
    expect(parseMergeArgs(['a.json', '--merge', '--json=o.json'])).toEqual({ files: ['a.json'], out: 'o.json' });
    expect(() => parseMergeArgs(['--merge', '--json', 'o.json'])).toThrow(/at least one result file/);
    expect(() => parseMergeArgs(['--merge', 'a.json', '--reps', '3'])).toThrow(/--reps does not go with --merge/);
    expect(() => parseMergeArgs(['--merge', 'a.json', '--json'])).toThrow(/--json needs a file name/);
  });

  it('merges results and earlier lists, in order, into a list the page reads back', async () => {
    const a = smallResult();
    const b = { ...smallResult(), created_at: '2026-05-05T05:05:05.000Z' };
    const list = await mergeFiles([file('a.json', a), file('list.json', { kind: LIST_KIND, version: 1, results: [b, a] })]);
    expect(list.kind).toBe(LIST_KIND);
    expect(list.results.map((r) => r.created_at)).toEqual([a.created_at, b.created_at, a.created_at]);
    expect(await parseResultsText(JSON.stringify(list))).toEqual(list.results);
  });

  it('names the file that is missing, not JSON, or not a valid result', async () => {
    await expect(readResultFile(join(dir, 'none.json'))).rejects.toThrow(/none\.json: cannot read it \(ENOENT\)/);
    await expect(readResultFile(file('bad.json', '{"schema_version": 1,'))).rejects.toThrow(/bad\.json: The file is not valid JSON/);
    await expect(readResultFile(file('old.json', { ...smallResult(), schema_version: 0 }))).rejects.toThrow(/old\.json: This result uses schema version 0/);
    await expect(readResultFile(file('odd.json', { ...smallResult(), created_at: 'yesterday' }))).rejects.toThrow(/odd\.json: Invalid result: created_at/);
    await expect(mergeFiles([file('ok.json', smallResult()), join(dir, 'gone.json')])).rejects.toThrow(/gone\.json/);
    expect(readFileSync(join(dir, 'ok.json'), 'utf8')).toContain('schema_version');
  });

  it('`npm run bench -- --merge … --json` writes the list; a bad file exits 2 and writes nothing', () => {
    const bench = (args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--import', './cli/register.mjs', 'cli/bench.ts', ...args], { encoding: 'utf8', timeout: 60_000 });
    const out = join(dir, 'merged.json');
    const ok = bench(['--merge', file('x.json', smallResult()), file('y.json', smallResult()), '--json', out]);
    expect(ok.status).toBe(0);
    expect(ok.stderr).toMatch(/^Merged 2 results \(1 device\) from 2 files into .*merged\.json$/m);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ kind: LIST_KIND, version: 1, results: [{}, {}] });
    const refused = join(dir, 'refused.json');
    const bad = bench(['--merge', file('z.json', smallResult()), file('v2.json', { ...smallResult(), schema_version: 2 }), '--json', refused]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/error: .*v2\.json: This result uses schema version 2/);
    expect(existsSync(refused)).toBe(false);
  });
});

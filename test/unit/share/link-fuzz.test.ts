/**
 * Property-based fuzzing of the link decoder: random fragments, character mutations of a real
 * link, and structure-aware mutations of a real report (any field set to a hostile JSON value)
 * must each give a validated result or a `bad-input` TokenscopeError — never another exception
 * or a hang. Seeded and bounded, so a failure replays.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenscopeError } from '../../../src/errors.ts';
import { encodeFragment } from '../../../src/share/codec.ts';
import { decodeReport, encodeReport } from '../../../src/share/permalink.ts';
import { smallResult } from './fixtures.ts';

async function decodeOrRefuse(fragment: string): Promise<'valid' | 'refused'> {
  const started = performance.now();
  try {
    await decodeReport(fragment);
    return 'valid';
  } catch (e) {
    if (!(e instanceof TokenscopeError)) throw new Error(`not a TokenscopeError: ${String(e)}`, { cause: e });
    expect(e.code).toBe('bad-input');
    return 'refused';
  } finally {
    expect(performance.now() - started).toBeLessThan(5_000);
  }
}

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, '', '<script>x</script>', 1.7e308, -1.7e308, 0, -1, 1e-320, 2 ** 53, [], {}),
  fc.double(),
  fc.string({ maxLength: 40 }),
  fc.jsonValue({ maxDepth: 4 }),
);

/** Every path (keys and indices) to a value in `doc`. */
function paths(doc: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (doc && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      const path = [...prefix, Array.isArray(doc) ? Number(k) : k];
      out.push(path);
      paths(v, path, out);
    }
  }
  return out;
}

function setPath(doc: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  at[path[path.length - 1]] = value;
  return copy;
}

describe('fuzzing the link decoder', () => {
  const runs = { numRuns: 150, seed: 15, endOnFailure: true } as const;

  it('random fragments: a typed refusal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.string({ maxLength: 60 }).map((s) => `#r=${s}`),
        ),
        async (fragment) => {
          expect(await decodeOrRefuse(fragment)).toBe('refused');
        },
      ),
      runs,
    );
  });

  it('characters of a real link changed, dropped or cut: a valid result or a typed refusal', async () => {
    const link = await encodeReport(smallResult());
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=#%';
    const edit = fc.tuple(fc.nat({ max: link.length - 1 }), fc.constantFrom(...alphabet), fc.nat({ max: 3 }));
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 6 }), fc.option(fc.nat({ max: link.length })), async (edits, cut) => {
        let s = link;
        for (const [at, c, drop] of edits) s = s.slice(0, at) + c + s.slice(at + drop);
        await decodeOrRefuse(cut === null ? s : s.slice(0, cut));
      }),
      runs,
    );
  });

  it('any field of a real report set to a hostile value: a valid result or a typed refusal', async () => {
    const report = smallResult();
    const all = paths(report);
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...all), hostileJson, async (path, value) => {
        if ((await decodeOrRefuse(await encodeFragment('r', setPath(report, path, value)))) === 'refused') refused++;
      }),
      runs,
    );
    expect(refused).toBeGreaterThan(0);
  });
});

/**
 * The import graph keeps the layers of the house (docs/STYLE.md, docs/INTERNALS.md "Layout"):
 *
 *   cli, main.ts → ui → jobs → (serve, webllm, share) → measure → model → kernels → gpu → base
 *
 * where "base" is src's top-level files (errors.ts, random.ts, f16.ts). A file may import its own
 * folder, a sibling of the same rank, or anything below; never a folder above it, and the folders
 * may never form a cycle (siblings included).
 *
 * Type-only imports count like any other (`import type`, `import('…').T`, `export type … from`):
 * they erase at build time, but they still make a lower layer's meaning depend on a higher one, and
 * every wrong-way type import this test found when it was written was a type living in the wrong
 * layer. Dynamic `import()` counts too — lazily loading a higher layer is still depending on it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Rank of each layer, lowest first; folders sharing a rank are siblings. */
const LAYERS: Record<string, number> = {
  base: 0,
  gpu: 1,
  kernels: 2,
  model: 3,
  measure: 4,
  serve: 5,
  webllm: 5,
  share: 5,
  jobs: 6,
  ui: 7,
  entry: 8,
};

interface Edge {
  from: string;
  to: string;
  line: number;
  kind: 'value' | 'type' | 'dynamic';
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every relative import of one file: static, re-exports, dynamic import() and import('…') types. */
function importsOf(file: string, text: string): Edge[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const edges: Edge[] = [];
  const add = (spec: string, node: ts.Node, kind: Edge['kind']) => {
    if (!spec.startsWith('.')) return; // packages
    const to = resolve(dirname(file), spec.replace(/\?[a-z]+$/, ''));
    edges.push({ from: file, to, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, kind });
  };
  const visit = (n: ts.Node) => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      const clause = n.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = !!clause?.isTypeOnly || (!!named && !clause?.name && named.length > 0 && named.every((e) => e.isTypeOnly));
      add(n.moduleSpecifier.text, n, typeOnly ? 'type' : 'value');
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      add(n.moduleSpecifier.text, n, n.isTypeOnly ? 'type' : 'value');
    } else if (
      ts.isCallExpression(n) &&
      n.expression.kind === ts.SyntaxKind.ImportKeyword &&
      n.arguments.length > 0 &&
      ts.isStringLiteralLike(n.arguments[0])
    ) {
      add(n.arguments[0].text, n, 'dynamic');
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      add(n.argument.literal.text, n, 'type');
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return edges;
}

/** The layer of a path under the project root, or undefined for what lies outside src/ and cli/. */
function layerOf(path: string): string | undefined {
  const parts = relative(ROOT, path).split(sep);
  if (parts[0] === 'cli') return 'entry';
  if (parts[0] !== 'src') return undefined;
  if (parts.length === 2) return parts[1] === 'main.ts' ? 'entry' : 'base';
  return parts[1];
}

const rel = (p: string) => relative(ROOT, p).split(sep).join('/');

function collect(): Edge[] {
  return [...tsFiles(join(ROOT, 'src')), ...tsFiles(join(ROOT, 'cli'))].flatMap((f) => importsOf(f, readFileSync(f, 'utf8')));
}

/** Folder-level cycles: strongly connected components (Tarjan) with more than one folder. */
function folderCycles(pairs: Iterable<[string, string]>): string[][] {
  const next = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    if (!next.has(b)) next.set(b, new Set());
    next.get(a)!.add(b);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) strong(v);
  return out;
}

describe('import graph', () => {
  const edges = collect();

  it('finds the imports it checks (static, type-only, dynamic)', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(new Set(edges.map((e) => e.kind))).toEqual(new Set(['value', 'type', 'dynamic']));
  });

  it('places every folder of src/ in a layer', () => {
    const unknown = [...new Set(edges.map((e) => layerOf(e.from)))].filter((l) => l !== undefined && !(l in LAYERS));
    expect(unknown, 'add new src/ folders to LAYERS in this test (and to docs/INTERNALS.md "Layout")').toEqual([]);
  });

  it('imports only within src/ (plus shaders/*.wgsl from kernels/)', () => {
    const outside = edges
      .filter((e) => layerOf(e.from) !== 'entry' && layerOf(e.to) === undefined)
      .filter((e) => !(layerOf(e.from) === 'kernels' && rel(e.to).startsWith('shaders/') && e.to.endsWith('.wgsl')))
      .map((e) => `${rel(e.from)}:${e.line} → ${rel(e.to)}`);
    expect(outside).toEqual([]);
  });

  it('never imports a layer above its own', () => {
    const upward = edges
      .filter((e) => {
        const a = layerOf(e.from);
        const b = layerOf(e.to);
        return a !== undefined && b !== undefined && a in LAYERS && b in LAYERS && LAYERS[b] > LAYERS[a];
      })
      .map((e) => `${rel(e.from)}:${e.line} (${layerOf(e.from)}) → ${rel(e.to)} (${layerOf(e.to)}, ${e.kind})`);
    expect(upward).toEqual([]);
  });

  it('has no cycle between folders', () => {
    const pairs = edges.flatMap((e): [string, string][] => {
      const a = layerOf(e.from);
      const b = layerOf(e.to);
      return a && b ? [[a, b]] : [];
    });
    expect(folderCycles(pairs)).toEqual([]);
  });

  it('detects a cycle and an upward import (the checks can fail)', () => {
    expect(
      folderCycles([
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'a'],
        ['c', 'd'],
      ]),
    ).toEqual([['a', 'b', 'c']]);
    const probe = join(ROOT, 'src/model/probe.ts');
    const found = importsOf(
      probe,
      "import type { X } from '../jobs/job.ts';\nconst m = () => import('../ui/app.ts');\nlet y: import('../measure/stats.ts').Y;",
    );
    expect(found.map((e) => [layerOf(e.to), e.kind, e.line])).toEqual([
      ['jobs', 'type', 1],
      ['ui', 'dynamic', 2],
      ['measure', 'type', 3],
    ]);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The import graph of src/: no cycles, and the layering below. Edges are read with a regex over the import and export
 * lines (static, `export … from`, side-effect and dynamic `import()`), resolved to files; `import type` and
 * `export type` are type edges, erased at build time, everything else is a value edge.
 *
 * Layering enforced (a folder is `src/<name>/`, a base module a file directly in `src/`):
 * - `sandbox/` imports no other folder: containment, command policy and exec sit under everything.
 * - `audit/` (the audit domain) imports nothing from `run/`, `mcp/`, `output/`, `agent/`, `preamble/`, `citations/` or
 *   a front end.
 * - base modules other than the front ends (`bin.ts`, `cli.ts`, `args.ts`, `launch.ts`) import nothing from `run/`,
 *   `mcp/`, `output/`, `tools/`, `preamble/` or `citations/` (`config.ts` may read `agent/`, `audit/`, `sandbox/`).
 * - every folder has a place in FOLDER_LAYERS and imports (types included) only folders of a lower layer, so the
 *   folders form no cycle either: agent above tools above sandbox; run and output above agent.
 */

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const FRONT_ENDS = ['bin.ts', 'cli.ts', 'args.ts', 'launch.ts'];

/**
 * Cycles that only type imports close, each inside one folder: declarations split across files that name each other.
 * Erased at build time, so module start-up order cannot depend on them; listed so that no new cycle slips in beside
 * them. Remove a row when its cycle is broken (the test fails until you do, so the list stays true).
 */
const KNOWN_TYPE_CYCLES = [
  ['agent/cache-watch.ts', 'agent/events.ts', 'agent/model.ts', 'agent/pricing.ts'],
  ['sandbox/policy/git-forms.ts', 'sandbox/policy/git-tables.ts', 'sandbox/policy/git-values.ts'],
  ['sandbox/policy/readers.ts', 'sandbox/policy/tables.ts'],
];

/**
 * The folders from the top down; a folder may import (values or types) only folders of a later row. Folders in one
 * row are independent of each other. A new folder fails the test until it is placed here.
 */
const FOLDER_LAYERS: readonly (readonly string[])[] = [
  ['mcp/'],
  ['run/'],
  ['output/', 'locate/'],
  ['preamble/'],
  ['agent/', 'citations/'],
  ['tools/'],
  ['audit/', 'symbols/', 'secrets/'],
  ['sandbox/'],
];

interface Edge {
  to: string;
  type: boolean;
}
type Graph = Map<string, Edge[]>;

const STATIC = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** src-relative POSIX name of an import specifier written in `from`; JSON and files outside src/ are left out. */
function resolve(from: string, specifier: string): string | null {
  const target = path.relative(SRC, path.resolve(path.dirname(path.join(SRC, from)), specifier.replace(/\.js$/, '.ts')));
  if (target.startsWith('..') || !target.endsWith('.ts')) return null;
  return target.split(path.sep).join('/');
}

function edgesOf(file: string, text: string): Edge[] {
  const statics = [...text.matchAll(STATIC)].map((m) => ({ spec: m[2] ?? '', type: m[1] !== undefined }));
  const dynamics = [...text.matchAll(DYNAMIC)].map((m) => ({ spec: m[1] ?? '', type: false }));
  return [...statics, ...dynamics].flatMap(({ spec, type }) => {
    const to = resolve(file, spec);
    return to === null ? [] : [{ to, type }];
  });
}

function buildGraph(): Graph {
  const graph: Graph = new Map();
  for (const abs of sourceFiles(SRC)) {
    const file = path.relative(SRC, abs).split(path.sep).join('/');
    graph.set(file, edgesOf(file, readFileSync(abs, 'utf8')));
  }
  return graph;
}

/** Strongly connected components of more than one file (or a file importing itself), each sorted, via Tarjan. */
function cycles(graph: Graph, withTypes: boolean): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    const next = (graph.get(node) ?? []).filter((e) => (withTypes || !e.type) && graph.has(e.to)).map((e) => e.to);
    for (const to of next) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1 || next.includes(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a.join().localeCompare(b.join()));
}

/** The folder of a src-relative file (`run/`), or the file itself for a base module (`config.ts`). */
function areaOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash + 1);
}

/** Every import from a file in `from` into an area `forbidden` accepts, as `a.ts -> b.ts`. */
function violations(graph: Graph, from: (file: string) => boolean, forbidden: (area: string) => boolean): string[] {
  return [...graph].flatMap(([file, edges]) =>
    from(file) ? edges.filter((e) => areaOf(e.to) !== areaOf(file) && forbidden(areaOf(e.to))).map((e) => `${file} -> ${e.to}`) : [],
  );
}

/** Imports from a folder into a folder of the same or a higher row of FOLDER_LAYERS. */
function upwardImports(g: Graph): string[] {
  const layer = (area: string): number => FOLDER_LAYERS.findIndex((row) => row.includes(area));
  return violations(g, (f) => f.includes('/'), (area) => area.endsWith('/')).filter((edge) => {
    const [from, to] = edge.split(' -> ').map(areaOf) as [string, string];
    return layer(to) <= layer(from);
  });
}

const graph = buildGraph();

describe('the import graph of src/', () => {
  it('is read from the real sources (so the checks below cannot pass on an empty graph)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('bin.ts')).toContainEqual({ to: 'cli.ts', type: false });
    expect(graph.get('exit-codes.ts')).toContainEqual({ to: 'agent/events.ts', type: true });
    expect(graph.get('cli.ts')).toContainEqual({ to: 'mcp/server.ts', type: false });
  });

  it('finds a cycle when there is one: a value cycle, a type-only one, and a file importing itself', () => {
    const made: Graph = new Map([
      ['a.ts', [{ to: 'b.ts', type: false }]],
      ['b.ts', [{ to: 'c.ts', type: false }]],
      ['c.ts', [{ to: 'a.ts', type: true }, { to: 'd.ts', type: false }]],
      ['d.ts', [{ to: 'd.ts', type: false }]],
    ]);
    expect(cycles(made, true)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
    expect(cycles(made, false)).toEqual([['d.ts']]);
  });

  it('has no cycle through value imports', () => {
    expect(cycles(graph, false)).toEqual([]);
  });

  it('has no cycle through type imports either, beyond the known type-only ones', () => {
    expect(cycles(graph, true)).toEqual(KNOWN_TYPE_CYCLES);
  });

  it('sandbox/ imports no other folder', () => {
    expect(violations(graph, (f) => f.startsWith('sandbox/'), (area) => area.endsWith('/'))).toEqual([]);
  });

  it('audit/ imports nothing from run/, mcp/, output/, agent/, preamble/, citations/ or a front end', () => {
    const above = ['run/', 'mcp/', 'output/', 'agent/', 'preamble/', 'citations/', ...FRONT_ENDS];
    expect(violations(graph, (f) => f.startsWith('audit/'), (area) => above.includes(area))).toEqual([]);
  });

  it('base modules other than the front ends import nothing from run/, mcp/, output/, tools/, preamble/ or citations/', () => {
    const above = ['run/', 'mcp/', 'output/', 'tools/', 'preamble/', 'citations/'];
    const base = (f: string): boolean => !f.includes('/') && !FRONT_ENDS.includes(f);
    expect(violations(graph, base, (area) => above.includes(area))).toEqual([]);
  });

  it('places every folder of src/ in FOLDER_LAYERS', () => {
    const folders = new Set([...graph.keys()].map(areaOf).filter((area) => area.endsWith('/')));
    expect([...folders].sort()).toEqual(FOLDER_LAYERS.flat().sort());
  });

  it('imports (types included) only from a lower layer of folders, so folders form no cycle', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('finds an import from the same or a higher layer when there is one (the check above can fail)', () => {
    const made: Graph = new Map([
      ['tools/a.ts', [{ to: 'agent/b.ts', type: true }, { to: 'sandbox/c.ts', type: false }]],
      ['audit/d.ts', [{ to: 'symbols/e.ts', type: false }]],
    ]);
    expect(upwardImports(made)).toEqual(['tools/a.ts -> agent/b.ts', 'audit/d.ts -> symbols/e.ts']);
  });
});

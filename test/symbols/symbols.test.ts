import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, nestingOf, SymbolIndex } from '../../src/symbols/index.js';
import { isMinified, MAX_PARSE_BYTES } from '../../src/symbols/read.js';
import { useRepo } from '../support/temp-repo.js';

/** `length` characters of a linear congruential sequence over punctuation: the same text on every run. */
function garbage(length: number): string {
  let seed = 1;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length }, () => '{}()[]<>;:,.=+-*/&|!?"\'`x1 \n'[Math.floor(next() * 28)]).join('');
}

const BIG = `export const x = 1;\n${'// pad\n'.repeat(MAX_PARSE_BYTES / 7)}`;
const repo = useRepo({
  'app.ts': 'interface Options { port: number }\nexport class Server {\n  start(o: Options) {\n    return listen(o.port);\n  }\n}\nexport function listen(port: number) {\n  return new Server();\n}\n',
  'view.tsx': 'export const Button = () => <button onClick={() => save()}>ok</button>;\nfunction save() {}\n',
  'lib.js': 'function parse(text) {\n  return JSON.parse(text);\n}\nmodule.exports = { parse };\n',
  'tool.py': 'class Runner:\n    def run(self):\n        return helper()\n\ndef helper():\n    return 1\n',
  'main.go': 'package main\n\ntype Store struct{}\n\nfunc (s *Store) Get() int { return 1 }\n\nfunc main() { s := Store{}; s.Get() }\n',
  'lib.rs': 'pub struct Cache;\nimpl Cache {\n    pub fn get(&self) {}\n}\nfn main() { Cache.get(); }\n',
  'kinds.rs': 'pub enum Mode { A }\npub trait Render {\n    fn render(&self);\n}\nimpl<T> Render for Vec<T> {\n    fn render(&self) {}\n}\nmod inner {}\nmacro_rules! m { () => {} }\ntype Alias = u8;\nunion U { a: u8 }\nimpl std::fmt::Debug for Mode {\n    fn fmt(&self) {}\n}\n',
  'app.rb': 'module Shop\n  class Cart\n    def total\n      1\n    end\n    def self.build\n    end\n  end\nend\n',
  'shape.cc': 'struct Point { int x; };\nclass Shape {\n  int area();\n};\nenum Color { Red };\ntypedef int Id;\nint Shape::area() { return 1; }\nint main() { return 0; }\n',
  'Main.java': 'class Main {\n  void run() { helper(); }\n  void helper() {}\n}\n',
  'notes.txt': 'function notCode() {}\n',
  'big.ts': BIG,
  'min.js': `${'var a=1;'.repeat(20_000)}\n`,
  'bin.ts': 'export const a = 1;\0\0\0\n',
  // 20 KB of punctuation and quotes (a fixed pseudo-random sequence): error recovery almost from the start.
  'garbage.ts': garbage(20_000),
  'plain.ts': Array.from({ length: 400 }, (_, i) => `export function g${i}(a: number) { return a + ${i}; }`).join('\n'),
  'deep.ts': `const x = ${'('.repeat(MAX_NESTING + 1)}1${')'.repeat(MAX_NESTING + 1)};\n`,
  'slow.ts': Array.from({ length: 6_000 }, (_, i) => `export function f${i}(a: number) { return [a, { b: a + ${i} }]; }`).join('\n'),
});

const names = (tags: { name: string; kind: string; line: number }[]): string[] => tags.map((t) => `${t.kind} ${t.name}:${t.line}`);

describe('the symbol layer (web-tree-sitter + the official tags queries)', () => {
  it.each([
    ['app.ts', ['interface Options:1', 'class Server:2', 'method start:3', 'function listen:7'], ['call listen:4', 'class Server:8']],
    ['view.tsx', ['function Button:1', 'function save:2'], ['call save:1']],
    ['lib.js', ['function parse:1'], ['call parse:2']],
    ['tool.py', ['class Runner:1', 'def run:2', 'def helper:5'], ['call helper:3']],
    ['main.go', ['type Store:3', 'method Get:5', 'func main:7'], ['call Get:7']],
    ['lib.rs', ['struct Cache:1', 'impl Cache:2', 'method get:3', 'fn main:5'], ['call get:5']],
    ['Main.java', ['class Main:1', 'method run:2', 'method helper:3'], ['call helper:2']],
  ])('%s: definitions and syntactic references', async (file, defs, refs) => {
    const symbols = await new SymbolIndex().symbolsOf(repo.root, file);
    if (!symbols.ok) throw new Error(symbols.note);
    expect(names(symbols.definitions)).toEqual(expect.arrayContaining(defs));
    expect(names(symbols.references)).toEqual(expect.arrayContaining(refs));
  });

  // Issue 33: a Rust method was listed twice (`method` and `function` on one line), Rust structs as `class`.
  it.each([
    ['lib.rs', ['struct Cache:1', 'impl Cache:2', 'method get:3', 'fn main:5']],
    ['kinds.rs', ['enum Mode:1', 'trait Render:2', 'method render:3', 'impl Vec:5', 'method render:6', 'mod inner:8', 'macro m:9', 'type Alias:10', 'union U:11', 'impl Mode:12', 'method fmt:13']],
    ['main.go', ['type Store:3', 'method Get:5', 'func main:7']],
    ['tool.py', ['class Runner:1', 'def run:2', 'def helper:5']],
    ['app.rb', ['module Shop:1', 'class Cart:2', 'def total:3', 'def build:6']],
    ['app.ts', ['interface Options:1', 'class Server:2', 'method start:3', 'function listen:7']],
    ['Main.java', ['class Main:1', 'method run:2', 'method helper:3']],
  ])('%s: one outline entry per definition, the most specific kind, in the language\'s words', async (file, defs) => {
    const outline = await new SymbolIndex().outline(repo.root, file);
    if (!outline.ok) throw new Error(outline.note);
    expect(names(outline.definitions)).toEqual(defs);
  });

  it('C++: struct, class, enum and typedef in its own words', async () => {
    const outline = await new SymbolIndex().outline(repo.root, 'shape.cc');
    if (!outline.ok) throw new Error(outline.note);
    expect(names(outline.definitions)).toEqual(expect.arrayContaining(['struct Point:1', 'class Shape:2', 'enum Color:5', 'typedef Id:6']));
    expect(new Set(outline.definitions.map((d) => d.line)).size).toBe(outline.definitions.length);
  });

  it('the outline is the definitions alone, in line order', async () => {
    const outline = await new SymbolIndex().outline(repo.root, 'app.ts');
    expect(outline.ok && names(outline.definitions)).toEqual(['interface Options:1', 'class Server:2', 'method start:3', 'function listen:7']);
    expect(outline.ok && outline.references).toEqual([]);
  });

  it.each([
    ['notes.txt', 'notes.txt: no grammar for this kind of file'],
    ['big.ts', `big.ts: skipped, ${BIG.length} bytes is over the 512 KiB parse limit`],
    ['min.js', 'min.js: minified (very long lines), not parsed'],
    ['bin.ts', 'bin.ts: binary, not parsed'],
    ['missing.ts', 'missing.ts: no such file or directory: missing.ts'],
    ['../outside.ts', '../outside.ts: ../outside.ts is outside the repository root'],
  ])('%s is skipped with a note', async (file, note) => {
    expect(await new SymbolIndex().symbolsOf(repo.root, file)).toEqual({ ok: false, note });
  });

  it('a file over its work bound is skipped with a note, and the next file still parses', async () => {
    const index = new SymbolIndex({ workScale: 0 });
    expect(await index.symbolsOf(repo.root, 'slow.ts')).toEqual({ ok: false, note: 'slow.ts: parsing needed more than 0 steps, skipped' });
    expect((await new SymbolIndex().symbolsOf(repo.root, 'lib.js')).ok).toBe(true);
  });

  // Issue 37: the bound is work (parser and query steps), not wall time, so the result is the same under any load.
  it.each([
    ['garbage.ts', 'garbage.ts: parsing needed more than 150 steps, skipped'],
    ['deep.ts', `deep.ts: brackets nested over ${MAX_NESTING} deep, not parsed`],
  ])('%s is skipped by a bound in work, with the same note every time', async (file, note) => {
    const notes = [];
    for (let i = 0; i < 2; i++) notes.push(await new SymbolIndex({ workScale: 0.2 }).symbolsOf(repo.root, file));
    expect(notes).toEqual([{ ok: false, note }, { ok: false, note }]);
  });

  it('code of the same size as the garbage parses under the same bound (syntax errors are what the error budget limits)', async () => {
    const parsed = await new SymbolIndex({ workScale: 0.2 }).symbolsOf(repo.root, 'plain.ts');
    expect(parsed.ok && parsed.definitions.length).toBe(400);
  });

  it.each([
    ['', 0],
    ['f(a[b{c}])', 3],
    [')))(', 1],
    ['{'.repeat(300), 300],
  ])('nestingOf(%j) is %i', (text, depth) => {
    expect(nestingOf(text)).toBe(depth);
  });

  it('never reads a symlink that leaves the root, nor a hard-linked file', async () => {
    const parent = path.dirname(repo.root);
    await fs.writeFile(path.join(parent, 'secret.ts'), 'export function secretOutside() {}\n');
    await fs.symlink(path.join(parent, 'secret.ts'), path.join(repo.root, 'link.ts'));
    await fs.link(path.join(parent, 'secret.ts'), path.join(repo.root, 'hard.ts'));
    const index = new SymbolIndex();
    expect(await index.symbolsOf(repo.root, 'link.ts')).toEqual({ ok: false, note: 'link.ts: link.ts is outside the repository root' });
    expect(await index.symbolsOf(repo.root, 'hard.ts')).toEqual({ ok: false, note: 'hard.ts: hard-linked, not read' });
  });

  it('caches by path and content: an unchanged file is not parsed again, a changed one is', async () => {
    const index = new SymbolIndex();
    const first = await index.symbolsOf(repo.root, 'lib.js');
    expect(await index.symbolsOf(repo.root, 'lib.js')).toBe(first);
    const file = path.join(repo.root, 'lib.js');
    await fs.writeFile(file, 'function parseAgain(text) {\n  return text;\n}\n');
    await fs.utimes(file, new Date(), new Date(Date.now() + 5_000));
    const second = await index.symbolsOf(repo.root, 'lib.js');
    expect(second.ok && names(second.definitions)).toEqual(['function parseAgain:1']);
  });

  it.each([
    ['normal code', 'const a = 1;\n'.repeat(100), false],
    ['one long string in short lines', `const s = "${'x'.repeat(5_000)}";\n${'f();\n'.repeat(200)}`, false],
    ['a bundle on one line', 'var a=1;'.repeat(1_000), true],
  ])('isMinified: %s → %s', (_name, text, expected) => {
    expect(isMinified(text)).toBe(expected);
  });
});

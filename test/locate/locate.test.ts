import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locate } from '../../src/locate/locate.js';
import { makeRepo } from '../support/temp-repo.js';

const SECRET = 'OUTSIDE-SECRET-5e1d';
const DEEP = Array.from({ length: 60 }, (_, i) => `d${i}`).join('/');

const FILES: Record<string, string> = {
  'src/session/expire.ts':
    'import { store } from "./store";\n\n/** Removes sessions past their deadline. */\nexport function expireSessions(now: number): number {\n  return store.sweep(now);\n}\n',
  'src/session/store.ts': 'export const store = {\n  sweep(now: number): number {\n    return now;\n  },\n};\n',
  'src/http/server.ts': 'export class HttpServer {\n  listen(port: number) {\n    return port;\n  }\n}\n',
  // The tests say "expireSessions" more often than the code does: they must still rank below it.
  'test/session.test.ts': Array.from({ length: 20 }, (_, i) => `it('expireSessions ${i}', () => expireSessions(${i}));`).join('\n') + '\n',
  'docs/sessions.md': '# Sessions\n\nexpireSessions removes expired sessions.\n',
  // Over rg's 1 MiB search limit and the parser's 512 KiB: never searched, never parsed.
  'data/huge.ts': `export function expireSessionsHuge() {}\n${'// filler line\n'.repeat(90_000)}`,
  // Minified: one long line; searched, but the symbol layer skips it with a note.
  'lib/bundle.js': `function a(){expireSessions()};${'var x=1;'.repeat(40_000)}\n`,
  'assets/blob.bin': Buffer.concat([Buffer.from('expireSessions\0\0\0'), Buffer.alloc(2048, 1)]).toString('latin1'),
  [`${DEEP}/nested.py`]: 'def expire_sessions_deep():\n    return 1\n',
};

let root = '';
let parent = '';
let cleanup: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  const made = await makeRepo(FILES);
  root = made.root;
  parent = path.dirname(root);
  cleanup = made.cleanup;
  // Outside the root: a file and a directory that name the same function, linked into the repository.
  await fs.mkdir(path.join(parent, 'outside'));
  await fs.writeFile(path.join(parent, 'outside', 'secret.ts'), `export function expireSessions() { return "${SECRET}"; }\n`);
  await fs.symlink(path.join(parent, 'outside', 'secret.ts'), path.join(root, 'src', 'linked.ts'));
  await fs.symlink(path.join(parent, 'outside'), path.join(root, 'src', 'linked-dir'));
});
afterAll(async () => cleanup());

const run = (question: string, k?: number) => locate(root, question, { timeoutMs: 20_000, ...(k ? { k } : {}) });

describe('locate on a real temporary repository', () => {
  it('ranks the file that defines the identifier first, with the definition and the lines that mention it', async () => {
    const result = await run('where is expireSessions defined?');
    expect(result.type).toBe('locate');
    expect(result.results[0]).toMatchObject({
      path: 'src/session/expire.ts',
      symbols: [{ name: 'expireSessions', kind: 'function', line: 4 }],
    });
    expect(result.results[0]!.lines).toContainEqual({ line: 4, text: 'export function expireSessions(now: number): number {' });
    // Tests and docs mention it more, yet come after the definition.
    const order = result.results.map((r) => r.path);
    expect(order.indexOf('test/session.test.ts')).toBeGreaterThan(0);
    expect(order.indexOf('docs/sessions.md')).toBeGreaterThan(0);
  });

  it('matches path words: a question about the http server finds src/http/server.ts', async () => {
    const result = await run('how does the http server listen on a port?');
    expect(result.results[0]?.path).toBe('src/http/server.ts');
    expect(result.results[0]?.symbols).toContainEqual({ name: 'listen', kind: 'method', line: 2 });
  });

  it('never reads through a symlink that leaves the root, as a file or as a directory', async () => {
    const result = await run('expireSessions', 50);
    const paths = result.results.map((r) => r.path);
    expect(paths.some((p) => p.startsWith('src/linked'))).toBe(false);
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it('skips files over the search limit and binary files; a minified file is ranked on its hits with a note', async () => {
    const result = await run('expireSessions', 50);
    const paths = result.results.map((r) => r.path);
    expect(paths).not.toContain('data/huge.ts');
    expect(paths).not.toContain('assets/blob.bin');
    expect(paths).toContain('lib/bundle.js');
    expect(result.notes).toContain('symbols: lib/bundle.js: minified (very long lines), not parsed');
    const bundle = result.results.find((r) => r.path === 'lib/bundle.js')!;
    expect(bundle.lines[0]!.text.length).toBeLessThanOrEqual(200);
  });

  it('finds a file sixty directories deep, by a path relative to the root', async () => {
    const result = await run('expire_sessions_deep');
    expect(result.results[0]).toMatchObject({ path: `${DEEP}/nested.py`, symbols: [{ name: 'expire_sessions_deep', kind: 'def', line: 1 }] });
  });

  it('is deterministic: the same tree and question give the same object', async () => {
    expect(await run('session store sweep')).toEqual(await run('session store sweep'));
  });

  it('returns at most k results, best first', async () => {
    const result = await run('expireSessions', 2);
    expect(result.results).toHaveLength(2);
    expect(result.results[0]!.score).toBeGreaterThanOrEqual(result.results[1]!.score);
  });

  it('a question with nothing searchable returns no results and says why', async () => {
    expect(await run('how does it work?')).toEqual({
      type: 'locate',
      query: 'how does it work?',
      results: [],
      notes: ['the question has no searchable words; name a function, file or concept'],
    });
  });
});

describe('locate: change descriptions', () => {
  const CHANGE_FILES: Record<string, string> = {
    // Holds the words once; the scope names it.
    'src/config.ts': 'export function resolveConfig() {\n  // bundles are closed when generation fails\n  return load();\n}\n',
    // Holds them more often, and in its path: it wins when no scope is given.
    'src/bundle/generate.ts': 'export function generateBundles() {\n  // close bundles when generation fails\n  closeBundles(); // generation fails: close\n}\nfunction closeBundles() {}\n',
    ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`src/part${i}.ts`, `export const part${i} = ${i};\n`])),
  };
  let changeRoot = '';
  let done: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const made = await makeRepo(CHANGE_FILES);
    changeRoot = made.root;
    done = made.cleanup;
  });
  afterAll(async () => done());

  it.each([
    ['config: close bundles when generation fails', 'src/config.ts'],
    ['close bundles when generation fails', 'src/bundle/generate.ts'],
  ])('%s → %s first (a file named like a rare word beats repeated content words)', async (question, first) => {
    const result = await locate(changeRoot, question, { timeoutMs: 10_000 });
    expect(result.results[0]?.path).toBe(first);
  });
});

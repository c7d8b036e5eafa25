import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoIndexes } from '../../src/locate/index/store.js';
import { termsOf, type Term } from '../../src/locate/query.js';
import { makeRepo } from '../support/temp-repo.js';
import { both, cacheDir, shape } from './index-support.js';

// The index must give the hits rg's content search gives (search.ts): same files, counts and lines per term. Each
// row runs both over the same real tree; the rows at the end are the documented differences, asserted as such.

const MIB = 1024 * 1024;
const many = (n: number, line: string): string => Array.from({ length: n }, (_, i) => `${line} ${i}`).join('\n') + '\n';

const FILES: Record<string, string> = {
  'src/router.ts': 'export class Router {\n  route(path) { return this.routes.get(path); }\n  routerRoute() {}\n}\nconst ROUTER_ROUTE = 1; // Router route ROUTE\n',
  'src/http.ts': 'import http from "http";\nexport const httpServer = http.createServer();\nconst xhttp = 1; const HTTP2 = 2;\n',
  'src/map.ts': 'const bitmap = new Map();\nmap(x); mapper(y); Map.of(z);\nexport { bitmap as map };\n',
  'src/cases.ts': 'AuthToken authtoken AUTHTOKEN auth_token Auth-Token\nauthTokenauthToken\ntokenauth\n',
  'src/unicode.ts': 'éroute routé ßrouter Кrouter\nrouter\u00a0route\n',
  'src/crlf.ts': 'router\r\nroute\r\nrouter router\r\n',
  'src/no-newline.ts': 'route router',
  'src/empty.ts': '',
  'src/overlap.ts': 'parseparser parsersparse parse_parser\nsessionsession session_session\n',
  'src/many-lines.ts': many(200, 'router route'),
  'src/alternating.ts': Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 'router' : 'the route')).join('\n') + '\n',
  'src/one-long-line.ts': `${'router '.repeat(5000)}\n`,
  'src/late-lines.ts': `${many(70, 'filler')}router at the end\n`,
  'src/digits.ts': 'v2router router2 2router _router_ __init__\n',
  'data/exactly-1mib.txt': 'router\n'.repeat(Math.floor(MIB / 7)) + 'x'.repeat(MIB - 7 * Math.floor(MIB / 7)),
  'data/over-1mib.txt': 'router\n'.repeat(Math.floor(MIB / 7)) + 'x'.repeat(MIB - 7 * Math.floor(MIB / 7) + 1),
  'data/early-nul.bin': '\0router\n',
  '.hidden/config.ts': 'router hidden\n',
  '.gitignore': 'ignored/\n',
  'ignored/router.ts': 'router ignored\n',
  'docs/readme.md': 'The router routes requests; see Router.route and the http server.\n',
};

let root = '';
let cleanup: () => Promise<void> = async () => undefined;
let cache = '';

beforeAll(async () => {
  const made = await makeRepo(FILES);
  root = made.root;
  cleanup = made.cleanup;
  cache = await cacheDir();
});
afterAll(async () => {
  await cleanup();
  await fs.rm(cache, { recursive: true, force: true });
});

const term = (text: string, kind: Term['kind'], wholeWord = false): Term => ({ text, kind, weight: 1, wholeWord });

describe('the index answers as rg does (crafted tree)', () => {
  it.each<[string, Term[]]>([
    ['substring identifiers, longest first', [term('router', 'identifier'), term('route', 'identifier')]],
    ['a 4-letter word only where a word starts', [term('http', 'word')]],
    ['a 3-letter word only whole', [term('map', 'word', true)]],
    ['ASCII case folding; non-ASCII letters are not word characters', [term('router', 'word'), term('route', 'word')]],
    ['a compound and its parts', [term('authtoken', 'identifier'), term('auth', 'word'), term('token', 'word')]],
    ['overlapping repeats do not overlap', [term('parse', 'word'), term('parser', 'word'), term('session', 'word')]],
    ['digits and underscores are word characters', [term('router', 'word'), term('init', 'word')]],
    ['a word inside a longer prefix word', [term('rout', 'word')]],
    ['a term that is nowhere', [term('nowherefound', 'identifier')]],
    ['termsOf: a question', termsOf('where does the Router route http requests to the bitmap map?')],
    ['termsOf: identifiers and compounds', termsOf('authToken parse parser session handling')],
  ])('%s', async (_name, terms) => {
    const indexes = new RepoIndexes(cache);
    const { rg, index } = await both(root, terms, indexes);
    expect(index).not.toBeNull();
    expect([...index!.files].sort()).toEqual([...rg.files].sort());
    expect(shape(index!.hits, terms)).toEqual(shape(rg.hits, terms));
    expect(index!.hits.size).toBe(rg.hits.size);
  });

  it('holds rg to the 60-line cap, the 1 MiB size cap and its ignore rules in these rows (the rows can fail)', async () => {
    const terms = [term('router', 'identifier')];
    const { rg } = await both(root, terms, new RepoIndexes(cache));
    expect(rg.hits.get('src/many-lines.ts')?.lineCount).toBe(60);
    expect(rg.hits.get('src/one-long-line.ts')?.count(0)).toBe(5000);
    expect(rg.hits.has('data/exactly-1mib.txt')).toBe(true);
    expect(rg.hits.has('data/over-1mib.txt')).toBe(false);
    expect(rg.hits.has('.hidden/config.ts')).toBe(true);
    expect(rg.hits.has('ignored/router.ts')).toBe(false);
    expect(rg.hits.has('data/early-nul.bin')).toBe(false);
  });
});

describe('documented differences', () => {
  const made: { root: string; cleanup(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const m of made) await m.cleanup();
  });

  // rg searches a file until the buffer (64 KiB) holding its first NUL byte; the index skips any file with one.
  // rg transcodes a UTF-16 file with a BOM; the index reads bytes (UTF-16 holds NULs: binary).
  // rg reads a hard-linked file; the index refuses it, as read_file does (another link may live outside the root).
  it.each<[string, (dir: string) => Promise<void>]>([
    [
      'NUL byte past the first 64 KiB',
      async (dir) => fs.writeFile(path.join(dir, 'late.bin'), Buffer.concat([Buffer.from('router\n'.repeat(12_000)), Buffer.from([0])])),
    ],
    ['UTF-16 with a byte-order mark', async (dir) => fs.writeFile(path.join(dir, 'u16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('router\n', 'utf16le')]))],
    [
      'hard-linked file',
      async (dir) => {
        await fs.writeFile(path.join(dir, 'a.ts'), 'router\n');
        await fs.link(path.join(dir, 'a.ts'), path.join(dir, 'b.ts'));
      },
    ],
  ])('%s: rg finds it, the index does not', async (_name, plant) => {
    const repo = await makeRepo({ 'keep.ts': 'router\n' });
    made.push(repo);
    await plant(repo.root);
    const terms = [term('router', 'identifier')];
    const { rg, index } = await both(repo.root, terms, new RepoIndexes(cache));
    expect(index).not.toBeNull();
    const extra = [...rg.hits.keys()].filter((rel) => !index!.hits.has(rel));
    expect(extra.length).toBeGreaterThan(0);
    expect(shape(index!.hits, terms)).toEqual(shape(new Map([...rg.hits].filter(([rel]) => !extra.includes(rel))), terms));
  });

  it.each<[string, Term[]]>([
    ['a path', [term('src/router', 'path')]],
    ['a dotted identifier', [term('router.route', 'identifier')]],
    ['a quoted phrase', [term('router route', 'quoted')]],
    ['a $ identifier', [term('$scope', 'identifier')]],
  ])('%s is not a literal of word characters: the index declines and rg answers', async (_name, terms) => {
    const { index } = await both(root, terms, new RepoIndexes(cache));
    expect(index).toBeNull();
  });
});

describe('the index answers as rg does (a slice of this repository)', () => {
  let slice = '';
  beforeAll(async () => {
    const repo = await makeRepo({});
    slice = repo.root;
    made.push(repo);
    for (const dir of ['src/locate', 'src/symbols', 'src/sandbox']) {
      await fs.cp(path.join(process.cwd(), dir), path.join(slice, dir), { recursive: true });
    }
  });
  const made: { root: string; cleanup(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const m of made) await m.cleanup();
  });

  it.each([
    'where is the symbol disk cache evicted when a shard is full',
    'execCapped timeout kills the process group',
    'parse hits compound credit',
    'realpath containment isInside root',
    'tree sitter tags query references',
    'how are generated files detected',
  ])('%s', async (question) => {
    const terms = termsOf(question);
    const { rg, index } = await both(slice, terms, new RepoIndexes(cache));
    expect(index).not.toBeNull();
    expect(shape(index!.hits, terms)).toEqual(shape(rg.hits, terms));
    expect(rg.hits.size).toBeGreaterThan(0);
  });
});

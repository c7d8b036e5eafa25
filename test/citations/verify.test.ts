import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractCitations } from '../../src/citations/extract.js';
import { describeBad, formatCitation, verifyCitations } from '../../src/citations/verify.js';
import { useRepo } from '../support/temp-repo.js';
import { CITATION_FILES } from './citation-repo.js';
import { CITATION_ROWS, QUOTE_ROWS, type Expected } from './citation-table.js';

const repo = useRepo(CITATION_FILES);

async function verified(text: string): Promise<Expected[]> {
  const found = await verifyCitations(repo.root, text.replaceAll('{root}', repo.root));
  return found.map((c) => [c.path, c.start_line, c.end_line, c.status]);
}

describe('the citation table (issue 9)', () => {
  it('has at least 60 forms', () => {
    expect(CITATION_ROWS.length).toBeGreaterThanOrEqual(60);
  });

  it.each(CITATION_ROWS.map((r) => [r.text, r.expected] as const))('%s', async (text, expected) => {
    const rooted = expected.map(([p, ...rest]) => [p.replaceAll('{root}', repo.root), ...rest]);
    expect(await verified(text)).toEqual(rooted);
  });
});

describe('what counts as a quote, and one verdict per occurrence (issue 24)', () => {
  it.each(QUOTE_ROWS.map((r) => [r.text, r.expected] as const))('%s', async (text, expected) => {
    expect(await verified(text)).toEqual(expected);
  });

  it('names the suspect quote in the detail: the code, or the identifier and its name', async () => {
    const [code] = await verifyCitations(repo.root, 'lib/router/index.js:102 (`proto.handle = function handle(req, res, out) {`)');
    expect(describeBad(code!)).toBe(
      'lib/router/index.js:102: quote_mismatch (the quoted code `proto.handle = function handle(req, res, out) {` is not within 3 lines of the cited range)',
    );
    const [name] = await verifyCitations(repo.root, '`App::add_systems` (crates/bevy_app/src/app.rs:185)');
    expect(name!.detail).toBe('the name `add_systems` (of `App::add_systems`) does not occur within 3 lines of the cited range');
    expect(name!.excerpt).toBe('pub fn run(&mut self) -> AppExit {');
    const [block] = await verifyCitations(repo.root, 'lib/application.js:10:\n```js\n\napp.route = function route(path) {\n  return 1;\n```');
    expect(block!.detail).toBe('the quoted block starting `app.route = function route(path) {` is not within 3 lines of the cited range');
  });

  it('an identifier matches by its name as a whole word (`list` is not in `listen`), or as written like any code', async () => {
    const status = async (text: string) => (await verifyCitations(repo.root, text))[0]!.status;
    expect(await status('`server.list` (lib/application.js:598)')).toBe('quote_mismatch');
    expect(await status('`router.listen` (lib/application.js:598)')).toBe('ok');
    // Found as written, whitespace ignored (in `// final handler`), though no line has the name as a word of its own.
    expect(await status('`finalhandler` (lib/application.js:598)')).toBe('ok');
    expect(await status('`http.createServer` (lib/application.js:598)')).toBe('ok');
  });

  it('a span tied before a citation is not also the quote of the citation before it', () => {
    const [a, b] = extractCitations('see lib/express.js:5 `app.listen()` (lib/application.js:598)');
    expect([a!.quote, b!.quote]).toEqual([null, { text: 'app.listen()', name: 'listen' }]);
  });

  it('a fenced block replaces a span as the quote of the citation on the line before it', () => {
    const [c] = extractCitations('lib/application.js:10 `app.use`:\n```js\napp.use = function use(fn) {\n```');
    expect(c!.quote).toEqual({ text: 'app.use = function use(fn) {', name: null });
  });
});

describe('verifyCitations', () => {
  it('gives the excerpt of the first cited line, trimmed', async () => {
    const [c] = await verifyCitations(repo.root, 'see lib/router/index.js:43-44');
    expect(c).toMatchObject({ status: 'ok', excerpt: 'var self = this;' });
  });

  it('says how many lines the file has when a line is out of range', async () => {
    const [c] = await verifyCitations(repo.root, 'lib/router/index.js:999');
    expect(describeBad(c!)).toBe('lib/router/index.js:999: line_out_of_range (the file has 200 lines)');
  });

  it('refuses a symlink that leads outside the root, as read_file does', async () => {
    await fs.symlink('/etc/hosts', path.join(repo.root, 'lib/hosts.txt'));
    try {
      const [c] = await verifyCitations(repo.root, 'see lib/hosts.txt:1 and `lib/hosts.txt`');
      expect(c).toMatchObject({ path: 'lib/hosts.txt', status: 'outside_root', excerpt: null });
    } finally {
      await fs.rm(path.join(repo.root, 'lib/hosts.txt'));
    }
  });

  it('reports a fifo as not a file without opening it', async () => {
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [path.join(repo.root, 'pipe.txt')]);
    try {
      const [c] = await verifyCitations(repo.root, 'see pipe.txt:1');
      expect(c).toMatchObject({ status: 'not_a_file' });
    } finally {
      await fs.rm(path.join(repo.root, 'pipe.txt'));
    }
  });

  it('opens only the cited files: every other file here is a fifo, which would block any read of it', async () => {
    const { execFileSync } = await import('node:child_process');
    const dir = path.join(repo.root, 'traps');
    await fs.mkdir(dir);
    try {
      await fs.writeFile(path.join(dir, 'cited.js'), 'one\ntwo\n');
      for (const name of ['a.js', 'b.js', 'index.js', 'cited.js.map']) execFileSync('mkfifo', [path.join(dir, name)]);
      const found = await verifyCitations(repo.root, 'see traps/cited.js:2 and `traps/cited.js`, near traps/');
      expect(found.map((c) => c.status)).toEqual(['ok', 'ok']);
    } finally {
      await fs.rm(dir, { recursive: true });
    }
  });

  it('ties quotes in near-linear time: 20,000 citations each with a span after and one before', () => {
    const answer = 'lib/a.js:1 `x` and `y` (lib/b.js:2) '.repeat(20_000);
    const started = performance.now();
    const found = extractCitations(answer);
    // Not a timing assertion on the machine's speed: pairing every span with every citation is billions of steps here.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(found).toHaveLength(40_000);
    expect(found.slice(0, 2).map((c) => c.quote?.text)).toEqual(['x', 'y']);
  });

  it('returns nothing for an answer without citations', async () => {
    expect(await verifyCitations(repo.root, 'Express is a web framework.')).toEqual([]);
  });

  it('formats ranges the way answers write them', () => {
    expect(formatCitation({ path: 'a.js', start_line: 3, end_line: 9 })).toBe('a.js:3-9');
    expect(formatCitation({ path: 'a.js', start_line: 3, end_line: 3 })).toBe('a.js:3');
    expect(formatCitation({ path: 'a.js', start_line: null, end_line: null })).toBe('a.js');
  });

  it('extracts in linear time from a hostile answer (100k path-like characters, no separators)', () => {
    const hostile = `${'a/'.repeat(50_000)}:1 ${'`'.repeat(10_000)} ${'['.repeat(10_000)}`;
    const started = performance.now();
    extractCitations(hostile);
    // Not a timing assertion on the machine's speed: a quadratic scan of this input takes minutes, not seconds.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

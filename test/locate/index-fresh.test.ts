import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ignoredDirsOf, recentFiles } from '../../src/locate/index/fresh.js';
import { WALK_FLAGS } from '../../src/locate/search.js';
import { RepoIndexes } from '../../src/locate/index/store.js';
import { locate } from '../../src/locate/locate.js';
import type { Term } from '../../src/locate/query.js';
import { search } from '../../src/locate/search.js';
import { makeRepo } from '../support/temp-repo.js';
import { cacheDir, OPTS, rgPath, shape } from './index-support.js';

// The warm check (src/locate/index/fresh.ts): one find walk decides whether rg's listing may have changed since the
// index was written, and which listed files to re-check. Every way a change could slip past it is a row: the index's
// answer must equal rg's, and a row that needs the full walk must have taken it (asked with an rg that cannot run,
// the index then declines; a row it may answer alone answers without rg).

const term = (text: string): Term => ({ text, kind: 'identifier', weight: 2, wholeWord: false });
const TERMS = [term('router'), term('session')];
const NO_RG = '/nonexistent/rg';

const FILES: Record<string, string> = {
  'src/router.ts': 'export class Router {}\nconst router = new Router();\n',
  'src/server.ts': 'import { router } from "./router";\n',
  'src/deep/a/b/leaf.ts': 'export const leaf = 1;\n',
  'docs/guide.md': 'Nothing to see here.\n',
  '.gitignore': 'build/\n',
  'build/out.js': 'router session\n',
  'build/sub/deep.js': 'router\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
  '.git/info/exclude': '# nothing\n',
};

type Change = (root: string) => Promise<void>;
const write = (rel: string, text: string): Change => (root) => fs.writeFile(path.join(root, rel), text);

// [name, change, whether the find check may answer without rg's walk]
const ROWS: [string, Change, boolean][] = [
  ['an edit in place, same size', write('src/server.ts', 'import { rooter } from "./rooter";\n'), true],
  [
    'an edit with the mtime set back (utimes)',
    async (root) => {
      const file = path.join(root, 'docs/guide.md');
      const { atime, mtime } = await fs.stat(file);
      await fs.writeFile(file, 'A session router!!!!\n');
      await fs.utimes(file, atime, mtime);
    },
    true,
  ],
  ['a file turning unreadable', (root) => fs.chmod(path.join(root, 'src/router.ts'), 0o000), true],
  ['a new file in an existing directory', write('src/session.ts', 'session router\n'), false],
  // build/ is ignored: the check prunes it (rg skipped it whole), so changes inside it cost no walk.
  ['a new file inside an ignored directory', write('build/session.ts', 'session\n'), true],
  ['a new file in a subdirectory of an ignored directory', write('build/sub/session.ts', 'session\n'), true],
  [
    'an ignored directory replaced by a new one',
    async (root) => {
      await fs.rm(path.join(root, 'build'), { recursive: true });
      await fs.mkdir(path.join(root, 'build'));
      await fs.writeFile(path.join(root, 'build/session.ts'), 'session\n');
    },
    false,
  ],
  ['an ignored directory renamed to a listed name', (root) => fs.rename(path.join(root, 'build'), path.join(root, 'lib')), false],
  [
    'an ignored directory replaced by a link to a listed one',
    async (root) => {
      await fs.rm(path.join(root, 'build'), { recursive: true });
      await fs.symlink('src', path.join(root, 'build'));
    },
    false,
  ],
  ['a new file deep down', write('src/deep/a/b/session.ts', 'session\n'), false],
  ['a deleted file', (root) => fs.rm(path.join(root, 'src/server.ts')), false],
  ['a rename', (root) => fs.rename(path.join(root, 'src/server.ts'), path.join(root, 'src/main.ts')), false],
  [
    'a new directory',
    async (root) => {
      await fs.mkdir(path.join(root, 'lib'));
      await fs.writeFile(path.join(root, 'lib/session.ts'), 'session\n');
    },
    false,
  ],
  ['a .gitignore changed in place', (root) => fs.appendFile(path.join(root, '.gitignore'), 'src/server.ts\n'), false],
  ['a .gitignore un-ignoring a directory', write('.gitignore', '# none\n'), false],
  ['a new .ignore', write('src/.ignore', 'router.ts\n'), false],
  ['.git/info/exclude changed in place', (root) => fs.appendFile(path.join(root, '.git/info/exclude'), 'src/router.ts\n'), false],
  [
    'a symlink swapped',
    async (root) => {
      await fs.rm(path.join(root, 'src/link.ts'));
      await fs.symlink('router.ts', path.join(root, 'src/link.ts'));
    },
    false,
  ],
  [
    'a file replaced by a FIFO',
    async (root) => {
      await fs.rm(path.join(root, 'src/server.ts'));
      execFileSync('mkfifo', [path.join(root, 'src/server.ts')]);
    },
    false,
  ],
];

/** Waits until what was written so far is older than the check's margin (two seconds, whole seconds). */
const pastMargin = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 3_500));

/** A repository of `files`, and its index built once the tree is older than the margin. */
async function indexedPastMargin(files: Record<string, string>): Promise<{ root: string; cache: string; rg: string }> {
  const repo = await makeRepo(files);
  const cache = await cacheDir();
  cleanups.push(repo.cleanup, () => fs.rm(cache, { recursive: true, force: true }));
  const rg = await rgPath();
  await pastMargin();
  expect(await new RepoIndexes(cache).search(rg, repo.root, TERMS, OPTS)).not.toBeNull();
  return { root: repo.root, cache, rg };
}

/** Each file under the cache directory with its inode and mtime: what a question wrote, if anything. */
async function cacheStamps(cache: string): Promise<string[]> {
  const entries = await fs.readdir(cache, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  return Promise.all(files.sort().map(async (file) => `${file}:${(await fs.stat(file)).ino}:${(await fs.stat(file)).mtimeMs}`));
}

interface Prepared {
  root: string;
  cache: string;
}

const prepared: Prepared[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  for (const _row of [...ROWS, null]) {
    const repo = await makeRepo(FILES);
    await fs.symlink('server.ts', path.join(repo.root, 'src/link.ts'));
    const cache = await cacheDir();
    cleanups.push(repo.cleanup, () => fs.rm(cache, { recursive: true, force: true }));
    prepared.push({ root: repo.root, cache });
  }
  // The check counts a ctime up to two seconds before the index was written as recent (the file clock may lag); a
  // tree that young always takes the full walk, so the indexes are built once the trees are older than that.
  await pastMargin();
  const rg = await rgPath();
  for (const { root, cache } of prepared) expect(await new RepoIndexes(cache).search(rg, root, TERMS, OPTS)).not.toBeNull();
}, 60_000);

afterAll(async () => {
  for (const { root } of prepared) await fs.chmod(path.join(root, 'src/router.ts'), 0o644).catch(() => {});
  for (const c of cleanups) await c();
});

describe('the warm check', () => {
  it('nothing changed: answered from the index without rg, and as rg answers', async () => {
    const { root, cache } = prepared[ROWS.length]!;
    const rg = await rgPath();
    const plain = await search(rg, root, TERMS, OPTS);
    const written = await cacheStamps(cache);
    const warm = await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS);
    expect(warm).not.toBeNull();
    expect(await cacheStamps(cache)).toEqual(written);
    expect([...warm!.files].sort()).toEqual([...plain.files].sort());
    expect(shape(warm!.hits, TERMS)).toEqual(shape(plain.hits, TERMS));
    expect(await recentFiles(root, Date.now() - 60_000, OPTS)).toBeNull();
    // A segment stamped in the future (the clock set back since it was written) is never taken as proof of no change.
    expect(await recentFiles(root, Date.now() + 3_600_000, OPTS)).toBeNull();
  });

  it.each(ROWS.map((row, i) => [row[0], i] as const))('%s: seen, the same as rg', async (_name, i) => {
    const [, change, alone] = ROWS[i]!;
    const { root, cache } = prepared[i]!;
    await change(root);
    const rg = await rgPath();
    // Asked first with an rg that cannot run: only the find check can answer then.
    const first = await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS);
    expect(first === null).toBe(!alone);
    const plain = await search(rg, root, TERMS, OPTS);
    for (const [n, indexes] of [new RepoIndexes(cache), new RepoIndexes(cache)].entries()) {
      const pending = await indexes.begin(alone ? NO_RG : rg, root, TERMS, OPTS);
      expect(pending.files).not.toBeNull();
      const found = await pending.settle();
      expect(found).not.toBeNull();
      expect([...found!.files].sort()).toEqual([...plain.files].sort());
      expect(shape(found!.hits, TERMS)).toEqual(shape(plain.hits, TERMS));
      // The stored listing comes back as the answer's own only when the check found it unchanged (what locate computed
      // from it meanwhile is then kept); after this row's first question the tree may still be too young to tell.
      if (n === 0) expect(found!.files === pending.files).toBe(alone);
    }
  });

  it('in-place edits one after another: each seen from the delta over the base, without rg', async () => {
    const { root, cache } = prepared[ROWS.length]!;
    const rg = await rgPath();
    for (const [rel, text] of [
      ['docs/guide.md', 'session one\n'],
      ['src/server.ts', 'session two\n'],
      ['docs/guide.md', 'nothing\n'],
    ] as const) {
      await fs.writeFile(path.join(root, rel), text);
      const found = await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS);
      expect(found).not.toBeNull();
      expect(shape(found!.hits, TERMS)).toEqual(shape((await search(rg, root, TERMS, OPTS)).hits, TERMS));
    }
  });

  it('a full walk that finds the listing unchanged is written down: the next question skips the walk again', async () => {
    const { root, cache, rg } = await indexedPastMargin(FILES);
    // An editor's temporary file, come and gone: src/ changed, the listing did not. Asked later than the margin.
    await fs.writeFile(path.join(root, 'src/.router.ts.swp'), 'x');
    await fs.rm(path.join(root, 'src/.router.ts.swp'));
    await pastMargin();
    expect(await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS)).toBeNull();
    expect(await new RepoIndexes(cache).search(rg, root, TERMS, OPTS)).not.toBeNull();
    expect(await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS)).not.toBeNull();
  }, 30_000);

  it('locate keeps the path work it did on the stored listing only while that listing holds: a new file is ranked', async () => {
    const { root, cache } = await indexedPastMargin(FILES);
    await fs.writeFile(path.join(root, 'src/session-router.ts'), 'export const x = 1;\n');
    const ask = (index?: RepoIndexes) => locate(root, 'session router', { timeoutMs: 30_000, history: false, ...(index ? { index } : {}) });
    const indexed = await ask(new RepoIndexes(cache));
    expect(indexed.results.map((r) => r.path)).toContain('src/session-router.ts');
    expect(indexed).toEqual(await ask());
    // Asked again with nothing changed: the stored listing, now holding the file, answers the same.
    expect(await ask(new RepoIndexes(cache))).toEqual(indexed);
  }, 30_000);

  it('a warm question ranked while find walks gives what rg gives, compounds credited once (explain shows each count)', async () => {
    const { root, cache } = await indexedPastMargin({ ...FILES, 'src/wire.ts': 'export const sessionRouter = makeSessionRouter();\n' });
    const ask = (index?: RepoIndexes) => locate(root, 'session router wiring', { timeoutMs: 30_000, history: false, explain: true, ...(index ? { index } : {}) });
    const plain = await ask();
    expect(plain.results.find((r) => r.path === 'src/wire.ts')).toBeDefined();
    // The index was built by indexedPastMargin: both questions are warm, the second through a process's open segments.
    const indexes = new RepoIndexes(cache);
    expect(await ask(indexes)).toEqual(plain);
    expect(await ask(indexes)).toEqual(plain);
  }, 30_000);

  // [row, guide.md before, guide.md after the edit]
  it.each<[string, string, string]>([
    ['an edit in place keeps the stored listing but not the stored hits: the first stage is redone on the new ones', 'Nothing to see here.\n', 'The session router, and the router of a session.\n'],
    ['an edit in place that leaves every file its terms: the early first stage is kept but for the edited file', 'The session router.\n', 'The session router.\nThe router of a session, again.\n'],
  ])('%s', async (_row, before, after) => {
    const { root, cache } = await indexedPastMargin({ ...FILES, 'docs/guide.md': before });
    await fs.writeFile(path.join(root, 'docs/guide.md'), after);
    const ask = (index?: RepoIndexes) => locate(root, 'session router', { timeoutMs: 30_000, history: false, explain: true, ...(index ? { index } : {}) });
    const plain = await ask();
    expect(plain.results.map((r) => r.path)).toContain('docs/guide.md');
    expect(await ask(new RepoIndexes(cache))).toEqual(plain);
  }, 30_000);

  it('an edit the check finds patches the stored hits: only the re-read files are answered again, named in `changed`', async () => {
    const { root, cache, rg } = await indexedPastMargin(FILES);
    await fs.writeFile(path.join(root, 'src/server.ts'), 'import { session } from "./session";\n');
    const first = await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS);
    expect([...(first?.changed ?? [])]).toEqual(['src/server.ts']);
    expect(shape(first!.hits, TERMS)).toEqual(shape((await search(rg, root, TERMS, OPTS)).hits, TERMS));
    // The delta of the first edit is re-read with the second, and both are answered again.
    await fs.writeFile(path.join(root, 'docs/guide.md'), 'a session router\n');
    const second = await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS);
    expect([...(second?.changed ?? [])].sort()).toEqual(['docs/guide.md', 'src/server.ts']);
    expect(shape(second!.hits, TERMS)).toEqual(shape((await search(rg, root, TERMS, OPTS)).hits, TERMS));
  }, 30_000);

  it('a process asking again gets the very listing back, across an edit in place too (what locate derived from it stands)', async () => {
    const { root, cache, rg } = await indexedPastMargin(FILES);
    const indexes = new RepoIndexes(cache);
    const first = await indexes.begin(rg, root, TERMS, OPTS);
    await first.settle();
    const second = await indexes.begin(rg, root, TERMS, OPTS);
    expect(second.files).toBe(first.files);
    await second.settle();
    await fs.writeFile(path.join(root, 'src/server.ts'), 'import { session } from "./session";\n');
    const edited = await indexes.begin(NO_RG, root, TERMS, OPTS);
    expect(edited.files).toBe(first.files);
    const found = await edited.settle();
    expect(found?.files).toBe(first.files);
    expect(shape(found!.hits, TERMS)).toEqual(shape((await search(rg, root, TERMS, OPTS)).hits, TERMS));
    const after = await indexes.begin(NO_RG, root, TERMS, OPTS);
    expect(after.files).toBe(first.files);
    // Locate in that process answers as a fresh one, which lists the segments in their own order.
    const ask = (index?: RepoIndexes) => locate(root, 'session router', { timeoutMs: 30_000, history: false, explain: true, ...(index ? { index } : {}) });
    expect(await ask(indexes)).toEqual(await ask(new RepoIndexes(cache)));
    expect(await ask(indexes)).toEqual(await ask());
  }, 30_000);

  it('without find the index still answers, through the full walk', async () => {
    const { root, cache } = prepared[ROWS.length]!;
    expect(await recentFiles(root, 0, { ...OPTS, find: null })).toBeNull();
    expect(await new RepoIndexes(cache).search(await rgPath(), root, TERMS, { ...OPTS, find: null })).not.toBeNull();
  });
});

describe('the ignored directories the check prunes', () => {
  it('a walk that no longer skips a directory is written down, so the next check walks into it again', async () => {
    // build/ holds only .js files: ignoring *.js instead of build/ lists the same files, but build/ is no longer
    // skipped whole, and a .ts file created in build/sub/ later must be listed. The rule is in info/exclude, which rg
    // does not list, so no listed file changes with it.
    const { root, cache, rg } = await indexedPastMargin({ ...FILES, '.gitignore': '# none\n', '.git/info/exclude': 'build/\n' });
    await fs.writeFile(path.join(root, '.git/info/exclude'), '*.js\n');
    // Past the margin, so that after the walk below the changed exclude no longer sends questions to the walk: only
    // the directories that walk recorded decide whether build/sub/ is looked at.
    await pastMargin();
    const relisted = await new RepoIndexes(cache).search(rg, root, TERMS, OPTS);
    expect(relisted?.files.some((rel) => rel.startsWith('build/'))).toBe(false);
    await fs.writeFile(path.join(root, 'build/sub/session.ts'), 'session\n');
    expect(await new RepoIndexes(cache).search(NO_RG, root, TERMS, OPTS)).toBeNull();
    const found = await new RepoIndexes(cache).search(rg, root, TERMS, OPTS);
    expect(found?.files).toContain('build/sub/session.ts');
  }, 30_000);

  it("reads the bundled rg's own --debug lines: the directory it skipped, not the ignored file, not .git", async () => {
    const repo = await makeRepo({ ...FILES, '.gitignore': 'build/\n*.log\n', 'src/trace.log': 'x\n' });
    cleanups.push(repo.cleanup);
    const run = spawnSync(await rgPath(), ['--files', '--debug', ...WALK_FLAGS], { cwd: repo.root, encoding: 'utf8' });
    const debug = run.stderr;
    const files = run.stdout.split('\0').filter((f) => f !== '');
    expect(debug).toContain('ignoring ./src/trace.log');
    expect(ignoredDirsOf(repo.root, debug, files)).toEqual(['build']);
  });

  const line = (rel: string, why = 'Gitignore(Glob { from: Some("./.gitignore") })') =>
    `rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:1942: ignoring ./${rel}: Ignore(IgnoreMatch(${why}))`;
  // [row, debug lines, listed files, kept]
  const PARSE_ROWS: [string, string[], string[], string[]][] = [
    ['an ignored directory', [line('build')], ['src/a.ts'], ['build']],
    ['a nested one, and the same one twice', [line('pkg/node_modules'), line('pkg/node_modules')], ['pkg/a.ts'], ['pkg/node_modules']],
    ['a directory holding a listed file (a line that lies)', [line('src')], ['src/a.ts'], []],
    ['a directory holding a listed file deeper down', [line('src')], ['src/deep/a/b/leaf.ts'], []],
    ['an ignored file, not a directory', [line('docs/guide.md')], [], []],
    ['a path that does not exist', [line('nowhere')], [], []],
    ['a link to a directory', [line('linked')], [], []],
    ['skipped by an override, not an ignore file', [line('build', 'Override(Glob(Matched(Glob { original: "!.git" })))')], [], []],
    ['a parent step', [line('../outside')], [], []],
    ['a dot step', [line('./build')], [], []],
    ['another debug line', ['rg: DEBUG|ignore::gitignore|crates/ignore/src/gitignore.rs:398: opened gitignore file: ./build'], [], []],
    ['no lines at all', [], [], []],
  ];
  it.each(PARSE_ROWS.map((row) => [row[0], row] as const))('%s', async (_name, [, lines, files, kept]) => {
    const repo = await makeRepo({ 'build/out.js': 'x\n', 'pkg/node_modules/m/index.js': 'x\n', 'docs/guide.md': 'x\n', 'src/deep/a/b/leaf.ts': 'x\n' });
    cleanups.push(repo.cleanup);
    await fs.symlink('build', path.join(repo.root, 'linked'));
    await fs.mkdir(path.join(repo.root, 'outside'));
    expect(ignoredDirsOf(repo.root, lines.join('\n'), files)).toEqual(kept);
  });

  it('keeps at most 256, sorted', async () => {
    const repo = await makeRepo({ 'a.ts': 'x\n' });
    cleanups.push(repo.cleanup);
    const names = Array.from({ length: 300 }, (_, i) => `d${String(i).padStart(3, '0')}`);
    for (const name of names) await fs.mkdir(path.join(repo.root, name));
    expect(ignoredDirsOf(repo.root, [...names].reverse().map((n) => line(n)).join('\n'), ['a.ts'])).toEqual(names.slice(0, 256));
  });
});

describe('a cold build does not hold the event loop', () => {
  it('returns to the loop between batches of files: what is queued at the first pause runs before the build ends', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`src/f${i}.ts`] = `export const router${i} = ${i};\n`;
    const repo = await makeRepo(files);
    const cache = await cacheDir();
    cleanups.push(repo.cleanup, () => fs.rm(cache, { recursive: true, force: true }));
    const order: string[] = [];
    let pauses = 0;
    const pause = (): Promise<void> => {
      if (pauses++ === 0) setImmediate(() => order.push('another request'));
      return new Promise((resolve) => setImmediate(resolve));
    };
    const found = await new RepoIndexes(cache, { pause }).search(await rgPath(), repo.root, TERMS, OPTS);
    order.push('built');
    expect(found?.files.length).toBe(300);
    // 300 files in batches of 128.
    expect(pauses).toBe(2);
    expect(order).toEqual(['another request', 'built']);
  });
});

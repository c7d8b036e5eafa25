import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedLog, storeLog } from '../../src/locate/history-cache.js';
import { coChangeWeights, messageTokens, parseLog, readHistory } from '../../src/locate/history.js';
import { locate } from '../../src/locate/locate.js';

// Issue 37: git history reachable from HEAD as a ranking signal: past commits whose messages resemble the question lend
// their files weight, and files that changed with the best candidates gain. Real git over real temp repositories.

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'A',
  GIT_AUTHOR_EMAIL: 'a@example.com',
  GIT_COMMITTER_NAME: 'A',
  GIT_COMMITTER_EMAIL: 'a@example.com',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  PATH: process.env.PATH ?? '/usr/bin:/bin',
};
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });

/** Both files hold the question's words equally; only history says which one the question's kind of change touches. */
const FILES: Record<string, string> = {
  'src/render/table.ts': 'export function drawTable(rows: string[]) { return rows.join("\\n"); } // column width\n',
  'src/render/list.ts': 'export function drawList(rows: string[]) { return rows.join("\\n"); } // column width\n',
  'src/render/registry.ts': 'export const renderers = ["table", "list"];\n',
};

async function makeHistory(): Promise<string> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-hist-')));
  git(root, 'init', '-q', '-b', 'main');
  const commit = async (subject: string, files: Record<string, string>): Promise<void> => {
    for (const [rel, text] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await fs.writeFile(path.join(root, rel), text);
    }
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', subject);
  };
  await commit('Initial renderers', FILES);
  // Past changes of this kind went to table.ts, with the registry beside it.
  for (let n = 1; n <= 3; n++) {
    await commit(`Align column widths in wide output ${n}`, {
      'src/render/table.ts': `${FILES['src/render/table.ts']}// ${n}\n`,
      'src/render/registry.ts': `${FILES['src/render/registry.ts']}// ${n}\n`,
    });
    await commit(`Docs note ${n}`, { [`docs/note-${n}.md`]: `${n}\n` });
  }
  // A branch HEAD does not reach: its commits must lend nothing.
  git(root, 'checkout', '-q', '-b', 'other');
  await commit('Align column widths for the list', { 'src/render/list.ts': `${FILES['src/render/list.ts']}// other\n` });
  await commit('Align column widths for the list again', { 'src/render/list.ts': `${FILES['src/render/list.ts']}// other 2\n` });
  git(root, 'checkout', '-q', 'main');
  return root;
}

let root = '';
beforeAll(async () => {
  root = await makeHistory();
}, 30_000);
afterAll(async () => {
  await fs.rm(path.dirname(root) === os.tmpdir() ? root : root, { recursive: true, force: true });
});

const ask = (question: string, extra: { history?: boolean; historyCache?: string } = {}) =>
  locate(root, question, { timeoutMs: 20_000, explain: true, ...extra });

describe('the history signal', () => {
  it('a file that past commits like the question touched ranks first, and --explain says history put it there', async () => {
    const question = 'column width wrong in wide output';
    const without = await ask(question, { history: false });
    const withHistory = await ask(question);
    expect(without.results[0]?.path).toBe('src/render/list.ts');
    expect(withHistory.results[0]?.path).toBe('src/render/table.ts');
    expect(withHistory.results[0]?.explain?.history?.messages).toBeGreaterThan(0);
    expect(without.results.every((r) => r.explain?.history === undefined)).toBe(true);
  });

  it('commits on a branch HEAD does not reach lend nothing', async () => {
    const history = await readHistory(root, { timeoutMs: 20_000 });
    expect(history).not.toBeNull();
    const touched = new Set(history!.commits.flatMap((c) => c.files));
    expect(touched.has('src/render/table.ts')).toBe(true);
    // list.ts was only changed on `other` after the first commit: on main it appears once, in the initial commit.
    expect(history!.commits.filter((c) => c.files.includes('src/render/list.ts'))).toHaveLength(1);
  });

  it.each([
    ['a directory that is not a repository', async (): Promise<string> => {
      const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-nohist-')));
      for (const [rel, text] of Object.entries(FILES)) {
        await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
        await fs.writeFile(path.join(dir, rel), text);
      }
      return dir;
    }],
    ['a repository without commits', async (): Promise<string> => {
      const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-nohist-')));
      git(dir, 'init', '-q');
      await fs.writeFile(path.join(dir, 'a.ts'), 'export const width = 1; // column\n');
      return dir;
    }],
    ['a shallow clone', async (): Promise<string> => {
      const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-nohist-')));
      git(dir, 'clone', '-q', '--depth', '1', `file://${root}`, 'clone');
      return path.join(dir, 'clone');
    }],
  ])('%s: no history is read and the ranking is as without it', async (_name, make) => {
    const dir = await make();
    try {
      expect(await readHistory(dir, { timeoutMs: 20_000 })).toBeNull();
      const on = await locate(dir, 'column width', { timeoutMs: 20_000 });
      const off = await locate(dir, 'column width', { timeoutMs: 20_000, history: false });
      expect(on.results).toEqual(off.results);
    } finally {
      await fs.rm(path.basename(dir) === 'clone' ? path.dirname(dir) : dir, { recursive: true, force: true });
    }
  });
});

describe('the history cache', () => {
  it('keeps the log of HEAD and reads it back; an entry for another root or HEAD is not used', async () => {
    const cache = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-hcache-'));
    try {
      const head = git(root, 'rev-parse', 'HEAD').trim();
      const first = await readHistory(root, { timeoutMs: 20_000, cacheDir: cache });
      expect(await cachedLog(cache, root, head)).not.toBeNull();
      expect(await cachedLog(cache, `${root}x`, head)).toBeNull();
      expect(await cachedLog(cache, root, 'f'.repeat(40))).toBeNull();
      // A doctored entry for this root and HEAD is what the next question reads (it can move history weights, nothing else).
      await storeLog(cache, root, head, '\0Align column widths\n\x01\nsrc/render/list.ts\n');
      const second = await readHistory(root, { timeoutMs: 20_000, cacheDir: cache });
      expect(second?.commits.map((c) => c.files)).toEqual([['src/render/list.ts']]);
      expect(first!.commits.length).toBeGreaterThan(1);
    } finally {
      await fs.rm(cache, { recursive: true, force: true });
    }
  });

  it.each([
    ['not JSON', 'garbage'],
    ['another format', JSON.stringify({ v: 99, root: '/r', head: 'a'.repeat(40), log: '' })],
    ['a log that is not text', JSON.stringify({ v: 1, root: '/r', head: 'a'.repeat(40), log: 42 })],
  ])('an entry that is %s is ignored', async (_name, text) => {
    const cache = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-hcache-'));
    try {
      await storeLog(cache, '/r', 'a'.repeat(40), 'x');
      const [file] = await fs.readdir(cache);
      await fs.writeFile(path.join(cache, file!), text);
      expect(await cachedLog(cache, '/r', 'a'.repeat(40))).toBeNull();
    } finally {
      await fs.rm(cache, { recursive: true, force: true });
    }
  });
});

describe('reading the log', () => {
  it.each([
    ['Fix createServer timeout', ['createserver', 'create', 'server', 'timeout']],
    ['parse_query: handle empty', ['parse_query', 'parse', 'query', 'handle', 'empty']],
    ['ok a to', []],
  ])('messageTokens(%j)', (text, expected) => {
    expect(messageTokens(text).filter((t) => t !== 'fix')).toEqual(expected);
  });

  it('skips commits that touch no file or very many (a sweep says nothing about where a thing is)', () => {
    const many = Array.from({ length: 100 }, (_v, i) => `f${i}.ts`).join('\n');
    const history = parseLog(`\0one\n\x01\na.ts\n\0sweep\n\x01\n${many}\n\0empty\n\x01\n\0two\nbody words\x01\nb.ts\nc.ts\n`);
    expect(history.commits.map((c) => c.files)).toEqual([['a.ts'], ['b.ts', 'c.ts']]);
    expect(history.df.get('body')).toBe(1);
  });

  it('co-change: files that changed with a seed gain, the seed itself does not', () => {
    const history = parseLog('\0a\n\x01\nseed.ts\nfriend.ts\n\0b\n\x01\nseed.ts\nfriend.ts\nother.ts\n\0c\n\x01\nlonely.ts\n');
    const weights = coChangeWeights(history, ['seed.ts']);
    expect(weights.get('friend.ts')).toBe(1);
    expect(weights.get('other.ts')).toBeLessThan(1);
    expect(weights.has('seed.ts')).toBe(false);
    expect(weights.has('lonely.ts')).toBe(false);
  });
});

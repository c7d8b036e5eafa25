import { promises as fs, lstatSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from '../../src/locate/index/read.js';
import { decode, FileState, SegmentBuilder } from '../../src/locate/index/segment.js';
import { indexDirOf, RepoIndexes } from '../../src/locate/index/store.js';
import { tokenize } from '../../src/locate/index/tokens.js';
import { locate } from '../../src/locate/locate.js';
import type { Term } from '../../src/locate/query.js';
import { makeRepo } from '../support/temp-repo.js';
import { both, cacheDir, shape } from './index-support.js';

const term = (text: string): Term => ({ text, kind: 'identifier', weight: 2, wholeWord: false });
const ROUTER = [term('router')];

const FILES: Record<string, string> = {
  'src/router.ts': 'export class Router {}\nconst router = new Router();\n',
  'src/server.ts': 'import { router } from "./router";\n',
  'docs/guide.md': 'Nothing to see here.\n',
};

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** A fresh repository and cache; the index built once. */
async function fresh(files: Record<string, string> = FILES): Promise<{ root: string; cache: string; dir: string }> {
  const repo = await makeRepo(files);
  const cache = await cacheDir();
  cleanups.push(repo.cleanup, () => fs.rm(cache, { recursive: true, force: true }));
  const { index } = await both(repo.root, ROUTER, new RepoIndexes(cache));
  expect(index).not.toBeNull();
  return { root: repo.root, cache, dir: indexDirOf(cache, repo.root) };
}

/** The index's hits equal rg's, asked through a new RepoIndexes (as a new process would). */
async function agrees(root: string, cache: string, terms: readonly Term[] = ROUTER): Promise<Record<string, unknown>> {
  const { rg, index } = await both(root, terms, new RepoIndexes(cache));
  expect(index).not.toBeNull();
  expect(shape(index!.hits, terms)).toEqual(shape(rg.hits, terms));
  return shape(index!.hits, terms);
}

const stamp = (file: string): string => {
  const st = lstatSync(file, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.mtimeMs}:${st.size}` : 'none';
};

describe('building and updating', () => {
  it('builds a base once; the next question keeps it', async () => {
    const { root, cache, dir } = await fresh();
    const before = stamp(path.join(dir, 'base.six'));
    expect(before).not.toBe('none');
    expect(Object.keys(await agrees(root, cache)).sort()).toEqual(['src/router.ts', 'src/server.ts']);
    // A tree this young takes the full walk (fresh.ts), which may write an empty delta with a later stamp; a warm
    // question on an older tree writes nothing (test/locate/index-fresh.test.ts).
    expect(stamp(path.join(dir, 'base.six'))).toBe(before);
  });

  it.each<[string, (root: string) => Promise<void>, string[]]>([
    ['an edit', (root) => fs.writeFile(path.join(root, 'docs/guide.md'), 'The router is in src.\n'), ['docs/guide.md', 'src/router.ts', 'src/server.ts']],
    ['an added file', (root) => fs.writeFile(path.join(root, 'src/new.ts'), 'router();\n'), ['src/new.ts', 'src/router.ts', 'src/server.ts']],
    ['a deleted file', (root) => fs.rm(path.join(root, 'src/server.ts')), ['src/router.ts']],
    ['a rename', (root) => fs.rename(path.join(root, 'src/server.ts'), path.join(root, 'src/main.ts')), ['src/main.ts', 'src/router.ts']],
    ['a same-size edit', (root) => fs.writeFile(path.join(root, 'src/server.ts'), 'import { rooter } from "./rooter";\n'), ['src/router.ts']],
    ['a newly ignored file', (root) => fs.writeFile(path.join(root, '.ignore'), 'src/server.ts\n'), ['src/router.ts']],
  ])('%s is seen by the next question, through a delta over the same base', async (_name, change, expected) => {
    const { root, cache, dir } = await fresh();
    const base = stamp(path.join(dir, 'base.six'));
    await change(root);
    expect(Object.keys(await agrees(root, cache)).sort()).toEqual(expected);
    expect(stamp(path.join(dir, 'base.six'))).toBe(base);
    expect(stamp(path.join(dir, 'delta.six'))).not.toBe('none');
    // A second change after the first: the delta is rebuilt over the same base.
    await fs.writeFile(path.join(root, 'src/later.ts'), 'router\n');
    expect(Object.keys(await agrees(root, cache))).toContain('src/later.ts');
    expect(stamp(path.join(dir, 'base.six'))).toBe(base);
  });

  it('one RepoIndexes answers across calls and sees a change between them', async () => {
    const { root, cache } = await fresh();
    const indexes = new RepoIndexes(cache);
    expect((await both(root, ROUTER, indexes)).index!.hits.has('docs/guide.md')).toBe(false);
    await fs.writeFile(path.join(root, 'docs/guide.md'), 'router\n');
    expect((await both(root, ROUTER, indexes)).index!.hits.has('docs/guide.md')).toBe(true);
  });
});

describe('racy rows: a file modified in the second the segment was written', () => {
  // A segment whose row for src/server.ts has the file's current stat but runs from other content (as when an edit
  // lands in the same timestamp as the build). Only the content hash can tell.
  async function forged(writtenAfterMs: number): Promise<{ root: string; cache: string }> {
    const { root, cache, dir } = await fresh();
    const rel = 'src/server.ts';
    const st = lstatSync(path.join(root, rel));
    const builder = new SegmentBuilder();
    for (const other of ['docs/guide.md', 'src/router.ts']) {
      const file = readFile(root, other, new Map());
      builder.add(file.row, file.runs);
    }
    const stale = Buffer.from('nothing of interest here\n');
    builder.add(
      { rel, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hash: new Uint8Array(20).fill(7), state: FileState.Indexed },
      tokenize(stale),
    );
    const bytes = builder.finish({ kind: 'base', id: 5, baseId: 0, root, writtenAtMs: Math.max(st.mtimeMs, st.ctimeMs) + writtenAfterMs, tombstones: [], ignoredDirs: [] })!;
    await fs.writeFile(path.join(dir, 'base.six'), bytes);
    return { root, cache };
  }

  it('written in the same second: the file is re-hashed and its change seen', async () => {
    const { root, cache } = await forged(0);
    expect(Object.keys(await agrees(root, cache))).toContain('src/server.ts');
  });

  it('written seconds later: the stat is trusted (so the row above is what the racy check adds)', async () => {
    const { root, cache } = await forged(5_000);
    const { index } = await both(root, ROUTER, new RepoIndexes(cache));
    expect(index!.hits.has('src/server.ts')).toBe(false);
  });
});

/** Recomputes both checksums, so a row can test what lies behind them. */
function reseal(buf: Buffer): Buffer {
  buf.writeUInt32LE(crc32(buf.subarray(64)), 44);
  buf.writeUInt32LE(crc32(buf.subarray(0, 48)), 48);
  return buf;
}

describe('a stale, truncated, corrupt or foreign index is rebuilt, never trusted', () => {
  it.each<[string, (buf: Buffer, root: string) => Buffer | Promise<Buffer>]>([
    ['truncated by one byte', (b) => b.subarray(0, b.length - 1)],
    ['truncated to its header', (b) => b.subarray(0, 64)],
    ['empty', () => Buffer.alloc(0)],
    ['a trailing byte', (b) => Buffer.concat([b, Buffer.from([0])])],
    ['a body byte flipped near the end', (b) => ((b[b.length - 20]! ^= 0xff), b)],
    ['a body byte flipped in the middle', (b) => ((b[b.length >> 1]! ^= 0x01), b)],
    ['a header byte flipped', (b) => ((b[33]! ^= 1), b)],
    ['another format version', (b) => (b.writeUInt32LE(99, 8), reseal(b))],
    ['another magic', (b) => (b.write('NOTANIDX', 0, 'latin1'), reseal(b))],
    ['a delta where the base belongs', (b) => (b.writeUInt32LE(1, 12), reseal(b))],
    ['file count off by one (sealed)', (b) => (b.writeUInt32LE(b.readUInt32LE(32) + 1, 32), reseal(b))],
    ['word count off by one (sealed)', (b) => (b.writeUInt32LE(b.readUInt32LE(36) - 1, 36), reseal(b))],
    ['a section length past the end (sealed)', (b) => (b.writeUInt32LE(0x7fffffff, 64), reseal(b))],
    ['an upper-case word in the vocabulary (sealed)', (b) => reseal(Buffer.from(b.toString('latin1').replace('router\n', 'ROUTER\n'), 'latin1'))],
    ['a posting whose file row is out of range (sealed)', (b) => corruptPosting(b)],
    [
      "another root's index under this root's name",
      async (_b, root) => {
        const other = await fresh();
        void root;
        return fs.readFile(path.join(other.dir, 'base.six'));
      },
    ],
  ])('%s', async (_name, damage) => {
    const { root, cache, dir } = await fresh();
    const file = path.join(dir, 'base.six');
    const bad = await damage(await fs.readFile(file), root);
    await fs.writeFile(file, bad);
    // The answer is rg's, and the index on disk afterwards is a valid one of this root (rebuilt now or next time).
    const { rg, index } = await both(root, ROUTER, new RepoIndexes(cache));
    expect(shape((index ?? rg).hits, ROUTER)).toEqual(shape(rg.hits, ROUTER));
    await agrees(root, cache);
    const after = await fs.readFile(file);
    expect(after.equals(bad)).toBe(false);
    expect(decode(after).root).toBe(root);
  });

  it('a delta of another base is ignored', async () => {
    const { root, cache, dir } = await fresh();
    await fs.writeFile(path.join(root, 'docs/guide.md'), 'router\n');
    await agrees(root, cache);
    const delta = await fs.readFile(path.join(dir, 'delta.six'));
    delta.writeUInt32LE(12345, 20);
    await fs.writeFile(path.join(dir, 'delta.six'), reseal(delta));
    expect(Object.keys(await agrees(root, cache))).toContain('docs/guide.md');
  });
});

/** The posting of `router` given a file-row delta far out of range, checksums recomputed. */
function corruptPosting(buf: Buffer): Buffer {
  const seg = decode(buf);
  const w = seg.vocab.split('\n').indexOf('router');
  let off = 64;
  for (let section = 0; section < 8; section++) off += 8 + ((buf.readUInt32LE(off) + 7) & ~7);
  const at = off + 8 + seg.postingStarts[w]!;
  buf[at] = 0xff;
  buf[at + 1] = 0x7f;
  return reseal(buf);
}

describe('what the index reads', () => {
  let root = '';
  let outside = '';
  beforeAll(async () => {
    const repo = await makeRepo({ 'src/inside.ts': 'router\n' });
    root = repo.root;
    cleanups.push(repo.cleanup);
    outside = path.join(path.dirname(root), 'outside');
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'secret.ts'), 'router outsidesecretword\n');
    await fs.symlink(path.join(outside, 'secret.ts'), path.join(root, 'src/link.ts'));
    await fs.symlink(outside, path.join(root, 'linkdir'));
    execFileSync('mkfifo', [path.join(root, 'src/pipe.ts')]);
    // A real directory below a link that leaves; a link from outside back in; a link between two places inside.
    await fs.mkdir(path.join(outside, 'deep', 'deeper'), { recursive: true });
    await fs.writeFile(path.join(outside, 'deep', 'secret.ts'), 'router\n');
    await fs.writeFile(path.join(outside, 'deep', 'deeper', 'secret.ts'), 'router\n');
    await fs.symlink(path.join(root, 'src'), path.join(outside, 'back'));
    await fs.symlink(path.join(root, 'src'), path.join(root, 'alias'));
  });

  it.each<[string, string]>([
    ['a symlink to a file outside', 'src/link.ts'],
    ['a file under a symlinked directory', 'linkdir/secret.ts'],
    ['a file in a real directory under a symlinked directory that leaves', 'linkdir/deep/secret.ts'],
    ['a file two real directories below it', 'linkdir/deep/deeper/secret.ts'],
    ['a FIFO (never opened, so never waited on)', 'src/pipe.ts'],
    ['a directory', 'src'],
    ['a missing file', 'src/none.ts'],
  ])('%s is refused, without content', (_name, rel) => {
    const file = readFile(root, rel, new Map());
    expect(file.row.state).toBe(FileState.Refused);
    expect(file.runs).toBeNull();
  });

  it.each<[string, string]>([
    ['a regular file inside', 'src/inside.ts'],
    ['a file under a link to a directory inside', 'alias/inside.ts'],
    ['a file under a link back into the root, through a link that leaves', 'linkdir/back/inside.ts'],
  ])('%s is read (the rows above can fail)', (_name, rel) => {
    const file = readFile(root, rel, new Map());
    expect(file.row.state).toBe(FileState.Indexed);
    expect([...file.runs!.keys()]).toEqual(['router']);
  });

  it('one directory memo across reads in any order decides each file as a fresh one does', () => {
    const rels = ['linkdir/deep/deeper/secret.ts', 'alias/inside.ts', 'linkdir/back/inside.ts', 'linkdir/deep/secret.ts', 'src/inside.ts', 'linkdir/secret.ts'];
    const alone = rels.map((rel) => readFile(root, rel, new Map()).row.state);
    expect(alone).toEqual([FileState.Refused, FileState.Indexed, FileState.Indexed, FileState.Refused, FileState.Indexed, FileState.Refused]);
    for (const order of [rels, [...rels].reverse()]) {
      const dirs = new Map<string, boolean>();
      expect(order.map((rel) => readFile(root, rel, dirs).row.state)).toEqual(order.map((rel) => alone[rels.indexOf(rel)]));
    }
  });

  it('nothing outside the root reaches the stored index', async () => {
    const cache = await cacheDir();
    cleanups.push(() => fs.rm(cache, { recursive: true, force: true }));
    const { index } = await both(root, [term('outsidesecretword')], new RepoIndexes(cache));
    expect(index).not.toBeNull();
    expect(index!.hits.size).toBe(0);
    const bytes = await fs.readFile(path.join(indexDirOf(cache, root), 'base.six'));
    expect(bytes.includes('outsidesecretword')).toBe(false);
    expect(bytes.includes('router')).toBe(true);
  });
});

describe('without a writable cache directory', () => {
  it.each<[string, (parent: string) => Promise<string | null>]>([
    ['no cache directory at all', async () => null],
    ['a cache path under a regular file', async (parent) => {
      await fs.writeFile(path.join(parent, 'file'), '');
      return path.join(parent, 'file', 'index');
    }],
  ])('%s: the index declines and locate gives the same answer through rg', async (_name, makeDir) => {
    const repo = await makeRepo(FILES);
    cleanups.push(repo.cleanup);
    const parent = await cacheDir();
    cleanups.push(() => fs.rm(parent, { recursive: true, force: true }));
    const dir = await makeDir(parent);
    const { index } = await both(repo.root, ROUTER, new RepoIndexes(dir));
    expect(index).toBeNull();
    const question = 'where is the Router constructed';
    const plain = await locate(repo.root, question, { timeoutMs: 30_000 });
    const viaDeclined = await locate(repo.root, question, { timeoutMs: 30_000, index: new RepoIndexes(dir) });
    const viaIndex = await locate(repo.root, question, { timeoutMs: 30_000, index: new RepoIndexes(parent) });
    expect(viaDeclined).toEqual(plain);
    expect(viaIndex).toEqual(plain);
    expect(plain.results[0]?.path).toBe('src/router.ts');
  });
});

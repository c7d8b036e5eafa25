import { existsSync, promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReadFile } from '../../src/locate/index/read.js';
import { CorruptIndex, decode, FileState, forEachPosting, SegmentBuilder, type BuiltPart } from '../../src/locate/index/segment.js';
import { BuildHelper, indexDirOf, ListedBuild, PathRecords, RepoIndexes } from '../../src/locate/index/store.js';
import { tokenize } from '../../src/locate/index/tokens.js';
import type { Term } from '../../src/locate/query.js';
import { stripDotSlash } from '../../src/locate/search.js';
import { makeRepo } from '../support/temp-repo.js';
import { both, cacheDir, OPTS, rgPath, shape } from './index-support.js';

/**
 * A cold build reads each file as rg prints its path (store.ts's PathRecords and ListedBuild), every other batch in a
 * worker thread (BuildHelper): the paths it reads and keeps must be what rg's whole output, decoded at once as
 * search.ts decodes it, lists, however the output is cut; and a base read in parts (SegmentBuilder.absorb) must be the
 * same bytes as one read whole, whichever thread read which part.
 */

/** search.ts's reading of rg's whole `--files --null` output. */
const whole = (bytes: Buffer): string[] => bytes.toString('utf8').split('\0').filter((f) => f !== '').map(stripDotSlash);

/** The same output fed in `cuts`' pieces; the paths handed on as they came must be the paths kept. */
function streamed(bytes: Buffer, cuts: readonly number[]): string[] {
  const handed: string[] = [];
  const records = new PathRecords((rel) => handed.push(rel));
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    records.feed(bytes.subarray(from, cut));
    from = cut;
  }
  const files = records.end();
  expect(handed).toEqual(files);
  return files;
}

const b = (...parts: (string | number[])[]): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

describe('PathRecords decodes as the whole output would', () => {
  it.each<[string, Buffer]>([
    ['ASCII paths, some with ./', b('./src/a.ts\0src/b.ts\0./c\0')],
    ['two- to four-byte characters', b('./é/ß.ts\0日本/語.md\0😀/x\0')],
    ['a lone continuation byte', b('a', [0x80], 'b\0c\0')],
    ['a sequence cut by the NUL', b('a', [0xe6, 0x97], '\0', [0x9c], 'z\0')],
    ['bytes that are never UTF-8', b([0xff, 0xfe], '.ts\0', [0xc0, 0xaf], '\0')],
    ['empty records and ./ alone', b('\0\0./\0x\0\0')],
    ['a last record without its NUL', b('a\0./b')],
    ['nothing', b('')],
  ])('%s, cut at every byte and not at all', (_name, bytes) => {
    const expected = whole(bytes);
    expect(streamed(bytes, [])).toEqual(expected);
    for (let cut = 0; cut <= bytes.length; cut++) expect(streamed(bytes, [cut])).toEqual(expected);
    expect(streamed(bytes, Array.from({ length: bytes.length }, (_, i) => i))).toEqual(expected);
  });

  it('random outputs in random pieces (seeded)', () => {
    let seed = 37;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = [0x00, 0x00, 0x2e, 0x2f, 0x61, 0x80, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xff];
    for (let round = 0; round < 300; round++) {
      const bytes = Buffer.from(Array.from({ length: next(60) }, () => alphabet[next(alphabet.length)]!));
      const cuts = Array.from({ length: next(6) }, () => next(bytes.length + 1)).sort((x, y) => x - y);
      expect(streamed(bytes, cuts)).toEqual(whole(bytes));
    }
  });
});

describe('a cold build read while rg lists', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });
  const term = (text: string): Term => ({ text, kind: 'identifier', weight: 2, wholeWord: false });

  it('lists and finds what rg does, file names in any bytes and a listing of many chunks', async () => {
    const files: Record<string, string> = {};
    // About 90 KiB of paths: rg's output reaches node in several chunks.
    for (let i = 0; i < 1500; i++) files[`src/module-${String(i).padStart(4, '0')}/handler-with-a-long-name-${i}.ts`] = i % 7 === 0 ? `export const router${i} = 1; // router\n` : 'export {};\n';
    const repo = await makeRepo(files);
    const cache = await cacheDir();
    cleanups.push(repo.cleanup, () => fs.rm(cache, { recursive: true, force: true }));
    for (const name of [b('caf', [0xc3, 0xa9], '.ts'), b('bad-', [0xff], '.ts'), b('cut-', [0xe6, 0x97], '.ts')]) {
      await fs.writeFile(Buffer.concat([Buffer.from(`${repo.root}${path.sep}`), name]), 'router\n');
    }
    const terms = [term('router')];
    const { rg, index } = await both(repo.root, terms, new RepoIndexes(cache));
    expect(index).not.toBeNull();
    expect(index!.files.length).toBe(1503);
    expect([...index!.files].sort()).toEqual([...rg.files].sort());
    // A name that is not UTF-8 is listed (decoded with U+FFFD) by both, but no file has the decoded name: the index
    // cannot open it (neither can read_file), while rg searched it by its bytes. The build was that way before too.
    const readable = (hits: NonNullable<typeof index>['hits']) => new Map([...hits].filter(([rel]) => !rel.includes('\uFFFD')));
    expect([...rg.hits.keys()].filter((rel) => rel.includes('\uFFFD'))).toHaveLength(2);
    expect(shape(index!.hits, terms)).toEqual(shape(readable(rg.hits), terms));
    expect(index!.hits.has('café.ts')).toBe(true);
    // The stored base answers the next question as the build did.
    const again = await new RepoIndexes(cache).search(await rgPath(), repo.root, terms, OPTS);
    expect(shape(again!.hits, terms)).toEqual(shape(index!.hits, terms));
  });
});

describe('a base read in parts is the base read whole (SegmentBuilder.absorb)', () => {
  const meta = { kind: 'base' as const, id: 7, baseId: 0, root: '/r', writtenAtMs: 1_000, tombstones: [], ignoredDirs: [] };
  /** Seeded files of a small vocabulary, so words recur across parts, some on many lines, some files empty or unread. */
  function files(count: number, seed: number): ReadFile[] {
    let s = seed;
    // The high bits of a linear congruential generator: its low bits repeat with short periods.
    const next = (n: number): number => {
      s = (s * 1103515245 + 12345) % 2 ** 31;
      return Math.floor(s / 65536) % n;
    };
    const vocabulary = Array.from({ length: 40 }, (_, i) => `w${i}${'x'.repeat(i % 5)}`);
    return Array.from({ length: count }, (_, i) => {
      const lines = Array.from({ length: next(90) }, () => Array.from({ length: next(4) }, () => vocabulary[next(vocabulary.length)]).join(' '));
      const text = Buffer.from(lines.join('\n'));
      const row = { rel: `f${i}.ts`, size: text.length, mtimeMs: i, ctimeMs: i + 1, ino: 100 + i, hash: Buffer.alloc(20, i % 256), state: FileState.Indexed };
      return next(10) === 0 ? { row: { ...row, state: FileState.Refused }, runs: null } : { row, runs: tokenize(text) };
    });
  }
  const whole = (all: readonly ReadFile[]): Buffer => {
    const builder = new SegmentBuilder();
    for (const f of all) builder.add(f.row, f.runs);
    return builder.finish(meta)!;
  };
  /** Cut at `cuts`; the parts at odd places read apart and absorbed, the others added in place or absorbed too. */
  const inParts = (all: readonly ReadFile[], cuts: readonly number[], ownAbsorbed: boolean): Buffer => {
    const builder = new SegmentBuilder();
    const bounds = [0, ...cuts, all.length];
    for (let p = 0; p + 1 < bounds.length; p++) {
      const slice = all.slice(bounds[p], bounds[p + 1]);
      if (p % 2 === 0 && !ownAbsorbed) {
        for (const f of slice) builder.add(f.row, f.runs);
        continue;
      }
      const part = new SegmentBuilder();
      for (const f of slice) part.add(f.row, f.runs);
      builder.absorb(part.part());
    }
    return builder.finish(meta)!;
  };

  it.each<[string, number, number[]]>([
    ['one part', 30, []],
    ['two parts', 30, [11]],
    ['many parts, one file each', 12, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
    ['empty parts', 20, [0, 0, 5, 5, 20]],
    ['a part of unread files only', 30, [3, 4]],
    // Rows past 127 take two bytes as varints: a word's first row and its distance from its last one change size.
    ['parts past 128 files', 420, [150, 151, 300]],
  ])('%s: the same bytes', (_name, count, cuts) => {
    const all = files(count, count + cuts.length);
    const expected = whole(all);
    expect(inParts(all, cuts, false).equals(expected)).toBe(true);
    expect(inParts(all, cuts, true).equals(expected)).toBe(true);
  });

  it('a word last seen long before a part, early in it and again past its 128th row: the same bytes', () => {
    // Its first record's distance grows from one byte (row 0 of the part) to two (150 rows from its last one before),
    // which only the part's first row for the word, not its last, gets right.
    const all: ReadFile[] = Array.from({ length: 400 }, (_, i) => {
      const text = Buffer.from(`filler${[0, 150, 350].includes(i) ? ' rare' : ''}\n`);
      return { row: { rel: `f${i}.ts`, size: text.length, mtimeMs: i, ctimeMs: i, ino: i, hash: Buffer.alloc(20), state: FileState.Indexed }, runs: tokenize(text) };
    });
    expect(inParts(all, [150], false).equals(whole(all))).toBe(true);
  });

  it('random cuts of random files (seeded)', () => {
    for (let round = 0; round < 40; round++) {
      const all = files(1 + (round * 7) % 60, round);
      const cuts = [...new Set(Array.from({ length: round % 6 }, (_, i) => (round * 13 + i * 17) % (all.length + 1)))].sort((a, b) => a - b);
      expect(inParts(all, cuts, round % 2 === 0).equals(whole(all))).toBe(true);
    }
  });

  const goodPart = (): BuiltPart => {
    const part = new SegmentBuilder();
    for (const f of files(6, 3)) part.add(f.row, f.runs);
    return part.part();
  };

  it.each<[string, (p: BuiltPart) => BuiltPart]>([
    ['a row short of stats', (p) => ({ ...p, stats: p.stats.subarray(4) })],
    ['a row short of hashes', (p) => ({ ...p, hashes: p.hashes.subarray(20) })],
    ['a row short of states', (p) => ({ ...p, states: p.states.subarray(1) })],
    ['a word short of byte counts', (p) => ({ ...p, wordBytes: p.wordBytes.subarray(1) })],
    ['a word short of first rows', (p) => ({ ...p, firstFile: p.firstFile.subarray(1) })],
    ['a word short of last rows', (p) => ({ ...p, lastFile: p.lastFile.subarray(1) })],
    ['a first row before the part', (p) => ({ ...p, firstFile: p.firstFile.map(() => -1) })],
    ['a first row after the last', (p) => ({ ...p, firstFile: p.lastFile.map((l) => l + 1), lastFile: p.lastFile })],
    ['a last row past the part', (p) => ({ ...p, lastFile: p.lastFile.map(() => p.rels.length), firstFile: p.firstFile.map(() => 0) })],
    ['fewer bytes than its first record needs', (p) => ({ ...p, wordBytes: p.wordBytes.map(() => 0) })],
  ])('%s: absorb refuses the part', (_name, spoil) => {
    expect(() => new SegmentBuilder().absorb(goodPart())).not.toThrow();
    expect(() => new SegmentBuilder().absorb(spoil(goodPart()))).toThrow(CorruptIndex);
  });

  it('the part spoiled below holds several words', () => expect(goodPart().words.length).toBeGreaterThan(5));

  it.each<[string, (p: BuiltPart) => BuiltPart]>([
    ['a stream with bytes past its files', (p) => ({ ...p, stream: Buffer.concat([p.stream, Buffer.from([0])]) })],
    [
      'a record naming a word the part does not hold',
      (p) => ({ ...p, words: p.words.slice(0, 1), wordBytes: p.wordBytes.subarray(0, 1), firstFile: p.firstFile.subarray(0, 1), lastFile: p.lastFile.subarray(0, 1) }),
    ],
    ['a record past its word\'s postings', (p) => ({ ...p, wordBytes: p.wordBytes.map((b) => b - 1 || 1) })],
  ])('%s: finish refuses the segment', (_name, spoil) => {
    const builder = new SegmentBuilder();
    builder.absorb(spoil(goodPart()));
    expect(() => builder.finish(meta)).toThrow(CorruptIndex);
  });

  it('a builder that absorbed a part is no part itself', () => {
    const builder = new SegmentBuilder();
    builder.absorb(goodPart());
    expect(() => builder.part()).toThrow(/absorbed/);
  });
});

describe('a cold build with its worker thread (dist/build-worker.cjs, built by the test setup)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });
  const WORKER = fileURLToPath(new URL('../../dist/build-worker.cjs', import.meta.url));
  const term = (text: string): Term => ({ text, kind: 'identifier', weight: 2, wholeWord: false });
  const TERMS = [term('router'), term('handler')];

  /** Every word's postings as `path:lines` and every row as `path state hash`, whatever the rows' order. */
  function contents(file: string): { rows: string[]; postings: Record<string, string[]> } {
    const seg = decode(readFileSync(file));
    const rows = seg.paths.map((rel, i) => `${rel} ${seg.states[i]} ${Buffer.from(seg.hashes.subarray(i * 20, i * 20 + 20)).toString('hex')}`).sort();
    const postings: Record<string, string[]> = {};
    seg.vocab.split('\n').slice(0, -1).forEach((word, w) => {
      const seen: string[] = [];
      forEachPosting(seg, w, (file, lines) => seen.push(`${seg.paths[file]}:${lines.join(',')}`));
      postings[word] = seen.sort();
    });
    return { rows, postings };
  }

  async function repo(): Promise<string> {
    const files: Record<string, string> = {};
    for (let i = 0; i < 700; i++) files[`pkg${i % 9}/mod${i}.ts`] = `export const handler${i % 13} = ${i};\n${i % 5 === 0 ? 'const router = 1;\n' : ''}`;
    files['pkg0/big.ts'] = 'router handler\n'.repeat(200);
    const made = await makeRepo(files);
    cleanups.push(made.cleanup);
    return made.root;
  }

  async function built(root: string, opts: ConstructorParameters<typeof RepoIndexes>[1]): Promise<{ inWorker: number; found: Awaited<ReturnType<RepoIndexes['search']>>; base: string }> {
    const cache = await cacheDir();
    cleanups.push(() => fs.rm(cache, { recursive: true, force: true }));
    const indexes = new RepoIndexes(cache, opts);
    const found = await indexes.search(await rgPath(), root, TERMS, OPTS);
    return { inWorker: indexes.lastInWorker, found, base: path.join(indexDirOf(cache, root), 'base.six') };
  }

  it('reads every other batch in the worker, and the base holds what a build without it holds', async () => {
    expect(existsSync(WORKER)).toBe(true);
    const root = await repo();
    const alone = await built(root, { worker: null, shareFiles: 100 });
    const shared = await built(root, { worker: WORKER, shareFiles: 100 });
    expect(alone.inWorker).toBe(0);
    // 701 files in batches of 100: the worker takes the three complete odd ones (1, 3, 5; not the even 0, 2, 4, 6).
    expect(shared.inWorker).toBe(3 * 100);
    expect(shared.found).not.toBeNull();
    // Its rows are in the order rg listed them, each part in its place.
    expect(decode(readFileSync(shared.base)).paths).toEqual(shared.found!.files);
    expect(shape(shared.found!.hits, TERMS)).toEqual(shape(alone.found!.hits, TERMS));
    expect(contents(shared.base)).toEqual(contents(alone.base));
    const { rg } = await both(root, TERMS, new RepoIndexes(null));
    expect(shape(shared.found!.hits, TERMS)).toEqual(shape(rg.hits, TERMS));
  });

  it.each<[string, string]>([
    ['a worker that throws', "throw new Error('no worker here');\n"],
    ['a worker that exits without answering', 'process.exit(0);\n'],
    ['a worker that answers nothing', "require('node:worker_threads').parentPort.on('message', () => {});\nsetTimeout(() => process.exit(3), 50);\n"],
    ['a worker file that is not there', ''],
  ])('%s: its batches are read by the build itself', async (_name, source) => {
    const root = await repo();
    const dir = await cacheDir();
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
    const worker = path.join(dir, 'worker.cjs');
    if (source !== '') await fs.writeFile(worker, source);
    const alone = await built(root, { worker: null, shareFiles: 100 });
    const failing = await built(root, { worker, shareFiles: 100 });
    expect(failing.inWorker).toBe(0);
    expect(failing.found).not.toBeNull();
    expect(contents(failing.base)).toEqual(contents(alone.base));
    expect(decode(readFileSync(failing.base)).paths).toEqual(failing.found!.files);
  });
});

describe('BuildHelper once its worker failed', () => {
  it.each<[string, string]>([
    ['thrown at its start', "throw new Error('no worker here');\n"],
    ['exited at its start', 'process.exit(0);\n'],
    ['exited at its first batch', "require('node:worker_threads').parentPort.on('message', () => process.exit(0));\n"],
  ])('%s: that batch and every later one come back null at once', async (_name, source) => {
    const dir = await cacheDir();
    const worker = path.join(dir, 'worker.cjs');
    await fs.writeFile(worker, source);
    const helper = new BuildHelper(worker, dir);
    try {
      expect(await helper.read(1, ['a.ts'])).toBeNull();
      // Asked after the failure was seen: no thread is there to answer, so it must not wait for one.
      expect(await helper.read(3, ['b.ts'])).toBeNull();
    } finally {
      helper.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('ListedBuild keeps what it read only for the listing it was given', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });
  const how = { pause: () => Promise.resolve(), worker: null, shareFiles: 2 };

  it.each<[string, (b: ListedBuild) => void, string[]]>([
    ['its own listing: what it read', (b) => ['a.ts', 'b.ts', 'c.ts'].forEach((rel) => b.push(rel)), ['a.ts', 'b.ts', 'c.ts']],
    ['cancelled part way: the listing kept is read', (b) => (b.push('a.ts'), b.cancel()), ['a.ts', 'b.ts', 'c.ts']],
    ['other paths than the listing kept: it is read', (b) => ['a.ts', 'b.ts'].forEach((rel) => b.push(rel)), ['a.ts', 'c.ts']],
    ['fewer paths than the listing kept: it is read', (b) => ['c.ts'].forEach((rel) => b.push(rel)), ['c.ts', 'b.ts']],
  ])('%s', async (_name, feed, files) => {
    const made = await makeRepo({ 'a.ts': 'alpha\n', 'b.ts': 'beta\n', 'c.ts': 'gamma\n' });
    cleanups.push(made.cleanup);
    const reading = new ListedBuild(made.root, how);
    feed(reading);
    reading.end();
    const loaded = await reading.base({ files, ignoredDirs: [] }, Date.now());
    expect(loaded?.base.paths).toEqual(files);
    expect(loaded!.base.vocab.split('\n').slice(0, -1).sort()).toEqual(files.map((f) => ({ 'a.ts': 'alpha', 'b.ts': 'beta', 'c.ts': 'gamma' })[f]).sort());
  });
});

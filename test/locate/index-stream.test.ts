import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PathRecords, RepoIndexes } from '../../src/locate/index/store.js';
import type { Term } from '../../src/locate/query.js';
import { stripDotSlash } from '../../src/locate/search.js';
import { makeRepo } from '../support/temp-repo.js';
import { both, cacheDir, OPTS, rgPath, shape } from './index-support.js';

/**
 * A cold build reads each file as rg prints its path (store.ts's PathRecords and ListedBuild): the paths it reads and
 * keeps must be what rg's whole output, decoded at once as search.ts decodes it, lists, however the output is cut.
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

import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CorruptIndex, decode, FileState, forEachPosting, isRelativeDir, MAX_IGNORED_DIRS, SegmentBuilder, type SegmentMeta } from '../../src/locate/index/segment.js';
import type { Occurrences } from '../../src/locate/index/tokens.js';

// decode held to its docblock: stored files are untrusted input, so each section is checked, and each check is a row
// here. A segment is built in process, one section is rewritten (the layout and both checksums made consistent
// again, so only the check behind them can refuse it), and decode must throw CorruptIndex naming what it found.
// Written against the survivors of the locate-index mutation run at b235e7f (segment.ts 67.60).

const HEADER = 64;
const SECTIONS = ['root', 'paths', 'stats', 'hashes', 'states', 'vocab', 'wordStarts', 'postingStarts', 'postings', 'tombstones', 'ignored'] as const;
type Section = (typeof SECTIONS)[number];

const META: SegmentMeta = { kind: 'base', id: 7, baseId: 0, root: '/repo', writtenAtMs: 1_700_000_000_000, tombstones: [], ignoredDirs: ['node_modules', 'pkg/target'] };

function row(rel: string, state = FileState.Indexed) {
  return { rel, size: 10, mtimeMs: 1, ctimeMs: 2, ino: 3, hash: new Uint8Array(20).fill(1), state };
}

const runs = (entries: [string, number[]][]): Map<string, Occurrences> => new Map(entries.map(([w, lines]) => [w, { lines, distinct: new Set(lines).size }]));

/** A small valid segment: two files, three words. */
function segment(meta: Partial<SegmentMeta> = {}): Buffer {
  const b = new SegmentBuilder();
  b.add(row('src/a.ts'), runs([['router', [1, 4]], ['session', [2]]]));
  b.add(row('src/b.ts'), runs([['router', [3]], ['zeta', [1, 1]]]));
  return b.finish({ ...META, ...meta })!;
}

/** The sections of a segment, in order. */
function sectionsOf(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let off = HEADER;
  for (let i = 0; i < SECTIONS.length; i++) {
    const len = buf.readUInt32LE(off);
    out.push(Buffer.from(buf.subarray(off + 8, off + 8 + len)));
    off += 8 + ((len + 7) & ~7);
  }
  return out;
}

/** The segment with one section replaced, laid out and sealed again. */
function withSection(buf: Buffer, name: Section, replace: (old: Buffer) => Buffer): Buffer {
  const sections = sectionsOf(buf);
  const i = SECTIONS.indexOf(name);
  sections[i] = replace(sections[i]!);
  const body = Buffer.concat(
    sections.flatMap((s) => {
      const head = Buffer.alloc(8);
      head.writeUInt32LE(s.length, 0);
      return [head, s, Buffer.alloc(((s.length + 7) & ~7) - s.length)];
    }),
  );
  const out = Buffer.concat([Buffer.from(buf.subarray(0, HEADER)), body]);
  out.writeUInt32LE(out.length, 40);
  out.writeUInt32LE(crc32(out.subarray(HEADER)), 44);
  out.writeUInt32LE(crc32(out.subarray(0, 48)), 48);
  return out;
}

const u32 = (xs: number[]): Buffer => Buffer.from(Uint32Array.from(xs).buffer);
const words = (buf: Buffer): number[] => [...new Uint32Array(Buffer.from(buf).buffer.slice(buf.byteOffset, buf.byteOffset + buf.length))];

function refusal(buf: Buffer): string | null {
  try {
    decode(buf);
    return null;
  } catch (error) {
    if (!(error instanceof CorruptIndex)) throw error;
    return error.message;
  }
}

describe('decode', () => {
  it('a well-formed segment decodes to what was built (the rows below can fail)', () => {
    const seg = decode(segment());
    expect(seg.paths).toEqual(['src/a.ts', 'src/b.ts']);
    expect(seg.vocab).toBe('router\nsession\nzeta\n');
    expect(seg.ignoredDirs).toEqual(['node_modules', 'pkg/target']);
    expect([...seg.states]).toEqual([FileState.Indexed, FileState.Indexed]);
    const seen: [number, readonly number[]][] = [];
    forEachPosting(seg, 0, (file, lines) => seen.push([file, lines]));
    expect(seen).toEqual([
      [0, [1, 4]],
      [1, [3]],
    ]);
    // The rewriting itself keeps a segment valid.
    expect(refusal(withSection(segment(), 'root', (b) => b))).toBeNull();
    expect(decode(segment({ ignoredDirs: [] })).ignoredDirs).toEqual([]);
    expect(decode(segment({ kind: 'delta', baseId: 7, tombstones: [0, 3] })).tombstones).toEqual(Uint32Array.from([0, 3]));
  });

  // [row, section, rewrite, the check that must refuse it]
  const ROWS: [string, Section, (b: Buffer) => Buffer, string][] = [
    ['one path fewer than the file count', 'paths', () => Buffer.from('src/a.ts'), 'paths'],
    ['an empty path', 'paths', () => Buffer.from('src/a.ts\0'), 'paths'],
    ['a path longer than PATH_MAX', 'paths', () => Buffer.from(`src/a.ts\0${'x'.repeat(4097)}`), 'paths'],
    ['a stats table one file short', 'stats', (b) => b.subarray(0, b.length - 32), 'file table'],
    ['a hash table one byte short', 'hashes', (b) => b.subarray(0, b.length - 1), 'file table'],
    ['a state table one file long', 'states', (b) => Buffer.concat([b, Buffer.from([0])]), 'file table'],
    ['an unknown file state', 'states', () => Buffer.from([0, FileState.Refused + 1]), 'file state'],
    ['a word table one word short', 'wordStarts', (b) => b.subarray(0, b.length - 4), 'word table'],
    ['a posting table one word long', 'postingStarts', (b) => Buffer.concat([b, u32([0])]), 'word table'],
    ['tombstones not whole u32s', 'tombstones', () => Buffer.from([1, 0]), 'tombstones'],
    ['an ignored directory with a parent step', 'ignored', () => Buffer.from('node_modules\0../outside'), 'ignored directories'],
    ['an ignored directory that is absolute', 'ignored', () => Buffer.from('/etc'), 'ignored directories'],
    ['an empty ignored directory', 'ignored', () => Buffer.from('node_modules\0'), 'ignored directories'],
    ['more ignored directories than kept', 'ignored', () => Buffer.from(Array.from({ length: MAX_IGNORED_DIRS + 1 }, (_, i) => `d${i}`).join('\0')), 'ignored directories'],
    ['an upper-case word', 'vocab', (b) => Buffer.from(b.toString('latin1').replace('zeta', 'ZETA'), 'latin1'), 'vocabulary'],
    ['word starts that go back', 'wordStarts', (b) => u32(words(b).map((v, i) => (i === 1 ? 20 : v))), 'word starts'],
    ['word starts past the vocabulary', 'wordStarts', (b) => u32(words(b).map((v, i, all) => (i === all.length - 1 ? v + 1 : v))), 'word starts'],
    ['posting starts past the postings', 'postingStarts', (b) => u32(words(b).map((v, i, all) => (i === all.length - 1 ? v + 5 : v))), 'posting starts'],
    ['a word boundary not at a newline', 'wordStarts', (b) => u32(words(b).map((v, i) => (i === 1 ? v - 1 : v))), 'vocabulary boundaries'],
  ];
  it.each(ROWS.map((r) => [r[0], r] as const))('%s', (_name, [, section, rewrite, check]) => {
    expect(refusal(withSection(segment(), section, rewrite))).toBe(check);
  });

  it('views the tables in place when the buffer is aligned, and decodes the same from a copy when it is not', () => {
    const bytes = segment({ kind: 'delta', baseId: 7, tombstones: [0, 3] });
    const inPlace = decode(bytes);
    for (const table of [inPlace.stats, inPlace.hashes, inPlace.states, inPlace.wordStarts, inPlace.postingStarts, inPlace.tombstones]) {
      expect(table.buffer).toBe(bytes.buffer);
    }
    // The same bytes one byte into a larger buffer: no element boundary, so the number tables are copies, equal.
    const shifted = Buffer.alloc(bytes.length + 1);
    bytes.copy(shifted, 1);
    const copy = decode(shifted.subarray(1));
    for (const table of [copy.stats, copy.wordStarts, copy.postingStarts, copy.tombstones]) expect(table.buffer).not.toBe(shifted.buffer);
    expect([...copy.stats]).toEqual([10, 1, 2, 3, 10, 1, 2, 3]);
    expect([...copy.wordStarts]).toEqual([...inPlace.wordStarts]);
    expect([...copy.postingStarts]).toEqual([...inPlace.postingStarts]);
    expect([...copy.tombstones]).toEqual([0, 3]);
    expect([...copy.hashes]).toEqual([...inPlace.hashes]);
  });

  it('an empty word (a newline alone) is refused though it ends at a newline', () => {
    const vocab = withSection(segment(), 'vocab', (b) => Buffer.from(`\n${b.toString('latin1').slice(1)}`, 'latin1'));
    expect(refusal(withSection(vocab, 'wordStarts', (b) => u32(words(b).map((v, i) => (i === 1 ? 1 : v)))))).toBe('vocabulary boundaries');
  });
});

describe('isRelativeDir', () => {
  it.each<[string, boolean]>([
    ['node_modules', true],
    ['packages/app/node_modules', true],
    ['a b/c-d.e', true],
    ['', false],
    ['/abs', false],
    ['a//b', false],
    ['a/', false],
    ['.', false],
    ['a/./b', false],
    ['..', false],
    ['a/../b', false],
    ['a\nb', false],
    ['a\u001fb', false],
    ['x'.repeat(4096), true],
    ['x'.repeat(4097), false],
  ])('%j → %s', (rel, ok) => {
    expect(isRelativeDir(rel)).toBe(ok);
  });
});

describe('the paths and words sections: the strings joined, byte for byte', () => {
  it.each<[string, string[], string[]]>([
    ['ASCII', ['src/a.ts', 'src/b.ts'], ['router', 'session']],
    ['paths of two-, three- and four-byte characters', ['docs/é.md', 'src/日本/x.ts', 'src/😀.ts', 'a'], ['zeta']],
    ['one file, one word', ['only.ts'], ['w']],
    ['no words at all', ['a.bin', 'b.bin'], []],
  ])('%s', (_name, paths, words) => {
    const b = new SegmentBuilder();
    paths.forEach((rel, i) => b.add(row(rel), i === 0 && words.length > 0 ? runs(words.map((w) => [w, [1]])) : null));
    const buf = b.finish(META)!;
    const sections = sectionsOf(buf);
    expect(sections[SECTIONS.indexOf('paths')]).toEqual(Buffer.from(paths.join('\0'), 'utf8'));
    expect(sections[SECTIONS.indexOf('vocab')]).toEqual(Buffer.from(words.map((w) => `${w}\n`).join(''), 'latin1'));
    expect(decode(buf).paths).toEqual(paths);
  });
});

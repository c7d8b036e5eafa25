import { describe, expect, it } from 'vitest';
import { holdingChunk, listingWork, pathsHolding } from '../../src/locate/locate.js';
import { termsOf } from '../../src/locate/query.js';

// locate's path prefilter searches the whole listing at once (NUL-joined, lower-cased, then run together); it must
// keep exactly the files the plain per-file reading keeps: a file it drops is a path match lost from the ranking.
type Needle = { text: string; compact: string };

/** The definition, one path at a time (what allPathMatches did before the listing was searched at once). */
function perFile(files: readonly string[], needles: readonly Needle[]): number[] {
  return files.map((rel) => {
    const lower = rel.toLowerCase();
    const compact = lower.replace(/[^a-z0-9]/g, '');
    return needles.some((n) => lower.includes(n.text) || (n.compact !== '' && compact.includes(n.compact))) ? 1 : 0;
  });
}

const needle = (text: string): Needle => ({ text, compact: text.replace(/[^a-z0-9]/g, '') });

describe('pathsHolding: which paths hold a needle', () => {
  it.each<[string, string[], Needle[], number[]]>([
    ['the first and the last file', ['router.ts', 'a/b.ts', 'lib/router'], [needle('router')], [1, 0, 1]],
    ['upper case in the path', ['src/RouterParser.ts', 'src/parse.ts'], [needle('routerparser')], [1, 0]],
    ['run together past separators', ['src/router-parser/x.ts', 'src/router/parser.ts', 'src/routers.ts'], [needle('router_parser')], [1, 1, 0]],
    ['compact only: the text itself is absent', ['pkg/tokio-stream/lib.rs'], [{ text: 'tokio_stream', compact: 'tokiostream' }], [1]],
    ['no needle across two paths', ['src/rou', 'ter.ts'], [needle('router')], [0, 0]],
    ['nor run together across two paths', ['src/ab-', '-cd.ts'], [needle('ab_cd')], [0, 0]],
    ['overlapping occurrences', ['aaaa', 'b', 'aa'], [needle('aaa')], [1, 0, 0]],
    ['several needles, each its own files', ['x/alpha.ts', 'y/beta.ts', 'z/gamma.ts'], [needle('gamma'), needle('alpha')], [1, 0, 1]],
    ['a lower case that grows (İ is two code units lower-cased)', ['İİİ/x.ts', 'src/router.ts'], [needle('router')], [0, 1]],
    ['the path after one that grows', ['İ', 'İrouter', 'router'], [needle('i̇router'), needle('router')], [0, 1, 1]],
    // Σ lower-cases to ς at the end of a word, to σ before a letter (even past a dot): the NUL between paths ends it.
    ['a final sigma at the end of a path', ['ΟΔΟΣ', 'ΟΔΟΣ.x'], [needle('οδος')], [1, 0]],
    ['a sigma before a dot and a letter', ['ΟΔΟΣ', 'ΟΔΟΣ.x'], [needle('οδοσ')], [0, 1]],
    ['the empty text: every path holds it', ['a', 'b'], [{ text: '', compact: '' }], [1, 1]],
    ['an empty compact form counts for nothing', ['a/-.ts', 'b'], [{ text: '-+-', compact: '' }], [0, 0]],
    ['no files', [], [needle('router')], []],
    ['no needles', ['router.ts'], [], [0]],
  ])('%s', (_name, files, needles, expected) => {
    expect([...pathsHolding(files, needles)]).toEqual(expected);
    expect([...pathsHolding(files, needles, files.length === 0 ? [] : [holdingChunk(files, 0)])]).toEqual(expected);
    expect(perFile(files, needles)).toEqual(expected);
  });

  it('a listing of many chunks: the files at the chunks\' edges are marked, no other', () => {
    const marked = [0, 4095, 4096, 8191, 8192, 9999];
    const files = Array.from({ length: 10_000 }, (_, i) => (marked.includes(i) ? `src/${i}/Router.ts` : `src/${i}/other.ts`));
    const holding = pathsHolding(files, [needle('router')]);
    expect([...holding.keys()].filter((i) => holding[i] === 1)).toEqual(marked);
    // The chunks made before (a listing asked of again) mark the same files.
    const chunks = [0, 4096, 8192].map((from) => holdingChunk(files, from));
    expect(pathsHolding(files, [needle('router')], chunks)).toEqual(holding);
    const compact = pathsHolding(files, [{ text: 'src_4095_router', compact: 'src4095router' }]);
    expect([...compact.keys()].filter((i) => compact[i] === 1)).toEqual([4095]);
  });

  it('agrees with the per-file reading on 2,000 random listings', () => {
    // A fixed generator: the same listings every run.
    let seed = 0x2f6e2b1;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const alphabet = ['a', 'b', 'R', 'r', '-', '_', '/', '.', '1', 'İ', 'Σ', 'é', ' '];
    const text = (max: number): string => Array.from({ length: next(max) + 1 }, () => alphabet[next(alphabet.length)]).join('');
    for (let round = 0; round < 2_000; round++) {
      const files = Array.from({ length: next(6) }, () => text(10));
      const needles = Array.from({ length: next(3) + 1 }, () => {
        const raw = text(3).toLowerCase();
        return { text: raw, compact: raw.replace(/[^a-z0-9]/g, '') };
      });
      expect([...pathsHolding(files, needles)], JSON.stringify({ files, needles })).toEqual(perFile(files, needles));
    }
  });
});

describe('listingWork: what a listing gives whatever the question, kept with the listing', () => {
  const files = ['src/router.ts', 'src/v1/router.ts', 'src/v1/a.ts', 'src/v1/b.ts', 'src/v1/c.ts', 'src/a.ts', 'src/b.ts', 'src/c.ts'];

  it('the same listing asked again: the very listed set and copy directories, and the same path matches', () => {
    const first = listingWork(files, termsOf('router'));
    const second = listingWork(files, termsOf('router config'));
    const third = listingWork(files, termsOf('router'));
    expect(second.listed).toBe(first.listed);
    expect(third.copies).toBe(first.copies);
    expect([...first.copies]).toEqual([['src/v1', 'v1']]);
    expect(third.matches).toEqual(first.matches);
    expect([...first.matches.keys()]).toEqual(['src/router.ts', 'src/v1/router.ts']);
  });

  it('a listing of many chunks asked again: the kept chunks find what fresh ones find', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ([1, 4095, 4096, 9000].includes(i) ? `src/${i}/Router.ts` : `src/${i}/other.ts`));
    const fresh = listingWork([...many], termsOf('router')).matches;
    listingWork(many, termsOf('other'));
    for (const question of ['router', 'router again']) expect(listingWork(many, termsOf(question)).matches).toEqual(fresh);
    expect([...fresh.keys()]).toEqual(['src/1/Router.ts', 'src/4095/Router.ts', 'src/4096/Router.ts', 'src/9000/Router.ts']);
  });

  it('another listing of the same paths is worked out anew', () => {
    const first = listingWork(files, termsOf('router'));
    const other = listingWork([...files], termsOf('router'));
    expect(other.listed).not.toBe(first.listed);
    expect(other.listed).toEqual(first.listed);
  });
});

import { describe, expect, it } from 'vitest';
import { FileHits } from '../../src/locate/hits.js';
import type { Term } from '../../src/locate/query.js';
import { combine, idf, pathMatch, pathTokens, placeFactor, scopeFactor, scoreFile, sideFactor } from '../../src/locate/score.js';

// locate's first-stage score on numbers worked out by hand (scripts/mutation-areas.json, area "locate"): the ranking
// tests compare pairs of files, which let an idf that goes negative, a factor applied twice or a weight dropped survive.
const word = (text: string, over: Partial<Term> = {}): Term => ({ text, kind: 'word', weight: 1, wholeWord: text.length < 4, ...over });
const ident = (text: string): Term => ({ text, kind: 'identifier', weight: 2, wholeWord: false });
const path = (text: string): Term => ({ text, kind: 'path', weight: 2, wholeWord: false });
const match = (rel: string, term: Term) => pathMatch(pathTokens(rel), term);

describe('idf: BM25\'s, never negative', () => {
  it.each([
    [0, 10, Math.log(22)],
    [1, 10, Math.log(1 + 9.5 / 1.5)],
    [10, 10, Math.log(1 + 0.5 / 10.5)],
    [1, 1, Math.log(1 + 0.5 / 1.5)],
  ])('df %s of %s files', (df, n, expected) => {
    expect(idf(df, n)).toBeCloseTo(expected, 12);
    expect(idf(df, n)).toBeGreaterThan(0);
  });
});

describe('pathMatch: how strongly a path names a term', () => {
  it.each<[string, Term, number]>([
    ['lib/router/index.js', path('lib/router/index.js'), 2.4],
    ['pkg/lib/router/index.js', path('./lib/router/index.js'), 2.4],
    ['lib/router/index.jsx', path('lib/router/index.js'), 0.9],
    ['src/LIB/Router/index.js', path('lib/router'), 0.9],
    ['src/other.js', path('lib/router'), 0],
    ['lib/router.js', word('router'), 1.6],
    ['lib/routers.js', word('router'), 1.6],
    ['lib/router/index.js', word('router'), 0.9],
    ['lib/routers/index.js', word('router'), 0.9],
    ['lib/myrouterx.js', word('router'), 0.35],
    ['lib/myrouterx.js', word('route', { wholeWord: true }), 0],
    ['lib/my_rout.js', word('rout'), 1.6],
    ['lib/myroutx.js', word('rout'), 0],
    ['lib/reroute/x.js', word('route'), 0.35],
    ['lib/router/index.js', path('/lib/router/index.js'), 2.4],
    ['lib/api.js', word('api'), 1.6],
    ['lib/apiclient.js', word('api'), 0],
    ['lib/apis.js', word('api'), 0],
    ['src/create-server.ts', ident('createserver'), 1.6],
    ['src/createServer.ts', ident('create_server'), 1.6],
    ['tokio-stream/src/lib.rs', ident('tokio_stream'), 0.9],
    ['src/HTTPServer.ts', word('server'), 1.6],
    ['src/types.d.ts', word('types'), 1.6],
  ])('%s ← %j', (rel, term, expected) => {
    expect(match(rel, term)).toBeCloseTo(expected, 12);
  });

  it('a directory\'s tokens are cached per directory', () => {
    const dirs = new Map<string, Set<string>>();
    const a = pathTokens('src/lib/a.ts', dirs);
    const b = pathTokens('src/lib/b.ts', dirs);
    expect(a.segments).toBe(b.segments);
    expect([...dirs.keys()]).toEqual(['src/lib']);
    expect([...a.segments].sort()).toEqual(['lib', 'src']);
    expect([...pathTokens('a.ts').segments]).toEqual([]);
  });
});

describe('placeFactor: where answers rarely start', () => {
  it.each<[string, number]>([
    ['src/a.ts', 1],
    ['test/a.ts', 0.3],
    ['src/__tests__/a.ts', 0.3],
    ['src/a.test.ts', 0.3],
    ['src/a_test.go', 0.3],
    ['test_x.py', 0.3],
    ['lib/test_x.rb', 1],
    ['conftest.py', 0.3],
    ['src/jvmTest/A.kt', 0.3],
    ['core-test-utils/a.ts', 0.3],
    ['Vendor/x.js', 0.3],
    ['README.md', 0.35],
    ['docs/guide.md', 0.3 * 0.35],
    ['types/index.d.ts', 0.6],
    ['vite.config.ts', 0.6],
    ['Makefile', 0.6],
    ['test/vite.config.ts', 0.3 * 0.6],
    ['test/vite.config.json', 0.3 * 0.35],
  ])('%s → %s', (rel, factor) => {
    expect(placeFactor(rel)).toBeCloseTo(factor, 12);
  });

  it('a question that names tests keeps them at 0.3; any other pushes them to 0.1', () => {
    expect(sideFactor([word('parser'), word('tests')])).toBe(0.3);
    expect(sideFactor([word('contest')])).toBe(0.1);
    expect(placeFactor('test/a.ts', sideFactor([word('parser')]))).toBeCloseTo(0.1, 12);
  });
});

describe('scoreFile and combine: BM25 of the hits plus the path, by weight and idf, scaled by place', () => {
  const terms = [ident('createserver'), word('listen')];
  const idfs = { content: [2, 0.5], path: [3, 1] };

  it('saturates term frequency, weighs each term, and adds the path\'s evidence', () => {
    const hits = new FileHits(terms.length);
    for (const [line, term] of [[1, 0], [1, 0], [2, 0], [3, 1]] as const) hits.add(line, term);
    const scored = scoreFile('src/create-server.ts', [1.6, 0], hits, terms, idfs);
    const tf3 = (3 * 2.2) / (3 + 1.2);
    expect(scored.evidence[0]).toBeCloseTo(tf3, 12);
    expect(scored.evidence[1]).toBeCloseTo(1, 12);
    expect(scored.pathEvidence).toEqual([1.6, 0]);
    expect(scored.score).toBeCloseTo(2 * (2 * tf3 + 3 * 1.6) + 1 * (0.5 * 1), 12);
    expect(scoreFile('src/x.ts', [0, 0], undefined, terms, idfs)).toEqual({ path: 'src/x.ts', score: 0, evidence: [0, 0], pathEvidence: [0, 0] });
  });

  it('a scope term\'s path match counts twice; a file outside the scope, when some path names it, 0.6', () => {
    const scoped = [word('hmr', { scope: true }), word('listen')];
    const withScope = { content: [1, 1], path: [1, 1], scopeInPaths: true };
    expect(scoreFile('src/hmr.ts', [1.6, 0], undefined, scoped, withScope).pathEvidence).toEqual([3.2, 0]);
    expect(scopeFactor(scoped, withScope, [3.2, 0])).toBe(1);
    expect(scopeFactor(scoped, withScope, [0, 0.9])).toBe(0.6);
    expect(scopeFactor(scoped, { ...withScope, scopeInPaths: false }, [0, 0.9])).toBe(1);
    expect(scopeFactor(terms, withScope, [0, 0])).toBe(0.6);
    expect(combine('test/a.ts', scoped, withScope, [1, 1], [0, 0])).toBeCloseTo(2 * 0.6 * 0.1, 12);
  });
});

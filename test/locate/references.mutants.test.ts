import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Term } from '../../src/locate/query.js';
import { definedTerms, REFERENCE_EVIDENCE, REFERENCE_FILES, withReferences } from '../../src/locate/references.js';
import type { Scored } from '../../src/locate/score.js';
import { FileHits } from '../../src/locate/hits.js';
import { MAX_TERMS } from '../../src/locate/query.js';
import { SymbolIndex } from '../../src/symbols/index.js';
import { makeRepo } from '../support/temp-repo.js';

// withReferences and definedTerms held to their docblocks, over real files parsed by the real symbol layer: which
// files are parsed (in rank order, round-robin between the defined terms, each at most once, REFERENCE_FILES in all),
// which gain (a reference site named like the term, not a definer, not a file without a content hit), and by how much.

const term = (text: string, extra: Partial<Term> = {}): Term => ({ text, kind: 'identifier', weight: 2, wholeWord: false, ...extra });

const CALLERS = 30;
const FILES: Record<string, string> = {
  ...Object.fromEntries(
    Array.from({ length: CALLERS }, (_, i) => [`src/c${String(i).padStart(2, '0')}.ts`, `import { retryPolicy } from './policy';\nexport const v${i} = retryPolicy(${i});\n`]),
  ),
  'src/u0.ts': "import { fetchUser } from './users';\nexport const a = fetchUser(1);\n",
  'src/u1.ts': "import { fetchUser } from './users';\nexport const b = fetchUser(2);\n",
  'src/both.ts': "import { retryPolicy } from './policy';\nimport { fetchUser } from './users';\nexport const c = retryPolicy(fetchUser(3));\n",
  'src/definer.ts': 'export function retryPolicy(n: number): number {\n  return n > 0 ? retryPolicy(n - 1) : 0;\n}\n',
  'src/mention.ts': '// retryPolicy is mentioned here only\nexport const m = 1;\n',
  'src/constructs.ts': 'export const p = new RetryPolicy();\n',
  'src/dotted.ts': 'export const s = client.send(1);\n',
  'src/joined.ts': 'export const s = clientSend(1);\n',
  'src/other.ts': 'export const s = resend(1);\n',
  'docs/notes.md': 'retryPolicy(1) in prose\n',
};

/** The real symbol layer, with the files it was asked to parse recorded in order. */
class CountingSymbols extends SymbolIndex {
  readonly asked: string[] = [];
  override async symbolsOf(root: string, rel: string, mode: Parameters<SymbolIndex['symbolsOf']>[2] = 'all') {
    this.asked.push(rel);
    return super.symbolsOf(root, rel, mode);
  }
}

let root = '';
let cleanup: () => Promise<void> = async () => undefined;
beforeAll(async () => {
  ({ root, cleanup } = await makeRepo(FILES));
});
afterAll(async () => cleanup());

/** A candidate in rank order with content evidence 1 on each term it holds and no path evidence. */
function scored(path: string, terms: readonly Term[], defines: readonly number[] = []): Scored {
  const symbolEvidence = terms.map((_t, i) => (defines.includes(i) ? 3 : 0));
  return { path, score: 1, evidence: terms.map(() => 1), pathEvidence: terms.map(() => 0), symbolEvidence };
}

/** Hits giving each listed path a content count on the listed terms. */
function hitsOf(entries: readonly [string, readonly number[]][]): Map<string, FileHits> {
  return new Map(
    entries.map(([path, on]) => {
      const hits = new FileHits(MAX_TERMS);
      for (const i of on) for (const line of [1, 2]) hits.add(line, i);
      return [path, hits];
    }),
  );
}

/** Evidence summed back into a score the test can read: the evidence vector itself. */
const rescore = (s: Scored, evidence: number[]): Scored => ({ ...s, evidence, score: evidence.reduce((a, b) => a + b, 0) });

const gainedOn = (out: readonly Scored[], path: string): number[] | undefined => out.find((s) => s.path === path)?.referenceEvidence;

describe('definedTerms', () => {
  const reranked: Scored[] = [
    { path: 'a.ts', score: 1, evidence: [1, 1, 1, 1], pathEvidence: [0, 0, 0, 0], symbolEvidence: [0, 2, 0, 2] },
    { path: 'b.ts', score: 1, evidence: [1, 1, 1, 1], pathEvidence: [0, 0, 0, 0] },
  ];
  // [row, terms, defined]
  const ROWS: [string, Term[], number[]][] = [
    ['an identifier some candidate defines', [term('x'), term('retrypolicy'), term('y'), term('z', { kind: 'word' })], [1]],
    ['a word is never a definition', [term('x'), term('retry', { kind: 'word' }), term('y'), term('z', { kind: 'word' })], []],
    ['a compound locate made of two words is not one', [term('x'), term('retrypolicy', { parts: ['retry', 'policy'] }), term('y'), term('z', { kind: 'word' })], []],
    ['a quoted string is not one', [term('x'), term('retrypolicy', { kind: 'quoted' }), term('y'), term('z', { kind: 'word' })], []],
    ['two defined identifiers', [term('x'), term('retrypolicy'), term('y'), term('fetchuser')], [1, 3]],
  ];
  it.each(ROWS.map((row) => [row[0], row] as const))('%s', (_name, [, terms, defined]) => {
    expect(definedTerms(terms, reranked)).toEqual(defined);
  });

  it('a candidate without symbol evidence (not parsed) defines nothing, and does not throw', () => {
    expect(definedTerms([term('retrypolicy')], [{ path: 'b.ts', score: 1, evidence: [1], pathEvidence: [0] }])).toEqual([]);
  });
});

describe('withReferences', () => {
  const retry = [term('retrypolicy')];
  const callers = Array.from({ length: CALLERS }, (_, i) => `src/c${String(i).padStart(2, '0')}.ts`);

  it(`parses the best-ranked holders in rank order, ${REFERENCE_FILES} at most, and only those gain`, async () => {
    const symbols = new CountingSymbols();
    const ranked = callers.map((p) => scored(p, retry));
    const out = await withReferences(root, ranked, retry, [0], hitsOf(callers.map((p) => [p, [0]])), symbols, rescore);
    expect(symbols.asked).toEqual(callers.slice(0, REFERENCE_FILES));
    expect(out.map((s) => s.path)).toEqual(callers);
    for (const [i, p] of callers.entries()) {
      if (i < REFERENCE_FILES) {
        expect(gainedOn(out, p), p).toEqual([REFERENCE_EVIDENCE]);
        expect(out[i]!.evidence, p).toEqual([1 + REFERENCE_EVIDENCE]);
        expect(out[i]!.score, p).toBeCloseTo(1 + REFERENCE_EVIDENCE, 10);
      } else {
        expect(out[i], p).toBe(ranked[i]);
      }
    }
  });

  it('leaves out a definer, a file without a content hit, an unsupported file and a mere mention', async () => {
    const symbols = new CountingSymbols();
    const ranked = ['src/definer.ts', 'src/c00.ts', 'docs/notes.md', 'src/mention.ts', 'src/c01.ts'].map((p) =>
      scored(p, retry, p === 'src/definer.ts' ? [0] : []),
    );
    // src/c00.ts calls retryPolicy but has no content hit on it here: it is not a holder.
    const hits = hitsOf([['src/definer.ts', [0]], ['docs/notes.md', [0]], ['src/mention.ts', [0]], ['src/c01.ts', [0]]]);
    const out = await withReferences(root, ranked, retry, [0], hits, symbols, rescore);
    expect(symbols.asked).toEqual(['src/mention.ts', 'src/c01.ts']);
    expect(out.filter((s) => s.referenceEvidence !== undefined).map((s) => s.path)).toEqual(['src/c01.ts']);
  });

  it('shares the files round-robin between defined terms, parses a file in both queues once, and goes on past a short queue', async () => {
    const symbols = new CountingSymbols();
    const terms = [term('retrypolicy'), term('fetchuser')];
    const order = ['src/both.ts', 'src/u0.ts', ...callers, 'src/u1.ts'];
    const ranked = order.map((p) => scored(p, terms));
    const hits = hitsOf([
      ['src/both.ts', [0, 1]],
      ['src/u0.ts', [1]],
      ['src/u1.ts', [1]],
      ...callers.map((p): [string, number[]] => [p, [0]]),
    ]);
    const out = await withReferences(root, ranked, terms, [0, 1], hits, symbols, rescore);
    // Round 0: both.ts for each term (parsed once); round 1: c00 and u0; round 2: c01 and u1; then retryPolicy's
    // queue alone until the budget is spent.
    expect(symbols.asked.slice(0, 5)).toEqual(['src/both.ts', 'src/c00.ts', 'src/u0.ts', 'src/c01.ts', 'src/u1.ts']);
    expect(symbols.asked).toHaveLength(REFERENCE_FILES);
    expect(new Set(symbols.asked).size).toBe(REFERENCE_FILES);
    expect(gainedOn(out, 'src/both.ts')).toEqual([REFERENCE_EVIDENCE, REFERENCE_EVIDENCE]);
    expect(gainedOn(out, 'src/u1.ts')).toEqual([0, REFERENCE_EVIDENCE]);
    expect(gainedOn(out, 'src/c00.ts')).toEqual([REFERENCE_EVIDENCE, 0]);
    expect(gainedOn(out, `src/c${String(REFERENCE_FILES - 4).padStart(2, '0')}.ts`)).toEqual([REFERENCE_EVIDENCE, 0]);
    expect(gainedOn(out, `src/c${String(REFERENCE_FILES - 3).padStart(2, '0')}.ts`)).toBeUndefined();
  });

  // [row, term, file, gains]
  const NAMES: [string, Term, string, boolean][] = [
    ['a call named like the term', term('retrypolicy'), 'src/c00.ts', true],
    ['a construction, whatever its case', term('retrypolicy'), 'src/constructs.ts', true],
    ['the last part of a dotted term', term('client.send'), 'src/dotted.ts', true],
    ['the dotted term run together', term('client.send'), 'src/joined.ts', true],
    ['a name that only ends like it', term('client.send'), 'src/other.ts', false],
    ['another name', term('fetchuser'), 'src/c00.ts', false],
  ];
  it.each(NAMES.map((row) => [row[0], row] as const))('%s', async (_name, [, t, file, gains]) => {
    const out = await withReferences(root, [scored(file, [t])], [t], [0], hitsOf([[file, [0]]]), new SymbolIndex(), rescore);
    expect(gainedOn(out, file)).toEqual(gains ? [REFERENCE_EVIDENCE] : undefined);
  });

  it('no defined term: the ranking as it was, nothing parsed', async () => {
    const symbols = new CountingSymbols();
    const ranked = callers.slice(0, 3).map((p) => scored(p, retry));
    const out = await withReferences(root, ranked, retry, [], hitsOf(callers.map((p) => [p, [0]])), symbols, rescore);
    expect(out).toEqual(ranked);
    expect(symbols.asked).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { FileHits } from '../../src/locate/hits.js';
import { firstStage, listingWork, restage } from '../../src/locate/locate.js';
import { termsOf } from '../../src/locate/query.js';

// After an edit the stored hits are patched (only the re-read files' hits are new) and locate keeps the first stage it
// ranked while find walked, scoring only the changed files again, when no idf can have moved. It must rank exactly as
// the whole first stage on the new hits does, and give up (null) whenever a changed file gains or loses a term.
const QUESTION = 'session router wiring';
const terms = termsOf(QUESTION);
const FILES = ['src/session.ts', 'src/router.ts', 'src/wire.ts', 'docs/guide.md', 'src/other.ts', 'test/session.test.ts'];
const work = () => listingWork(FILES, terms);
const at = (text: string): number => terms.findIndex((t) => t.text === text);

/** A file's hits: [line, term text] pairs. */
function hitsOf(pairs: [number, string][]): FileHits {
  const h = new FileHits(terms.length);
  for (const [line, text] of pairs) h.add(line, at(text));
  return h;
}

function before(): Map<string, FileHits> {
  return new Map([
    ['src/session.ts', hitsOf([[1, 'session'], [4, 'session']])],
    ['src/router.ts', hitsOf([[2, 'router'], [3, 'session']])],
    ['src/wire.ts', hitsOf([[1, 'sessionrouter']])],
    ['docs/guide.md', hitsOf([[9, 'router']])],
  ]);
}

/** The early stage on `before`, then `after` = before with `edits` replaced (null: the file no longer hits). */
function edited(edits: Record<string, FileHits | null>) {
  const w = work();
  const old = before();
  const early = firstStage(QUESTION, w, FILES, old);
  const after = new Map([...old].filter(([rel]) => !(rel in edits)));
  for (const [rel, hits] of Object.entries(edits)) if (hits !== null) after.set(rel, hits);
  const fresh = new Map([...after].map(([rel]) => [rel, rel in edits ? edits[rel]! : before().get(rel)!]));
  return { kept: restage(early, w, old, after, new Set(Object.keys(edits))), whole: firstStage(QUESTION, work(), FILES, fresh) };
}

describe('restage: the early first stage kept across an edit', () => {
  it.each<[string, Record<string, FileHits | null>]>([
    ['more of the same terms in one file', { 'src/session.ts': hitsOf([[1, 'session'], [4, 'session'], [5, 'session'], [8, 'session']]) }],
    ['fewer, still holding them', { 'src/router.ts': hitsOf([[3, 'session'], [7, 'router']]) }],
    ['the same terms on other lines, in two files', { 'src/session.ts': hitsOf([[2, 'session']]), 'docs/guide.md': hitsOf([[1, 'router'], [2, 'router']]) }],
    ['a compound\'s file: its parts credited once', { 'src/wire.ts': hitsOf([[1, 'sessionrouter'], [2, 'sessionrouter']]) }],
    ['a changed file that holds no term and names none', { 'src/other.ts': null }],
  ])('%s: only the changed files scored again, the ranking the whole stage gives', (_name, edits) => {
    const { kept, whole } = edited(edits);
    expect(kept).not.toBeNull();
    expect(kept!.first).toEqual(whole.first);
    expect(kept!.idfs).toEqual(whole.idfs);
  });

  it.each<[string, Record<string, FileHits | null>]>([
    ['a file gains a term', { 'src/session.ts': hitsOf([[1, 'session'], [2, 'router']]) }],
    ['a file loses a term', { 'src/router.ts': hitsOf([[2, 'router']]) }],
    ['a file no longer hits', { 'docs/guide.md': null }],
    ['a file hits for the first time', { 'src/other.ts': hitsOf([[1, 'wiring']]) }],
  ])('%s: an idf moves, so the whole stage runs instead', (_name, edits) => {
    expect(edited(edits).kept).toBeNull();
  });
});

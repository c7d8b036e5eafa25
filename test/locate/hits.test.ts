import { describe, expect, it } from 'vitest';
import { FileHits, maskTerms, MAX_LINES_KEPT } from '../../src/locate/hits.js';
import { MAX_TERMS } from '../../src/locate/query.js';

// FileHits held to its docblock: what both content searches record per file. Counts always; lines ascending, each
// with its terms, at most MAX_LINES_KEPT; a compound's credit goes to its parts in counts and on its lines.

const shown = (h: FileHits): string[] => h.lines().map(({ line, terms }) => `${line}:${maskTerms(terms).join(',')}`);

describe('FileHits', () => {
  it('counts each occurrence and keeps each line once, with every term on it', () => {
    const h = new FileHits(3);
    for (const [line, term] of [[2, 0], [2, 0], [2, 2], [5, 1], [9, 0]] as const) h.add(line, term);
    expect([h.count(0), h.count(1), h.count(2)]).toEqual([3, 1, 1]);
    expect(shown(h)).toEqual(['2:0,2', '5:1', '9:0']);
    expect(h.lineCount).toBe(3);
  });

  it('places a line that comes out of order where it belongs, and merges one seen before', () => {
    const h = new FileHits(2);
    for (const [line, term] of [[4, 0], [9, 1], [1, 1], [6, 0], [4, 1], [1, 0]] as const) h.add(line, term);
    expect(shown(h)).toEqual(['1:0,1', '4:0,1', '6:0', '9:1']);
  });

  it('stops keeping new lines at MAX_LINES_KEPT but still counts them, and still marks a kept one', () => {
    const h = new FileHits(2);
    for (let line = 1; line <= MAX_LINES_KEPT + 5; line++) h.add(line, 0);
    h.add(1, 1);
    h.add(MAX_LINES_KEPT + 9, 1);
    expect(h.lineCount).toBe(MAX_LINES_KEPT);
    expect(h.count(0)).toBe(MAX_LINES_KEPT + 5);
    expect(h.count(1)).toBe(2);
    expect(shown(h)[0]).toBe('1:0,1');
    expect(h.lines().at(-1)!.line).toBe(MAX_LINES_KEPT);
  });

  it('credits a compound to its parts: counts from before the credit, and every line holding it', () => {
    // Terms: 0 = trailingcomma (parts 1 and 2), 1 = trailing, 2 = comma, 3 = other.
    const h = new FileHits(4);
    for (const [line, term] of [[1, 0], [1, 0], [3, 1], [7, 0], [8, 3]] as const) h.add(line, term);
    h.credit([[1, 2], [], [], []]);
    expect([0, 1, 2, 3].map((t) => h.count(t))).toEqual([3, 4, 3, 1]);
    expect(shown(h)).toEqual(['1:0,1,2', '3:1', '7:0,1,2', '8:3']);
  });

  it('credits from the counts before any credit (a part that is credited in turn passes on only its own), and takes a short table', () => {
    const h = new FileHits(3);
    for (const [line, term] of [[1, 0], [2, 1], [2, 1]] as const) h.add(line, term);
    h.credit([[1], [2]]);
    expect([0, 1, 2].map((t) => h.count(t))).toEqual([1, 3, 2]);
    expect(shown(h)).toEqual(['1:0,1', '2:1,2']);
  });

  it('credits once: hits kept across an edit are credited already, and a second credit changes nothing', () => {
    const h = new FileHits(3);
    for (const [line, term] of [[1, 0], [2, 1]] as const) h.add(line, term);
    h.credit([[1, 2], [], []]);
    h.credit([[1, 2], [], []]);
    expect([0, 1, 2].map((t) => h.count(t))).toEqual([1, 2, 1]);
    expect(shown(h)).toEqual(['1:0,1,2', '2:1']);
  });

  it('reads an unknown term as never found, and takes at most MAX_TERMS terms (their masks fit 32 bits)', () => {
    const h = new FileHits(MAX_TERMS);
    h.add(3, MAX_TERMS - 1);
    expect(maskTerms(h.lines()[0]!.terms)).toEqual([MAX_TERMS - 1]);
    expect(h.count(MAX_TERMS + 3)).toBe(0);
    expect(() => new FileHits(MAX_TERMS + 1)).toThrow(new RangeError(`at most ${MAX_TERMS} terms`));
    expect(maskTerms(0)).toEqual([]);
  });
});

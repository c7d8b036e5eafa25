import { FileHits } from '../hits.js';
import type { Term } from '../query.js';
import { forEachPosting, type Segment, wordAt } from './segment.js';
import { MAX_LINES_PER_FILE } from './tokens.js';

/** A segment and the rows of it that are superseded (by a delta's tombstones), or null. */
export interface Part {
  seg: Segment;
  skip: Uint8Array | null;
}

/** Words shorter than this match only at the start of a run (search.ts's PREFIX_BELOW). */
const PREFIX_BELOW = 5;
/** Per-term bits packed beside the line number when sorting a file's events. */
const TERM_BITS = 32;

/** Whether the index can answer every term: each is a literal of word characters, so it lies inside one run. */
export function indexable(terms: readonly Term[]): boolean {
  return terms.length > 0 && terms.length < TERM_BITS && terms.every((t) => /^[a-z0-9_]+$/.test(t.text));
}

/**
 * The hits rg's content search (search.ts) finds, from the index: for every run that holds a term, the terms rg's
 * alternation would match in it (longest pattern first, leftmost, no overlap; `\b` only at the run's ends), credited
 * to each occurrence's line; then each file cut to its first MAX_LINES_PER_FILE matching lines, as rg's `-m`.
 */
export function matchIndex(parts: readonly Part[], terms: readonly Term[]): Map<string, FileHits> {
  const order = terms.map((t, i) => ({ t, i })).sort((a, b) => b.t.text.length - a.t.text.length || (a.t.text < b.t.text ? -1 : 1));
  const hits = new Map<string, FileHits>();
  for (const { seg, skip } of parts) {
    const events = new Map<number, number[]>();
    for (const [w, matched] of matchingWords(seg, order)) {
      forEachPosting(seg, w, (file, lines) => {
        if (skip !== null && skip[file] === 1) return;
        let list = events.get(file);
        if (list === undefined) {
          list = [];
          events.set(file, list);
        }
        for (const line of lines) for (const t of matched) list.push(line * TERM_BITS + t);
      });
    }
    for (const [file, list] of events) hits.set(seg.paths[file]!, fileHits(list, terms.length));
  }
  return hits;
}

/** Words of the vocabulary holding some term, each with the terms rg would match in it, in order. */
function matchingWords(seg: Segment, order: readonly { t: Term; i: number }[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  const tried = new Set<number>();
  for (const { t } of order) {
    for (let at = seg.vocab.indexOf(t.text); at >= 0; ) {
      const w = wordAt(seg, at);
      const end = seg.wordStarts[w + 1]!;
      if (!tried.has(w)) {
        tried.add(w);
        const matched = alternation(seg.vocab.slice(seg.wordStarts[w]!, end - 1), order);
        if (matched.length > 0) out.set(w, matched);
      }
      at = seg.vocab.indexOf(t.text, end);
    }
  }
  return out;
}

/** The terms matched in one run, left to right: at each position the first pattern (longest first) that fits. */
function alternation(word: string, order: readonly { t: Term; i: number }[]): number[] {
  const out: number[] = [];
  let at = 0;
  while (at < word.length) {
    const hit = order.find(({ t }) => fits(word, at, t));
    if (hit === undefined) {
      at += 1;
      continue;
    }
    out.push(hit.i);
    at += hit.t.text.length;
  }
  return out;
}

/** `\bterm\b`, `\bterm` or `term` at `at`: inside a run `\b` holds only at its ends. */
function fits(word: string, at: number, t: Term): boolean {
  if (!word.startsWith(t.text, at)) return false;
  if (t.wholeWord) return at === 0 && t.text.length === word.length;
  if (t.kind === 'word' && t.text.length < PREFIX_BELOW) return at === 0;
  return true;
}

/** One file's events (line × TERM_BITS + term) → counts and lines over its first MAX_LINES_PER_FILE matching lines. */
function fileHits(list: number[], terms: number): FileHits {
  const sorted = Float64Array.from(list).sort();
  const hits = new FileHits(terms);
  let distinct = 0;
  let last = -1;
  for (const event of sorted) {
    const line = Math.floor(event / TERM_BITS);
    const term = event - line * TERM_BITS;
    if (line !== last) {
      if (distinct === MAX_LINES_PER_FILE) break;
      distinct += 1;
      last = line;
    }
    hits.add(line, term);
  }
  return hits;
}

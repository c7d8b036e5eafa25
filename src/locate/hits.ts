import { MAX_TERMS } from './query.js';

/** Line numbers kept per file for choosing the lines shown (the search reads at most 60 matching lines anyway). */
export const MAX_LINES_KEPT = 400;

/** A kept line and the terms on it (bit i: term i). */
export interface HitLine {
  line: number;
  terms: number;
}

/**
 * What the content search (rg's, search.ts, or the index's, index/match.ts) found in one file: occurrences per term (an
 * index into the question's terms) and the lines holding them, each with its terms as a bit mask (MAX_TERMS < 32).
 * Compact on purpose: a question of common words hits tens of thousands of files (54k of a 200k-file tree), where a
 * Map of counts and a Map of Sets per file took 32 MiB of heap (heap snapshot); these take 20.
 */
export class FileHits {
  readonly #counts: number[];
  /** Pairs, ascending by line: the line, then its terms' mask. */
  readonly #lines: number[] = [];
  #credited = false;

  constructor(terms: number) {
    if (terms > MAX_TERMS) throw new RangeError(`at most ${MAX_TERMS} terms`);
    this.#counts = new Array<number>(terms).fill(0);
  }

  /** Occurrences of `term` in the file. */
  count(term: number): number {
    return this.#counts[term] ?? 0;
  }

  /** Lines kept. */
  get lineCount(): number {
    return this.#lines.length / 2;
  }

  /** The kept lines in ascending order, with their terms. */
  lines(): HitLine[] {
    const out: HitLine[] = [];
    for (let at = 0; at < this.#lines.length; at += 2) out.push({ line: this.#lines[at]!, terms: this.#lines[at + 1]! });
    return out;
  }

  /** One occurrence of `term` on `line`: always counted; the line is kept while fewer than MAX_LINES_KEPT are. */
  add(line: number, term: number): void {
    this.#counts[term] = this.count(term) + 1;
    const bit = 1 << term;
    const lines = this.#lines;
    // Both searches give a file's lines in ascending order, so the line is new or the last one; anything else is looked up.
    let at = lines.length - 2;
    while (at >= 0 && lines[at]! > line) at -= 2;
    if (at >= 0 && lines[at] === line) lines[at + 1]! |= bit;
    else if (lines.length < MAX_LINES_KEPT * 2) lines.splice(at + 2, 0, line, bit);
  }

  /**
   * A compound's credit: each term's count also goes to its `parts[term]`, and each line holding it holds them too.
   * Given once: a file's hits kept across an edit (the stored hits patched, RepoIndexes.begin) are credited already.
   */
  credit(parts: readonly (readonly number[])[]): void {
    if (this.#credited) return;
    this.#credited = true;
    const before = this.#counts.slice();
    before.forEach((n, term) => {
      for (const part of parts[term] ?? []) this.#counts[part] = this.count(part) + n;
    });
    for (let at = 1; at < this.#lines.length; at += 2) {
      const mask = this.#lines[at]!;
      let add = 0;
      parts.forEach((of, term) => {
        if ((mask & (1 << term)) !== 0) for (const part of of) add |= 1 << part;
      });
      this.#lines[at] = mask | add;
    }
  }
}

/** The terms of a line's mask, ascending. */
export function maskTerms(mask: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < MAX_TERMS; i++) if ((mask & (1 << i)) !== 0) out.push(i);
  return out;
}

/**
 * What counts as a quote of a citation — the code the verifier (verify.ts) looks for near the cited lines. Only code
 * the answer ties to that citation, never any code span that happens to be nearby:
 * - a fenced block right after the line holding the citation (little text after the citation on that line), or the
 *   block a Cursor-style ```start:end:path fence opens (both found in extract.ts);
 * - a code span right after the citation on its line, with at most one `:` or dash between (a.js:3: `code`,
 *   a.js:3 — `code`), or in parentheses right after it (a.js:3 (`code`));
 * - a code span right before the citation when the citation follows it in parentheses (`code` (a.js:3)): the
 *   parenthesis says where the code is. When a span fits both ties, this one wins.
 * A span that is an identifier (`app.listen()`, `App::run`, `proto.handle`: names joined by `.`, `::`, `#` or `->`,
 * perhaps called, `f(a, b)`) names what should appear on the cited lines rather than copying them, so its last name
 * occurring there as a whole word is enough. Any other quote must occur whole, whitespace ignored.
 */

/** A quote of a citation: its text as written; `name` is set when it is an identifier, and is what must occur. */
export interface Quote {
  text: string;
  /** The last name of an identifier span (`run` for `App::run`), matched as a whole word; null for code. */
  name: string | null;
}

/** A citation placed in a paragraph: where it starts and ends, and its quote and lines. */
interface Placed {
  cite: { quote: Quote | null; startLine: number | null };
  start: number;
  end: number;
}

/** A span tied to the citation after it: the citation follows in parentheses (`` `x` (a.js:3) ``). */
const TIE_BEFORE = /^[ \t]{0,3}\([ \t]{0,2}$/;
/** A span tied to the citation before it: on its line, after at most one `:` or dash (`a.js:3: `x``, `a.js:3 — `x``). */
const TIE_AFTER = /^[ \t]{0,3}(?:[:\-–—][ \t]{0,3})?$/;
/** Or in parentheses right after it (`a.js:3 (`x`)`): the opening gap, then the closing after the span. */
const TIE_AFTER_OPEN = /^[ \t]{0,3}\([ \t]{0,2}$/;
const TIE_AFTER_CLOSE = /^[ \t]{0,2}\)/;
/** No tie's gap is longer than this; a span further away is not looked at (and nothing long is sliced). */
const MAX_TIE_GAP = 8;
/** An identifier span: names joined by `.`, `::`, `#` or `->`, perhaps called (`f()`, `f(a, b)`: flat arguments). */
const IDENTIFIER = /^[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*(?:\([^()]{0,200}\))?$/;

/**
 * Ties each code span of `text` to at most one of the citations placed in it (sorted, not overlapping), by the rules
 * above, a before-tie first. Binary searches over the sorted spans keep a long answer with thousands of both cheap.
 */
export function attachSpanQuotes(text: string, placed: readonly Placed[]): void {
  const spans = [...text.matchAll(/`([^`\n]{1,400})`/g)].filter((s) => !within(placed, s.index));
  const used = new Set<number>();
  const tie = (p: Placed, span: RegExpExecArray | undefined): void => {
    if (span === undefined || p.cite.quote !== null || p.cite.startLine === null) return;
    used.add(span.index);
    p.cite.quote = spanQuote(span[1]!);
  };
  for (const p of placed) {
    const span = spans[firstAtOrAfter(spans, p.start) - 1];
    const end = span === undefined ? -1 : span.index + span[0].length;
    if (span && end <= p.start && p.start - end <= MAX_TIE_GAP && TIE_BEFORE.test(text.slice(end, p.start))) tie(p, span);
  }
  for (const p of placed) {
    for (let i = firstAtOrAfter(spans, p.end); i < spans.length && spans[i]!.index - p.end <= MAX_TIE_GAP; i += 1) {
      const s = spans[i]!;
      if (used.has(s.index)) continue;
      const gap = text.slice(p.end, s.index);
      if (TIE_AFTER.test(gap) || (TIE_AFTER_OPEN.test(gap) && TIE_AFTER_CLOSE.test(text.slice(s.index + s[0].length)))) tie(p, s);
      break;
    }
  }
}

/** The index of the first span starting at or after `at` (spans.length when none). */
function firstAtOrAfter(spans: readonly RegExpExecArray[], at: number): number {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[mid]!.index < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether `at` lies inside one of the placed citations (sorted by start, not overlapping). */
function within(placed: readonly Placed[], at: number): boolean {
  let lo = 0;
  let hi = placed.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (placed[mid]!.start <= at) lo = mid + 1;
    else hi = mid;
  }
  const before = placed[lo - 1];
  return before !== undefined && at < before.end;
}

/** A code span as a quote: an identifier is matched by its last name, anything else as written. */
function spanQuote(span: string): Quote {
  const text = span.trim();
  if (!IDENTIFIER.test(text)) return { text, name: null };
  const names = text.replace(/\(.*\)$/, '').split(/\.|::|#|->/);
  return { text, name: names.at(-1)! };
}

export function codeQuote(block: string | undefined): Quote | null {
  return block === undefined ? null : { text: block, name: null };
}


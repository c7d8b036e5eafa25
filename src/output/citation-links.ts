import { extractCitations } from '../citations/extract.js';
import { verifyExtracted, type VerifiedCitation } from '../citations/verify.js';

/** One citation as the answer wrote it, in the answer's order; `link` is null for one that did not check out. */
interface CitationPlace {
  raw: string;
  link: ((label: string) => string) | null;
}

interface Span {
  start: number;
  end: number;
}

/** Letters, digits and the separators of a path: a form touching one of these is part of a longer word or path. */
const WORD_CHAR = /[\p{L}\p{N}_/\\]/u;
/** Characters that join two parts of a path (`a.js:12`, `x-y`); at a form's edge they count only before a word char. */
const JOINER = /[.:#@~+-]/;
/** A styling sequence right before a form (a code span's colour) is not a word char, though it ends in `m`. */
const SGR_BEFORE = /\x1b\[[0-9;]*m$/;

/**
 * `rendered` with each citation of `markdown` linked where the answer made it, and nowhere else: a form is matched as
 * a whole token (never inside `where` or `lib/a.js:12`), and the k-th time the markdown shows it at that boundary is
 * the k-th time the rendered block does. A form the renderer shows a different number of times than the markdown
 * (styled inside, wrapped oddly) is left plain: no link is better than one on the wrong words.
 */
function placeCitationLinks(markdown: string, rendered: string, places: readonly CitationPlace[]): string {
  const source = maskSelfLinks(markdown);
  const inSource = new Map<string, Span[]>();
  const inRendered = new Map<string, Span[]>();
  const edits: Array<Span & { text: string }> = [];
  let cursor = 0;
  for (const place of places) {
    if (place.raw.trim() === '') continue;
    const hits = memo(inSource, place.raw, () => tokenMatches(source, place.raw));
    const k = ownHit(source, hits, cursor, place.raw);
    if (k < 0) continue;
    cursor = hits[k]!.end;
    if (place.link === null) continue;
    const shown = memo(inRendered, place.raw, () => tokenMatches(rendered, place.raw));
    if (shown.length !== hits.length) continue;
    const at = shown[k]!;
    edits.push({ ...at, text: place.link(rendered.slice(at.start, at.end)) });
  }
  return applyEdits(rendered, edits);
}

/**
 * Which hit at or after `cursor` is the citation itself. A form that cites on its own (`a.js:3`) is wherever it first
 * occurs; a link's text or a code span's path (`here`, `src/a.ts`) may also be a plain word before it, so its marked-up
 * occurrence (`[here](`, `` `src/a.ts` ``) is preferred.
 */
function ownHit(source: string, hits: readonly Span[], cursor: number, raw: string): number {
  const first = hits.findIndex((h) => h.start >= cursor);
  if (first < 0 || citesAlone(raw)) return first;
  const marked = hits.findIndex((h) => h.start >= cursor && markedUp(source, h));
  return marked < 0 ? first : marked;
}

function citesAlone(raw: string): boolean {
  return extractCitations(raw).some((c) => c.raw === raw);
}

/** `[form](` or `` `form` `` (spaces allowed inside the backticks). */
function markedUp(source: string, h: Span): boolean {
  const before = source.slice(0, h.start);
  const after = source.slice(h.end);
  return (before.endsWith('[') && after.startsWith('](')) || (/`\s*$/.test(before) && /^\s*`/.test(after));
}

/**
 * `[x](x)` renders as `x` alone (plainLinks in markdown.ts): its target is blanked so the markdown counts the form
 * as often as the rendered block shows it.
 */
function maskSelfLinks(markdown: string): string {
  return markdown.replace(/\[([^\]\n]{1,300})\]\(([^()\s<>]{1,400})\)/g, (m, text: string, target: string) =>
    text === target ? `[${text}]${' '.repeat(target.length + 2)}` : m,
  );
}

/** Every occurrence of `form` as a whole token; a run of spaces in it matches any whitespace (the renderer wraps). */
function tokenMatches(text: string, form: string): Span[] {
  const pattern = form
    .trim()
    .split(/\s+/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('\\s+');
  const spans: Span[] = [];
  for (const m of text.matchAll(new RegExp(pattern, 'g'))) {
    const span = { start: m.index, end: m.index + m[0].length };
    if (startsToken(text, span.start) && endsToken(text, span.end)) spans.push(span);
  }
  return spans;
}

function startsToken(text: string, at: number): boolean {
  const prev = text[at - 1];
  if (prev === undefined || SGR_BEFORE.test(text.slice(Math.max(0, at - 16), at))) return true;
  if (WORD_CHAR.test(prev)) return false;
  return !(JOINER.test(prev) && WORD_CHAR.test(text[at - 2] ?? ''));
}

function endsToken(text: string, at: number): boolean {
  const next = text[at];
  if (next === undefined) return true;
  if (WORD_CHAR.test(next)) return false;
  return !(JOINER.test(next) && WORD_CHAR.test(text[at + 1] ?? ''));
}

function memo(cache: Map<string, Span[]>, key: string, compute: () => Span[]): Span[] {
  const known = cache.get(key);
  if (known) return known;
  const value = compute();
  cache.set(key, value);
  return value;
}

/** Applies non-overlapping edits (a later one overlapping an earlier is dropped). */
function applyEdits(text: string, edits: Array<Span & { text: string }>): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const edit of sorted) {
    if (edit.start < at) continue;
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}

/**
 * `rendered` with every verified citation of `block` made a hyperlink, at the places the answer cited it. The same
 * verifier as the run's citation check (citations/verify.ts), asked per block while the answer streams, because a
 * link is drawn before the answer ends; it only decides which citations get a link, the run's check reports them.
 */
export async function linkCitations(
  root: string,
  block: string,
  rendered: string,
  link: (c: VerifiedCitation, label: string) => string,
): Promise<string> {
  const cites = extractCitations(block);
  const verified = new Map<string, VerifiedCitation>();
  for (const c of await verifyExtracted(root, cites)) {
    if (c.status === 'ok' && c.abs !== null) verified.set(citationKey(c.commit, c.path, c.start_line, c.end_line), c);
  }
  if (verified.size === 0) return rendered;
  const places = cites.map((cite) => {
    const c = verified.get(citationKey(cite.commit, cite.path, cite.startLine, cite.endLine));
    return { raw: cite.raw, link: c ? (label: string) => link(c, label) : null };
  });
  return placeCitationLinks(block, rendered, places);
}

/** The verifier's grouping: one distinct citation per commit, path and lines. */
function citationKey(commit: string | undefined, p: string, start: number | null, end: number | null): string {
  return `${commit ?? ''}\0${p}\0${start ?? ''}\0${end ?? ''}`;
}

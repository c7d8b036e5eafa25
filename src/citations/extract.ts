/**
 * Finds the `path:line` claims an answer makes. Pure: no filesystem, so the same text always gives the same list.
 * Forms: `path:line`, `path:start-end`, `path:line:col`, `path#Lstart-Lend`, markdown links to repository files, a
 * path followed by `line N`/`lines N-M`, a fence opened as ```start:end:path, bare paths in code spans, and any of
 * those at a commit (`abc1234:path:line`, as the git tool's output names them). Fenced blocks are never searched (code is not
 * a claim). What counts as a citation's quote is in quotes.ts.
 */

import { attachSpanQuotes, codeQuote, type Quote } from './quotes.js';

export type { Quote };

/** A claim found in the answer; lines are null when only the file is named. */
export interface Citation {
  /** As written, with `\` turned into `/` and a leading `./` dropped. */
  path: string;
  startLine: number | null;
  endLine: number | null;
  /** Code the answer ties to the citation (see quotes.ts), to be found near the cited lines. */
  quote: Quote | null;
  /**
   * A bare code-span path with no directory part and no line (`index.js`): as often an identifier (`res.json`) as a
   * file, so it counts only when the file exists; a missing one is dropped instead of reported.
   */
  weak: boolean;
  /** The text as it appears in the answer (used to place hyperlinks). */
  raw: string;
  /** `abc1234:path:line`: the file as it was at this commit (hex, 7-40 digits, as written), not the work tree's. */
  commit?: string;
}

/** Tokens longer than this are not paths (and keep the anchored matching below cheap). */
const MAX_TOKEN_CHARS = 400;
/** Text allowed between a citation and the end of its line for a following fence to count as its quote. */
const MAX_LEAD_OUT = 80;
/** Line numbers above this are not line numbers (ports, years in prose are far below; this only bounds the parse). */
const MAX_LINE = 10_000_000;

/** Extensions that make a slash-less word a file name (`index.js`), not prose (`e.g.`) or a version (`1.2`). */
const EXTENSIONS = new Set(
  ('js mjs cjs jsx ts mts cts tsx json jsonc md mdx txt py pyi go rs java kt kts scala c h cc cpp cxx hpp hh m mm swift ' +
    'rb php pl sh bash zsh fish ps1 bat yml yaml toml ini cfg conf xml html htm css scss sass less vue svelte sql proto ' +
    'graphql gql lock gradle cs fs ex exs erl hrl hs ml mli lua r dart zig nim clj cljs el vim tf hcl cmake mk ejs hbs pug ' +
    'env csv tsv snap patch diff rst adoc tex svg').split(' '),
);
/** Extension-less file names that are still obviously files. */
const BARE_NAMES = new Set(['Makefile', 'Dockerfile', 'LICENSE', 'README', 'CHANGELOG', 'Gemfile', 'Rakefile', 'Procfile', 'Jenkinsfile', 'Vagrantfile', 'CODEOWNERS', 'AUTHORS', 'HISTORY']);
/** `application/json`, `text/plain`: media types, not directories. */
const MIME_TOP = /^(?:application|text|image|audio|video|multipart|font|message|model)$/;
/** First path segments that are host names: `github.com/x/y.js:3` is a web address, not a repository path. */
const HOST = /^(?:[\w-]+\.)+(?:com|org|net|io|dev|app|co|uk|de|gov|edu)$/i;

/** Every citation in `answer`, in order of appearance (duplicates kept; the verifier groups them). */
export function extractCitations(answer: string): Citation[] {
  const { prose, fences } = splitFences(answer);
  const found: Citation[] = [];
  for (const segment of prose) {
    const cites = extractFromProse(segment.text);
    const last = cites.at(-1);
    // A fence right after the line holding the paragraph's last citation is what that citation quotes.
    const rest = last ? segment.text.slice(last.end).trimEnd() : '\n';
    // A block quotes more than a span tied to the same citation, so it replaces one.
    const block = segment.fenceAfter === null ? undefined : fences[segment.fenceAfter];
    if (last && block !== undefined && !rest.includes('\n') && rest.length <= MAX_LEAD_OUT) last.cite.quote = codeQuote(block);
    found.push(...cites.map((c) => c.cite));
    const fc = segment.fenceCite;
    const range = fc && lineRange(fc.start, fc.end);
    if (fc && range && pathKind(normalise(fc.path)) !== null) {
      found.push({
        path: normalise(fc.path),
        startLine: range.start,
        endLine: range.end,
        quote: codeQuote(fences[fc.at]),
        weak: false,
        raw: `${fc.start}:${fc.end}:${fc.path}`,
      });
    }
  }
  return found;
}

interface Placed {
  cite: Citation;
  start: number;
  end: number;
}

interface ProseSegment {
  text: string;
  /** A fence opened as ```start:end:path (Cursor's form) right after this segment. */
  fenceCite?: { at: number; start: string; end: string; path: string };
  /** Index into `fences` of a fenced block that follows this segment directly (blank lines allowed), else null. */
  fenceAfter: number | null;
}

/** Splits the answer at fenced blocks (``` or ~~~); an unclosed fence runs to the end. Linear, line by line. */
function splitFences(answer: string): { prose: ProseSegment[]; fences: string[] } {
  const prose: ProseSegment[] = [];
  const fences: string[] = [];
  let current: string[] = [];
  let fence: { marker: string; lines: string[] } | null = null;
  for (const line of answer.split('\n')) {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (opener && opener[1]!.startsWith(fence.marker) && line.trim() === opener[1]) {
        fences.push(fence.lines.join('\n'));
        fence = null;
      } else fence.lines.push(line);
      continue;
    }
    if (opener) {
      // Cursor's code citation: ```12:20:path/to/file.ts opens a block that quotes those lines.
      const cited = /^(\d{1,8}):(\d{1,8}):(\S{1,400})$/.exec(line.trim().slice(opener[1]!.length));
      prose.push({
        text: current.join('\n'),
        fenceAfter: cited ? null : fences.length,
        ...(cited ? { fenceCite: { at: fences.length, start: cited[1]!, end: cited[2]!, path: cited[3]! } } : {}),
      });
      current = [];
      fence = { marker: opener[1]!, lines: [] };
      continue;
    }
    current.push(line);
  }
  if (fence) fences.push(fence.lines.join('\n'));
  prose.push({ text: current.join('\n'), fenceAfter: null });
  return { prose, fences };
}

/** Citations in prose: markdown links first (their targets masked), then code spans, then plain tokens. */
function extractFromProse(text: string): Placed[] {
  const placed: Placed[] = [];
  let masked = text;
  const mask = (start: number, end: number): void => {
    masked = masked.slice(0, start) + ' '.repeat(end - start) + masked.slice(end);
  };
  for (const m of text.matchAll(/\[([^\]\n]{0,300})\]\((?:<([^<>\n]{1,400})>|([^()\s<>]{1,400}))\)/g)) {
    const target = m[2] ?? m[3]!;
    const start = m.index;
    const cite = parseLinkTarget(target);
    if (isUrl(target)) {
      // The link text may still cite a repository path (`[a.js:3](https://github.com/…)`); only the URL is masked.
      const targetAt = start + m[0].indexOf('](') + 1;
      mask(targetAt, start + m[0].length);
      continue;
    }
    mask(start, start + m[0].length);
    if (cite) placed.push({ cite: { ...cite, raw: m[1] ?? target }, start, end: start + m[0].length });
  }
  for (const m of masked.matchAll(/`([^`\n]{1,400})`/g)) {
    const cite = parseToken(m[1]!.trim(), true);
    if (!cite) continue;
    const after = lineSuffix(masked, m.index + m[0].length, cite);
    placed.push({ cite, start: m.index, end: after.end });
    mask(m.index, after.end);
  }
  for (const m of masked.matchAll(/[^\s`'"()<>[\]{}|,;*]+/g)) {
    const token = trimToken(m[0]);
    // Prose must give lines (`and/or` names no file), here or in a `line N` right after the path.
    const cite = parseToken(token, true);
    if (!cite) continue;
    const at = m.index + m[0].indexOf(token);
    const after = lineSuffix(masked, at + token.length, cite);
    if (cite.startLine === null) continue;
    placed.push({ cite, start: at, end: after.end });
  }
  placed.sort((a, b) => a.start - b.start);
  attachSpanQuotes(text, placed);
  return placed;
}

/** `path` followed by `line 12` / `lines 12-20` / `(L12)`: the lines belong to the path. */
function lineSuffix(text: string, from: number, cite: Citation): { end: number } {
  if (cite.startLine !== null) return { end: from };
  const m = /^[`*)]*[,:]?\s{0,3}\(?(?:lines?|L)\s{0,2}(\d{1,8})(?:\s{0,2}(?:-|–|—|to)\s{0,2}L?(\d{1,8}))?\)?/.exec(text.slice(from, from + 60));
  if (!m) return { end: from };
  const range = lineRange(m[1]!, m[2]);
  if (!range) return { end: from };
  cite.startLine = range.start;
  cite.endLine = range.end;
  cite.weak = false;
  return { end: from + m[0].length };
}

/** Strips what surrounds a path in prose: trailing sentence punctuation, emphasis, a leading `./`. */
function trimToken(token: string): string {
  return token.replace(/^[_~]+/, '').replace(/[.:!?_~]+$/, '');
}

/** `path`, `path#L3`, `path#L3-L9`, or `path:3` as a link target. */
function parseLinkTarget(target: string): Omit<Citation, 'raw'> | null {
  if (isUrl(target) || target.startsWith('#')) return null;
  const hash = /^([^#]+)#L(\d{1,8})(?:-L?(\d{1,8}))?$/.exec(target);
  if (hash) {
    const range = lineRange(hash[2]!, hash[3]);
    return range ? { path: normalise(decodeOrSame(hash[1]!)), startLine: range.start, endLine: range.end, quote: null, weak: false } : null;
  }
  const cite = parseToken(decodeOrSame(target.replace(/#.*$/, '')), true);
  return cite && { ...cite, weak: false };
}

/**
 * One token as a citation, or null; `allowBare` accepts a path without lines. Anchored patterns on a bounded token:
 * linear on any input.
 */
function parseToken(token: string, allowBare: boolean): Citation | null {
  if (token.length === 0 || token.length > MAX_TOKEN_CHARS || isUrl(token)) return null;
  // A commit's hex name with at least one digit (a word such as `defaced` is not one), then a citation without one.
  const atCommit = /^([0-9a-f]{7,40}):(.+)$/.exec(token);
  if (atCommit && /\d/.test(atCommit[1]!)) {
    const inner = parseToken(atCommit[2]!, allowBare);
    return inner === null || inner.commit !== undefined ? null : { ...inner, commit: atCommit[1]!, weak: false, raw: token };
  }
  const m = /^(.+?)(?:#L(\d{1,8})(?:-L?(\d{1,8}))?|:L?(\d{1,8})(?:(?:-|–)L?(\d{1,8})|:\d{1,6}(?:-\d{1,6})?)?)?$/.exec(token);
  if (!m) return null;
  const rawPath = m[1]!;
  const startText = m[2] ?? m[4];
  const endText = m[3] ?? m[5];
  if (startText === undefined && !allowBare) return null;
  const range = startText === undefined ? null : lineRange(startText, endText);
  if (startText !== undefined && !range) return null;
  const path = normalise(rawPath);
  const kind = pathKind(path);
  if (kind === null) return null;
  const weak = range === null && kind === 'name';
  return { path, startLine: range?.start ?? null, endLine: range?.end ?? null, quote: null, weak, raw: token };
}

/** 'dir' for a path with a directory part, 'name' for a plain file name, null when it is not a path at all. */
function pathKind(p: string): 'dir' | 'name' | null {
  if (/[\s=,;$%^&!?'"`<>|{}]/.test(p) || p.startsWith('-') || p.startsWith('@') && !p.includes('/')) return null;
  if (/:/.test(p.replace(/^[A-Za-z]:\//, ''))) return null;
  const segments = p.split('/').filter((s) => s !== '');
  const last = segments.at(-1);
  if (last === undefined) return null;
  if (HOST.test(segments[0] ?? '')) return null;
  if (segments.length === 2 && MIME_TOP.test(segments[0]!) && !/\.[A-Za-z]\w*$/.test(last)) return null;
  if (segments.length > 1 || p.startsWith('/') || p.endsWith('/')) return /[A-Za-z]/.test(p) ? 'dir' : null;
  if (BARE_NAMES.has(last)) return 'name';
  const ext = /\.([A-Za-z][A-Za-z0-9]{0,9})$/.exec(last)?.[1];
  return ext !== undefined && EXTENSIONS.has(ext.toLowerCase()) && /^[\w.@+-]+$/.test(last) ? 'name' : null;
}

function lineRange(startText: string, endText: string | undefined): { start: number; end: number } | null {
  const start = Number(startText);
  const end = endText === undefined ? start : Number(endText);
  if (start < 1 || start > MAX_LINE || end < start || end > MAX_LINE) return null;
  return { start, end };
}

function normalise(p: string): string {
  return p.replace(/\\/g, '/').replace(/^(?:\.\/)+/, '');
}

function isUrl(s: string): boolean {
  return /^[A-Za-z][\w+.-]*:\/\//.test(s) || /^(?:mailto|data|javascript|vscode|file):/i.test(s) || /^www\./i.test(s);
}

function decodeOrSame(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The repository-relative files `answer` cites with lines, each once, in order: what a resumed session checks for
 * changes between two commits. A citation at a commit is left out (its file is fixed by the commit), and so is a path
 * that is absolute or leads out of the root (no commit can change it inside the repository).
 */
export function citedFiles(answer: string): string[] {
  const files = extractCitations(answer)
    .filter((c) => c.startLine !== null && c.commit === undefined)
    .map((c) => c.path.replace(/\/+$/, ''))
    .filter((p) => !p.startsWith('/') && !/^[A-Za-z]:\//.test(p) && !p.split('/').includes('..'));
  return [...new Set(files)];
}

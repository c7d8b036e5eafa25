import { statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { execGit, GIT_BINARY } from '../sandbox/git.js';
import { locateGitDir } from '../sandbox/git-repo.js';
import { readLineWindow } from '../lines.js';
import { confine } from '../sandbox/paths.js';
import { extractCitations, type Citation } from './extract.js';

/** What a citation turned out to be; the names are a contract (json `citations[].status`). */
export type CitationStatus = 'ok' | 'missing_file' | 'outside_root' | 'line_out_of_range' | 'not_a_file' | 'quote_mismatch';

/** One distinct citation after checking it against the repository. Field names as in the json result. */
export interface VerifiedCitation {
  path: string;
  /** Set for a citation of a file as it was at a commit (`abc1234:path:line`), checked against git's history. */
  commit?: string;
  start_line: number | null;
  end_line: number | null;
  status: CitationStatus;
  /** For ok: the first cited line, trimmed (null when no lines were cited). */
  excerpt: string | null;
  /** Why a citation is not ok, in words ("the file has 200 lines"); not part of the json. */
  detail: string | null;
  /** The real absolute path, for ok citations (hyperlinks); not part of the json. */
  abs: string | null;
  /** Every form the answer used for this citation (to place hyperlinks); not part of the json. */
  raws: string[];
}

/** Lines around the cited range in which a quote may occur (the issue's ±3). */
export const QUOTE_SLACK_LINES = 3;
/** A commit citation's blob is read whole, up to this size. */
const COMMIT_READ_MAX_BYTES = 8 * 1024 * 1024;
/** All commit citations of one answer share this much git time: with the two HEAD queries, a run's git stays under 2 s. */
const COMMIT_CHECKS_BUDGET_MS = 600;
/** An excerpt longer than this is cut; the terminal view trims further to its width. */
const MAX_EXCERPT_CHARS = 200;
/** Distinct citations checked per answer; an answer citing more is a listing, and the rest are not read. */
export const MAX_CITATIONS = 500;

/**
 * Extracts and verifies every citation of `answer` against `root` (a real path), with read_file's containment rules:
 * inside the root, a regular file, lines within its line count, a quote found near the lines. Reads only the cited
 * files, each once and streamed. Never throws; the order is the answer's.
 */
export async function verifyCitations(root: string, answer: string): Promise<VerifiedCitation[]> {
  return verifyExtracted(root, extractCitations(answer));
}

/** verifyCitations for citations already extracted. */
export async function verifyExtracted(root: string, citations: readonly Citation[]): Promise<VerifiedCitation[]> {
  const groups = new Map<string, Citation[]>();
  for (const cite of citations) {
    const key = `${cite.commit ?? ''}\0${cite.path}\0${cite.startLine ?? ''}\0${cite.endLine ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(cite);
    else if (groups.size < MAX_CITATIONS) groups.set(key, [cite]);
  }
  const files = new Map<string, Promise<FileFacts>>();
  const factsOf = (p: string): Promise<FileFacts> => {
    const known = files.get(p);
    if (known) return known;
    const facts = fileFacts(root, p);
    files.set(p, facts);
    return facts;
  };
  let history: Promise<History> | null = null;
  const historyOf = (): Promise<History> => (history ??= openHistory(root));
  const checked = await Promise.all(
    [...groups.values()].map((group) => (group[0]!.commit === undefined ? checkGroup(group, factsOf) : checkAtCommit(root, group, historyOf))),
  );
  return checked.filter((c): c is VerifiedCitation => c !== null);
}

type FileFacts =
  | { kind: 'file'; abs: string; size: number }
  | { kind: 'dir'; abs: string }
  | { kind: 'bad'; status: 'missing_file' | 'outside_root' | 'not_a_file'; detail: string };

/** Where a cited path leads, by read_file's rules (confine: realpath-free component walk, never leaving the root). */
async function fileFacts(root: string, p: string): Promise<FileFacts> {
  if (/^[A-Za-z]:\//.test(p)) return { kind: 'bad', status: 'outside_root', detail: 'a Windows path, outside the repository root' };
  const confined = await confine(root, p, { mustExist: false });
  if (!confined.ok) {
    const outside = /outside the repository root|never readable/.test(confined.reason);
    return { kind: 'bad', status: outside ? 'outside_root' : 'missing_file', detail: outside ? 'outside the repository root' : confined.reason };
  }
  if (!confined.exists) return { kind: 'bad', status: 'missing_file', detail: 'no such file in the repository' };
  const stat = statOrNull(confined.abs);
  if (stat === null) return { kind: 'bad', status: 'missing_file', detail: 'no such file in the repository' };
  if (stat.isDirectory()) return { kind: 'dir', abs: confined.abs };
  if (!stat.isFile()) return { kind: 'bad', status: 'not_a_file', detail: 'not a regular file' };
  return { kind: 'file', abs: confined.abs, size: stat.size };
}

/** One distinct citation (all its occurrences): file facts, then lines, then the quotes of every occurrence. */
async function checkGroup(group: Citation[], factsOf: (p: string) => Promise<FileFacts>): Promise<VerifiedCitation | null> {
  const first = group[0]!;
  const base = { path: first.path, start_line: first.startLine, end_line: first.endLine, raws: [...new Set(group.map((c) => c.raw))] };
  const facts = await factsOf(first.path);
  // A slash-less name in a code span that is no file here was an identifier (`res.json`), not a claim.
  if (facts.kind === 'bad' && group.every((c) => c.weak)) return null;
  if (facts.kind === 'bad') return { ...base, status: facts.status, excerpt: null, detail: facts.detail, abs: null };
  if (facts.kind === 'dir') {
    // A directory is a fine thing to point at; a line in one is not.
    if (first.startLine === null) return { ...base, status: 'ok', excerpt: null, detail: null, abs: facts.abs };
    return { ...base, status: 'not_a_file', excerpt: null, detail: 'a directory, not a file', abs: null };
  }
  if (first.startLine === null || first.endLine === null) return { ...base, status: 'ok', excerpt: null, detail: null, abs: facts.abs };
  return checkLines(base, group, facts, first.startLine, first.endLine);
}

async function checkLines(
  base: Pick<VerifiedCitation, 'path' | 'start_line' | 'end_line' | 'raws'>,
  group: Citation[],
  file: { abs: string; size: number },
  start: number,
  end: number,
): Promise<VerifiedCitation> {
  const { from, to } = quoteWindow(group, start, end);
  const { abs } = file;
  const window = await readLineWindow(abs, from, to, { size: file.size }).catch(() => null);
  if (window === null) return { ...base, status: 'missing_file', excerpt: null, detail: 'the file could not be read', abs: null };
  return judgeLines(base, group, window, { start, end, from }, abs);
}

/** The lines read around a cited range: ±QUOTE_SLACK_LINES, and room for the longest quote. */
function quoteWindow(group: Citation[], start: number, end: number): { from: number; to: number } {
  const quoteLines = Math.max(0, ...group.map((c) => (c.quote === null ? 0 : c.quote.split('\n').length)));
  return { from: Math.max(1, start - QUOTE_SLACK_LINES), to: Math.max(end, start + quoteLines - 1) + QUOTE_SLACK_LINES };
}

/** Lines in range, then every occurrence's quote near them; `window.lines[0]` is line `from`. */
function judgeLines<B extends Pick<VerifiedCitation, 'path' | 'start_line' | 'end_line' | 'raws'>>(
  base: B,
  group: Citation[],
  window: { lines: string[]; lineCount: number },
  range: { start: number; end: number; from: number },
  abs: string | null,
): VerifiedCitation {
  const { start, end, from } = range;
  if (end > window.lineCount) {
    const has = window.lineCount === 1 ? '1 line' : `${window.lineCount} lines`;
    return { ...base, status: 'line_out_of_range', excerpt: null, detail: `the file has ${has}`, abs: null };
  }
  const firstLine = window.lines[start - from] ?? '';
  const excerpt = cut(firstLine.trim());
  const haystack = squash(window.lines.join('\n'));
  const mismatch = group.find((c) => c.quote !== null && !quoteFound(c.quote, haystack));
  if (mismatch) {
    return { ...base, status: 'quote_mismatch', excerpt, detail: `the quoted code is not within ${QUOTE_SLACK_LINES} lines of the cited range`, abs };
  }
  return { ...base, status: 'ok', excerpt, detail: null, abs };
}

/** git's history for commit citations: the verified git directory, or why it cannot be read here. */
type History = { ok: true; location: { gitDir: string; commonDir: string }; deadline: number } | { ok: false; reason: string };

async function openHistory(root: string): Promise<History> {
  if (GIT_BINARY === null) return { ok: false, reason: 'git is not installed on this machine' };
  const location = await locateGitDir(root);
  return location.ok ? { ok: true, location, deadline: Date.now() + COMMIT_CHECKS_BUDGET_MS } : { ok: false, reason: location.reason };
}

/**
 * A citation of a file at a commit, checked in git's object store with the git tool's hardening (sandbox/git.ts):
 * `cat-file` reads the stored blob, so no filter, textconv or other configured program runs, and the repository's git
 * directory must lie inside the root. The path is confined like a work-tree path (no `..` out, not absolute).
 * Never a hyperlink: the file on disk is not the one cited.
 */
async function checkAtCommit(root: string, group: Citation[], historyOf: () => Promise<History>): Promise<VerifiedCitation> {
  const first = group[0]!;
  const commit = first.commit!;
  const base = { path: first.path, commit, start_line: first.startLine, end_line: first.endLine, raws: [...new Set(group.map((c) => c.raw))] };
  const bad = (status: CitationStatus, detail: string): VerifiedCitation => ({ ...base, status, excerpt: null, detail, abs: null });
  const rel = path.posix.normalize(first.path.replace(/\/+$/, '') || '.');
  if (path.posix.isAbsolute(rel) || rel === '..' || rel.startsWith('../') || /^[A-Za-z]:\//.test(first.path)) return bad('outside_root', 'outside the repository root');
  const history = await historyOf();
  if (!history.ok) return bad('missing_file', `the history cannot be checked here: ${history.reason}`);
  const spec = `${commit}:./${rel === '.' ? '' : rel}`;
  const late = bad('missing_file', `not checked: git gave up after ${COMMIT_CHECKS_BUDGET_MS / 1000} s on this answer's commit citations`);
  if (history.deadline <= Date.now()) return late;
  const git = (args: string[], maxBytes: number) => execGit(root, args, { timeoutMs: Math.max(1, history.deadline - Date.now()), maxBytes, location: history.location });
  const type = await git(['cat-file', '-t', '--end-of-options', spec], 1024);
  if ('error' in type) return bad('missing_file', `git could not run: ${type.error}`);
  if (type.timedOut) return late;
  if (type.exitCode !== 0) {
    const known = await git(['cat-file', '-e', '--end-of-options', `${commit}^{commit}`], 1024);
    if (!('error' in known) && known.timedOut) return late;
    const noCommit = 'error' in known || known.exitCode !== 0;
    return bad('missing_file', noCommit ? `no commit ${commit} in this repository` : `no such file at ${commit}`);
  }
  const kind = type.stdout.trim();
  if (kind === 'tree') return first.startLine === null ? { ...base, status: 'ok', excerpt: null, detail: null, abs: null } : bad('not_a_file', 'a directory, not a file');
  if (kind !== 'blob') return bad('not_a_file', `a ${kind} object, not a file`);
  if (first.startLine === null || first.endLine === null) return { ...base, status: 'ok', excerpt: null, detail: null, abs: null };
  const blob = await git(['cat-file', 'blob', '--end-of-options', spec], COMMIT_READ_MAX_BYTES);
  if (!('error' in blob) && blob.timedOut) return late;
  if ('error' in blob || blob.exitCode !== 0 || blob.capped) return bad('missing_file', 'the file at that commit could not be read whole');
  const all = blob.stdout.split('\n');
  if (all.at(-1) === '') all.pop();
  const { from, to } = quoteWindow(group, first.startLine, first.endLine);
  return judgeLines(base, group, { lines: all.slice(from - 1, to), lineCount: all.length }, { start: first.startLine, end: first.endLine, from }, null);
}

/**
 * Whitespace-insensitive: every quoted line (elisions like `...` and `// …` skipped) occurs in the window. Line by
 * line, because an answer often quotes a few lines with an elision between them.
 */
function quoteFound(quote: string, haystack: string): boolean {
  const lines = quote
    .split('\n')
    .map(squash)
    .filter((l) => l !== '' && !/^(?:\/\/|#|\/\*)?(?:\.\.\.|…)(?:\*\/)?$/.test(l));
  return lines.every((l) => haystack.includes(l));
}

function squash(s: string): string {
  return s.replace(/\s+/g, '');
}

function cut(s: string): string {
  return s.length > MAX_EXCERPT_CHARS ? `${s.slice(0, MAX_EXCERPT_CHARS - 1)}…` : s;
}

/** The json form of a verified citation: exactly the contract's fields. */
export function citationRecord(c: VerifiedCitation): Pick<VerifiedCitation, 'path' | 'commit' | 'start_line' | 'end_line' | 'status' | 'excerpt'> {
  return { path: c.path, ...(c.commit === undefined ? {} : { commit: c.commit }), start_line: c.start_line, end_line: c.end_line, status: c.status, excerpt: c.excerpt };
}

/** One line describing a bad citation (warnings, the fix request). */
export function describeBad(c: VerifiedCitation): string {
  return `${formatCitation(c)}: ${c.status}${c.detail ? ` (${c.detail})` : ''}`;
}

/** `path`, `path:12` or `path:12-20`, after `abc1234:` for a file at a commit. */
export function formatCitation(c: Pick<VerifiedCitation, 'path' | 'commit' | 'start_line' | 'end_line'>): string {
  const at = c.commit === undefined ? c.path : `${c.commit}:${c.path}`;
  if (c.start_line === null) return at;
  return c.end_line !== null && c.end_line !== c.start_line ? `${at}:${c.start_line}-${c.end_line}` : `${at}:${c.start_line}`;
}

/** Synchronous like confine's own lstat calls: one syscall, no thread-pool round trip. */
function statOrNull(abs: string): Stats | null {
  try {
    return statSync(abs);
  } catch {
    return null;
  }
}

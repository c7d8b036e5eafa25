import { oneLine } from '../escape.js';
import { statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { execGit, GIT_BINARY } from '../sandbox/git.js';
import { locateRepository } from '../sandbox/git-repo.js';
import { readLineWindow } from '../lines.js';
import { confine } from '../sandbox/paths.js';
import { extractCitations, type Citation, type Quote } from './extract.js';

/** What a citation turned out to be; the names are a contract (json `citations[].status`). */
export type CitationStatus = 'ok' | 'missing_file' | 'outside_root' | 'line_out_of_range' | 'not_a_file' | 'quote_mismatch';

/**
 * One citation after checking it against the repository. Field names as in the json result. Each occurrence in the
 * answer is judged on its own (its quote, its lines); occurrences of one citation with the same verdict are one entry,
 * so an entry never hides another occurrence's different verdict.
 */
export interface VerifiedCitation {
  path: string;
  /** Set for a citation of a file as it was at a commit (`abc1234:path:line`), checked against git's history. */
  commit?: string;
  start_line: number | null;
  end_line: number | null;
  status: CitationStatus;
  /** For ok and quote_mismatch: the first cited line, trimmed (null when no lines were cited). */
  excerpt: string | null;
  /** Why a citation is not ok, in words ("the file has 200 lines"; a mismatch names the quote); not part of the json. */
  detail: string | null;
  /** The real absolute path, for ok citations (hyperlinks); not part of the json. */
  abs: string | null;
  /** Every form the answer used for this entry (to place hyperlinks); not part of the json. */
  raws: string[];
}

/** Lines around the cited range in which a quote may occur (the issue's ±3). */
const QUOTE_SLACK_LINES = 3;
/** A commit citation's blob is read whole, up to this size. */
const COMMIT_READ_MAX_BYTES = 8 * 1024 * 1024;
/** All commit citations of one answer share this much git time: with the two HEAD queries, a run's git stays under 2 s. */
const COMMIT_CHECKS_BUDGET_MS = 600;
/** An excerpt longer than this is cut; the terminal view trims further to its width. */
const MAX_EXCERPT_CHARS = 200;
/** A mismatched quote is named in the detail by its first line, cut to this many characters. */
const MAX_QUOTE_SHOWN_CHARS = 80;
/** Distinct citations checked per answer; an answer citing more is a listing, and the rest are not read. */
const MAX_CITATIONS = 500;

/**
 * Extracts and verifies every citation of `answer` against `root` (a real path), with read_file's containment rules:
 * inside the root, a regular file, lines within its line count, a quote found near the lines. Reads only the cited
 * files, each once and streamed. Never throws; the order is the answer's.
 */
export async function verifyCitations(root: string, answer: string, commitBudgetMs = COMMIT_CHECKS_BUDGET_MS): Promise<VerifiedCitation[]> {
  return verifyExtracted(root, extractCitations(answer), commitBudgetMs);
}

/** verifyCitations for citations already extracted; `commitBudgetMs` is the git time all commit citations share. */
export async function verifyExtracted(
  root: string,
  citations: readonly Citation[],
  commitBudgetMs = COMMIT_CHECKS_BUDGET_MS,
): Promise<VerifiedCitation[]> {
  const groups = new Map<string, Array<{ cite: Citation; at: number }>>();
  citations.forEach((cite, at) => {
    const key = citationKey(cite);
    const group = groups.get(key);
    if (group) group.push({ cite, at });
    else if (groups.size < MAX_CITATIONS) groups.set(key, [{ cite, at }]);
  });
  const files = new Map<string, Promise<FileFacts>>();
  const factsOf = (p: string): Promise<FileFacts> => {
    const known = files.get(p);
    if (known) return known;
    const facts = fileFacts(root, p);
    files.set(p, facts);
    return facts;
  };
  let history: Promise<History> | null = null;
  const historyOf = (): Promise<History> => (history ??= openHistory(root, commitBudgetMs));
  const judged = await Promise.all(
    [...groups.values()].map(async (group) => {
      const cites = group.map((g) => g.cite);
      const verdicts = await (cites[0]!.commit === undefined ? checkGroup(cites, factsOf) : checkAtCommit(root, cites, historyOf));
      return verdicts.map((v, i) => ({ v, at: group[i]!.at, key: citationKey(cites[0]!) }));
    }),
  );
  return collapse(judged.flat().sort((a, b) => a.at - b.at));
}

function citationKey(c: Citation): string {
  return `${c.commit ?? ''}\0${c.path}\0${c.startLine ?? ''}\0${c.endLine ?? ''}`;
}

/** Occurrences of one citation with the same verdict become one entry (in the order of the first); nulls are dropped. */
function collapse(occurrences: Array<{ v: VerifiedCitation | null; key: string }>): VerifiedCitation[] {
  const entries = new Map<string, VerifiedCitation>();
  for (const { v, key } of occurrences) {
    if (v === null) continue;
    const same = `${key}\0${v.status}\0${v.detail ?? ''}`;
    const known = entries.get(same);
    if (known) known.raws = [...new Set([...known.raws, ...v.raws])];
    else entries.set(same, v);
  }
  return [...entries.values()];
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
    return {
      kind: 'bad',
      status: outside ? 'outside_root' : 'missing_file',
      detail: outside ? 'outside the repository root' : confined.reason,
    };
  }
  if (!confined.exists) return { kind: 'bad', status: 'missing_file', detail: 'no such file in the repository' };
  const stat = statOrNull(confined.abs);
  if (stat === null) return { kind: 'bad', status: 'missing_file', detail: 'no such file in the repository' };
  if (stat.isDirectory()) return { kind: 'dir', abs: confined.abs };
  if (!stat.isFile()) return { kind: 'bad', status: 'not_a_file', detail: 'not a regular file' };
  return { kind: 'file', abs: confined.abs, size: stat.size };
}

type Base = Pick<VerifiedCitation, 'path' | 'commit' | 'start_line' | 'end_line'>;

/** The verdict of each occurrence of one citation (same path and lines), in the group's order; null: not a claim. */
async function checkGroup(group: Citation[], factsOf: (p: string) => Promise<FileFacts>): Promise<Array<VerifiedCitation | null>> {
  const first = group[0]!;
  const base: Base = { path: first.path, start_line: first.startLine, end_line: first.endLine };
  const all = (status: CitationStatus, detail: string | null, abs: string | null = null) => sameVerdict(group, base, status, detail, abs);
  const facts = await factsOf(first.path);
  // A slash-less name in a code span that is no file here was an identifier (`res.json`), not a claim — unless the
  // answer also names it in a form that is a claim (a link, a line), which makes every mention one.
  if (facts.kind === 'bad' && group.every((c) => c.weak)) return group.map(() => null);
  if (facts.kind === 'bad') return all(facts.status, facts.detail);
  if (facts.kind === 'dir') {
    // A directory is a fine thing to point at; a line in one is not.
    return first.startLine === null ? all('ok', null, facts.abs) : all('not_a_file', 'a directory, not a file');
  }
  if (first.startLine === null || first.endLine === null) return all('ok', null, facts.abs);
  const { start, end } = { start: first.startLine, end: first.endLine };
  const windows = group.map((c) => quoteWindow(c, start, end));
  const from = Math.min(...windows.map((w) => w.from));
  const to = Math.max(...windows.map((w) => w.to));
  const read = await readLineWindow(facts.abs, from, to, { size: facts.size }).catch(() => null);
  if (read === null) return all('missing_file', 'the file could not be read');
  // One read serves every occurrence; each is judged on its own window of it.
  return group.map((c, i) => {
    const own = windows[i]!;
    const lines = read.lines.slice(own.from - from, own.to - from + 1);
    return judgeLines(base, c, { lines, lineCount: read.lineCount }, { start, end, from: own.from }, facts.abs);
  });
}

/** One verdict for every occurrence of a citation: what the file alone decides (no lines or quotes read). */
function sameVerdict(group: Citation[], base: Base, status: CitationStatus, detail: string | null, abs: string | null): VerifiedCitation[] {
  return group.map((c) => ({ ...base, status, excerpt: null, detail, abs, raws: [c.raw] }));
}

/** The lines read around a cited range for one occurrence: ±QUOTE_SLACK_LINES, and room for its quote. */
function quoteWindow(cite: Citation, start: number, end: number): { from: number; to: number } {
  const quoteLines = cite.quote === null ? 0 : cite.quote.text.split('\n').length;
  return { from: Math.max(1, start - QUOTE_SLACK_LINES), to: Math.max(end, start + quoteLines - 1) + QUOTE_SLACK_LINES };
}

/** One occurrence: lines in range, then its quote near them; `window.lines[0]` is line `from`. */
function judgeLines(
  base: Base,
  cite: Citation,
  window: { lines: string[]; lineCount: number },
  range: { start: number; end: number; from: number },
  abs: string | null,
): VerifiedCitation {
  const { start, end, from } = range;
  const raws = [cite.raw];
  if (end > window.lineCount) {
    const has = window.lineCount === 1 ? '1 line' : `${window.lineCount} lines`;
    return { ...base, status: 'line_out_of_range', excerpt: null, detail: `the file has ${has}`, abs: null, raws };
  }
  const excerpt = cut((window.lines[start - from] ?? '').trim(), MAX_EXCERPT_CHARS);
  if (cite.quote !== null && !quoteFound(cite.quote, window.lines)) {
    return { ...base, status: 'quote_mismatch', excerpt, detail: mismatchDetail(cite.quote), abs, raws };
  }
  return { ...base, status: 'ok', excerpt, detail: null, abs, raws };
}

/** Names the suspect quote, so a reader (or the model, in the fix turn) knows which code did not match. */
function mismatchDetail(quote: Quote): string {
  const shown = cut(oneLine((quote.text.split('\n').find((l) => l.trim() !== '') ?? '').trim()), MAX_QUOTE_SHOWN_CHARS);
  const lines = quote.text.split('\n').filter((l) => l.trim() !== '').length;
  const near = `within ${QUOTE_SLACK_LINES} lines of the cited range`;
  if (quote.name !== null) return `the name \`${quote.name}\` (of \`${shown}\`) does not occur ${near}`;
  const what = lines > 1 ? `the quoted block starting \`${shown}\`` : `the quoted code \`${shown}\``;
  return `${what} is not ${near}`;
}

/** git's history for commit citations: the verified git directory, or why it cannot be read here. */
type History =
  { ok: true; location: { gitDir: string; commonDir: string; top?: string }; deadline: number; budgetMs: number } | { ok: false; reason: string };

async function openHistory(root: string, budgetMs: number): Promise<History> {
  if (GIT_BINARY === null) return { ok: false, reason: 'git is not installed on this machine' };
  // A subdirectory root reads its enclosing repository: `REV:./path` below is read from the root (git runs there).
  const location = await locateRepository(root);
  return location.ok ? { ok: true, location, deadline: Date.now() + budgetMs, budgetMs } : { ok: false, reason: location.reason };
}

/**
 * A citation of a file at a commit, checked in git's object store with the git tool's hardening (sandbox/git.ts):
 * `cat-file` reads the stored blob, so no filter, textconv or other configured program runs, and the repository's git
 * directory must lie inside the root. The path is confined like a work-tree path (no `..` out, not absolute).
 * Never a hyperlink: the file on disk is not the one cited.
 */
async function checkAtCommit(root: string, group: Citation[], historyOf: () => Promise<History>): Promise<VerifiedCitation[]> {
  const first = group[0]!;
  const commit = first.commit!;
  const base: Base = { path: first.path, commit, start_line: first.startLine, end_line: first.endLine };
  const all = (status: CitationStatus, detail: string | null) => sameVerdict(group, base, status, detail, null);
  const rel = path.posix.normalize(first.path.replace(/\/+$/, '') || '.');
  const outside = path.posix.isAbsolute(rel) || rel === '..' || rel.startsWith('../') || /^[A-Za-z]:\//.test(first.path);
  if (outside) return all('outside_root', 'outside the repository root');
  const history = await historyOf();
  if (!history.ok) return all('missing_file', `the history cannot be checked here: ${history.reason}`);
  const spec = `${commit}:./${rel === '.' ? '' : rel}`;
  const late = (): VerifiedCitation[] => all('missing_file', `not checked: git gave up after ${history.budgetMs / 1000} s on this answer's commit citations`);
  if (history.deadline <= Date.now()) return late();
  const git = (args: string[], maxBytes: number) =>
    execGit(root, args, { timeoutMs: Math.max(1, history.deadline - Date.now()), maxBytes, location: history.location });
  const type = await git(['cat-file', '-t', '--end-of-options', spec], 1024);
  if ('error' in type) return type.timedOut ? late() : all('missing_file', `git could not run: ${type.error}`);
  if (type.timedOut) return late();
  if (type.exitCode !== 0) {
    const known = await git(['cat-file', '-e', '--end-of-options', `${commit}^{commit}`], 1024);
    if (known.timedOut === true) return late();
    const noCommit = 'error' in known || known.exitCode !== 0;
    return all('missing_file', noCommit ? `no commit ${commit} in this repository` : `no such file at ${commit}`);
  }
  const kind = type.stdout.trim();
  if (kind === 'tree') return first.startLine === null ? all('ok', null) : all('not_a_file', 'a directory, not a file');
  if (kind !== 'blob') return all('not_a_file', `a ${kind} object, not a file`);
  if (first.startLine === null || first.endLine === null) return all('ok', null);
  const blob = await git(['cat-file', 'blob', '--end-of-options', spec], COMMIT_READ_MAX_BYTES);
  if (blob.timedOut === true) return late();
  if ('error' in blob || blob.exitCode !== 0 || blob.capped) return all('missing_file', 'the file at that commit could not be read whole');
  const lines = blob.stdout.split('\n');
  // A final newline ends the last line; it does not start one more.
  if (lines.at(-1) === '') lines.pop();
  const { startLine: start, endLine: end } = first;
  return group.map((c) => {
    const { from, to } = quoteWindow(c, start, end);
    return judgeLines(base, c, { lines: lines.slice(from - 1, to), lineCount: lines.length }, { start, end, from }, null);
  });
}

/**
 * Whitespace-insensitive: every quoted line (elisions like `...` and `// …` skipped) occurs in the window. Line by
 * line, because an answer often quotes a few lines with an elision between them. An identifier needs only its name,
 * as a whole word (or to occur as written, like any code).
 */
function quoteFound(quote: Quote, window: readonly string[]): boolean {
  const haystack = squash(window.join('\n'));
  if (quote.name !== null) {
    // The name as a word, or the span as written: an identifier is never held to more than other code is.
    const word = new RegExp(`(?<![\\w$])${quote.name.replace(/\$/g, '\\$')}(?![\\w$])`);
    return window.some((l) => word.test(l)) || haystack.includes(squash(quote.text));
  }
  const lines = quote.text
    .split('\n')
    .map(squash)
    .filter((l) => l !== '' && !/^(?:\/\/|#|\/\*)?(?:\.\.\.|…)(?:\*\/)?$/.test(l));
  return lines.every((l) => haystack.includes(l));
}

function squash(s: string): string {
  return s.replace(/\s+/g, '');
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** The json form of a verified citation: exactly the contract's fields. */
export function citationRecord(
  c: VerifiedCitation,
): Pick<VerifiedCitation, 'path' | 'commit' | 'start_line' | 'end_line' | 'status' | 'excerpt'> {
  return {
    path: c.path,
    ...(c.commit === undefined ? {} : { commit: c.commit }),
    start_line: c.start_line,
    end_line: c.end_line,
    status: c.status,
    excerpt: c.excerpt,
  };
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

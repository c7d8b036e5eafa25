import { execCapped } from '../sandbox/exec.js';
import { FileHits } from './hits.js';
import type { Term } from './query.js';

/** Matching lines read per file: enough to count a term's frequency, bounded so a huge file cannot flood the output. */
const MAX_LINES_PER_FILE = 60;
/** Files larger than this are not searched (logs, data, bundles). */
const MAX_FILESIZE = '1M';
/** rg output kept in all; past it the search is partial and says so. */
export const MAX_OUTPUT_BYTES = 48 * 1024 * 1024;
/** Words shorter than this match only at the start of a word. */
const PREFIX_BELOW = 5;
/**
 * Ignore files honoured even outside git, hidden files searched, .git never, symlinks never followed (rg's default,
 * so a link out of the root is never read), no config file or environment (execCapped passes none).
 */
export const WALK_FLAGS = ['--no-config', '--no-require-git', '--no-ignore-global', '--hidden', '-g', '!.git', '--null', '--no-messages', '--color', 'never'];

export interface SearchResult {
  /** Every file rg would search (ignore-aware), relative to the root. */
  files: string[];
  hits: Map<string, FileHits>;
  /** Set when the search was cut short; the ranking is then partial. */
  note: string | null;
  /**
   * From a begun search (RepoIndexes.begin) whose stored hits were patched after an edit: the only files whose hits
   * may differ from the begun ones (the others are the very same objects). Absent: any file's may.
   */
  changed?: ReadonlySet<string>;
}

/** Lists the files and counts each term's occurrences with two rg runs in parallel. Never throws. */
export async function search(
  rg: string,
  root: string,
  terms: readonly Term[],
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<SearchResult> {
  const base = { cwd: root, timeoutMs: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) };
  const listing = execCapped(rg, ['--files', ...WALK_FLAGS], { ...base, maxBytes: MAX_OUTPUT_BYTES });
  const content = terms.length === 0 ? null : execCapped(rg, contentArgs(terms), { ...base, maxBytes: MAX_OUTPUT_BYTES });
  const [listed, found] = await Promise.all([listing, content]);
  const notes: string[] = [];
  for (const run of found ? [listed, found] : [listed]) {
    if (run.timedOut) notes.push(`the search took longer than ${opts.timeoutMs / 1000} s and is partial`);
    else if (run.capped) notes.push(`the search printed more than ${MAX_OUTPUT_BYTES / (1024 * 1024)} MiB and is partial`);
    else if (run.exitCode === null && !run.aborted) notes.push(`ripgrep could not run: ${run.stderr.trim().slice(0, 200)}`);
  }
  const files = listed.stdout.split('\0').filter((f) => f !== '').map(stripDotSlash);
  return { files, hits: found ? parseHits(found.stdout, terms) : new Map(), note: notes[0] ?? null };
}

/** One case-insensitive alternation of literal patterns, longest first, so `router` is not counted as `route`. */
function contentArgs(terms: readonly Term[]): string[] {
  // ASCII case folding: Unicode folding of many literals costs rg its fast path (seven times the CPU on fastapi's docs).
  const args = [
    ...WALK_FLAGS,
    '-i',
    '--no-unicode',
    '-o',
    '-n',
    '--with-filename',
    '--no-heading',
    '-m',
    String(MAX_LINES_PER_FILE),
    '--max-filesize',
    MAX_FILESIZE,
  ];
  for (const term of patternOrder(terms)) args.push('-e', pattern(term));
  return [...args, '--', '.'];
}

/**
 * Identifiers, paths, quoted strings and words of five letters or more match anywhere (`module` in `ssrModuleLoader`);
 * four-letter words only where a word starts, shorter ones only as whole words (`map` would be in every `bitmap`).
 * Camel-case boundaries cannot be asked for without losing rg's literal prefilter (ten times slower), so they are not.
 */
function pattern(term: Term): string {
  const text = escapeRegex(term.text);
  if (term.wholeWord) return `\\b${text}\\b`;
  return term.kind === 'word' && term.text.length < PREFIX_BELOW ? `\\b${text}` : text;
}

function patternOrder(terms: readonly Term[]): Term[] {
  return [...terms].sort((a, b) => b.text.length - a.text.length || (a.text < b.text ? -1 : 1));
}

/** `path\0line:match` records; the match, lower-cased, is the text of exactly one term. */
function parseHits(stdout: string, terms: readonly Term[]): Map<string, FileHits> {
  const index = new Map(terms.map((t, i) => [t.text, i]));
  const hits = new Map<string, FileHits>();
  let at = 0;
  while (at < stdout.length) {
    const nul = stdout.indexOf('\0', at);
    if (nul < 0) break;
    const end = stdout.indexOf('\n', nul);
    const record = stdout.slice(nul + 1, end < 0 ? stdout.length : end);
    const rel = stripDotSlash(stdout.slice(at, nul));
    at = end < 0 ? stdout.length : end + 1;
    const colon = record.indexOf(':');
    const line = Number(record.slice(0, colon));
    const matched = record.slice(colon + 1).toLowerCase().replace(/\s+/g, ' ');
    const term = index.get(matched);
    if (term === undefined || !Number.isSafeInteger(line)) continue;
    let file = hits.get(rel);
    if (!file) {
      file = new FileHits(terms.length);
      hits.set(rel, file);
    }
    file.add(line, term);
  }
  return hits;
}

export function stripDotSlash(rel: string): string {
  return rel.startsWith('./') ? rel.slice(2) : rel;
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|#&~-]/g, '\\$&').replace(/\s+/g, '\\s+');
}

/**
 * Credits each hit of a compound term (`trailingcomma`) to the word terms it stands for: rg matched the compound instead
 * of its words at that position, and a file that writes the phrase holds the words too. Mutates `hits`.
 */
export function creditCompounds(hits: Map<string, FileHits>, terms: readonly Term[]): void {
  const index = new Map(terms.map((t, i) => [t.text, i]));
  const credit = terms.map((t) => (t.parts ?? []).map((p) => index.get(p)).filter((i): i is number => i !== undefined));
  if (credit.every((c) => c.length === 0)) return;
  for (const file of hits.values()) file.credit(credit);
}

import { execGit, GIT_BINARY } from '../sandbox/git.js';
import { cachedLog, storeLog } from './history-cache.js';
import { stem, type Term } from './query.js';

/**
 * The history signal: past commits reachable from HEAD (never any other ref) whose messages resemble the question lend
 * the files they touched weight, and files that changed together with the best candidates gain. Read through the same
 * hardened git call as the git tool (src/sandbox/git.ts: no configuration, hooks, pagers, filters or external diffs).
 * A repository without history, a shallow one, or one git refuses ranks as without this signal. Bounded in work (the
 * last MAX_COMMITS commits, huge commits skipped), not in wall time, so the ranking does not depend on load.
 */

/** Commits read, newest first from HEAD. */
export const MAX_COMMITS = 3_000;
/** A commit touching more files is a sweep (a rename, a format, a release): it says nothing about where a thing is. */
const MAX_FILES_PER_COMMIT = 40;
/** Characters of a commit's body read beside its subject. */
const BODY_CHARS = 400;
/** git's output kept: ~3,000 commits of names fit in a few MiB; past it the log is cut, never trusted whole. */
const MAX_LOG_BYTES = 16 * 1024 * 1024;
/** Commits whose messages lend weight: the best few, as in pseudo-relevance feedback. */
const SIMILAR_COMMITS = 12;
/**
 * The share of the question a commit's message must match (its BM25 score over the score of a message holding every
 * term): one common word in common is no resemblance. A commit's weight is its score times that share.
 */
const MIN_MATCH = 0.3;
/**
 * Of the best score so far: what the file most touched by similar commits gains, and the one most changed with the
 * best. On the tuning sets (first 25 questions of each of seven, scripts/bench/locate-eval.mjs) message shares of 0.5,
 * 0.8 and 0.3 (co-change 0.3) gave pooled MRR 0.751, 0.768 and 0.757, against 0.746 without history.
 */
const MESSAGE_SHARE = 0.8;
const COCHANGE_SHARE = 0.15;
/** The best candidates whose companions in past commits gain. */
const COCHANGE_SEEDS = 3;
/** BM25 over commit messages. */
const K1 = 1.2;
const B = 0.5;

/** Names only (no content is diffed, so no diff driver or textconv could run), renames off, paths from the root. */
const LOG_ARGS = ['log', '--no-merges', '--no-renames', '--relative', '--name-only', '--no-textconv', '--no-ext-diff',
  '-n', String(MAX_COMMITS), '--format=%x00%s%n%b%x01', 'HEAD', '--'];

export interface Commit {
  /** Token counts of the subject and the head of the body (stemmed words, and whole identifiers lower-cased). */
  tf: Map<string, number>;
  length: number;
  files: string[];
}

export interface History {
  commits: Commit[];
  /** Per token, how many commits' messages hold it. */
  df: Map<string, number>;
}

/**
 * Reads the history reachable from HEAD; null when there is none to read (no git, no commits, shallow, refused).
 * With `cacheDir`, the log of this HEAD is kept there (history-cache.ts) and read back on the next question.
 */
export async function readHistory(
  root: string,
  opts: { timeoutMs: number; signal?: AbortSignal; cacheDir?: string | null },
): Promise<History | null> {
  const call = { timeoutMs: opts.timeoutMs, maxBytes: MAX_LOG_BYTES, ...(opts.signal ? { signal: opts.signal } : {}) };
  const state = await execGit(root, ['rev-parse', '--is-shallow-repository', 'HEAD'], { ...call, maxBytes: 1024 }, GIT_BINARY);
  if ('error' in state || state.exitCode !== 0) return null;
  const [shallow, head] = state.stdout.trim().split('\n');
  // A shallow clone's history is cut where the clone stopped: its oldest commit holds every file, so it is not read.
  if (shallow !== 'false' || head === undefined) return null;
  const cached = opts.cacheDir ? await cachedLog(opts.cacheDir, root, head) : null;
  if (cached !== null) return parseLog(cached);
  const run = await execGit(root, LOG_ARGS, call, GIT_BINARY);
  if ('error' in run || run.exitCode !== 0 || run.capped || run.timedOut) return null;
  if (opts.cacheDir) await storeLog(opts.cacheDir, root, head, run.stdout);
  return parseLog(run.stdout);
}

/** `\0subject\nbody\x01\nfile\nfile…` records as commits and the messages' document frequencies. */
export function parseLog(stdout: string): History {
  const commits: Commit[] = [];
  const df = new Map<string, number>();
  for (const record of stdout.split('\0')) {
    const end = record.indexOf('\x01');
    if (end < 0) continue;
    const files = record.slice(end + 1).split('\n').filter((f) => f !== '');
    if (files.length === 0 || files.length > MAX_FILES_PER_COMMIT) continue;
    const newline = record.indexOf('\n');
    const subject = newline < 0 || newline > end ? record.slice(0, end) : record.slice(0, newline);
    const body = newline < 0 || newline > end ? '' : record.slice(newline + 1, end).slice(0, BODY_CHARS);
    const words = messageTokens(`${subject}\n${body}`);
    const tf = new Map<string, number>();
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
    for (const w of tf.keys()) df.set(w, (df.get(w) ?? 0) + 1);
    commits.push({ tf, length: words.length, files });
  }
  return { commits, df };
}

/** A message's tokens: each identifier whole (lower-cased) and its words, stemmed as the question's words are. */
export function messageTokens(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/[^A-Za-z0-9_$]+/)) {
    if (raw.length < 3 || raw.length > 60) continue;
    const whole = raw.toLowerCase();
    // Most words are plain lower-case words: split only what has a capital inside, `_` or `$` (the costly part).
    if (!/[A-Z_$]/.test(raw.slice(1)) && !raw.startsWith('_')) {
      out.push(stem(whole));
      continue;
    }
    const parts = raw
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .toLowerCase()
      .split(/[\s_$]+/)
      .filter((p) => p.length >= 3);
    if (parts.length > 1) out.push(whole);
    for (const p of parts) out.push(stem(p));
  }
  return out;
}

/**
 * Per file, the weight similar past commits lend it, scaled so the best file has 1: each of the SIMILAR_COMMITS
 * commits whose messages score highest under BM25 against the question's terms gives its score, shared among the
 * files it touched. Empty when no commit resembles the question.
 */
export function messageWeights(history: History, terms: readonly Term[]): Map<string, number> {
  const n = history.commits.length;
  const asked = queryTokens(terms);
  const out = new Map<string, number>();
  if (n === 0 || asked.size === 0) return out;
  const avg = history.commits.reduce((s, c) => s + c.length, 0) / n;
  const idf = new Map([...asked.keys()].map((t) => [t, Math.log(1 + (n - (history.df.get(t) ?? 0) + 0.5) / ((history.df.get(t) ?? 0) + 0.5))]));
  // What a message holding every term once, at the mean length, would score: a commit must match a share of it.
  const ideal = [...asked].reduce((sum, [t, weight]) => sum + weight * idf.get(t)!, 0);
  const scored = history.commits
    .map((commit, at) => {
      let score = 0;
      for (const [t, weight] of asked) {
        const tf = commit.tf.get(t) ?? 0;
        if (tf > 0) score += weight * idf.get(t)! * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * commit.length) / Math.max(avg, 1))));
      }
      return { commit, score: score * Math.min(1, score / ideal), at };
    })
    .filter((s) => s.score >= MIN_MATCH * MIN_MATCH * ideal)
    .sort((a, b) => b.score - a.score || a.at - b.at)
    .slice(0, SIMILAR_COMMITS);
  for (const { commit, score } of scored) {
    for (const file of commit.files) out.set(file, (out.get(file) ?? 0) + score / Math.sqrt(commit.files.length));
  }
  return normalised(out);
}

/**
 * Per file, how often it changed together with `seeds` (the best candidates, best first), scaled so the best has 1.
 * A commit shares its weight among its files, so a small commit that touched a seed says more than a sweep.
 */
export function coChangeWeights(history: History, seeds: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  const rankOf = new Map(seeds.map((s, i) => [s, i]));
  for (const commit of history.commits) {
    let weight = 0;
    for (const file of commit.files) {
      const at = rankOf.get(file);
      if (at !== undefined) weight += 1 / (at + 1);
    }
    if (weight === 0 || commit.files.length < 2) continue;
    for (const file of commit.files) {
      if (!rankOf.has(file)) out.set(file, (out.get(file) ?? 0) + weight / (commit.files.length - 1));
    }
  }
  return normalised(out);
}

/** The question's terms as message tokens with their weights (compounds left out: their words are terms already). */
function queryTokens(terms: readonly Term[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const term of terms) {
    if (term.parts || term.kind === 'path' || term.kind === 'quoted') continue;
    const text = term.kind === 'identifier' ? term.text.replace(/[^a-z0-9_$]/g, '') : term.text;
    if (text.length >= 3) out.set(text, Math.max(out.get(text) ?? 0, term.weight));
  }
  return out;
}

function normalised(weights: Map<string, number>): Map<string, number> {
  const max = Math.max(0, ...weights.values());
  if (max === 0) return weights;
  for (const [file, w] of weights) weights.set(file, w / max);
  return weights;
}

/** What history added to a result's score (absolute, after the place factors), for `--explain`. */
export interface HistoryContribution {
  messages: number;
  cochange: number;
}

/**
 * Lends the lists's files what history says, as a share of the best score so far (so the signal weighs the same
 * whatever the question's length): MESSAGE_SHARE for the file most touched by similar past commits, COCHANGE_SHARE for
 * the one that changed most with the COCHANGE_SEEDS best candidates, each scaled by the file's place (a test that
 * always changes with its code stays a test). Files with no search hits but such a history join the ranking.
 */
export function withHistory<T extends { path: string; score: number }>(
  ranked: readonly T[],
  history: History | null,
  terms: readonly Term[],
  listed: ReadonlySet<string>,
  place: (rel: string) => number,
  empty: (rel: string) => T,
): { ranked: T[]; contributions: Map<string, HistoryContribution> } {
  const contributions = new Map<string, HistoryContribution>();
  const top = ranked[0]?.score ?? 0;
  if (history === null || history.commits.length === 0 || top === 0) return { ranked: [...ranked], contributions };
  const byPath = new Map(ranked.map((r) => [r.path, r]));
  const add = (weights: Map<string, number>, share: number, field: keyof HistoryContribution): void => {
    for (const [rel, w] of weights) {
      if (!listed.has(rel)) continue;
      const bonus = round(top * share * w * place(rel));
      if (bonus === 0) continue;
      const hit = byPath.get(rel) ?? empty(rel);
      byPath.set(rel, { ...hit, score: hit.score + bonus });
      const c = contributions.get(rel) ?? { messages: 0, cochange: 0 };
      contributions.set(rel, { ...c, [field]: c[field] + bonus });
    }
  };
  add(messageWeights(history, terms), MESSAGE_SHARE, 'messages');
  const seeds = [...byPath.values()].sort(byScoreThenPath).slice(0, COCHANGE_SEEDS).map((r) => r.path);
  add(coChangeWeights(history, seeds), COCHANGE_SHARE, 'cochange');
  return { ranked: [...byPath.values()].sort(byScoreThenPath), contributions };
}

function byScoreThenPath(a: { path: string; score: number }, b: { path: string; score: number }): number {
  return round(b.score) - round(a.score) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

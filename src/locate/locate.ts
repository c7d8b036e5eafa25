import { bundledRg } from '../sandbox/programs.js';
import { SymbolIndex, type SymbolTag } from '../symbols/index.js';
import { readSource } from '../symbols/read.js';
import { hasGeneratedHeader } from './conventions.js';
import { copyDirs, copyFactor, wordsOf } from './copies.js';
import { explain, type Explanation } from './explain.js';
import type { RepoIndexes } from './index/store.js';
import { readHistory, withHistory } from './history.js';
import { definedTerms, withReferences } from './references.js';
import { pathsThatExist, termsOf, type Term } from './query.js';
import { combine, idf, PathMatcher, placeFactor, scoreFile, sideFactor, SYMBOL_EXACT, type Idfs, type Scored } from './score.js';
import { maskTerms, type FileHits } from './hits.js';
import { creditCompounds, search } from './search.js';

/** Results when the caller gives no k. */
export const DEFAULT_K = 10;
export const MAX_K = 100;
/**
 * First-stage candidates whose symbols are parsed to re-rank them: parsing is most of locate's CPU, and 40 ranked the
 * sverklo questions no better than 20.
 */
const RERANK = 20;
/** Symbols and lines shown per result; characters of a shown line. */
const SYMBOLS_SHOWN = 3;
const LINES_SHOWN = 3;
const LINE_CHARS = 200;
/** Notes kept per result. */
const MAX_NOTES = 10;

interface LocateSymbol {
  name: string;
  kind: string;
  line: number;
}

interface LocateHit {
  path: string;
  score: number;
  symbols: LocateSymbol[];
  lines: { line: number; text: string }[];
  /** With `explain`: each term's contribution and the factors applied (src/locate/explain.ts). */
  explain?: Explanation;
}

/** The JSON object `spelunk locate --output-format json` prints (and the MCP tool returns). */
export interface LocateResult {
  type: 'locate';
  query: string;
  results: LocateHit[];
  /** Why the ranking may be partial (a search cut short, files skipped by the symbol layer); empty when complete. */
  notes: string[];
}

interface LocateOptions {
  k?: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Reused across calls (the MCP server keeps one), so files parsed once stay parsed. */
  symbols?: SymbolIndex;
  /** Adds each result's contributions (`--explain`). */
  explain?: boolean;
  /** The persistent content index (src/locate/index/): answers the content search when it can, else rg runs. */
  index?: RepoIndexes;
  /** Reads git history reachable from HEAD (src/locate/history.ts); on unless false. */
  history?: boolean;
  /**
   * Files that call, construct or import a definition the question names gain (src/locate/references.ts). Off unless
   * true: on the tuning sets it moved pooled MRR by 0.000 to -0.001 (docs/bench-log.md), so it is not on by default.
   */
  references?: boolean;
  /** Where the mined history is kept across runs, keyed by HEAD (src/locate/history-cache.ts); none when absent. */
  historyCache?: string | null;
}

/**
 * Ranks the files of `root` for a question without a model: the question's terms searched with rg, files scored by
 * BM25 over content hits and path tokens, the best candidates re-ranked by the tree-sitter definitions they hold.
 * Deterministic for a given tree and question (ties break by path). Never throws for anything in the repository.
 */
export async function locate(root: string, question: string, opts: LocateOptions): Promise<LocateResult> {
  const k = Math.min(Math.max(1, opts.k ?? DEFAULT_K), MAX_K);
  const asked = termsOf(question);
  const result: LocateResult = { type: 'locate', query: question, results: [], notes: [] };
  if (asked.length === 0) return { ...result, notes: ['the question has no searchable words; name a function, file or concept'] };
  const rg = await bundledRg();
  if (rg === null) return { ...result, notes: ['ripgrep (@vscode/ripgrep) is not installed, so nothing could be searched'] };
  const call = { timeoutMs: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) };
  const reading = opts.history === false ? null : readHistory(root, { ...call, cacheDir: opts.historyCache ?? null });
  const pending = opts.index ? await opts.index.begin(rg, root, asked, call) : null;
  // While the index checks the tree: the first stage on what its segments hold, kept as far as the check leaves it.
  const early = pending?.files ? listingWork(pending.files, asked) : null;
  const earlyFirst = early !== null && pending?.files && pending.hits ? firstStage(question, early, pending.files, pending.hits) : null;
  const [found, history] = await Promise.all([pending?.settle().then((hit) => hit ?? search(rg, root, asked, call)) ?? search(rg, root, asked, call), reading]);
  const work = early !== null && found.files === pending?.files ? early : listingWork(found.files, asked);
  // The hits are the stored ones only together with the stored listing (settle's promise): credited once, either way.
  // After an edit only the changed files' hits are new, and the early stage is kept but for them when it can be.
  const kept = earlyFirst !== null && work === early ? earlyFirst : null;
  const stage =
    (kept !== null && found.hits === pending?.hits ? kept : null) ??
    (kept !== null && found.changed !== undefined ? restage(kept, work, pending!.hits!, found.hits, found.changed) : null) ??
    firstStage(question, work, found.files, found.hits);
  const { terms, listed, copies, idfs, words, generated, side, factorOf, place, none, first } = stage;
  if (found.note) result.notes.push(found.note);
  const symbols = opts.symbols ?? new SymbolIndex();
  const defs = new Map<string, SymbolTag[]>();
  for (const candidate of first.slice(0, RERANK)) if (await isGenerated(root, candidate.path)) generated.add(candidate.path);
  const reranked = await rerank(root, first.slice(0, RERANK), terms, idfs, symbols, defs, result.notes, place);
  const defined = opts.references !== true ? [] : definedTerms(terms, reranked);
  const rescore = (s: Scored, evidence: number[]): Scored => place({ ...s, evidence, score: combine(s.path, terms, idfs, evidence, s.pathEvidence) });
  const referred = await withReferences(root, [...reranked, ...first.slice(RERANK)].sort(byScore), terms, defined, found.hits, symbols, rescore);
  const past = withHistory(referred.sort(byScore), history, terms, listed,
    (rel) => placeFactor(rel, side) * factorOf(rel), (rel): Scored => ({ path: rel, score: 0, evidence: none, pathEvidence: none }));
  const ranked = past.ranked.slice(0, k);
  for (const hit of ranked) {
    const described = await describe(root, hit, found.hits.get(hit.path), terms, idfs, defs.get(hit.path) ?? []);
    const factors = { copy: copyFactor(hit.path, copies, words), generated: generated.has(hit.path) ? side : 1 };
    const why = opts.explain ? { explain: explain(hit, terms, idfs, factors, past.contributions.get(hit.path)) } : {};
    result.results.push({ ...described, ...why });
  }
  if (!terms.some(isCodeSpecific)) result.notes.push(NO_CODE_WORD);
  return result;
}

/** What the ranking takes from the listing alone: the terms (a path term only when such a path exists), path matches, copies. */
export function listingWork(files: readonly string[], asked: readonly Term[]) {
  const terms = pathsThatExist(asked, files);
  const { listed, copies, chunks } = factsOf(files);
  return { terms, matches: allPathMatches(files, terms, chunks), listed, copies };
}

/**
 * What listingWork takes from a listing whatever the question: the listed set, the copy directories, and the
 * prefilter's joined chunks (two more copies of the listing, so kept only once the same listing is asked of again: a
 * command asks once). Kept per listing array, never changed once made: the MCP server's index hands back the very
 * array while its segments hold (RepoIndexes.begin), so its later questions reuse them.
 */
interface ListingFacts {
  listed: Set<string>;
  copies: Map<string, string>;
  chunks: HoldingChunk[] | null;
}
const listingFacts = new WeakMap<readonly string[], ListingFacts>();

function factsOf(files: readonly string[]): ListingFacts {
  const known = listingFacts.get(files);
  if (known !== undefined) {
    known.chunks ??= Array.from({ length: Math.ceil(files.length / CHUNK_FILES) }, (_chunk, i) => holdingChunk(files, i * CHUNK_FILES));
    return known;
  }
  const made: ListingFacts = { listed: new Set(files), copies: copyDirs(files), chunks: null };
  listingFacts.set(files, made);
  return made;
}

/**
 * The first stage over a listing and its content hits (credited to compounds here: `hits` is changed): the candidates
 * (a file with no content hit and no path match counts for no term and scores 0, so only the others are visited),
 * idf, and each candidate's BM25 score placed, ranked. `generated` starts empty and is filled by the caller.
 */
export function firstStage(question: string, work: ReturnType<typeof listingWork>, files: readonly string[], hits: Map<string, FileHits>) {
  const { terms, matches, listed, copies } = work;
  creditCompounds(hits, terms);
  const candidates = [...matches.keys()];
  for (const rel of hits.keys()) if (!matches.has(rel) && listed.has(rel)) candidates.push(rel);
  const idfs = termIdfs(files.length, candidates, matches, hits, terms);
  const words = wordsOf(question);
  const generated = new Set<string>();
  const side = sideFactor(terms);
  const factorOf = (rel: string): number => copyFactor(rel, copies, words) * (generated.has(rel) ? side : 1);
  const place = (s: Scored): Scored => ({ ...s, score: s.score * factorOf(s.path) });
  const none = terms.map(() => 0);
  const scored = candidates.map((rel) => place(scoreFile(rel, matches.get(rel) ?? none, hits.get(rel), terms, idfs)));
  const first = sortedByScore(scored.filter((s) => s.score > 0));
  return { terms, listed, copies, idfs, words, generated, side, factorOf, place, none, first };
}

type FirstStage = ReturnType<typeof firstStage>;

/**
 * The first stage again after the files in `changed` got new hits (`after`; an edit the freshness check found), from
 * the stage on the hits before (`before`): when no changed file gains or loses a term, no idf moves and every other
 * file keeps its score, so only the changed files are scored again. Null when some idf moves: the caller then runs
 * the whole first stage. The same ranking either way (test/locate/restage.test.ts, index-fresh.test.ts).
 */
export function restage(
  stage: FirstStage,
  work: ReturnType<typeof listingWork>,
  before: ReadonlyMap<string, FileHits>,
  after: Map<string, FileHits>,
  changed: ReadonlySet<string>,
): FirstStage | null {
  const { terms, listed } = stage;
  const { matches } = work;
  creditCompounds(after, terms);
  // As termIdfs counts it: a candidate (path match, or content hits and listed) whose path or content holds the term.
  const holds = (hits: FileHits | undefined, rel: string, i: number): boolean =>
    (matches.has(rel) || (hits !== undefined && listed.has(rel))) && ((matches.get(rel)?.[i] ?? 0) > 0 || (hits?.count(i) ?? 0) > 0);
  for (const rel of changed) for (let i = 0; i < terms.length; i++) if (holds(before.get(rel), rel, i) !== holds(after.get(rel), rel, i)) return null;
  const rescored = [...changed]
    .filter((rel) => matches.has(rel) || (after.has(rel) && listed.has(rel)))
    .map((rel) => stage.place(scoreFile(rel, matches.get(rel) ?? stage.none, after.get(rel), terms, stage.idfs)))
    .filter((s) => s.score > 0);
  return { ...stage, first: sortedByScore([...stage.first.filter((s) => !changed.has(s.path)), ...rescored]) };
}

/**
 * Whether a candidate says it is generated: it holds the names of the code it was generated from, and the answer is
 * in that code or the generator. Read with the symbol layer's confinement (realpath, no links out, no FIFOs).
 */
async function isGenerated(root: string, rel: string): Promise<boolean> {
  const source = await readSource(root, rel);
  return source.ok && hasGeneratedHeader(source.text);
}

/** Said in `notes` when every term is a plain word: the ranking then rests on prose alone. */
export const NO_CODE_WORD =
  'the question has no code-specific word (an identifier, path, quoted string or leading scope); the ranking rests on plain words: name a function, file or message for a sharper one';

/** An identifier, path, quoted string or scope the question itself wrote (not a compound locate made of two words). */
function isCodeSpecific(term: Term): boolean {
  return term.scope === true || (term.kind !== 'word' && term.parts === undefined);
}

/**
 * The path matches of the listed files whose path matches some term (the others match none and are left out). A path
 * that holds no term's text (nor its letters and digits run together) can match none, so it is never matched: on 27k
 * files that was the largest share of locate's own CPU. Which paths hold a needle is found a chunk of the listing at a
 * time (pathsHolding); those that do are matched by file name and directory (PathMatcher).
 */
function allPathMatches(files: readonly string[], terms: readonly Term[], chunks: readonly HoldingChunk[] | null): Map<string, number[]> {
  const matcher = new PathMatcher(terms);
  const needles = terms.map((t) => ({
    text: t.kind === 'path' ? t.text.replace(/^\.?\//, '') : t.text,
    compact: t.text.replace(/[^a-z0-9]/g, ''),
  }));
  const holding = pathsHolding(files, needles, chunks ?? undefined);
  const out = new Map<string, number[]>();
  files.forEach((rel, i) => {
    if (holding[i] === 0) return;
    const matched = matcher.matches(rel);
    if (matched.some((m) => m > 0)) out.set(rel, matched);
  });
  return out;
}

/**
 * 1 for each file whose lower-cased path holds some needle's text, or whose letters and digits run together hold its
 * compact form; else 0. The listing is searched a chunk of CHUNK_FILES paths at a time, joined by NUL (which no path
 * holds, nor a needle): a lower-cased string and a regular expression per path were most of path matching's cost, and
 * the whole listing joined at once is three more copies of it in memory. `chunks`: holdingChunk of each chunk, made
 * before (they are made here otherwise, one at a time).
 */
export function pathsHolding(files: readonly string[], needles: readonly { text: string; compact: string }[], chunks?: readonly HoldingChunk[]): Uint8Array {
  const holding = new Uint8Array(files.length);
  // Every path holds the empty text (as `includes('')` says); no compact form counts when empty.
  if (needles.some((n) => n.text === '')) return holding.fill(1);
  const texts = needles.map((n) => n.text);
  const compacts = needles.map((n) => n.compact).filter((c) => c !== '');
  for (let from = 0; from < files.length; from += CHUNK_FILES) {
    const chunk = chunks?.[from / CHUNK_FILES] ?? holdingChunk(files, from);
    markHolding(holding, from, chunk.lower, texts);
    markHolding(holding, from, chunk.compact, compacts);
  }
  return holding;
}

const CHUNK_FILES = 4096;

/** Paths as one string (NUL-joined), and where each one starts in it. */
interface Joined {
  text: string;
  starts: number[];
}

/** One chunk of the listing: lower-cased, and its letters and digits run together (NULs kept in both). */
export interface HoldingChunk {
  lower: Joined;
  compact: Joined;
}

/** The CHUNK_FILES paths of `files` from `from` on, as pathsHolding searches them. */
export function holdingChunk(files: readonly string[], from: number): HoldingChunk {
  const lower = files.slice(from, from + CHUNK_FILES).join('\0').toLowerCase();
  const compact = lettersAndDigits(lower);
  return { lower: { text: lower, starts: fileStarts(lower) }, compact: { text: compact, starts: fileStarts(compact) } };
}

/** Marks, from `from` on, each file of `joined` that holds one of `texts`. */
function markHolding(holding: Uint8Array, from: number, joined: Joined, texts: readonly string[]): void {
  const { text: all, starts } = joined;
  for (const text of texts) {
    let file = 0;
    for (let at = all.indexOf(text); at >= 0; at = all.indexOf(text, at + text.length)) {
      while (file + 1 < starts.length && starts[file + 1]! <= at) file += 1;
      holding[from + file] = 1;
    }
  }
}

/** `text` without what is not a-z, 0-9 or NUL: a loop, as a global replace over a long string is several times slower. */
function lettersAndDigits(text: string): string {
  const kept = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 0) kept[n++] = c;
  }
  return kept.toString('latin1', 0, n);
}

/** Where each NUL-joined file begins. */
function fileStarts(joined: string): number[] {
  const starts = [0];
  for (let nul = joined.indexOf('\0'); nul >= 0; nul = joined.indexOf('\0', nul + 1)) starts.push(nul + 1);
  return starts;
}

/**
 * idf of each term over a listing of `listed` files, of which only `candidates` hold any term: a file counts when its
 * content or its path holds the term; and over paths alone.
 */
function termIdfs(
  listed: number,
  candidates: readonly string[],
  matches: ReadonlyMap<string, readonly number[]>,
  hits: ReadonlyMap<string, FileHits>,
  terms: readonly Term[],
): Idfs {
  const df = terms.map(() => 0);
  const pathDf = terms.map(() => 0);
  for (const rel of candidates) {
    const file = hits.get(rel);
    const inPath = matches.get(rel);
    terms.forEach((_term, i) => {
      const path = (inPath?.[i] ?? 0) > 0;
      if (path) pathDf[i]! += 1;
      if (path || (file?.count(i) ?? 0) > 0) df[i]! += 1;
    });
  }
  const n = Math.max(listed, 1);
  const scopeInPaths = terms.some((term, i) => term.scope === true && pathDf[i]! > 0);
  return { content: df.map((d) => idf(d, n)), path: pathDf.map((d) => idf(d, n)), scopeInPaths };
}

/** Adds each candidate's definition evidence: a definition named like a term is where that thing is written. */
async function rerank(
  root: string,
  candidates: readonly Scored[],
  terms: readonly Term[],
  idfs: Idfs,
  symbols: SymbolIndex,
  defs: Map<string, SymbolTag[]>,
  notes: string[],
  place: (s: Scored) => Scored,
): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const candidate of candidates) {
    const parsed = SymbolIndex.supports(candidate.path) ? await symbols.symbolsOf(root, candidate.path, 'definitions') : null;
    if (!parsed?.ok) {
      // A file the symbol layer skipped (huge, minified, too slow) is ranked on its search hits alone; say so.
      if (parsed && notes.length < MAX_NOTES) notes.push(`symbols: ${parsed.note}`);
      out.push(candidate);
      continue;
    }
    defs.set(candidate.path, parsed.definitions);
    const symbol = terms.map((term) => symbolEvidence(parsed.definitions, term));
    const evidence = candidate.evidence.map((value, i) => value + symbol[i]!);
    // Rescored from the evidence, so the copy factor the first stage applied is applied again.
    const score = combine(candidate.path, terms, idfs, evidence, candidate.pathEvidence);
    out.push(place({ ...candidate, evidence, symbolEvidence: symbol, score }));
  }
  return out;
}

/** SYMBOL_EXACT when a definition is named the term (or the last part of a dotted term), else 0. */
function symbolEvidence(definitions: readonly SymbolTag[], term: Term): number {
  return definitions.some((def) => namedExactly(def, term)) ? SYMBOL_EXACT : 0;
}

function namedExactly(def: SymbolTag, term: Term): boolean {
  const name = def.name.toLowerCase();
  return name === term.text || name === term.text.replace(/[^a-z0-9_$]/g, '') || term.text.endsWith(`.${name}`);
}

/** How well a definition's name fits a term, for choosing the symbols shown: 2 exactly, 1 when one of its words does. */
function nameFit(def: SymbolTag, term: Term): number {
  if (namedExactly(def, term)) return 2;
  return term.text.length >= 4 && nameWords(def.name).some((w) => w === term.text || (term.kind === 'word' && w.startsWith(term.text)))
    ? 1
    : 0;
}

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_$]+/);
}

/** A result as shown: its best definitions (named like the terms, else the one around the best line) and best lines. */
async function describe(
  root: string,
  hit: Scored,
  hits: FileHits | undefined,
  terms: readonly Term[],
  idfs: Idfs,
  definitions: readonly SymbolTag[],
): Promise<LocateHit> {
  const value = (mask: number): number => maskTerms(mask).reduce((sum, i) => sum + terms[i]!.weight * idfs.content[i]!, 0);
  const best = (hits?.lines() ?? [])
    .map((l) => ({ line: l.line, value: value(l.terms) }))
    .sort((a, b) => b.value - a.value || a.line - b.line)
    .slice(0, LINES_SHOWN);
  const source = best.length > 0 ? await readSource(root, hit.path) : null;
  const text = source?.ok ? source.text.split('\n') : [];
  const lines = best.map(({ line }) => ({ line, text: (text[line - 1] ?? '').trim().slice(0, LINE_CHARS) })).sort((a, b) => a.line - b.line);
  return { path: hit.path, score: round(hit.score), symbols: bestSymbols(definitions, terms, idfs, best[0]?.line), lines };
}

function bestSymbols(definitions: readonly SymbolTag[], terms: readonly Term[], idfs: Idfs, bestLine: number | undefined): LocateSymbol[] {
  const scored = definitions
    .map((def) => ({ def, value: terms.reduce((sum, term, i) => sum + nameFit(def, term) * term.weight * idfs.content[i]!, 0) }))
    .filter((s) => s.value > 0)
    .sort((a, b) => b.value - a.value || a.def.line - b.def.line)
    .slice(0, SYMBOLS_SHOWN)
    .map(({ def }) => ({ name: def.name, kind: def.kind, line: def.line }));
  if (scored.length > 0 || bestLine === undefined) return scored;
  const around = definitions.filter((d) => d.line <= bestLine).at(-1);
  return around ? [{ name: around.name, kind: around.kind, line: around.line }] : [];
}

function byScore(a: Scored, b: Scored): number {
  return round(b.score) - round(a.score) || byPath(a.path, b.path);
}

function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `list` in byScore's order, each score rounded once (not at each of the n log n comparisons of tens of thousands). */
export function sortedByScore(list: readonly Scored[]): Scored[] {
  const keyed = list.map((scored) => ({ scored, key: round(scored.score) }));
  keyed.sort((a, b) => b.key - a.key || byPath(a.scored.path, b.scored.path));
  return keyed.map((k) => k.scored);
}

/** Scores are rounded before they are compared or shown, so float noise can never reorder two runs. */
function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

import { isSideFile } from './conventions.js';
import type { Term } from './query.js';
import type { FileHits } from './hits.js';

/**
 * BM25's term-frequency saturation. Without length normalisation (b = 0): rg counts at most a few dozen lines per
 * file, and on the sverklo questions b = 0.4–1 (file size against the mean) ranked no better than b = 0.
 */
const K1 = 1.2;
/** How much a path match counts beside a content match of the same term: the name of a file is strong evidence. */
const PATH_BASENAME = 1.6;
const PATH_SEGMENT = 0.9;
const PATH_SUBSTRING = 0.35;
/** A path match counts this much more for a term of the question's leading scope (`hmr: …` names an area). */
const SCOPE_PATH = 2;
/** Path evidence beside content evidence (each under its own idf): 1.0 ranked the vite change set best of 0.75–1.5. */
const PATH_WEIGHT = 1.0;
/**
 * A definition named exactly like a term, beside a content match of the same term. A definition that only contains
 * the term as one of its words adds nothing: on the sverklo questions that favoured large files defining everything
 * (Hit@10 0.82 with it at 0.6, 0.88 without); it still picks the symbols shown.
 */
export const SYMBOL_EXACT = 2.2;

/**
 * A question that names tests, fixtures, examples, docs or benchmarks keeps them at 0.3; any other question pushes
 * them further down (the code they exercise or describe holds the same words and is the answer).
 */
const SIDE_FACTOR = 0.1;
const SIDE_FACTOR_ASKED = 0.3;
const ASKS_FOR_SIDE = /^(test|spec|fixture|example|sample|demo|playground|bench|doc|e2e|mock|snapshot)/;

/** The factor for side files under a question with these terms. */
export function sideFactor(terms: readonly Term[]): number {
  return terms.some((t) => ASKS_FOR_SIDE.test(t.text)) ? SIDE_FACTOR_ASKED : SIDE_FACTOR;
}
/** Files that are not source code: prose, data, lock files, snapshots, images. */
const NON_CODE_EXT = /\.(md|mdx|markdown|rst|txt|adoc|json|jsonc|ya?ml|toml|lock|snap|svg|png|jpe?g|gif|ico|csv|map|html?|xml|log|ini|cfg|env|sum|mod)$/i;
const NON_CODE_FACTOR = 0.35;
/**
 * Build and tool configuration (Makefile.mjs, Gulpfile.mts, eslint.config.mts, rolldown.config.ts): long files that
 * name every package and task, so they hold a question's words without being where its answer is.
 */
const BUILD_FILE = /^(makefile|gulpfile|gruntfile|jakefile)(\.[a-z]+)*$|\.config\.[cm]?[jt]s$/i;
/** 0.6: of 0.2–1, best on all three tuning sets (0.4 lost a gold file on vite; none lost at 0.6). */
const BUILD_FACTOR = 0.6;
/** Type declaration files repeat the names of the code they describe. */
const DECLARATION_FACTOR = 0.6;

export interface PathTokens {
  basename: Set<string>;
  segments: Set<string>;
  /** The whole path lower-cased (for a path term, and a long word inside a token). */
  lower: string;
}

/**
 * The tokens of a path for matching: its segments, the file name without extension, and their identifier parts (the
 * definition; PathMatcher gives the same matches for a whole listing without building them per file). `dirs` caches
 * the segments of each directory.
 */
export function pathTokens(rel: string, dirs?: Map<string, Set<string>>): PathTokens {
  const slash = rel.lastIndexOf('/');
  const dir = slash < 0 ? '' : rel.slice(0, slash);
  const basename = nameTokens(rel.slice(slash + 1));
  let segments = dirs?.get(dir);
  if (!segments) {
    segments = new Set<string>();
    for (const part of dir === '' ? [] : dir.split('/')) for (const token of partTokens(part)) segments.add(token);
    dirs?.set(dir, segments);
  }
  return { basename, segments, lower: rel.toLowerCase() };
}

/** A file name's tokens: its stem (without the extension, or `.d.ts`) lower-cased, run together, and its words. */
function nameTokens(name: string): Set<string> {
  const stem = name.replace(/(\.d)?\.[a-z0-9]+$/i, '');
  return new Set([stem.toLowerCase(), compact(stem), ...splitWords(stem)]);
}

/** A directory name's tokens: `tokio-stream` also as `tokiostream`, so `tokio_stream` in a question (compacted) finds it. */
function partTokens(part: string): string[] {
  return [part.toLowerCase(), compact(part), ...splitWords(part)];
}

function compact(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** `ssrTransform` → ssr, transform; `get-platform` → get, platform; lower-cased. */
function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1);
}

/** A token equal to the term, or, for a word's stem, starting with it. */
function has(tokens: ReadonlySet<string>, term: Term, text: string): boolean {
  if (tokens.has(text)) return true;
  if (term.kind !== 'word' || term.wholeWord) return false;
  for (const token of tokens) if (token.startsWith(text)) return true;
  return false;
}

/** Multiplier for where a file lives and what kind of file it is (1 for ordinary source). */
export function placeFactor(rel: string, side = SIDE_FACTOR_ASKED): number {
  const file = rel.slice(rel.lastIndexOf('/') + 1);
  let factor = 1;
  // Tests, fixtures, docs, generated or vendored trees, API dumps, changelog fragments (src/locate/conventions.ts).
  if (isSideFile(rel)) factor *= side;
  if (BUILD_FILE.test(file)) factor *= BUILD_FACTOR;
  if (NON_CODE_EXT.test(file)) factor *= NON_CODE_FACTOR;
  else if (/\.d\.[cm]?ts$/.test(file)) factor *= DECLARATION_FACTOR;
  return factor;
}

/** Inverse document frequency, BM25's form (never negative). */
export function idf(df: number, n: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** How strongly a path names a term: basename word, directory word, or a substring of the path. */
export function pathMatch(tokens: PathTokens, term: Term): number {
  const { lower } = tokens;
  if (term.kind === 'path') return pathTermMatch(lower, term);
  if (tokensName(tokens.basename, term)) return PATH_BASENAME;
  if (tokensName(tokens.segments, term)) return PATH_SEGMENT;
  return substringMatch(lower, term);
}

/** A path term against the lower-cased path: the path itself or its end, else inside it. */
function pathTermMatch(lower: string, term: Term): number {
  const text = term.text.replace(/^\.?\//, '');
  if (lower === text || lower.endsWith(`/${text}`)) return PATH_BASENAME * 1.5;
  return lower.includes(text) ? PATH_SEGMENT : 0;
}

/** A long word (not whole-word) inside the lower-cased path, when no token names it. */
function substringMatch(lower: string, term: Term): number {
  return substringMatters(term) && lower.includes(term.text) ? PATH_SUBSTRING : 0;
}

function substringMatters(term: Term): boolean {
  return !term.wholeWord && term.text.length >= 5;
}

/** Whether tokens name a word term: one equal to it (or, for a word's stem, starting with it), or its compact form. */
function tokensName(tokens: ReadonlySet<string>, term: Term): boolean {
  return has(tokens, term, term.text) || tokens.has(compactOf(term));
}

/** A term's letters and digits run together, worked out once per term (path matching asks for each listed file). */
const compacts = new WeakMap<Term, string>();
function compactOf(term: Term): string {
  let known = compacts.get(term);
  if (known === undefined) {
    known = term.text.replace(/[^a-z0-9]/g, '');
    compacts.set(term, known);
  }
  return known;
}

/**
 * pathMatch of every term over the files of one listing, without building each path's tokens: a word is named by the
 * file name's tokens, else by those of some directory on the path (each directory name is tokenized once, however many
 * directories and files share it, and each directory's verdict is kept), else inside the lower-cased path, made only
 * for a file that needs it. The same numbers as pathMatch(pathTokens(rel), term) for each term
 * (test/locate/path-matcher.test.ts); the memos hold a verdict per name and directory, not their tokens.
 */
export class PathMatcher {
  readonly #terms: readonly Term[];
  readonly #names = new Map<string, boolean[]>();
  readonly #parts = new Map<string, boolean[]>();
  readonly #dirs = new Map<string, boolean[]>();

  constructor(terms: readonly Term[]) {
    this.#terms = terms;
  }

  /** pathMatch of every term for `rel` (a relative path as rg lists it). */
  matches(rel: string): number[] {
    const slash = rel.lastIndexOf('/');
    const inName = this.#verdict(this.#names, rel.slice(slash + 1), nameTokens);
    const inDir = this.#dir(slash < 0 ? '' : rel.slice(0, slash));
    let lower: string | null = null;
    return this.#terms.map((term, i) => {
      if (term.kind === 'path') return pathTermMatch((lower ??= rel.toLowerCase()), term);
      if (inName[i]) return PATH_BASENAME;
      if (inDir[i]) return PATH_SEGMENT;
      return substringMatters(term) ? substringMatch((lower ??= rel.toLowerCase()), term) : 0;
    });
  }

  /** Whether some directory of `dir` names each term: a union of tokens names a word when one of its parts does. */
  #dir(dir: string): boolean[] {
    let known = this.#dirs.get(dir);
    if (known === undefined) {
      const parts = dir === '' ? [] : dir.split('/').map((part) => this.#verdict(this.#parts, part, partTokens));
      known = this.#terms.map((_term, i) => parts.some((part) => part[i]));
      this.#dirs.set(dir, known);
    }
    return known;
  }

  #verdict(memo: Map<string, boolean[]>, name: string, tokensOf: (name: string) => Iterable<string>): boolean[] {
    let known = memo.get(name);
    if (known === undefined) {
      const tokens = new Set(tokensOf(name));
      // A path term's verdict is never asked for: matches() reads the whole path for it.
      known = this.#terms.map((term) => tokensName(tokens, term));
      memo.set(name, known);
    }
    return known;
  }
}

/** The inputs of one file's first-stage score: its content hits (or none) and its path. */
export interface Scored {
  path: string;
  score: number;
  /** Per term: the content evidence so far (BM25 of its hits, later plus definitions); used to add symbol evidence. */
  evidence: number[];
  /** Per term: how strongly the path names it. */
  pathEvidence: number[];
  /** Per term: the part of `evidence` a definition named like it added (set by the re-ranking). */
  symbolEvidence?: number[];
  /** Per term: the part of `evidence` a reference site of a defined term added (src/locate/references.ts). */
  referenceEvidence?: number[];
}

/**
 * Each term's idf twice, as BM25F weighs fields apart: over the files whose content or path holds it, and over the
 * paths alone. A scope word (`config: …`) is in the content of hundreds of files but in the name of a few.
 */
export interface Idfs {
  content: readonly number[];
  path: readonly number[];
  /** Whether some path in the listing names a term of the question's leading scope. */
  scopeInPaths?: boolean;
}
/**
 * A file whose path names none of the leading scope's terms, when some path does (`css: …` and the file is not under
 * or named css): the scope is the author's own word for where the change is. 0.6 of 0.5–0.7 on the tuning sets
 * (vite MRR 0.586 → 0.635, babel 0.426 → 0.469); it only scales, so a file holding every other word still ranks.
 */
const SCOPE_MISS = 0.6;

/**
 * First stage (`matches`: PathMatcher.matches of the file): BM25 over content hits plus path matches, per term
 * weighted by idf and the term's kind, scaled by place.
 */
export function scoreFile(rel: string, matches: readonly number[], hits: FileHits | undefined, terms: readonly Term[], idfs: Idfs): Scored {
  const evidence = terms.map((_term, i) => {
    const tf = hits?.count(i) ?? 0;
    return tf === 0 ? 0 : (tf * (K1 + 1)) / (tf + K1);
  });
  const pathEvidence = terms.map((term, i) => (matches[i] ?? 0) * (term.scope ? PATH_WEIGHT * SCOPE_PATH : PATH_WEIGHT));
  return { path: rel, score: combine(rel, terms, idfs, evidence, pathEvidence), evidence, pathEvidence };
}

/**
 * Sum of weight × (content idf × content evidence + path idf × path evidence), scaled by the file's place. BM25's sum
 * already rewards files matching more terms; an extra coverage factor (share of the question matched, to the power
 * 0.3–1.6) ranked worse on the sverklo questions.
 */
export function combine(
  rel: string,
  terms: readonly Term[],
  idfs: Idfs,
  evidence: readonly number[],
  pathEvidence: readonly number[],
): number {
  let sum = 0;
  terms.forEach((term, i) => {
    sum += term.weight * ((idfs.content[i] ?? 0) * (evidence[i] ?? 0) + (idfs.path[i] ?? 0) * (pathEvidence[i] ?? 0));
  });
  return sum * scopeFactor(terms, idfs, pathEvidence) * placeFactor(rel, sideFactor(terms));
}

/** SCOPE_MISS when some path names the leading scope and this file's path names none of its terms, else 1. */
export function scopeFactor(terms: readonly Term[], idfs: Idfs, pathEvidence: readonly number[]): number {
  const inScope = terms.some((term, i) => term.scope === true && (pathEvidence[i] ?? 0) > 0);
  return idfs.scopeInPaths === true && !inScope ? SCOPE_MISS : 1;
}

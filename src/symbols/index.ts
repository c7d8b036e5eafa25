import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Language, ParseState, Parser, Query } from 'web-tree-sitter';
import { languageOf, type LanguageSpec } from './languages.js';
import { readSource } from './read.js';

/**
 * Bounds in work, not wall time, so a file's symbols (and locate's ranking) never depend on the machine's load.
 * tree-sitter calls the progress callback every 100 parser or query operations; each call is a step. A file may take
 * PARSE_STEPS_BASE steps plus one per PARSE_BYTES_PER_STEP bytes to parse (ordinary code takes one per ~150 bytes,
 * babel's densest generated file one per ~20), of which those after a syntax error (error recovery costs the most per
 * step: 200 KB of random punctuation took 5,400 steps and 9.7 s at load 16) at most ERROR_STEPS_BASE plus one per
 * ERROR_BYTES_PER_STEP; querying may take QUERY_STEPS_BASE plus one per QUERY_BYTES_PER_STEP (ordinary code: one per
 * ~1,000 bytes). Past a bound the file is skipped with a note, the same note on any machine.
 */
const PARSE_STEPS_BASE = 2_000;
const PARSE_BYTES_PER_STEP = 10;
const ERROR_STEPS_BASE = 500;
const ERROR_BYTES_PER_STEP = 80;
const QUERY_STEPS_BASE = 1_000;
const QUERY_BYTES_PER_STEP = 20;
/**
 * Bracket nesting deeper than this is not parsed: a query step over a deep tree costs in proportion to its depth
 * (50,000 nested parentheses: 300 query steps took 15 s). Written code stays far below it.
 */
export const MAX_NESTING = 256;
/** Files whose symbols are kept in memory; past this the oldest are forgotten. */
const CACHE_ENTRIES = 20_000;
/** Tags kept per file (a generated file can hold hundreds of thousands of calls). */
const MAX_TAGS_PER_FILE = 5_000;

/** One definition or reference found by a tags query. References are syntactic: a name at a call or type site. */
export interface SymbolTag {
  name: string;
  /** From the query's capture: function, method, class, interface, module, type, constant, call, … */
  kind: string;
  /** 1-based line of the name. */
  line: number;
}

export type FileSymbols =
  | { ok: true; definitions: SymbolTag[]; references: SymbolTag[] }
  /** No grammar for the file, or it was skipped (huge, minified, binary, outside the root, over its work bound): the note says which. */
  | { ok: false; note: string };

interface LoadedLanguage {
  language: Language;
  /**
   * Every pattern of the tags queries, compiled when first asked for: compiling a query is most of a grammar's load
   * (about 60 ms for TypeScript's), and locate and the outline ask for definitions only.
   */
  query: () => Query;
  /** Only the definition patterns: references (every call site) are most of the matching work. */
  definitionsOnly: Query;
}

/**
 * A cache of parsed tags across runs (src/symbols/disk-cache.ts implements it), keyed by the file's state when it was
 * parsed. Declared here so the cache depends on this module and not the other way round.
 */
export interface SymbolStore {
  get(key: SymbolKey): Promise<Extract<FileSymbols, { ok: true }> | null>;
  put(key: SymbolKey, symbols: Extract<FileSymbols, { ok: true }>): Promise<void>;
}

/** What identifies parsed tags: the file, the mode, and the SHA-256 of the bytes they were parsed from. */
export interface SymbolKey {
  root: string;
  rel: string;
  mode: TagMode;
  sha256: string;
}

/** What to find in a file: definitions alone (outlines, ranking), or definitions and references. */
type TagMode = 'definitions' | 'all';

type TreeSitter = typeof import('web-tree-sitter');

/**
 * The symbol layer of one run: web-tree-sitter and each grammar are loaded the first time a file needs them (so
 * commands that never ask for symbols pay nothing), files are parsed in-process (no child, nothing from the
 * repository is executed) and their tags cached by (path, SHA-256 of the content). One instance per run, never module state.
 */
export class SymbolIndex {
  readonly #workScale: number;
  #runtime: Promise<{ ts: TreeSitter; parser: Parser } | null> | null = null;
  readonly #languages = new Map<string, Promise<LoadedLanguage | null>>();
  readonly #cache = new Map<string, FileSymbols>();
  readonly #disk: SymbolStore | null;

  /**
   * `disk`: the cache across runs (src/symbols/disk-cache.ts); without it symbols are cached in memory only.
   * `workScale` multiplies the work bounds (tests use 0 to make every file with more than a few steps too big).
   */
  constructor(opts: { workScale?: number; disk?: SymbolStore | null } = {}) {
    this.#workScale = opts.workScale ?? 1;
    this.#disk = opts.disk ?? null;
  }

  /** Whether spelunk has a grammar for this path (by extension). */
  static supports(rel: string): boolean {
    return languageOf(rel) !== null;
  }

  /** Definitions (and, with mode 'all', references) of one file inside `root`; never throws. */
  async symbolsOf(root: string, rel: string, mode: TagMode = 'all'): Promise<FileSymbols> {
    const spec = languageOf(rel);
    if (spec === null) return { ok: false, note: `${rel}: no grammar for this kind of file` };
    const source = await readSource(root, rel);
    if (!source.ok) return source;
    // Keyed by content: a same-size rewrite with its old mtime restored (tar -x, touch -d) must be parsed again.
    const key = `${mode}\0${root}\0${rel}\0${source.sha256}`;
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const entry: SymbolKey = { root, rel, mode, sha256: source.sha256 };
    const stored = await this.#disk?.get(entry);
    const result = stored ?? (await this.#parse(rel, spec, source.text, mode));
    // Only parses are stored: a skip is cheap to find again and its note may change with the bounds.
    if (!stored && result.ok) await this.#disk?.put(entry, result);
    if (this.#cache.size >= CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, result);
    return result;
  }

  /** Definitions only, in line order: the file's outline. */
  async outline(root: string, rel: string): Promise<FileSymbols> {
    return this.symbolsOf(root, rel, 'definitions');
  }

  async #parse(rel: string, spec: LanguageSpec, text: string, mode: TagMode): Promise<FileSymbols> {
    const runtime = await this.#load();
    const loaded = runtime && (await this.#language(runtime.ts, spec));
    if (!runtime || !loaded) return { ok: false, note: `${rel}: the ${spec.grammar} grammar could not be loaded` };
    if (nestingOf(text) > MAX_NESTING) return { ok: false, note: `${rel}: brackets nested over ${MAX_NESTING} deep, not parsed` };
    const bytes = Buffer.byteLength(text);
    const budget = (base: number, perStep: number): number => Math.floor((base + bytes / perStep) * this.#workScale);
    const parseSteps = budget(PARSE_STEPS_BASE, PARSE_BYTES_PER_STEP);
    const errorSteps = budget(ERROR_STEPS_BASE, ERROR_BYTES_PER_STEP);
    let steps = 0;
    let afterError = 0;
    runtime.parser.setLanguage(loaded.language);
    // A progress callback returning true cancels: a pathological file costs at most its budget of steps.
    const parseProgress = (state: ParseState): boolean => {
      steps += 1;
      if (state.hasError) afterError += 1;
      return steps > parseSteps || afterError > errorSteps;
    };
    const tree = runtime.parser.parse(text, null, { progressCallback: parseProgress });
    if (!tree) return { ok: false, note: `${rel}: parsing needed more than ${steps > parseSteps ? parseSteps : errorSteps} steps, skipped` };
    try {
      const query = mode === 'all' ? loaded.query() : loaded.definitionsOnly;
      const querySteps = budget(QUERY_STEPS_BASE, QUERY_BYTES_PER_STEP);
      let taken = 0;
      let cut = false;
      const matches = query.matches(tree.rootNode, { progressCallback: () => (cut ||= ++taken > querySteps) });
      if (cut) return { ok: false, note: `${rel}: querying needed more than ${querySteps} steps, skipped` };
      return { ok: true, ...collect(matches, spec.grammar) };
    } finally {
      tree.delete();
    }
  }

  #load(): Promise<{ ts: TreeSitter; parser: Parser } | null> {
    this.#runtime ??= (async () => {
      try {
        const ts = await import('web-tree-sitter');
        await ts.Parser.init();
        return { ts, parser: new ts.Parser() };
      } catch {
        return null;
      }
    })();
    return this.#runtime;
  }

  #language(ts: TreeSitter, spec: LanguageSpec): Promise<LoadedLanguage | null> {
    const key = `${spec.grammar}\0${spec.queries.join(',')}`;
    let loading = this.#languages.get(key);
    if (!loading) {
      loading = loadLanguage(ts, spec).catch(() => null);
      this.#languages.set(key, loading);
    }
    return loading;
  }
}

async function loadLanguage(ts: TreeSitter, spec: LanguageSpec): Promise<LoadedLanguage> {
  const wasm = createRequire(import.meta.url).resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${spec.grammar}.wasm`);
  const language = await ts.Language.load(wasm);
  // Beside this module in src/, beside the bundle in dist/ (scripts/build.mjs copies them there).
  const sources = await Promise.all(spec.queries.map((name) => readFile(new URL(`./tags/${name}.scm`, import.meta.url), 'utf8')));
  const text = sources.join('\n');
  const definitionsOnly = new ts.Query(language, text);
  // A pattern's source text says whether it captures a reference; those are switched off in this copy.
  for (let i = 0; i < definitionsOnly.patternCount(); i++) {
    const pattern = text.slice(definitionsOnly.startIndexForPattern(i), definitionsOnly.endIndexForPattern(i));
    if (!pattern.includes('@definition.')) definitionsOnly.disablePattern(i);
  }
  let query: Query | null = null;
  return { language, query: () => (query ??= new ts.Query(language, text)), definitionsOnly };
}

/** The deepest bracket nesting of a text ((, [, {), counted without regard to strings or comments. */
export function nestingOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) deepest = Math.max(deepest, ++depth);
    else if ((c === 41 || c === 93 || c === 125) && depth > 0) depth -= 1;
  }
  return deepest;
}

/**
 * Turns query matches into tags: the @name capture's text, the kind from its @definition.X / @reference.X capture, in
 * the language's own word for a definition (languageWord). One entry per definition: a node two patterns match (Rust's
 * method pattern and its function pattern both match a fn in an impl) keeps the most specific kind.
 */
function collect(matches: ReturnType<Query['matches']>, grammar: string): { definitions: SymbolTag[]; references: SymbolTag[] } {
  const definitions = new Map<string, SymbolTag & { rank: number }>();
  const references: SymbolTag[] = [];
  const seen = new Set<string>();
  for (const match of matches) {
    const name = match.captures.find((c) => c.name === 'name');
    const role = match.captures.find((c) => c.name.startsWith('definition.') || c.name.startsWith('reference.'));
    if (!name || !role || name.node.text.length > 200) continue;
    const [which, kind = ''] = role.name.split('.');
    const line = name.node.startPosition.row + 1;
    if (which === 'definition') {
      // Keyed by where the name is: the same definition matched twice (or by JavaScript's and TypeScript's queries).
      const id = `${name.node.startIndex}\0${name.node.text}`;
      const rank = SPECIFIC.indexOf(kind);
      const held = definitions.get(id);
      if (held && held.rank >= rank) continue;
      if (!held && definitions.size >= MAX_TAGS_PER_FILE) continue;
      definitions.set(id, { name: name.node.text, kind: languageWord(grammar, role.node.type, kind), line, rank });
      continue;
    }
    const tag: SymbolTag = { name: name.node.text, kind, line };
    const id = `${tag.name}\0${tag.line}\0${tag.kind}`;
    if (seen.has(id)) continue;
    seen.add(id);
    if (references.length < MAX_TAGS_PER_FILE) references.push(tag);
  }
  const order = (a: SymbolTag, b: SymbolTag): number => a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const defs = [...definitions.values()].map(({ rank: _rank, ...tag }) => tag);
  return { definitions: defs.sort(order), references: references.sort(order) };
}

/** Query kinds that say more than another pattern's kind for the same node, least specific first (-1: the rest). */
const SPECIFIC = ['function', 'method'];

/**
 * A definition's kind in its language's own words, by the grammar's node type (the query's generic kind otherwise):
 * Rust `struct`, `enum`, `trait`, `impl`, `fn`, `method`, `mod`; Go `func`, `method`, `type`; Python `class`, `def`;
 * Ruby `class`, `module`, `def`; C++ `struct`, `class`, `enum`, `typedef`. JavaScript, TypeScript, Java, C# and PHP
 * already say `class`, `interface`, `function`, `method`.
 */
function languageWord(grammar: string, nodeType: string, kind: string): string {
  const words = LANGUAGE_WORDS[grammar];
  const word = words?.[nodeType];
  if (word === undefined) return kind;
  return typeof word === 'string' ? word : word(kind);
}

const methodOr = (other: string) => (kind: string): string => (kind === 'method' ? 'method' : other);

const LANGUAGE_WORDS: Readonly<Record<string, Readonly<Record<string, string | ((kind: string) => string)>>>> = {
  rust: {
    struct_item: 'struct',
    enum_item: 'enum',
    union_item: 'union',
    type_item: 'type',
    trait_item: 'trait',
    impl_item: 'impl',
    function_item: methodOr('fn'),
    function_signature_item: methodOr('fn'),
    mod_item: 'mod',
    macro_definition: 'macro',
  },
  go: { function_declaration: 'func', method_declaration: 'method', type_spec: 'type' },
  python: { class_definition: 'class', function_definition: 'def' },
  ruby: { method: 'def', singleton_method: 'def', class: 'class', singleton_class: 'class', module: 'module' },
  cpp: { struct_specifier: 'struct', class_specifier: 'class', enum_specifier: 'enum', type_definition: 'typedef', declaration: 'union' },
};

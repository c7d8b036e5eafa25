import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { Language, Parser, Query } from 'web-tree-sitter';
import { languageOf, type LanguageSpec } from './languages.js';
import { readSource } from './read.js';

/** Parsing plus querying one file may take this long (ms); past it the file is skipped with a note. */
export const PARSE_TIME_MS = 1_000;
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
  /** No grammar for the file, or it was skipped (huge, minified, binary, outside the root, too slow): the note says which. */
  | { ok: false; note: string };

interface LoadedLanguage {
  language: Language;
  /** Every pattern of the tags queries. */
  query: Query;
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
export type TagMode = 'definitions' | 'all';

type TreeSitter = typeof import('web-tree-sitter');

/**
 * The symbol layer of one run: web-tree-sitter and each grammar are loaded the first time a file needs them (so
 * commands that never ask for symbols pay nothing), files are parsed in-process (no child, nothing from the
 * repository is executed) and their tags cached by (path, SHA-256 of the content). One instance per run, never module state.
 */
export class SymbolIndex {
  readonly #timeMs: number;
  #runtime: Promise<{ ts: TreeSitter; parser: Parser } | null> | null = null;
  readonly #languages = new Map<string, Promise<LoadedLanguage | null>>();
  readonly #cache = new Map<string, FileSymbols>();
  readonly #disk: SymbolStore | null;

  /** `disk`: the cache across runs (src/symbols/disk-cache.ts); without it symbols are cached in memory only. */
  constructor(opts: { parseTimeMs?: number; disk?: SymbolStore | null } = {}) {
    this.#timeMs = opts.parseTimeMs ?? PARSE_TIME_MS;
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
    // Only parses are stored: a skip (too slow under load) may not be a skip next time.
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
    const deadline = performance.now() + this.#timeMs;
    const late = (): boolean => performance.now() > deadline;
    runtime.parser.setLanguage(loaded.language);
    // A progress callback returning true cancels: a pathological file costs at most the time limit.
    const tree = runtime.parser.parse(text, null, { progressCallback: late });
    if (!tree) return { ok: false, note: `${rel}: parsing took longer than ${this.#timeMs} ms, skipped` };
    try {
      const query = mode === 'all' ? loaded.query : loaded.definitionsOnly;
      const matches = query.matches(tree.rootNode, { progressCallback: late });
      if (late()) return { ok: false, note: `${rel}: querying took longer than ${this.#timeMs} ms, skipped` };
      return { ok: true, ...collect(matches) };
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
  return { language, query: new ts.Query(language, text), definitionsOnly };
}

/** Turns query matches into tags: the @name capture's text, the kind from its @definition.X / @reference.X capture. */
function collect(matches: ReturnType<Query['matches']>): { definitions: SymbolTag[]; references: SymbolTag[] } {
  const definitions: SymbolTag[] = [];
  const references: SymbolTag[] = [];
  const seen = new Set<string>();
  for (const match of matches) {
    const name = match.captures.find((c) => c.name === 'name');
    const role = match.captures.find((c) => c.name.startsWith('definition.') || c.name.startsWith('reference.'));
    if (!name || !role) continue;
    const [which, kind = ''] = role.name.split('.');
    const tag: SymbolTag = { name: name.node.text, kind, line: name.node.startPosition.row + 1 };
    // The same name at the same place can match two patterns (JavaScript's and TypeScript's queries overlap).
    const id = `${which}\0${tag.name}\0${tag.line}\0${tag.kind}`;
    if (seen.has(id) || tag.name.length > 200) continue;
    seen.add(id);
    const list = which === 'definition' ? definitions : references;
    if (list.length < MAX_TAGS_PER_FILE) list.push(tag);
  }
  const order = (a: SymbolTag, b: SymbolTag): number => a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return { definitions: definitions.sort(order), references: references.sort(order) };
}

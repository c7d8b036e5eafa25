/**
 * Which grammar parses a file, and which vendored tags queries (src/symbols/tags/, from the official grammar packages)
 * find its definitions and references. TypeScript's own tags.scm covers only what JavaScript lacks (signatures,
 * interfaces, modules), so its files run JavaScript's queries too, as the grammar's tree-sitter.json says.
 */
export interface LanguageSpec {
  /** The wasm file of @vscode/tree-sitter-wasm: `tree-sitter-<grammar>.wasm`. */
  grammar: string;
  /** Files under tags/, concatenated in this order. */
  queries: readonly string[];
}

const JS: LanguageSpec = { grammar: 'javascript', queries: ['javascript'] };
const TS: LanguageSpec = { grammar: 'typescript', queries: ['javascript', 'typescript'] };
const TSX: LanguageSpec = { grammar: 'tsx', queries: ['javascript', 'typescript'] };

/** Lower-cased extension (with the dot) → language. Files of any other extension have no symbols. */
const BY_EXTENSION: Readonly<Record<string, LanguageSpec>> = {
  '.js': JS,
  '.mjs': JS,
  '.cjs': JS,
  '.jsx': JS,
  '.ts': TS,
  '.mts': TS,
  '.cts': TS,
  '.tsx': TSX,
  '.py': { grammar: 'python', queries: ['python'] },
  '.pyi': { grammar: 'python', queries: ['python'] },
  '.go': { grammar: 'go', queries: ['go'] },
  // rust-spelunk.scm is spelunk's own (impl blocks as definitions); the rest are vendored unchanged.
  '.rs': { grammar: 'rust', queries: ['rust', 'rust-spelunk'] },
  '.java': { grammar: 'java', queries: ['java'] },
  '.rb': { grammar: 'ruby', queries: ['ruby'] },
  '.cs': { grammar: 'c-sharp', queries: ['c-sharp'] },
  '.php': { grammar: 'php', queries: ['php'] },
  '.cc': { grammar: 'cpp', queries: ['cpp'] },
  '.cpp': { grammar: 'cpp', queries: ['cpp'] },
  '.cxx': { grammar: 'cpp', queries: ['cpp'] },
  '.hpp': { grammar: 'cpp', queries: ['cpp'] },
  '.hh': { grammar: 'cpp', queries: ['cpp'] },
};

/** The language of a path by its extension, or null when spelunk has no grammar for it. */
export function languageOf(rel: string): LanguageSpec | null {
  const dot = rel.lastIndexOf('.');
  if (dot < 0 || dot < rel.lastIndexOf('/')) return null;
  return BY_EXTENSION[rel.slice(dot).toLowerCase()] ?? null;
}

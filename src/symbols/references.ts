import { execCapped } from '../sandbox/exec.js';
import { SymbolIndex } from './index.js';

/** Files whose references are parsed per call; rg lists candidates, the parser confirms them. */
const MAX_REFERENCE_FILES = 200;
/** References returned per call. */
const MAX_REFERENCES = 1_000;

/** One place a name is used: syntactic (a call, `new` or type site), not resolved to a declaration. */
interface Reference {
  path: string;
  line: number;
  kind: string;
}

interface References {
  references: Reference[];
  /** Always said: these are syntactic references, and why the list may be partial. */
  notes: string[];
}

/**
 * Where `name` is used: `rg -w -F` lists the files and lines that contain it as a word (ignore-aware, symlinks never
 * followed), and the tags queries keep the lines where it stands at a reference site (not in a comment, string or
 * its own definition). Both must agree. Never throws.
 */
export async function findReferences(
  rg: string,
  root: string,
  name: string,
  opts: { timeoutMs: number; symbols?: SymbolIndex },
): Promise<References> {
  const notes = ['references are syntactic: a name at a call, new or type site, not resolved to its declaration'];
  if (!/^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(name)) {
    return { references: [], notes: [...notes, `"${name.slice(0, 80)}" is not an identifier`] };
  }
  const run = await execCapped(
    rg,
    [
      '--no-config',
      '--no-require-git',
      '--no-ignore-global',
      '--hidden',
      '-g',
      '!.git',
      '--null',
      '--no-messages',
      '-n',
      '-w',
      '-F',
      '--max-filesize',
      '1M',
      '-e',
      name,
      '--',
      '.',
    ],
    { cwd: root, timeoutMs: opts.timeoutMs, maxBytes: 16 * 1024 * 1024 },
  );
  if (run.timedOut || run.capped) notes.push('the search was cut short; the list is partial');
  const lines = new Map<string, Set<number>>();
  for (const record of run.stdout.split('\n')) {
    const nul = record.indexOf('\0');
    if (nul < 0) continue;
    const rel = record.slice(0, nul).replace(/^\.\//, '');
    const line = Number(record.slice(nul + 1, record.indexOf(':', nul)));
    if (!lines.has(rel)) lines.set(rel, new Set());
    lines.get(rel)!.add(line);
  }
  const files = [...lines.keys()].filter((rel) => SymbolIndex.supports(rel)).sort();
  if (files.length > MAX_REFERENCE_FILES) {
    notes.push(`${files.length} files contain the word; the first ${MAX_REFERENCE_FILES} by path were parsed`);
  }
  const symbols = opts.symbols ?? new SymbolIndex();
  const references: Reference[] = [];
  for (const rel of files.slice(0, MAX_REFERENCE_FILES)) {
    const parsed = await symbols.symbolsOf(root, rel, 'all');
    if (!parsed.ok) continue;
    const seen = lines.get(rel)!;
    for (const tag of parsed.references) {
      if (tag.name === name && seen.has(tag.line) && references.length < MAX_REFERENCES) {
        references.push({ path: rel, line: tag.line, kind: tag.kind });
      }
    }
  }
  return { references, notes };
}

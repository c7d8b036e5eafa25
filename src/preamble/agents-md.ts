import path from 'node:path';
import { findWorkTree } from '../sandbox/git.js';
import { readContained } from './read-contained.js';
import { compareUtf8 } from './tree.js';
import { walkFiles, type WalkResult } from './rg-walk.js';

/** Project instructions beyond this many bytes are cut (on a UTF-8 character boundary) and the cut is announced. */
export const INSTRUCTIONS_MAX_BYTES = 32 * 1024;
/** Nested AGENTS.md paths named in the prompt; the rest are counted. */
export const NESTED_MAX = 50;
/** Default depth of the nested AGENTS.md search: the listing's default, so the listing's walk can serve it. */
export const NESTED_DEFAULT_DEPTH = 3;
/** The nested search is a convenience: past this it is skipped (reported as a warning), never partially used. */
const NESTED_TIMEOUT_MS = 3_000;
/** Root files tried in order: AGENTS.md is the shared convention, CLAUDE.md the fallback. */
const CANDIDATES = ['AGENTS.md', 'CLAUDE.md'] as const;

/** The repository's own instructions for agents, as loaded for the system prompt. */
export interface ProjectInstructions {
  file: 'AGENTS.md' | 'CLAUDE.md' | null;
  /** The (possibly cut) text, decoded as UTF-8 with replacement characters; null when no file was loaded. */
  text: string | null;
  /** Size of the whole file in bytes. */
  bytes: number;
  /** Bytes left out past INSTRUCTIONS_MAX_BYTES (0 when complete). */
  truncatedBytes: number;
  /** Other AGENTS.md files, relative to the root, sorted bytewise, at most NESTED_MAX. */
  nested: string[];
  /** Nested AGENTS.md files found beyond NESTED_MAX. */
  nestedOmitted?: number;
  /** One-line notes for stderr, e.g. a refused symlink or a skipped search. */
  warnings?: string[];
  /**
   * Instructions files of the directories from the git root down to the root's parent, outermost first (present only
   * when there are some). They share INSTRUCTIONS_MAX_BYTES with the root's own file, which is read first.
   */
  ancestors?: LoadedInstructions[];
}

type Candidate = (typeof CANDIDATES)[number];

/** An instructions file from a directory above the root, inside the same git work tree. */
interface LoadedInstructions {
  /** Relative to the root, e.g. `../../CLAUDE.md` (outside the root: read_file cannot open it). */
  path: string;
  file: Candidate;
  text: string;
  bytes: number;
  truncatedBytes: number;
}

/**
 * Loads the root AGENTS.md (or CLAUDE.md when AGENTS.md is missing or unusable) and lists nested AGENTS.md files.
 * `root` must be the realpath'd repository root. Only regular files inside the root are read: a symlink out of the
 * root, a FIFO or a directory is refused with a warning. Never throws.
 */
export async function loadProjectInstructions(
  root: string,
  rgPath?: string,
  opts: { maxDepth?: number; signal?: AbortSignal; nested?: Promise<Nested> } = {},
): Promise<ProjectInstructions> {
  const nestedPromise = opts.nested ?? (rgPath ? findNested(root, rgPath, walkDepth(opts.maxDepth), opts.signal) : null);
  const warnings: string[] = [];
  let found: { file: Candidate; text: string; bytes: number; truncatedBytes: number } | null = null;
  for (const file of CANDIDATES) {
    const loaded = await readContained(root, file, INSTRUCTIONS_MAX_BYTES);
    if (loaded.kind === 'missing') continue;
    if (loaded.kind === 'refused') {
      warnings.push(`${file} not loaded: ${loaded.reason}`);
      continue;
    }
    found = { file, text: loaded.text, bytes: loaded.bytes, truncatedBytes: loaded.truncatedBytes };
    break;
  }
  const nested = nestedPromise ? await nestedPromise : { paths: [], omitted: 0 };
  if ('warning' in nested) warnings.push(nested.warning);
  if (found?.truncatedBytes) {
    warnings.push(`${found.file} is ${found.bytes} bytes; only the first ${found.bytes - found.truncatedBytes} are in the prompt`);
  }
  const ancestors = await loadAncestors(root, INSTRUCTIONS_MAX_BYTES - (found ? found.bytes - found.truncatedBytes : 0), warnings);
  return {
    file: found?.file ?? null,
    text: found?.text ?? null,
    bytes: found?.bytes ?? 0,
    truncatedBytes: found?.truncatedBytes ?? 0,
    nested: nested.paths,
    ...(nested.omitted > 0 ? { nestedOmitted: nested.omitted } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(ancestors.length > 0 ? { ancestors } : {}),
  };
}

/**
 * AGENTS.md (else CLAUDE.md) of each directory from the git root down to the root's parent, innermost first in the
 * reading (the nearest file is the most specific, so it gets the budget first) and outermost first in the result.
 * Read with containment in the git root: an ancestor's file that is a symlink out of the work tree is refused.
 */
async function loadAncestors(root: string, budget: number, warnings: string[]): Promise<LoadedInstructions[]> {
  const top = findWorkTree(root);
  if (top === null || top === root) return [];
  const steps = path.relative(top, root).split(path.sep);
  const found: LoadedInstructions[] = [];
  let left = budget;
  for (let up = 1; up <= steps.length; up++) {
    const relDir = steps.slice(0, steps.length - up).join('/');
    for (const file of CANDIDATES) {
      const display = `${'../'.repeat(up)}${file}`;
      const loaded = await readContained(top, relDir === '' ? file : `${relDir}/${file}`, Math.max(0, left));
      if (loaded.kind === 'missing') continue;
      if (loaded.kind === 'refused') {
        warnings.push(`${display} not loaded: ${loaded.reason}`);
        continue;
      }
      if (left <= 0) {
        warnings.push(`${display} not loaded: the ${INSTRUCTIONS_MAX_BYTES / 1024} KiB instructions cap is used up by the files nearer the root`);
        break;
      }
      left -= loaded.bytes - loaded.truncatedBytes;
      if (loaded.truncatedBytes > 0) warnings.push(`${display} is ${loaded.bytes} bytes; only the first ${loaded.bytes - loaded.truncatedBytes} are in the prompt`);
      found.push({ path: display, file, text: loaded.text, bytes: loaded.bytes, truncatedBytes: loaded.truncatedBytes });
      break;
    }
  }
  return found.reverse();
}

/** Every instructions file in the prompt, outermost first, as paths relative to the root (`../../CLAUDE.md`). */
export function loadedFiles(instructions: ProjectInstructions): string[] {
  return [...(instructions.ancestors ?? []).map((a) => a.path), ...(instructions.file ? [instructions.file] : [])];
}

/** The nested AGENTS.md files found (NESTED_MAX at most) and how many more, or why the search was skipped. */
type Nested = { paths: string[]; omitted: number } | { paths: string[]; omitted: number; warning: string };

function walkDepth(maxDepth: number | undefined): number {
  return Math.max(1, Math.floor(maxDepth ?? NESTED_DEFAULT_DEPTH) || 1);
}

/** Other AGENTS.md files, ignore rules honoured, to `maxDepth`; the NESTED_MAX smallest paths kept, sorted. */
async function findNested(root: string, rgPath: string, maxDepth: number, signal?: AbortSignal): Promise<Nested> {
  const found = nestedCollector();
  const walk = await walkFiles({
    rgPath,
    cwd: root,
    args: ['--max-depth', String(maxDepth), '-g', 'AGENTS.md'],
    signal,
    timeoutMs: NESTED_TIMEOUT_MS,
    onPath: found.add,
  });
  return walk.ok ? found.result() : skipped(walk.reason);
}

/**
 * The nested search fed by another walk with the same ripgrep rules to at least `maxDepth` (the listing's first walk),
 * so the tree is walked once: `add` sees each of its files, `done` its outcome, and `found` settles on the files named
 * AGENTS.md within `maxDepth` levels, as `rg -g AGENTS.md --max-depth N` would have printed them.
 */
export function nestedSearch(maxDepth?: number): { add(rel: string): void; done(walk: WalkResult): void; found: Promise<Nested> } {
  const depth = walkDepth(maxDepth);
  const collector = nestedCollector();
  let settle!: (nested: Nested) => void;
  const found = new Promise<Nested>((resolve) => (settle = resolve));
  return {
    add(rel: string): void {
      if (rel.endsWith('AGENTS.md') && rel.split('/').length <= depth) collector.add(rel);
    },
    done(walk: WalkResult): void {
      settle(walk.ok ? collector.result() : skipped(walk.reason));
    },
    found,
  };
}

function nestedCollector(): { add(rel: string): void; result(): Nested } {
  const paths: string[] = [];
  let total = 0;
  return {
    add(rel: string): void {
      if (rel === 'AGENTS.md' || path.posix.basename(rel) !== 'AGENTS.md') return;
      total++;
      paths.push(rel);
      // Keep memory bounded on a pathological repository: sort and trim whenever the list doubles.
      if (paths.length >= NESTED_MAX * 2) trim(paths);
    },
    result(): Nested {
      trim(paths);
      return { paths, omitted: total - paths.length };
    },
  };
}

function skipped(reason: string): Nested {
  return { paths: [], omitted: 0, warning: `nested AGENTS.md search skipped: ${reason}` };
}

function trim(paths: string[]): void {
  paths.sort(compareUtf8);
  paths.length = Math.min(paths.length, NESTED_MAX);
}

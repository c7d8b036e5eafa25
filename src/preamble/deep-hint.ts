import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isInside, realPrefix } from '../sandbox/paths.js';

/** A hint file is a few paths; anything longer is not one. */
const HINT_MAX_BYTES = 16 * 1024;
/** At most as many directories as the map opens below the depth limit (map.ts DEEP_DIRS_MAX). */
const HINT_MAX_DIRS = 8;
const VERSION = 1;

/**
 * Which directories the map opened below the depth limit the last time it was built for this root (ListingOptions.deep):
 * a guess only. The listing walks them while its first walk runs, and uses that walk only when the plan chooses exactly
 * the same directories; otherwise it walks the chosen ones as it always did, so the map never depends on the hint.
 */
export interface DeepHint {
  guess: readonly string[] | null;
  chosen(rels: readonly string[]): void;
}

/**
 * The hint for `root` (realpath'd) from `$XDG_CACHE_HOME/spelunk/map-deep/` (else `~/.cache/…`), the user's own; no
 * hint (and nothing written) without a cache directory or when that directory is inside the repository. A stored
 * file is untrusted input: each directory must be a plain relative path whose real path is itself, inside the root
 * (no symlink anywhere along it), or the whole guess is dropped. Never throws.
 */
export function deepHint(root: string, env: Readonly<Record<string, string | undefined>>): DeepHint {
  const file = hintFile(root, env);
  const guess = file === null ? null : readGuess(file, root);
  return {
    guess,
    chosen(rels: readonly string[]): void {
      if (file === null || sameDirs(rels, guess ?? [])) return;
      writeHint(file, root, rels);
    },
  };
}

/** The same directories in the same order (the plan's order is deterministic, so a reordering is a change). */
export function sameDirs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((rel, i) => rel === b[i]);
}

function hintFile(root: string, env: Readonly<Record<string, string | undefined>>): string | null {
  const base = env['XDG_CACHE_HOME'] || (env['HOME'] ? path.join(env['HOME'], '.cache') : null);
  if (!base || !path.isAbsolute(base)) return null;
  const dir = path.join(base, 'spelunk', 'map-deep');
  if (isInside(root, realPrefix(dir))) return null;
  return path.join(dir, `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.json`);
}

function readGuess(file: string, root: string): string[] | null {
  try {
    const data = readFileSync(file);
    if (data.length > HINT_MAX_BYTES) return null;
    const parsed = JSON.parse(data.toString('utf8')) as { v?: unknown; root?: unknown; deep?: unknown };
    if (parsed.v !== VERSION || parsed.root !== root || !Array.isArray(parsed.deep) || parsed.deep.length > HINT_MAX_DIRS) return null;
    const deep = parsed.deep.filter((rel): rel is string => typeof rel === 'string' && plainDirInside(root, rel));
    return deep.length === parsed.deep.length ? deep : null;
  } catch {
    return null;
  }
}

/** `rel` names a directory inside `root` through real directories only: ripgrep follows a path it is given. */
function plainDirInside(root: string, rel: string): boolean {
  const parts = rel.split('/');
  if (rel.includes('\0') || parts.some((part) => part === '' || part === '.' || part === '..')) return false;
  const abs = path.join(root, ...parts);
  try {
    return realpathSync.native(abs) === abs && statSync(abs).isDirectory();
  } catch {
    return false;
  }
}

/** Best effort: written to a temporary name and renamed, private to the user. */
function writeHint(file: string, root: string, rels: readonly string[]): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ v: VERSION, root, deep: rels }), { mode: 0o600 });
    renameSync(temporary, file);
  } catch {
    // A read-only or full cache directory only costs the next start the overlap.
  }
}

import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';
import { isInside } from '../../sandbox/paths.js';
import { FileState, type FileRow } from './segment.js';
import { isBinary, MAX_FILE_BYTES, tokenize, type Occurrences } from './tokens.js';

const NO_HASH = new Uint8Array(20);
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** One file as the index holds it: its row, and its runs when it was read. */
export interface ReadFile {
  row: FileRow;
  runs: Map<string, Occurrences> | null;
}

/**
 * Reads one listed file with read_file's confinement: its directory's realpath must lie inside the root, it must be a
 * regular file with one link (another link may live outside), and it is opened with O_NOFOLLOW|O_NONBLOCK and checked
 * again by fstat, so a swap to a symlink or FIFO after the lstat is never followed or waited on. Anything else is kept
 * as a Refused row without content. `dirs` memoises the directory check. Never throws.
 */
export function readFile(root: string, rel: string, dirs: Map<string, boolean>): ReadFile {
  const abs = path.join(root, rel);
  const st = lstatOrNull(abs);
  const refused = (s: Stats | null): ReadFile => ({ row: rowOf(rel, s, NO_HASH, FileState.Refused), runs: null });
  if (st === null || !st.isFile() || st.nlink > 1 || !dirInside(root, path.dirname(abs), dirs)) return refused(st);
  if (st.size > MAX_FILE_BYTES) return { row: rowOf(rel, st, NO_HASH, FileState.Large), runs: null };
  let fd: number;
  try {
    fd = openSync(abs, OPEN_FLAGS);
  } catch {
    return refused(st);
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.ino !== st.ino || opened.nlink > 1) return refused(st);
    if (opened.size > MAX_FILE_BYTES) return { row: rowOf(rel, opened, NO_HASH, FileState.Large), runs: null };
    const bytes = Buffer.allocUnsafe(opened.size);
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, got);
      if (n === 0) break;
      got += n;
    }
    const data = bytes.subarray(0, got);
    const hash = createHash('sha1').update(data).digest();
    if (isBinary(data)) return { row: rowOf(rel, opened, hash, FileState.Binary), runs: null };
    return { row: rowOf(rel, opened, hash, FileState.Indexed), runs: tokenize(data) };
  } catch {
    return refused(st);
  } finally {
    closeSync(fd);
  }
}

/** lstat of a listed file, or null when it is gone. */
export function lstatOrNull(abs: string): Stats | null {
  try {
    return lstatSync(abs, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

function rowOf(rel: string, st: Stats | null, hash: Uint8Array, state: FileState): FileRow {
  return { rel, size: st?.size ?? -1, mtimeMs: st?.mtimeMs ?? -1, ctimeMs: st?.ctimeMs ?? -1, ino: st?.ino ?? -1, hash, state };
}

/**
 * Whether the realpath of `dir` (below the real `root`) lies inside it. A directory that is no link resolves to its
 * parent's realpath and its own name, so it is inside exactly when its parent is: one lstat per directory instead of
 * a realpath, which walks every component again (140 ms of a cold babel question's CPU). A link (or anything else)
 * is resolved by realpath, which also takes a link back into the root from a parent outside it.
 */
function dirInside(root: string, dir: string, dirs: Map<string, boolean>): boolean {
  if (dir === root) return true;
  const known = dirs.get(dir);
  if (known !== undefined) return known;
  const parent = path.dirname(dir);
  const plain = parent !== dir && isInside(root, parent) && lstatOrNull(dir)?.isDirectory() === true;
  const inside = plain ? dirInside(root, parent, dirs) : realInside(root, dir);
  dirs.set(dir, inside);
  return inside;
}

function realInside(root: string, dir: string): boolean {
  try {
    return isInside(root, realpathSync.native(dir));
  } catch {
    return false;
  }
}

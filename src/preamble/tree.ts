/** The part of a name up to and including its first `.`, `-` or `_` (not at the start), or '' without one. */
export function stemOf(name: string): string {
  for (let i = 1; i < name.length; i++) {
    const c = name[i];
    if (c === '.' || c === '-' || c === '_') return name.slice(0, i + 1);
  }
  return '';
}

/** The part of a name from its last `.`, `-` or `_` (not at the start) on, or '' without one: `-module`, `.md`. */
export function tailOf(name: string): string {
  for (let i = name.length - 1; i > 0; i--) {
    const c = name[i];
    if (c === '.' || c === '-' || c === '_') return name.slice(i);
  }
  return '';
}

import { isDemoted, isPushedDown, isSourceFile } from './kinds.js';

/** Code units at or above U+D800, where UTF-16 order and UTF-8 byte order can disagree. */
const HIGH_UNITS = /[\uD800-\uFFFF]/;
/** Ignored paths remembered from ripgrep; beyond this, directories not seen through a file are not shown. */
const IGNORED_PATHS_MAX = 100_000;

/** Bytewise order of the UTF-8 encodings (code point order), computed on UTF-16 without encoding. */
export function compareUtf8(a: string, b: string): number {
  // Fast path: when either string stays below U+D800, UTF-16 order already is code point order.
  if (!HIGH_UNITS.test(a) || !HIGH_UNITS.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

function compareUtf16(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Surrogates (astral code points) sort after U+E000–U+FFFF in UTF-8 but before them in UTF-16: move them up. */
function utf8Rank(unit: number): number {
  if (unit < 0xd800) return unit;
  if (unit >= 0xe000) return unit - 0x800;
  return unit + 0x2000;
}

/**
 * A directory. Only the `keep` bytewise-smallest file names are retained (no directory can ever show more), so a flat
 * directory of 50,000 files costs a counter, not 50,000 strings. Subdirectories are all kept: they are needed to count
 * distinct entries. `totalFiles` (files at any depth the walk reached) is filled in by `summarise`.
 */
export interface DirNode {
  dirs: Map<string, DirNode>;
  files: string[];
  fileCount: number;
  totalFiles: number;
  /** Source files directly inside (see kinds.ts), and source files below it outside demoted and pushed-down trees. */
  sourceCount: number;
  coreFiles: number;
  /**
   * The stem and the tail every file directly inside shares, or '' (see stemOf, tailOf), and the shortest file name's
   * length: what the files not kept have in common. Whatever order the files arrive in, the result is the same.
   */
  stem: string;
  tail: string;
  shortest: number;
}

export function newDir(): DirNode {
  return { dirs: new Map(), files: [], fileCount: 0, totalFiles: 0, sourceCount: 0, coreFiles: 0, stem: '', tail: '', shortest: 0 };
}

/**
 * Builds the tree from ripgrep's stream. Directories are indexed by their whole relative path, so a file costs one
 * hash lookup rather than one per segment (ripgrep's threads interleave directories, so caching the previous one
 * would rarely help). Root files are all kept by name when `isKeyFile` says so, whatever their rank in the order.
 */
export class TreeCollector {
  readonly tree: DirNode = newDir();
  readonly ignored = new Set<string>();
  readonly rootKeyFiles: string[] = [];
  ignoredOverflow = false;
  private readonly byPath = new Map<string, DirNode>([['', this.tree]]);

  constructor(
    private readonly keep: number,
    private readonly isKeyFile: (name: string) => boolean,
  ) {}

  add(rel: string): void {
    const slash = rel.lastIndexOf('/');
    const dirPart = slash === -1 ? '' : rel.slice(0, slash);
    const dir = this.byPath.get(dirPart) ?? this.create(dirPart);
    const name = rel.slice(slash + 1);
    dir.fileCount++;
    if (isSourceFile(name)) dir.sourceCount++;
    // Two comparisons per file: whether a large directory's files, most of them not kept, follow one pattern.
    if (dir.fileCount === 1) {
      dir.stem = stemOf(name);
      dir.tail = tailOf(name);
      dir.shortest = name.length;
    } else {
      if (dir.stem !== '' && !name.startsWith(dir.stem)) dir.stem = '';
      if (dir.tail !== '' && !(name.length > dir.tail.length && name.endsWith(dir.tail))) dir.tail = '';
      if (name.length < dir.shortest) dir.shortest = name.length;
    }
    if (slash === -1 && this.isKeyFile(name)) this.rootKeyFiles.push(name);
    insertSmallest(dir.files, name, this.keep);
  }

  ignore(rel: string): void {
    if (this.ignored.size < IGNORED_PATHS_MAX) this.ignored.add(rel);
    else this.ignoredOverflow = true;
  }

  private create(dirPart: string): DirNode {
    let dir = this.tree;
    for (const name of dirPart.split('/')) {
      let next = dir.dirs.get(name);
      if (!next) {
        next = newDir();
        dir.dirs.set(name, next);
      }
      dir = next;
    }
    this.byPath.set(dirPart, dir);
    return dir;
  }
}

/** Keeps `list` as the `keep` smallest names seen, sorted: the result does not depend on ripgrep's arrival order. */
function insertSmallest(list: string[], name: string, keep: number): void {
  if (keep === 0) return;
  // compareUtf8's fast path, decided once per name rather than twice per comparison: a name below U+D800 compares in
  // UTF-16 order with any other (on 100k-file repositories the regular expression tests were most of this function).
  const compare = HIGH_UNITS.test(name) ? compareUtf8 : compareUtf16;
  if (list.length === keep && compare(name, list[keep - 1]!) >= 0) return;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(list[mid]!, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, name);
  if (list.length > keep) list.pop();
}

/** Fills `totalFiles` and `coreFiles` bottom-up and returns the number of entries (files and directories) in the tree. */
export function summarise(node: DirNode): number {
  let entries = node.dirs.size + node.fileCount;
  node.totalFiles = node.fileCount;
  node.coreFiles = node.sourceCount;
  for (const [name, child] of node.dirs) {
    entries += summarise(child);
    node.totalFiles += child.totalFiles;
    if (!isDemoted(name) && !isPushedDown(name)) node.coreFiles += child.coreFiles;
  }
  return entries;
}

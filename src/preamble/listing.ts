import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errorCode, walkFiles } from './rg-walk.js';
import { escapeControls } from '../escape.js';

/** Hard cap on the listing text: 2,000 tokens at the ~4 characters per token the preamble estimates with. */
export const MAX_LISTING_CHARS = 8_000;
/** Entries every directory may show in the first pass, before any directory gets more (doubles each pass). */
const FIRST_PASS_QUOTA = 5;
/** A listing that takes longer than this is reported as unavailable rather than cut at a random point. */
const LISTING_TIMEOUT_MS = 15_000;
/** Ignored paths remembered from ripgrep; beyond this, directories not seen through a file are not shown. */
const IGNORED_PATHS_MAX = 100_000;
/**
 * A shown directory below the top level with more files than this is not read for file-less subdirectories: reading
 * a directory costs ~2 µs per entry in Node, and one that large rarely hides a subdirectory without files.
 */
const DISCOVER_MAX_FILES = 256;
/** Characters a "… (N more)" line can take beyond its indent (ten digits, the text and a newline). */
const MARKER_CHARS = 20;

/** The depth-limited, fairly budgeted tree of the repository that goes into the system prompt. */
export interface Listing {
  text: string;
  /** Entries (files and directories) printed. */
  shown: number;
  /** Entries found within the depth limit but left out. */
  omitted: number;
  /** Directories (the root included) that end with a "… (N more)" line. */
  truncatedDirs: number;
}

/**
 * Lists the repository to `depth` levels with ripgrep (ignore files honoured, `.git` skipped, symlinks not followed)
 * and renders a tree of at most `maxEntries` entries and MAX_LISTING_CHARS characters, shared fairly: the whole top
 * level first, then breadth-first with every directory showing its first entries before any shows more. Sorted
 * bytewise on UTF-8, directories first. Never throws: failures become a "(listing unavailable: …)" text.
 */
export async function buildListing(
  root: string,
  opts: { depth: number; maxEntries: number; rgPath: string; signal?: AbortSignal },
): Promise<Listing> {
  const depth = Math.max(1, Math.floor(opts.depth) || 1);
  const maxEntries = Math.max(0, Math.floor(opts.maxEntries) || 0);
  const problem = await unreadableDir(root);
  if (problem) return unavailable(problem);
  // No directory can show more names than fit in the character budget (two characters per line at least).
  const collector = new TreeCollector(Math.min(maxEntries, MAX_LISTING_CHARS / 2));
  const walk = await walkFiles({
    rgPath: opts.rgPath,
    cwd: root,
    args: ['--max-depth', String(depth)],
    signal: opts.signal,
    timeoutMs: LISTING_TIMEOUT_MS,
    onPath: (rel) => collector.add(rel),
    onIgnored: (rel) => collector.ignore(rel),
  });
  if (!walk.ok) return unavailable(walk.reason);
  return renderTree(root, collector, depth, maxEntries);
}

/** Code units at or above U+D800, where UTF-16 order and UTF-8 byte order can disagree. */
const HIGH_UNITS = /[\uD800-\uFFFF]/;

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

/** Surrogates (astral code points) sort after U+E000–U+FFFF in UTF-8 but before them in UTF-16: move them up. */
function utf8Rank(unit: number): number {
  if (unit < 0xd800) return unit;
  if (unit >= 0xe000) return unit - 0x800;
  return unit + 0x2000;
}

async function unreadableDir(root: string): Promise<string | null> {
  try {
    const stat = await fs.stat(root);
    return stat.isDirectory() ? null : 'the root is not a directory';
  } catch (error) {
    return `the root cannot be read (${errorCode(error)})`;
  }
}

function unavailable(reason: string): Listing {
  return { text: `(listing unavailable: ${reason})`, shown: 0, omitted: 0, truncatedDirs: 0 };
}

/**
 * A directory. Only the `keep` bytewise-smallest file names are retained (no directory can ever show more than
 * maxEntries), so a flat directory of 50,000 files costs a counter, not 50,000 strings. Subdirectories are all kept:
 * they are needed to count distinct entries.
 */
interface DirNode {
  dirs: Map<string, DirNode>;
  files: string[];
  fileCount: number;
}

function newDir(): DirNode {
  return { dirs: new Map(), files: [], fileCount: 0 };
}

/**
 * Builds the tree from ripgrep's stream. Directories are indexed by their whole relative path, so a file costs one
 * hash lookup rather than one per segment (ripgrep's threads interleave directories, so caching the previous one
 * would rarely help).
 */
class TreeCollector {
  readonly tree: DirNode = newDir();
  readonly ignored = new Set<string>();
  ignoredOverflow = false;
  private readonly byPath = new Map<string, DirNode>([['', this.tree]]);

  constructor(private readonly keep: number) {}

  add(rel: string): void {
    const slash = rel.lastIndexOf('/');
    const dirPart = slash === -1 ? '' : rel.slice(0, slash);
    const dir = this.byPath.get(dirPart) ?? this.create(dirPart);
    dir.fileCount++;
    insertSmallest(dir.files, rel.slice(slash + 1), this.keep);
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
  if (list.length === keep && compareUtf8(name, list[keep - 1]!) >= 0) return;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareUtf8(list[mid]!, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, name);
  if (list.length > keep) list.pop();
}

/** A directory being rendered: its children in display order (subdirectories first) and how many are shown. */
interface View {
  node: DirNode;
  rel: string;
  /** Depth of its children: 0 for the root's entries; each level indents two spaces. */
  depth: number;
  dirNames: string[];
  total: number;
  shown: number;
  /** Set when the next entry did not fit the character budget: entries shown stay a prefix of the sorted order. */
  full: boolean;
  children: View[];
  discovered: boolean;
}

interface Budget {
  entries: number;
  chars: number;
}

async function renderTree(root: string, collector: TreeCollector, depth: number, maxEntries: number): Promise<Listing> {
  const discover = (view: View) => discoverDirs(root, view, depth, collector);
  const top = newView(collector.tree, '', 0);
  await discover(top);
  if (top.total === 0) {
    return { text: '(no files: the repository is empty or everything in it is ignored)', shown: 0, omitted: 0, truncatedDirs: 0 };
  }
  // The header's numbers are not known yet: reserve room for the widest ones.
  const widest = 9_999_999_999;
  const budget: Budget = { entries: maxEntries, chars: MAX_LISTING_CHARS - header(depth, widest, widest).length - 1 - MARKER_CHARS };
  for (let quota = FIRST_PASS_QUOTA; await fillPass(top, quota, budget, discover); quota *= 2) {
    if (budget.entries === 0) break;
  }
  const lines: string[] = [];
  const counts = { shown: 0, truncatedDirs: 0 };
  renderView(top, lines, counts);
  const total = countEntries(collector.tree);
  const text = [header(depth, counts.shown, total), ...lines].join('\n');
  return { text, shown: counts.shown, omitted: total - counts.shown, truncatedDirs: counts.truncatedDirs };
}

function header(depth: number, shown: number, total: number): string {
  return (
    `Files and directories to depth ${depth}: ${shown} of ${total} entries shown. Directories end with "/" and ` +
    `come first; "… (N more)" marks entries left out; directories at depth ${depth} are not expanded. Ignored ` +
    `files, .git and symlinks are not listed.`
  );
}

function newView(node: DirNode, rel: string, depth: number): View {
  return { node, rel, depth, dirNames: [], total: 0, shown: 0, full: false, children: [], discovered: false };
}

/**
 * Completes a directory before it is shown. Directories come from ripgrep's files, but one whose files all lie
 * deeper than `depth` (src/ in src/main/java/…) has none within reach: readdir finds it, and ripgrep's ignored set
 * says whether it is ignored. ripgrep visited every entry of this non-ignored directory (it is within the depth), so
 * an entry missing from that set is not ignored. Only shown directories are read, so this costs a few hundred reads
 * at most.
 */
async function discoverDirs(root: string, view: View, depth: number, collector: TreeCollector): Promise<void> {
  const worthReading = view.rel === '' || view.node.fileCount <= DISCOVER_MAX_FILES;
  if (view.depth < depth && worthReading && !collector.ignoredOverflow) {
    for (const name of await subdirectories(path.join(root, view.rel))) {
      const rel = view.rel === '' ? name : `${view.rel}/${name}`;
      if (name !== '.git' && !view.node.dirs.has(name) && !collector.ignored.has(rel)) view.node.dirs.set(name, newDir());
    }
  }
  view.dirNames = [...view.node.dirs.keys()].sort(compareUtf8);
  view.total = view.dirNames.length + view.node.fileCount;
  view.discovered = true;
}

/** Names of the real subdirectories (never symlinks) of `dir`; an unreadable directory has none. */
async function subdirectories(dir: string): Promise<string[]> {
  try {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return []; // unreadable or vanished since ripgrep walked it: show what ripgrep found
  }
}

/**
 * One breadth-first pass: level by level, the directories visible at that level take entries round-robin, each up to
 * `quota` (the root's top level is never limited). Returns whether anything was added.
 */
async function fillPass(top: View, quota: number, budget: Budget, discover: (view: View) => Promise<void>): Promise<boolean> {
  const limit = (view: View) => (view === top ? Infinity : quota);
  let progress = false;
  let level: View[] = [top];
  while (level.length > 0 && budget.entries > 0) {
    let active = level.filter((view) => canAdd(view, limit(view)));
    while (active.length > 0 && budget.entries > 0) {
      const next: View[] = [];
      for (const view of active) {
        if (budget.entries === 0) break;
        if (!addNext(view, budget)) continue;
        progress = true;
        if (canAdd(view, limit(view))) next.push(view);
      }
      active = next;
    }
    level = level.flatMap((view) => view.children);
    await Promise.all(level.filter((view) => !view.discovered).map(discover));
  }
  return progress;
}

function canAdd(view: View, quota: number): boolean {
  return !view.full && view.shown < quota && view.shown < view.dirNames.length + view.node.files.length;
}

/** Shows the view's next entry if it fits; a shown directory also reserves room for its own "… more" line. */
function addNext(view: View, budget: Budget): boolean {
  const index = view.shown;
  const dirName = view.dirNames[index];
  const name = dirName ?? view.node.files[index - view.dirNames.length]!;
  const indent = 2 * view.depth;
  const line = indent + name.length + (dirName === undefined ? 1 : 2);
  const cost = dirName === undefined ? line : line + indent + 2 + MARKER_CHARS;
  if (cost > budget.chars) {
    view.full = true;
    return false;
  }
  budget.chars -= cost;
  budget.entries--;
  view.shown++;
  if (dirName !== undefined) {
    const rel = view.rel === '' ? dirName : `${view.rel}/${dirName}`;
    view.children.push(newView(view.node.dirs.get(dirName)!, rel, view.depth + 1));
  }
  return true;
}

function renderView(view: View, lines: string[], counts: { shown: number; truncatedDirs: number }): void {
  const indent = '  '.repeat(view.depth);
  for (let i = 0; i < view.shown; i++) {
    const dirName = view.dirNames[i];
    counts.shown++;
    if (dirName === undefined) {
      lines.push(indent + printable(view.node.files[i - view.dirNames.length]!));
      continue;
    }
    lines.push(`${indent}${printable(dirName)}/`);
    renderView(view.children[i]!, lines, counts);
  }
  if (view.shown < view.total) {
    counts.truncatedDirs++;
    lines.push(`${indent}… (${view.total - view.shown} more)`);
  }
}

/** A newline or other control character in a file name must not forge lines in the prompt. */
function printable(name: string): string {
  return escapeControls(name);
}

function countEntries(node: DirNode): number {
  let sum = node.dirs.size + node.fileCount;
  for (const child of node.dirs.values()) sum += countEntries(child);
  return sum;
}

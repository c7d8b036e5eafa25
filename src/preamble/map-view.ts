import { isDemoted, isPushedDown } from './kinds.js';
import { braceList, braceListAffix, quote, sharedPattern } from './names.js';
import { score, type RankHints } from './rank.js';
import { compareUtf8, stemOf, type DirNode } from './tree.js';
import { groupDigits } from '../digits.js';

/** More sibling directories than this are shown as one compact group line instead of one line each. */
export const SIBLINGS_MAX = 40;
/** Siblings sharing a stem (`pages.de`, `pages.fr`, …) are collapsed into one line from this many on. */
const PATTERN_MIN = 10;
/** Sibling shapes are "the same" when, on average, each has at least this share of the group's subdirectories. */
const SHAPE_SIMILARITY = 0.5;
/** A group line may take this share of the budget left when it is written (at least GROUP_MIN_CHARS). */
const GROUP_SHARE = 0.3;
const GROUP_MIN_CHARS = 240;
/** Subdirectory names shown as a group's shared shape. */
const SHAPE_NAMES_MAX = 12;
/** When every member has exactly the same subdirectories, up to this many are all named (within SHAPE_CHARS_MAX). */
const SHAPE_EXACT_MAX = 40;
const SHAPE_CHARS_MAX = 400;

/** How the map used its budget, for `/context` and the bench. */
export interface MapStats {
  tokens: number;
  budgetTokens: number;
  /** Directories named on a line of their own. */
  dirsNamed: number;
  /** Directories named inside a collapsed group line (or the workspace block). */
  dirsCollapsed: number;
  /** Depth-1 and depth-2 directories in the tree, and how many of them the map names (alone or in a group). */
  depth1: { named: number; total: number };
  depth2: { named: number; total: number };
  /** Workspace members the map names (in the member block or the tree). */
  members: { named: number; total: number };
  /** What was left out and why, e.g. "packages/: 12 directory names (budget)". */
  cut: string[];
}

export interface DirView {
  kind: 'dir';
  name: string;
  rel: string;
  /** 1 for the root's entries; each level indents two spaces more. */
  level: number;
  node: DirNode;
  score: number;
  expanded: boolean;
  items: Item[];
  hiddenDirs: number;
  /** Names of the subdirectories left out (for the pattern the "more" line states). */
  hiddenNames: string[];
  /** What the "… (N more)" line adds: `, all *.md` when everything left out follows one pattern. */
  moreHint: string;
  filesShown: number;
  files: string[];
  /** A collapsed group's member shown on its own line too (not counted again). */
  pulled?: boolean;
  /** It or a directory above it holds examples, tests, assets or docs: expanded after the core source (kinds.ts). */
  demoted: boolean;
}

export interface GroupView {
  kind: 'group';
  level: number;
  members: string[];
  shown: string[];
  files: number;
  shape: string;
  /** The members' subdirectories, when the shape names every one of them (they count as named). */
  shapeNames: string[] | null;
  score: number;
  /** Every member is named in the workspace block: the line points there instead of repeating the names. */
  inWorkspaceBlock: boolean;
  /** A crowd of unrelated siblings (not a pattern, not workspace members): its best members may get lines of their own. */
  crowd: boolean;
  /** The characters the member names may take (see GROUP_SHARE). */
  cap: number;
}

export type Item = DirView | GroupView;

export interface MapPlanInput {
  tree: DirNode;
  depth: number;
  maxEntries: number;
  budgetChars: number;
  hints: RankHints;
  /** Root files already shown on the "Key files" line (left out of the root's own file list). */
  keyFiles: ReadonlySet<string>;
  /** Directory paths the workspace block names. */
  workspaceNamed: ReadonlySet<string>;
  /** Every workspace member's path (for the coverage figure). */
  memberPaths: readonly string[];
  /** Completes a directory with subdirectories ripgrep saw no file in (see listing.ts). */
  discover: (rel: string, level: number, node: DirNode) => void;
  /**
   * Walks the given directories (at the depth limit) DEEP_LEVELS further into the tree, so the core source can be
   * opened below the limit; false when it cannot (the map then stays at the limit). Absent: never deeper.
   */
  deepen?: (rels: string[]) => Promise<boolean>;
  /** Characters the map's header grows by when it opens the source below the limit (it says so). */
  deepenChars?: number;
}

export interface Budget {
  chars: number;
  entries: number;
}

export function view(input: MapPlanInput, name: string, rel: string, level: number, node: DirNode): DirView {
  const demoted = rel.split('/').some(isDemoted);
  return {
    kind: 'dir',
    name,
    rel,
    level,
    node,
    score: score(rel, name, node, input.hints),
    expanded: false,
    items: [],
    hiddenDirs: 0,
    hiddenNames: [],
    moreHint: '',
    filesShown: 0,
    files: [],
    demoted,
  };
}

/** The view of `parent`'s subdirectory `name`, one level below it. */
export function childView(input: MapPlanInput, parent: DirView, name: string): DirView {
  return view(input, name, relOf(parent.rel, name), parent.level + 1, parent.node.dirs.get(name)!);
}

/** `name`'s path below the directory at `rel` ('' for the root). */
export function relOf(rel: string, name: string): string {
  return rel === '' ? name : `${rel}/${name}`;
}

export function isDir(item: Item): item is DirView {
  return item.kind === 'dir';
}

export function byRank(a: DirView | GroupView, b: DirView | GroupView): number {
  return b.score - a.score || compareUtf8(firstName(a), firstName(b));
}

export function firstName(item: Item): string {
  return item.kind === 'dir' ? item.name : item.members[0]!;
}

/**
 * The subdirectories of `parent` as lines: siblings sharing a stem and a shape, or exactly the same subdirectories
 * (whatever their names), collapse into one group; beyond SIBLINGS_MAX the rest (except those the instructions
 * mention) become one crowd group naming them compactly. Linear in the siblings and their subdirectories.
 */
export function groupChildren(parent: DirView, input: MapPlanInput, budget: Budget): Item[] {
  const names = [...parent.node.dirs.keys()].sort(compareUtf8);
  const childRel = (name: string) => relOf(parent.rel, name);
  const loose: string[] = [];
  const groups: GroupView[] = [];
  const byStem = new Map<string, string[]>();
  for (const name of names) {
    const stem = stemOf(name);
    if (stem === '' || input.hints.mentioned.has(childRel(name))) continue;
    byStem.set(stem, [...(byStem.get(stem) ?? []), name]);
  }
  const grouped = new Set<string>();
  for (const members of byStem.values()) {
    if (members.length < PATTERN_MIN) continue;
    const shape = shapeOf(members.map((m) => parent.node.dirs.get(m)!));
    if (shape === null) continue;
    groups.push(group(parent, members, shape, input, budget, false));
    for (const m of members) grouped.add(m);
  }
  for (const members of sameShapes(parent, names, grouped, input)) {
    groups.push(group(parent, members, shapeOf(members.map((m) => parent.node.dirs.get(m)!))!, input, budget, false));
    for (const m of members) grouped.add(m);
  }
  for (const name of names) if (!grouped.has(name)) loose.push(name);
  const keepAlone = loose.length > SIBLINGS_MAX ? loose.filter((n) => input.hints.mentioned.has(childRel(n))) : loose;
  if (keepAlone.length < loose.length) {
    const crowd = loose.filter((n) => !keepAlone.includes(n));
    groups.push(group(parent, crowd, shapeOf(crowd.map((m) => parent.node.dirs.get(m)!)) ?? NO_SHAPE, input, budget, true));
  }
  const dirs = keepAlone.map((name) => childView(input, parent, name));
  return [...dirs, ...groups].sort((a, b) => compareUtf8(firstName(a), firstName(b)));
}

/**
 * Siblings not grouped yet with exactly the same subdirectories (at least one), PATTERN_MIN or more of them: 30
 * `*-module/` directories each holding the same 30 children. Workspace members and mentioned directories keep their
 * own lines. The shape key is the sorted names, so the work is linear in the subdirectories (times a log).
 */
function sameShapes(parent: DirView, names: readonly string[], grouped: ReadonlySet<string>, input: MapPlanInput): string[][] {
  const byShape = new Map<string, string[]>();
  for (const name of names) {
    const node = parent.node.dirs.get(name)!;
    const rel = relOf(parent.rel, name);
    if (grouped.has(name) || node.dirs.size === 0 || input.hints.mentioned.has(rel) || input.hints.workspace.has(rel)) continue;
    // `/` cannot occur in a name, so the joined names identify the set.
    const key = [...node.dirs.keys()].sort(compareUtf8).join('/');
    const bucket = byShape.get(key);
    if (bucket) bucket.push(name);
    else byShape.set(key, [name]);
  }
  return [...byShape.values()].filter((members) => members.length >= PATTERN_MIN);
}

/** What a group's members hold: the text of its line and the names it covers (null: not every one of them). */
interface Shape {
  text: string;
  names: string[] | null;
}

const NO_SHAPE: Shape = { text: '', names: null };

/** The subdirectory names members share, in brace form, or null when their shapes differ too much. */
function shapeOf(members: DirNode[]): Shape | null {
  const union = new Map<string, number>();
  let sum = 0;
  for (const node of members) {
    sum += node.dirs.size;
    for (const name of node.dirs.keys()) union.set(name, (union.get(name) ?? 0) + 1);
  }
  if (union.size === 0) return NO_SHAPE;
  if (sum / (members.length * union.size) < SHAPE_SIMILARITY) return null;
  const ranked = [...union.entries()].sort((a, b) => b[1] - a[1] || compareUtf8(a[0], b[0]));
  // Identical shapes are named in full when short enough: they are what every member holds.
  const exact = ranked.every(([, n]) => n === members.length) && union.size <= SHAPE_EXACT_MAX;
  const full = exact ? braceList(ranked.map(([name]) => name)) : '';
  if (exact && full.length <= SHAPE_CHARS_MAX) return { text: `each with ${full}`, names: ranked.map(([name]) => name) };
  const common = ranked.slice(0, SHAPE_NAMES_MAX);
  const all = common.every(([, n]) => n === members.length) && union.size <= SHAPE_NAMES_MAX;
  const text = `${all ? 'each with' : 'each with some of'} ${braceList(common.map(([name]) => name))}${union.size > SHAPE_NAMES_MAX ? ',…' : ''}`;
  return { text, names: union.size <= SHAPE_NAMES_MAX ? common.map(([name]) => name) : null };
}

function group(parent: DirView, members: string[], shape: Shape, input: MapPlanInput, budget: Budget, crowd: boolean): GroupView {
  const rels = members.map((m) => relOf(parent.rel, m));
  const inWorkspaceBlock = rels.every((rel) => input.workspaceNamed.has(rel));
  const nodes = members.map((m) => parent.node.dirs.get(m)!);
  const scores = new Map(members.map((m, i) => [m, score(rels[i]!, m, nodes[i]!, input.hints)]));
  const files = nodes.reduce((sum, node) => sum + node.totalFiles, 0);
  const cap = Math.max(GROUP_MIN_CHARS, Math.floor(budget.chars * GROUP_SHARE));
  const ranked = () => [...members].sort((a, b) => scores.get(b)! - scores.get(a)! || compareUtf8(a, b));
  const shown = inWorkspaceBlock ? members : fitNames(members, ranked, cap);
  const best = Math.max(...scores.values());
  return {
    kind: 'group',
    level: parent.level + 1,
    members,
    shown,
    files,
    shape: shape.text,
    shapeNames: shape.text === '' ? null : shape.names,
    score: best,
    inWorkspaceBlock,
    crowd: crowd && !inWorkspaceBlock,
    cap,
  };
}

/**
 * The member names a group line shows: all when they fit in `cap` characters, else the best-ranked that fit (the rest
 * are counted, their shared pattern stated). Bounded by `cap`, not by the number of members, once ranked.
 */
export function fitNames(members: string[], ranked: () => readonly string[], cap: number): string[] {
  // Each name takes at least two characters (itself and a comma): many more names than that cannot fit.
  if (2 * members.length <= cap && braceListAffix(members).length <= cap) return members;
  let length = 2;
  const shown: string[] = [];
  for (const name of ranked()) {
    length += quote(name).length + 1;
    if (length > cap) break;
    shown.push(name);
  }
  return shown;
}

export function lineOf(item: Item): string {
  if (item.kind === 'dir') return dirLine(item);
  const count = `${item.members.length} dirs${item.files > 0 ? `, ${groupDigits(item.files)} files` : ''}`;
  if (item.inWorkspaceBlock) return `${braceOrStem(item.members)}/ ${count} (workspace members, named above)`;
  const more = item.members.length - item.shown.length;
  const names = more > 0 ? `{${item.shown.length > 0 ? `${braceList(item.shown)},` : ''}…}` : braceListAffix(item.shown);
  const pattern = more > 0 ? ` (${more} more not named${patternHint(item.members)})` : '';
  return `${names}/ ${count}${item.shape ? `, ${item.shape}` : ''}${pattern}`;
}

/** A group named only by its pattern: `babel-*` when the members share a stem, else the first and last names. */
function braceOrStem(members: string[]): string {
  const stem = stemOf(members[0]!);
  if (stem !== '' && members.every((m) => m.startsWith(stem))) return `${quote(stem)}*`;
  return `{${quote(members[0]!)},…,${quote(members.at(-1)!)}}`;
}

/** `, all x-*` (or `*-module`, `x-*.md`) when every name follows one pattern, else ''. */
export function patternHint(names: readonly string[]): string {
  const pattern = sharedPattern(names);
  return pattern === null ? '' : `, all ${pattern}`;
}

export function dirLine(v: DirView): string {
  const files = v.node.totalFiles;
  const what = `${groupDigits(files)} file${files === 1 ? '' : 's'}${isPushedDown(v.name) ? ', collapsed' : ''}`;
  const count = files > 0 && !v.expanded ? ` (${what})` : '';
  return `${quote(v.name)}/${count}`;
}


import {
  childView,
  dirLine,
  firstName,
  fitNames,
  groupChildren,
  isDir,
  byRank,
  lineOf,
  view,
  type Budget,
  type DirView,
  type GroupView,
  type Item,
  type MapPlanInput,
  type MapStats,
} from './map-view.js';
import { quote } from './names.js';
import { isPushedDown } from './kinds.js';
import { score } from './rank.js';
import { compareUtf8 } from './tree.js';
import { coverage, expandedViews, fileTotal, hintMore, MARKER_CHARS, render } from './map-render.js';

export type { MapPlanInput, MapStats } from './map-view.js';

/** Members of one group given lines of their own when budget is left, and the share of the rest they may use. */
const HIGHLIGHT_MAX = 5;
const HIGHLIGHT_SHARE = 0.5;
/**
 * Members of one crowd of unrelated siblings given lines of their own (and opened) at most: each costs a pass over
 * the crowd, so the work stays linear in its size.
 */
const PULL_MAX = 64;
/** Cut reasons kept for `/context`. */
const CUT_NOTES_MAX = 8;
/** Levels the core source is opened below the depth limit, and how many directories at the limit may be. */
export const DEEP_LEVELS = 2;
const DEEP_DIRS_MAX = 8;
/** Of the budget left after the core levels, the share the opening below the limit may use; then the demoted trees'. */
const DEEP_SHARE = 0.6;
const DEMOTED_SHARE = 0.5;

/**
 * Plans and renders the tree part of the map: every depth-1 directory named, then directories expanded level by
 * level in rank order (large, mentioned, workspace and conventional directories first; pushed-down trees never),
 * each expansion naming all its subdirectories (pattern siblings and crowds of more than SIBLINGS_MAX collapsed into
 * one group line), then files, a few per directory per pass. Deterministic: only the tree decides.
 */
export async function planMap(
  input: MapPlanInput,
): Promise<{ lines: string[]; shown: number; truncatedDirs: number; stats: Omit<MapStats, 'tokens' | 'budgetTokens'> }> {
  const budget: Budget = { chars: input.budgetChars, entries: input.maxEntries };
  const cut: string[] = [];
  const root = view(input, '', '', 0, input.tree);
  expand(root, input, budget, cut);
  // The core source first: examples, tests, assets and docs wait in `deferred` until it has been opened.
  const deferred: DirView[] = [];
  await expandLevels(root.items.filter(isDir), input, budget, cut, input.depth, deferred);
  await expandLevels(pullFromCrowds(root, input, budget, cut), input, budget, cut, input.depth, deferred);
  await highlight(root, input, budget, cut);
  await openDeep(root, input, budget, cut);
  await expandDeferred(deferred, input, budget, cut);
  addFiles(root, input, budget);
  // Expansions that named nothing print no "more" line: give back what they reserved and let files use it.
  refundEmpty(root, budget);
  addFiles(root, input, budget);
  hintMore(root, input, budget);
  if (expandedViews(root).some((v) => v.filesShown < fileTotal(v, input))) {
    note(cut, 'files: some directories show only some of their files (token budget or --max-entries)');
  }
  const lines: string[] = [];
  const counts = { shown: 0, truncatedDirs: 0 };
  render(root, lines, counts, input);
  return { lines, ...counts, stats: { ...coverage(root, input), cut } };
}

/**
 * Expands directories level by level, each level in rank order, down to `limit`. With `deferred`, demoted directories
 * (examples, tests, assets, docs) are set aside there instead.
 */
async function expandLevels(
  first: DirView[],
  input: MapPlanInput,
  budget: Budget,
  cut: string[],
  limit: number,
  deferred?: DirView[],
): Promise<void> {
  let level = first;
  while (level.length > 0 && level[0]!.level < limit) {
    const candidates = [...level].sort(byRank);
    const next: DirView[] = [];
    for (const v of candidates) {
      // Out of budget: nothing more can be named, so no directory needs reading.
      if (budget.entries <= 0) {
        note(cut, 'entries: --max-entries reached, no more directories expanded');
        break;
      }
      if (budget.chars <= 0) break;
      if (isPushedDown(v.name)) {
        note(cut, `${v.rel}/: not expanded (vendored, generated, fixture, snapshot or CI-template tree)`);
        continue;
      }
      if (deferred && v.demoted) {
        deferred.push(v);
        continue;
      }
      input.discover(v.rel, v.level, v.node);
      if (v.node.dirs.size === 0 && v.node.fileCount === 0) continue;
      expand(v, input, budget, cut);
      next.push(...v.items.filter(isDir));
    }
    level = next;
  }
}

/**
 * With budget left after every level is named, the best-ranked members of each crowd of unrelated siblings (by rank:
 * files, mentions, conventional names) leave the group for lines of their own and are opened one level, as long as
 * that names something; the rest stay in the group. 45 top-level directories would otherwise hide all of depth 2.
 * Returns the subdirectories they named, for the next levels.
 */
function pullFromCrowds(root: DirView, input: MapPlanInput, budget: Budget, cut: string[]): DirView[] {
  const next: DirView[] = [];
  for (const { parent, group } of groupsOf(root, (g) => g.crowd && g.level < input.depth)) {
    const ranked = group.members
      .map((name) => childView(input, parent, name))
      .filter((v) => !isPushedDown(v.name) && !v.demoted)
      .sort(byRank);
    const indent = 2 * parent.level;
    const gone = new Set<string>();
    for (const v of ranked) {
      if (gone.size === PULL_MAX || budget.chars <= 0 || budget.entries <= 0) break;
      input.discover(v.rel, v.level, v.node);
      // Only a member with subdirectories has names to add; its files alone are not worth a line taken from the group.
      if (v.node.dirs.size === 0) continue;
      const saved = { chars: budget.chars, entries: budget.entries, cut: cut.length, group: { ...group } };
      const before = lineOf(group).length;
      gone.add(v.name);
      group.members = group.members.filter((m) => m !== v.name);
      // The group line counts its members' files: the member's go with it.
      group.files -= v.node.totalFiles;
      group.shown = fitNames(group.members, () => ranked.map((r) => r.name).filter((m) => !gone.has(m)), group.cap);
      // An emptied group loses its whole line.
      const after = group.members.length === 0 ? -(indent + 1) : lineOf(group).length;
      budget.chars -= indent + dirLine(v).length + 1 + after - before;
      budget.entries--;
      if (budget.chars >= 0) expand(v, input, budget, cut);
      if (budget.chars < 0 || v.items.length === 0) {
        // Nothing named below it: the member goes back to the group, and no later one would fare better.
        Object.assign(budget, { chars: saved.chars, entries: saved.entries });
        cut.length = saved.cut;
        Object.assign(group, saved.group);
        gone.delete(v.name);
        break;
      }
      parent.items.push(v);
      next.push(...v.items.filter(isDir));
    }
    if (gone.size === 0) continue;
    parent.items = parent.items.filter((item) => item !== group || group.members.length > 0);
    if (group.members.length === 1) alone(parent, group, input, budget);
    sortItems(parent);
  }
  return next;
}

/** The groups among the expanded directories' items that `keep` accepts, with their parents, best-ranked first. */
function groupsOf(root: DirView, keep: (group: GroupView) => boolean): Array<{ parent: DirView; group: GroupView }> {
  const found: Array<{ parent: DirView; group: GroupView }> = [];
  for (const v of expandedViews(root)) {
    for (const item of v.items) if (item.kind === 'group' && keep(item)) found.push({ parent: v, group: item });
  }
  return found.sort((a, b) => b.group.score - a.group.score || compareUtf8(a.group.members[0]!, b.group.members[0]!));
}

/** Items by name, a group before a directory of the same first name (a pulled member follows its group). */
function sortItems(parent: DirView): void {
  parent.items.sort((a, b) => compareUtf8(firstName(a), firstName(b)) || (a.kind === 'group' ? -1 : 1));
}

/** A group left with one member becomes that member's own line ("x/ (3 files)", not "x/ 1 dirs, 3 files"). */
function alone(parent: DirView, group: GroupView, input: MapPlanInput, budget: Budget): void {
  const name = group.members[0]!;
  const v = childView(input, parent, name);
  const delta = dirLine(v).length - lineOf(group).length;
  if (delta > budget.chars) return;
  budget.chars -= delta;
  parent.items = parent.items.map((item) => (item === group ? v : item));
}

/**
 * With budget left after every level is named, the best-ranked members of each collapsed group of workspace members
 * (largest first) get lines of their own below the group and are expanded like any directory, so a crowd of 148 packages does not
 * hide what the biggest ones hold. They may take half of what is left; files get the rest.
 */
async function highlight(root: DirView, input: MapPlanInput, budget: Budget, cut: string[]): Promise<void> {
  // Only crowds of workspace members: their names are in the member block already, and they hold the code.
  const groups = groupsOf(root, (g) => g.inWorkspaceBlock);
  const share: Budget = { chars: Math.floor(budget.chars * HIGHLIGHT_SHARE), entries: budget.entries };
  const pulled: DirView[] = [];
  for (const { parent, group } of groups) {
    const candidates = group.members
      .map((name) => childView(input, parent, name))
      .filter((v) => !isPushedDown(v.name) && !v.demoted && (v.node.dirs.size > 0 || v.node.fileCount > 0))
      .sort(byRank)
      .slice(0, HIGHLIGHT_MAX);
    for (const v of candidates) {
      const cost = 2 * parent.level + dirLine(v).length + 1;
      if (cost > share.chars || share.entries === 0) break;
      share.chars -= cost;
      share.entries--;
      v.pulled = true;
      parent.items.push(v);
      pulled.push(v);
    }
    sortItems(parent);
  }
  budget.entries = share.entries;
  const spent = Math.floor(budget.chars * HIGHLIGHT_SHARE) - share.chars;
  budget.chars -= spent;
  // Their contents come out of the same half: what is not used goes back to the files.
  const rest = budget.chars - Math.floor(budget.chars * (1 - HIGHLIGHT_SHARE));
  const sub: Budget = { chars: Math.max(0, rest), entries: budget.entries };
  await expandLevels(pulled, input, sub, cut, input.depth, []);
  budget.chars -= Math.max(0, rest) - sub.chars;
  budget.entries = sub.entries;
}

/**
 * Opens the core source below the depth limit: the best-ranked directories named at the limit (not demoted, under
 * expanded core directories: `packages/vite/src/`) are walked DEEP_LEVELS further and expanded like any level, within
 * DEEP_SHARE of the budget's characters left. Only when budget is left; its walk takes from the same entry count as
 * the rest, so under a tight --max-entries (50 on rubocop) it uses entries that the directories set aside and the
 * files (expanded after it) would have had.
 */
async function openDeep(root: DirView, input: MapPlanInput, budget: Budget, cut: string[]): Promise<void> {
  if (!input.deepen || budget.chars <= 0 || budget.entries <= 0) return;
  const candidates: Array<{ v: DirView; key: number }> = [];
  for (const parent of expandedViews(root)) {
    if (parent.demoted) continue;
    for (const item of parent.items) {
      if (isDir(item) && item.level === input.depth && !item.demoted && !isPushedDown(item.name)) {
        candidates.push({ v: item, key: parent.score + item.score });
      }
    }
  }
  const chosen = candidates
    .sort((a, b) => b.key - a.key || compareUtf8(a.v.rel, b.v.rel))
    .slice(0, DEEP_DIRS_MAX)
    .map((c) => c.v);
  const note = input.deepenChars ?? 0;
  if (chosen.length === 0 || note >= budget.chars) return;
  const before = chosen.map((v) => dirLine(v).length);
  if (!(await input.deepen(chosen.map((v) => v.rel)))) return;
  budget.chars -= note;
  // The walk filled in their file counts: a line that stays closed shows its count, so it is paid for now.
  chosen.forEach((v, i) => {
    budget.chars -= dirLine(v).length - before[i]!;
    v.score = score(v.rel, v.name, v.node, input.hints);
  });
  // Only source is opened: a directory of data or documents at the limit stays closed, as --depth asked.
  const source = chosen.filter((v) => v.node.coreFiles > 0);
  await withShare(budget, DEEP_SHARE, (share) => expandLevels(source, input, share, cut, input.depth + DEEP_LEVELS, []));
}

/** The demoted directories set aside, level by level, within DEMOTED_SHARE of the budget left (files get the rest). */
async function expandDeferred(deferred: DirView[], input: MapPlanInput, budget: Budget, cut: string[]): Promise<void> {
  const levels = [...new Set(deferred.map((v) => v.level))].sort((a, b) => a - b);
  await withShare(budget, DEMOTED_SHARE, async (share) => {
    for (const level of levels) await expandLevels(deferred.filter((v) => v.level === level), input, share, cut, input.depth);
  });
}

/** Runs `spend` on `share` of the budget's characters (and all its entries), then charges what it used. */
async function withShare(budget: Budget, share: number, spend: (part: Budget) => Promise<void>): Promise<void> {
  const part: Budget = { chars: Math.floor(Math.max(0, budget.chars) * share), entries: budget.entries };
  const start = part.chars;
  await spend(part);
  budget.chars -= start - part.chars;
  budget.entries = part.entries;
}

function note(cut: string[], text: string): void {
  // Each pass over the levels meets the same limit: one line says it.
  if (cut.length < CUT_NOTES_MAX && !cut.includes(text)) cut.push(text);
}

/** Names the directory's subdirectories: all of them when they fit, else the best-ranked, with a "more" line. */
function expand(parent: DirView, input: MapPlanInput, budget: Budget, cut: string[]): void {
  const items = groupChildren(parent, input, budget);
  const indent = 2 * parent.level;
  const reserve = parent.level === 0 ? 0 : indent + MARKER_CHARS + 1;
  const cost = (item: Item) => lineOf(item).length + indent + 1;
  const total = items.reduce((sum, item) => sum + cost(item), 0);
  if (total + reserve <= budget.chars && items.length <= budget.entries) {
    parent.items = items;
  } else {
    // Not all fit: the best-ranked first, never a pushed-down tree before a real one.
    let room = budget.chars - reserve;
    let entries = budget.entries;
    const kept: Item[] = [];
    for (const item of [...items].sort(byRank)) {
      const c = cost(item);
      if (c > room || entries === 0) continue;
      room -= c;
      entries--;
      kept.push(item);
    }
    parent.items = kept.sort((a, b) => compareUtf8(firstName(a), firstName(b)));
    const left = items.filter((item) => !kept.includes(item));
    parent.hiddenNames = left.flatMap((item) => (item.kind === 'dir' ? [item.name] : item.members));
    parent.hiddenDirs = parent.hiddenNames.length;
    if (parent.hiddenDirs > 0) note(cut, `${parent.rel || '.'}/: ${parent.hiddenDirs} directories not named (token budget)`);
  }
  // An expanded directory's line drops its file count (its content is shown instead).
  const before = dirLine(parent).length;
  parent.expanded = true;
  if (parent.level > 0) budget.chars += before - dirLine(parent).length;
  for (const item of parent.items) {
    budget.chars -= cost(item);
    budget.entries--;
  }
  if (parent.level > 0) budget.chars -= reserve;
}

function refundEmpty(root: DirView, budget: Budget): void {
  for (const v of expandedViews(root)) {
    if (v.level === 0 || v.items.length > 0 || v.filesShown > 0) continue;
    const before = dirLine(v).length;
    v.expanded = false;
    budget.chars += 2 * v.level + MARKER_CHARS + 1 - (dirLine(v).length - before);
  }
}

/**
 * Files last: passes of growing quota over the expanded directories, root first, then by level and rank. After the
 * first pass (a few files each), the core directories' passes all come before the demoted ones' (a source file's
 * name says more than a doc page's).
 */
function addFiles(root: DirView, input: MapPlanInput, budget: Budget): void {
  const views = expandedViews(root);
  for (const v of views) v.files = v.level === 0 ? v.node.files.filter((f) => !input.keyFiles.has(f)) : v.node.files;
  const core = views.filter((v) => !v.demoted);
  const demoted = views.filter((v) => v.demoted);
  const passes: Array<[DirView[], number]> = [[views, 3], [core, 10], [core, 40], [core, Infinity], [demoted, 10], [demoted, 40], [demoted, Infinity]];
  for (const [group, quota] of passes) {
    for (const v of group) {
      while (v.filesShown < Math.min(quota, v.files.length) && budget.entries > 0) {
        const cost = 2 * v.level + quote(v.files[v.filesShown]!).length + 1;
        if (cost > budget.chars) break;
        budget.chars -= cost;
        budget.entries--;
        v.filesShown++;
      }
    }
  }
}

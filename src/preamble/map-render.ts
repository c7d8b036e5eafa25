/** The rendering side of the map: the "… (N more)" lines and their hints, the lines themselves, the coverage figures. */
import { isDir, byRank, lineOf, patternHint, relOf, type Budget, type DirView, type MapPlanInput, type MapStats } from './map-view.js';
import { patternOf, quote } from './names.js';

/** Characters a "… (N more)" line can take beyond its indent. */
export const MARKER_CHARS = 20;

/** Expanded directories, root first, then level by level in rank order; the demoted ones after all the others. */
export function expandedViews(root: DirView): DirView[] {
  const views: DirView[] = [];
  for (let level: DirView[] = [root]; level.length > 0; level = level.flatMap((v) => v.items.filter(isDir)).sort(byRank)) {
    views.push(...level.filter((v) => v.expanded));
  }
  return [...views.filter((v) => !v.demoted), ...views.filter((v) => v.demoted)];
}

/**
 * Where what a "… (N more)" line leaves out follows one pattern, the line says so (`… (37 more, all *.md)`). The
 * hint is paid from the budget left or, failing that, by showing one file fewer when the pattern still holds; else
 * the line stays as it was. In a fixed order, so the bytes depend only on the tree.
 */
export function hintMore(root: DirView, input: MapPlanInput, budget: Budget): void {
  const extra = (v: DirView, hint: string) => Math.max(0, moreLine(v, input, hint).length - MARKER_CHARS);
  for (const v of expandedViews(root)) {
    const hint = hiddenCount(v, input) > 0 ? hintFor(v, input) : '';
    if (hint === '') continue;
    if (extra(v, hint) <= budget.chars) {
      budget.chars -= extra(v, hint);
      v.moreHint = hint;
      continue;
    }
    if (v.filesShown === 0) continue;
    const gain = 2 * v.level + quote(v.files[v.filesShown - 1]!).length + 1;
    v.filesShown--;
    const wider = hintFor(v, input);
    if (wider !== '' && extra(v, wider) <= budget.chars + gain) {
      budget.chars += gain - extra(v, wider);
      budget.entries++;
      v.moreHint = wider;
      continue;
    }
    v.filesShown++;
  }
}

/** The pattern of what `v` leaves out (`, all *.md`), or '' when there is none or it is not known. */
function hintFor(v: DirView, input: MapPlanInput): string {
  const filesHidden = fileTotal(v, input) - v.filesShown;
  // Only the smallest names of a large directory are kept; of the rest, the walk knows only the tail they all share.
  if (filesHidden > 0 && v.node.files.length < v.node.fileCount) {
    const pattern = v.hiddenDirs === 0 ? patternOf(v.node.stem, v.node.tail, v.node.shortest) : null;
    return pattern === null ? '' : `, all ${pattern}`;
  }
  return patternHint([...v.hiddenNames, ...v.files.slice(v.filesShown)]);
}

function hiddenCount(v: DirView, input: MapPlanInput): number {
  return v.expanded ? v.hiddenDirs + fileTotal(v, input) - v.filesShown : 0;
}

/** The "… (N more)" line of `v`, without its indent. */
function moreLine(v: DirView, input: MapPlanInput, hint: string): string {
  return `… (${hiddenCount(v, input)} more${hint})`;
}

export function fileTotal(v: DirView, input: MapPlanInput): number {
  return v.level === 0 ? v.node.fileCount - input.keyFiles.size : v.node.fileCount;
}

export function render(v: DirView, lines: string[], counts: { shown: number; truncatedDirs: number }, input: MapPlanInput): void {
  const indent = '  '.repeat(Math.max(0, v.level));
  for (const item of v.items) {
    counts.shown += item.kind === 'group' ? item.members.length : item.pulled ? 0 : 1;
    lines.push(indent + lineOf(item));
    if (item.kind === 'dir' && item.expanded) render(item, lines, counts, input);
  }
  for (let i = 0; i < v.filesShown; i++) lines.push(indent + quote(v.files[i]!));
  counts.shown += v.filesShown;
  if (hiddenCount(v, input) > 0) {
    counts.truncatedDirs++;
    lines.push(indent + moreLine(v, input, v.moreHint));
  }
}

export function coverage(root: DirView, input: MapPlanInput): Omit<MapStats, 'tokens' | 'budgetTokens' | 'cut'> {
  const named = new Set<string>(input.workspaceNamed);
  let dirsNamed = 0;
  let dirsCollapsed = 0;
  const visit = (v: DirView) => {
    for (const item of v.items) {
      if (item.kind === 'dir') {
        if (!item.pulled) dirsNamed++;
        named.add(item.rel);
        visit(item);
        continue;
      }
      const names = item.inWorkspaceBlock ? item.members : item.shown;
      dirsCollapsed += names.length;
      for (const m of names) {
        const rel = relOf(v.rel, m);
        named.add(rel);
        // A shape that lists every subdirectory of the members names them too (tldr's pages.xx/{android,common,…}).
        if (item.shapeNames && item.shown.length === item.members.length) for (const child of item.shapeNames) named.add(`${rel}/${child}`);
      }
    }
  };
  visit(root);
  const depth1 = [...input.tree.dirs.keys()];
  const depth2 = [...input.tree.dirs.entries()].flatMap(([name, node]) => [...node.dirs.keys()].map((child) => `${name}/${child}`));
  return {
    dirsNamed,
    dirsCollapsed,
    depth1: { named: depth1.filter((rel) => named.has(rel)).length, total: depth1.length },
    depth2: { named: depth2.filter((rel) => named.has(rel)).length, total: depth2.length },
    members: { named: input.memberPaths.filter((rel) => named.has(rel)).length, total: input.memberPaths.length },
  };
}

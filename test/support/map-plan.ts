import { planMap, type MapPlanInput } from '../../src/preamble/map.js';
import { MARKER_CHARS } from '../../src/preamble/map-render.js';
import { isKeyFile } from '../../src/preamble/rank.js';
import { newDir, summarise, TreeCollector, type DirNode } from '../../src/preamble/tree.js';

/** A tree for planMap, as the listing would hand it over (files walked to the depth limit + 1). */
export interface PlanCase {
  files: readonly string[];
  /** Files below the depth limit, added (under the directories asked for) when the planner opens the source deeper. */
  deeper?: readonly string[];
  /** Directories that hold no file (found by readdir, as listing.ts's discover adds them). */
  emptyDirs?: readonly string[];
  depth?: number;
  budgetChars?: number;
  maxEntries?: number;
  mentioned?: readonly string[];
  /** Workspace member paths: named in the member block (workspaceNamed) and ranked as members. */
  members?: readonly string[];
  /** Root files on the "Key files" line. */
  keyFiles?: readonly string[];
  /** deepen's answer: false when the deeper walk failed. */
  deepenWorks?: boolean;
  deepenChars?: number;
  /** Leave deepen out of the input (the map never goes deeper). */
  noDeepen?: boolean;
}

export interface Planned {
  lines: string[];
  text: string;
  shown: number;
  truncatedDirs: number;
  stats: Awaited<ReturnType<typeof planMap>>['stats'];
  /** Directories read for expansion (discover), in order. */
  read: string[];
  /** Each deepen call's directories. */
  deepened: string[][];
}

function at(tree: DirNode, rel: string): DirNode {
  let node = tree;
  for (const part of rel.split('/')) {
    let next = node.dirs.get(part);
    if (!next) {
      next = newDir();
      node.dirs.set(part, next);
    }
    node = next;
  }
  return node;
}

export async function plan(c: PlanCase): Promise<Planned> {
  const collector = new TreeCollector(200, isKeyFile);
  for (const f of c.files) collector.add(f);
  for (const d of c.emptyDirs ?? []) at(collector.tree, d);
  summarise(collector.tree);
  const read: string[] = [];
  const deepened: string[][] = [];
  const members = c.members ?? [];
  const workspace = new Set<string>();
  for (const m of members) m.split('/').forEach((_, i, parts) => workspace.add(parts.slice(0, i + 1).join('/')));
  const input: MapPlanInput = {
    tree: collector.tree,
    depth: c.depth ?? 3,
    maxEntries: c.maxEntries ?? Infinity,
    budgetChars: c.budgetChars ?? 8_000,
    hints: { mentioned: new Set(c.mentioned ?? []), workspace },
    keyFiles: new Set(c.keyFiles ?? []),
    workspaceNamed: new Set(members),
    memberPaths: members,
    discover: (rel) => read.push(rel),
    ...(c.noDeepen
      ? {}
      : {
          deepen: async (rels: string[]) => {
            deepened.push(rels);
            if (c.deepenWorks === false) return false;
            for (const f of c.deeper ?? []) if (rels.some((r) => f.startsWith(`${r}/`))) collector.add(f);
            summarise(collector.tree);
            return true;
          },
          deepenChars: c.deepenChars ?? 0,
        }),
  };
  const result = await planMap(input);
  return { ...result, text: result.lines.join('\n'), read, deepened };
}

/**
 * Characters the lines may take: the budget, plus the root's own "… (N more)" line, which the listing reserves outside
 * the planner (listing.ts), less the header's note when the source was opened deeper.
 */
export function allowance(c: PlanCase, p: Planned): number {
  const deeper = p.deepened.length > 0 && c.deepenWorks !== false ? (c.deepenChars ?? 0) : 0;
  return (c.budgetChars ?? 8_000) + MARKER_CHARS - deeper;
}

/** Directory lines without a file count were expanded: each must be followed by something deeper, never only "more". */
export function emptyExpansions(lines: readonly string[]): string[] {
  const bad: string[] = [];
  lines.forEach((line, i) => {
    if (!/^ *[^ …][^ ]*\/$/.test(line)) return;
    const indent = line.length - line.trimStart().length;
    const next = lines[i + 1] ?? '';
    if (next.length - next.trimStart().length <= indent || next.trim().startsWith('…')) bad.push(line);
  });
  return bad;
}

/** Lines at the root's level. */
export const topLines = (lines: readonly string[]): string[] => lines.filter((line) => !line.startsWith(' '));

/** Lines that name something (not "… (N more)" markers): what --max-entries caps. */
export const entryLines = (lines: readonly string[]): string[] => lines.filter((line) => !line.trim().startsWith('…'));

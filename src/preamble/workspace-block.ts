import path from 'node:path';
import { escapeControls } from '../escape.js';
import { isDemoted } from './kinds.js';
import { braceList } from './names.js';
import { compareUtf8 } from './tree.js';
import type { WorkspaceMember, Workspaces } from './workspaces.js';

/** The block may take this share of the map's budget; members past it are counted, not named. */
export const WORKSPACE_SHARE = 0.45;
/**
 * Members under examples, tests or docs (vite's 76 `playground/` fixtures) are named here only when their line is at
 * most this long; else the line counts them, and the tree names them if its budget allows.
 */
const DEMOTED_LINE_MAX = 160;

/** How member names derive from directory names: `namePrefix` + the directory name without `dirPrefix`. */
interface NameRule {
  namePrefix: string;
  dirPrefix: string;
}

/**
 * The compact member block: one line per parent directory, members in brace form, each member's name given only
 * where it breaks the rule most names follow (stated once in the heading). Fits `capChars`; the rest is counted.
 */
export function renderWorkspaces(ws: Workspaces, capChars: number): { lines: string[]; named: Set<string> } {
  const named = new Set<string>();
  // A declaration left out is said once, so the model does not take a missing member list for no workspace.
  const skipped = ws.skipped.length > 0 ? [`Workspace declarations skipped: ${ws.skipped.map((s) => escapeControls(s)).join('; ')}`] : [];
  if (ws.members.length === 0) return { lines: skipped, named };
  const rule = nameRule(ws.members);
  const byParent = new Map<string, WorkspaceMember[]>();
  for (const member of ws.members) {
    const parent = path.posix.dirname(member.path);
    byParent.set(parent, [...(byParent.get(parent) ?? []), member]);
  }
  const heading = `Workspace members (${ws.sources.join(', ')}; ${ws.members.length + ws.omitted}; ${ruleText(rule)}):`;
  const lines = [heading];
  let used = heading.length + 1;
  let left = 0;
  for (const parent of [...byParent.keys()].sort(compareUtf8)) {
    const members = byParent.get(parent)!;
    const shown = members.map((m) => display(m, rule));
    const prefix = parent === '.' ? '' : `${escapeControls(parent)}/`;
    const full = `${prefix}${braceList(shown)}`;
    const long = full.length > DEMOTED_LINE_MAX && parent.split('/').some(isDemoted);
    const line = long ? `${prefix || './'} ${members.length} members, not named here (examples, tests or docs)` : full;
    if (used + line.length + 1 > capChars) {
      left += members.length;
      continue;
    }
    used += line.length + 1;
    lines.push(line);
    if (!long) for (const m of members) named.add(m.path);
  }
  const omitted = left + ws.omitted;
  if (omitted > 0) lines.push(`… (${omitted} more members not named)`);
  return { lines: [...lines, ...skipped], named };
}

function display(member: WorkspaceMember, rule: NameRule | null): string {
  const base = path.posix.basename(member.path);
  if (
    member.name === null ||
    (rule && member.name === rule.namePrefix + base.slice(rule.dirPrefix.length) && base.startsWith(rule.dirPrefix))
  )
    return base;
  return `${base}=${member.name}`;
}

function ruleText(rule: NameRule | null): string {
  if (rule === null) return 'name after "=" where known';
  if (rule.namePrefix === '' && rule.dirPrefix === '') return 'named like their directory unless "=name" follows';
  const without = rule.dirPrefix === '' ? '' : ` without "${escapeControls(rule.dirPrefix)}"`;
  return `named "${escapeControls(rule.namePrefix)}" + the directory name${without} unless "=name" follows`;
}

/** The (name prefix, directory prefix) pair most members follow, when at least half do. */
function nameRule(members: WorkspaceMember[]): NameRule | null {
  const counts = new Map<string, number>();
  let withName = 0;
  for (const { path: rel, name } of members) {
    if (name === null) continue;
    withName++;
    const base = path.posix.basename(rel);
    let k = 0;
    while (k < base.length && k < name.length && base[base.length - 1 - k] === name[name.length - 1 - k]) k++;
    if (k === 0) continue;
    const key = JSON.stringify([name.slice(0, name.length - k), base.slice(0, base.length - k)]);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  if (!best || best[1] < 2 || best[1] * 2 < withName) return null;
  const [namePrefix, dirPrefix] = JSON.parse(best[0]) as [string, string];
  return { namePrefix, dirPrefix };
}

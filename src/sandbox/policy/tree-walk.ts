import { promises as fs } from 'node:fs';
import path from 'node:path';
import { confineSync } from '../paths.js';

/** Most entries looked at before tree runs; past it the model is asked for -L or a subdirectory. */
export const MAX_TREE_WALK_ENTRIES = 50_000;

/** What tree will list, as far as the walk needs it: its start directories (real paths), depth, hidden files, names left out. */
interface TreeScope {
  starts: readonly string[];
  /** tree -L N: entries N levels below a start are listed, no deeper. */
  depth?: number;
  /** tree -a lists names starting with a dot. */
  all: boolean;
  /** Names tree -I leaves out (literal alternatives only: a pattern the walk cannot match exactly is not counted). */
  ignored: ReadonlySet<string>;
}

type TreeWalk = { ok: true; outside: string[] } | { ok: false; tooMany: true };

/**
 * The symbolic links under the starts that lead outside the root, found with lstat and readlink only (confineSync
 * never looks outside). tree stats every link's target — for its counts, `-F`, `-d`, `--dirsfirst`, `--prune`, colours —
 * so any such link would make tree's output say whether something outside the repository exists. The answer depends
 * only on what is inside the root.
 */
export async function outsideLinks(root: string, scope: TreeScope): Promise<TreeWalk> {
  const outside: string[] = [];
  let seen = 0;
  const queue: Array<{ dir: string; level: number }> = scope.starts.map((dir) => ({ dir, level: 1 }));
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const entries = await fs.readdir(next.dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!scope.all && entry.name.startsWith('.')) continue;
      if (scope.ignored.has(entry.name)) continue;
      seen += 1;
      if (seen > MAX_TREE_WALK_ENTRIES) return { ok: false, tooMany: true };
      const abs = path.join(next.dir, entry.name);
      if (entry.isSymbolicLink()) {
        const confined = confineSync(root, path.relative(root, abs), { mustExist: false });
        if (!confined.ok && confined.outside === true) outside.push(path.relative(root, abs));
        continue;
      }
      if (entry.isDirectory() && (scope.depth === undefined || next.level < scope.depth)) queue.push({ dir: abs, level: next.level + 1 });
    }
  }
  return { ok: true, outside: outside.sort() };
}

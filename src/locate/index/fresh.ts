import path from 'node:path';
import { execCapped, firstExecutableSync } from '../../sandbox/exec.js';
import { TRUSTED_PATH } from '../../sandbox/programs.js';
import { lstatOrNull } from './read.js';
import { isRelativeDir, MAX_IGNORED_DIRS } from './segment.js';

/**
 * The cheap freshness check of a warm question: one `find -newerct` walk (C speed, one child, sandboxed like rg)
 * instead of `rg --files` plus an lstat of every listed file from node (≈1 s of CPU on 100k files). It rests on the
 * ctime, which the kernel sets on every change of a file's content or metadata and which no user can set back
 * (`touch -d`/utimes set the mtime and thereby bump the ctime):
 * - a listed file edited in place (same size, mtime set back, chmod, a new hard link) has a later ctime: it is checked
 *   as before (stat compared, racy entries re-hashed);
 * - an entry created, deleted or renamed anywhere (a new file, a new directory, a symlink swapped, a file replaced by
 *   a FIFO) gives its directory a later ctime: any such directory, ignored ones too, sends the question to the full
 *   walk, as does any changed ignore file and anything find could not read.
 * A file not listed that changes in place stays not listed: whether rg lists a path depends on the path and the ignore
 * files only.
 *
 * The directories rg skipped whole as ignored when the listing was walked (node_modules, target/, build output) are
 * pruned by device and inode (`-samefile`: a string `-path` test per entry cost more than the walk it saved). Such a
 * directory stays ignored while no ignore file changes and it is not replaced, and either of those is seen here; a
 * pruned directory that no longer exists makes find fail, and the question takes the full walk.
 */

const FIND_BINARY = firstExecutableSync(TRUSTED_PATH.split(':').map((dir) => `${dir}/find`));
/** The check's output past this means many changes: the full walk is then as cheap. */
const MAX_CHANGED_BYTES = 1024 * 1024;
/**
 * Seconds before the segment's write from which a ctime counts as recent. The stamp is Date.now() and the kernel's
 * file clock may lag it by a tick, and coarse file systems keep whole seconds: two seconds cover both.
 */
const MARGIN_S = 2;
/** Files whose change alters which paths rg lists (WALK_FLAGS read these; .git/info/exclude is checked apart). */
const IGNORE_FILES = new Set(['.gitignore', '.ignore', '.rgignore']);

/**
 * The files below `root` whose ctime is at or after `sinceMs` (less the margin), when the listing cannot have changed
 * since then; null when it may have (or when find is missing, failed, timed out or printed too much): the caller then
 * lists the tree with rg. Never throws.
 */
export async function recentFiles(
  root: string,
  sinceMs: number,
  opts: { timeoutMs: number; signal?: AbortSignal; find?: string | null; prune?: readonly string[]; onSpawn?: () => void },
): Promise<Set<string> | null> {
  const find = opts.find === undefined ? FIND_BINARY : opts.find;
  // A write stamped later than now (the clock set back since, or a doctored segment) would hide every change.
  if (find === null || sinceMs > Date.now()) return null;
  const since = Math.floor(sinceMs / 1000) - MARGIN_S;
  // `.git` is pruned as rg's `-g !.git` skips it; each one found is printed (g) so its info/exclude can be checked.
  const ignored = (opts.prune ?? []).flatMap((rel, i) => [...(i === 0 ? [] : ['-o']), '-samefile', `./${rel}`]);
  const pruned = ignored.length === 0 ? [] : ['(', ...ignored, ')', '-prune', '-o'];
  const args = ['-P', '.', ...pruned, '-name', '.git', '-prune', '-printf', 'g%y%P\\0', '-o', '-newerct', `@${since}`, '-printf', '%y%P\\0'];
  const run = await execCapped(find, args, {
    cwd: root,
    timeoutMs: opts.timeoutMs,
    maxBytes: MAX_CHANGED_BYTES,
    argv0: 'find',
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onSpawn ? { onSpawn: opts.onSpawn } : {}),
  });
  if (run.timedOut || run.capped || run.aborted || run.exitCode !== 0) return null;
  const files = new Set<string>();
  for (const record of run.stdout.split('\0')) {
    if (record === '') continue;
    if (record.startsWith('g')) {
      if (!gitDirQuiet(root, record.slice(2), record[1] === 'd', since * 1000)) return null;
      continue;
    }
    const rel = record.slice(1);
    // A directory whose entries changed (the root prints as ''), or an ignore file: the listing may differ.
    if (record[0] === 'd' || IGNORE_FILES.has(path.basename(rel))) return null;
    files.add(rel);
  }
  return files;
}

/**
 * Whether a `.git` found in the tree leaves rg's listing as it was: its info/exclude (read by rg as an ignore file)
 * and the directory holding it have not changed; a missing info/ counts by the `.git` directory's own ctime. A `.git`
 * file (a worktree's link to its git directory elsewhere) is never taken as quiet: rg reads that directory's exclude.
 */
function gitDirQuiet(root: string, rel: string, isDir: boolean, sinceMs: number): boolean {
  if (!isDir) return false;
  const gitDir = `${root}/${rel}`;
  const recent = (abs: string): boolean | null => {
    const st = lstatOrNull(abs);
    return st === null ? null : st.ctimeMs >= sinceMs;
  };
  const info = recent(`${gitDir}/info`);
  if (info === null) return recent(gitDir) === false;
  return !info && recent(`${gitDir}/info/exclude`) !== true;
}

/** rg's `--debug` line for an entry its walk skipped because an ignore file (or info/exclude) says so. */
const IGNORED_LINE = /^rg: DEBUG\|ignore::walk\|[^|]*: ignoring \.\/(.+?): Ignore\(IgnoreMatch\(Gitignore\(/;

/**
 * The directories of `root` that rg's walk skipped whole as ignored, read from its `--debug` output (one line per
 * ignored entry), at most MAX_IGNORED_DIRS, sorted. The lines are not a stable interface and a path in them is not
 * quoted, so each one is kept only when it is a real directory (not a link) that holds no listed file; what fails
 * to parse is simply not pruned, which costs time, never a missed change.
 */
export function ignoredDirsOf(root: string, debug: string, files: readonly string[]): string[] {
  const found: string[] = [];
  for (const line of debug.split('\n')) {
    const rel = IGNORED_LINE.exec(line)?.[1];
    if (rel !== undefined && isRelativeDir(rel)) found.push(rel);
  }
  if (found.length === 0) return [];
  const listedDirs = new Set<string>();
  for (const file of files) {
    for (let slash = file.lastIndexOf('/'); slash > 0; slash = file.lastIndexOf('/', slash - 1)) {
      const dir = file.slice(0, slash);
      if (listedDirs.has(dir)) break;
      listedDirs.add(dir);
    }
  }
  return [...new Set(found)]
    .filter((rel) => !listedDirs.has(rel) && lstatOrNull(`${root}/${rel}`)?.isDirectory() === true)
    .sort()
    .slice(0, MAX_IGNORED_DIRS);
}

import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, statSync, type Dirent, type Stats } from 'node:fs';
import path from 'node:path';
import { fileKind, shownPath } from './describe.js';
import { locateGitDir } from './git-repo.js';
import { confineSync } from './paths.js';

/**
 * Files that ripgrep or git open by their name wherever they are in the tree: ignore files (rg reads every one in each
 * directory it walks; git status too), attributes (git log -p reads the ones along each path) and `.git` (rg opens a
 * `.git` file to find the repository's excludes). A FIFO under one of these names makes every search wait out its
 * timeout; a device streams without end; a link out of the root makes the listing depend on an outside file. Not here:
 * `.mailmap` and `.gitmodules`, which only git reads and only at the top of the work tree, where the git tool's own
 * check (git-metadata.ts) already leaves git unused, with a warning, when one is special; and the preamble's
 * instructions files (AGENTS.md, CLAUDE.md), opened without blocking and refused when not a regular file
 * (preamble/read-contained.ts), as the tools refuse a special file named as an operand.
 */
const READ_BY_NAME = new Set(['.gitignore', '.ignore', '.rgignore', '.gitattributes', '.git']);
/** Files of a git directory that rg or git open when a `.git` file or directory leads there (`<gitdir>/commondir`, `info/exclude`). */
const GIT_DIR_FILES = new Set(['commondir']);
const GIT_INFO_FILES = new Set(['exclude', 'attributes']);
/**
 * Entries looked at before the walk stops (about 1.2 s here; 120,000 entries take 0.15 s). A tree larger than this is
 * not refused: the rest goes unchecked, with a warning, and every call stays bounded by its own timeout.
 */
const MAX_WALK_ENTRIES = 1_000_000;
/** A `.git` file or a `commondir` holds one path: more than this is not one git would use either. */
const MAX_POINTER_BYTES = 4096;

/** What the walk found: the one refusal (null: none), and a warning when the tree was larger than it looks at. */
interface RepositoryFiles {
  problem: string | null;
  warning: string | null;
  /** Entries looked at (for the benchmark and the tests). */
  entries: number;
}

/**
 * One lstat walk of `root` (real, absolute) before any program reads it: refuses a FIFO, socket or device named as
 * READ_BY_NAME at any depth (or a link to one, or a link out of the root under such a name), and a `.git` file whose
 * git directory, or that directory's `commondir`, leaves the root (ripgrep would read the excludes there; see
 * gitFileProblem). The root's own `.git` may point outside when it is a genuine linked worktree (the git tool's rule,
 * locateGitDir). Directory links are not followed, as ripgrep does not follow them. Never throws.
 */
export async function checkRepositoryFiles(root: string, maxEntries = MAX_WALK_ENTRIES): Promise<RepositoryFiles> {
  const stack = [root];
  let entries = 0;
  while (stack.length > 0) {
    const dir = stack.pop()!;
    const listed = listDir(dir);
    entries += listed.length;
    for (const entry of listed) {
      if (entry.isDirectory()) stack.push(`${dir}${path.sep}${entry.name}`);
      if (!watched(dir, entry.name)) continue;
      const abs = path.join(dir, entry.name);
      const problem = entryProblem(root, abs, entry) ?? (entry.name === '.git' ? await dotGitProblem(root, abs, entry) : null);
      if (problem !== null) return { problem, warning: null, entries };
    }
    if (entries > maxEntries && stack.length > 0) {
      const warning = `the repository has more than ${maxEntries.toLocaleString('en-US')} entries; special ignore and attribute files were checked in the first ones only`;
      return { problem: null, warning, entries };
    }
  }
  return { problem: null, warning: null, entries };
}

function listDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    // A directory that cannot be read is one ripgrep and git cannot read either.
    return [];
  }
}

function watched(dir: string, name: string): boolean {
  return READ_BY_NAME.has(name) || GIT_DIR_FILES.has(name) || (GIT_INFO_FILES.has(name) && path.basename(dir) === 'info');
}

/** Why the entry at `abs` cannot be left to ripgrep and git, or null: only regular files, directories and links that stay inside lead to content. */
function entryProblem(root: string, abs: string, entry: Dirent): string | null {
  const rel = shownPath(root, abs);
  if (entry.isFile() || entry.isDirectory()) return null;
  if (!entry.isSymbolicLink()) return `${rel} is ${fileKind(entry)}: ripgrep and git open every file of that name and would wait on it (or read it without end); remove it, or pass -C a directory without it`;
  const confined = confineSync(root, path.relative(root, abs), { mustExist: false });
  if (!confined.ok && confined.outside === true) {
    return `${rel} is a symlink out of the repository root: ripgrep and git would read the file it points to, so listings would depend on it; remove it, or pass -C a directory without it`;
  }
  // A dangling link or a loop: opening it fails, and nothing is read.
  if (!confined.ok || !confined.exists) return null;
  const target = lstatOrNull(confined.abs);
  if (target === null || target.isFile() || target.isDirectory()) return null;
  return `${rel} is a symlink to ${fileKind(target)} (${shownPath(root, confined.abs)}): ripgrep and git would wait on it (or read it without end); remove it, or pass -C a directory without it`;
}

/** A `.git` directory, file, or link to either (entryProblem has already refused a link out of the root or to a special file). */
async function dotGitProblem(root: string, dotGit: string, entry: Dirent): Promise<string | null> {
  const real = entry.isSymbolicLink() ? confineSync(root, path.relative(root, dotGit), { mustExist: true }) : null;
  const target = real === null ? dotGit : real.ok ? real.abs : null;
  const stat = target === null ? null : lstatOrNull(target);
  if (target === null || stat === null) return null;
  if (stat.isDirectory()) return excludeProblem(root, dotGit, target);
  return stat.isFile() ? gitFileProblem(root, dotGit, target) : null;
}

/** rg reads `<dir>/info/exclude`: a link on the way (`info` → outside) must not take it out of the root. */
function excludeProblem(root: string, dotGit: string, dir: string): string | null {
  const exclude = path.join(dir, 'info', 'exclude');
  if (stays(root, exclude)) return null;
  return `${shownPath(root, exclude)} leads out of the repository root (through a symlink): ripgrep would read ignore rules there for ${shownPath(root, dotGit)}, so listings would depend on outside files; remove the link, or pass -C a directory without it`;
}

/**
 * Why a `.git` file cannot be left to ripgrep, or null. rg opens it, takes the path after `gitdir: ` relative to its
 * working directory (the root; git takes it relative to the file's directory), then reads `<gitdir>/commondir` and
 * `<commondir>/info/exclude`: a pointer out of the root makes the listing depend on outside files. git's reading must
 * stay inside by its text (decided without asking whether an outside path exists). rg's reading of an ordinary
 * submodule (`gitdir: ../.git/modules/sub`, relative to `sub/`) leaves the root from the root, so it is refused only
 * when rg would find a `commondir` there, the one case where it reads on; then both readings of the commondir must
 * stay inside, and so must the `info/exclude` it leads to.
 */
async function gitFileProblem(root: string, dotGit: string, file: string): Promise<string | null> {
  const gitdir = pointerLine(file, 'gitdir: ');
  if (gitdir === null) return null;
  const byGit = path.resolve(path.dirname(dotGit), gitdir);
  if (!stays(root, byGit)) return (await linkedWorktreeRoot(root, dotGit)) ? null : outsideLine(root, dotGit, 'gitdir');
  const byRg = path.resolve(root, gitdir);
  if (!stays(root, byRg)) {
    return statOrNull(path.join(byRg, 'commondir')) === null ? commondirProblem(root, dotGit, byGit, false) : outsideLine(root, dotGit, 'gitdir, read from the root as ripgrep reads it,');
  }
  return commondirProblem(root, dotGit, byGit, true) ?? (byRg === byGit ? null : commondirProblem(root, dotGit, byRg, true));
}

/** The `commondir` of a git directory inside the root: a regular file whose path, as rg and git read it, stays inside. */
function commondirProblem(root: string, dotGit: string, gitDir: string, rgReads: boolean): string | null {
  const confined = confineSync(root, path.relative(root, gitDir) || '.', { mustExist: true });
  if (!confined.ok) return null;
  const commonFile = path.join(confined.abs, 'commondir');
  const stat = lstatOrNull(commonFile);
  if (stat !== null && !stat.isFile() && !stat.isDirectory()) {
    return `${shownPath(root, commonFile)} is ${fileKind(stat)}: ripgrep would wait on it; remove it, or pass -C a directory without it`;
  }
  const common = stat?.isFile() ? pointerLine(commonFile, '') : null;
  if (common === null) return null;
  // git: relative to the gitdir; rg: the same when it starts with a dot, else relative to its working directory.
  const readings = [path.resolve(confined.abs, common), ...(rgReads && !common.startsWith('.') ? [path.resolve(root, common)] : [])];
  if (readings.some((c) => !stays(root, c))) return outsideLine(root, dotGit, `gitdir's commondir (${shownPath(root, commonFile)})`);
  for (const reading of new Set(readings)) {
    const problem = excludeProblem(root, dotGit, reading);
    if (problem !== null) return problem;
  }
  return null;
}

/** True when `target` stays inside the root by its text and through the root's own links. */
function stays(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return false;
  const confined = confineSync(root, rel === '' ? '.' : rel, { mustExist: false });
  return confined.ok || confined.outside !== true;
}

/** The root's own `.git` of a linked worktree (`git worktree add`) points into the repository it belongs to, as the git tool allows. */
async function linkedWorktreeRoot(root: string, dotGit: string): Promise<boolean> {
  if (path.dirname(dotGit) !== root) return false;
  const found = await locateGitDir(root);
  return found.ok && found.linked === true;
}

function outsideLine(root: string, dotGit: string, what: string): string {
  return `${shownPath(root, dotGit)} is a .git file whose ${what} points outside the repository root: ripgrep would read ignore rules there, so listings would depend on outside files; remove it, or pass -C that checkout itself`;
}

/**
 * The first line of a small regular file after `prefix` (CRs and LFs trimmed, as git does), or null: not a regular
 * file (opened without blocking or following a link), too long, or without the prefix.
 */
function pointerLine(file: string, prefix: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buffer = Buffer.alloc(MAX_POINTER_BYTES);
    const text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
    const line = text.split('\n')[0]!.replace(/\r+$/, '');
    return line.startsWith(prefix) && line.length > prefix.length ? line.slice(prefix.length) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function statOrNull(p: string): Stats | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

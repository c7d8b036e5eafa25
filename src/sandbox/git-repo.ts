import { constants, lstatSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { checkGitMetadata, checkWorkTreeFiles, metadataBudget } from './git-metadata.js';
import { confineSync, isInside } from './paths.js';

/** Longest `.git` file, `commondir` or `alternates` file read, in bytes: these hold a path or a few. */
const MAX_POINTER_BYTES = 64 * 1024;
const SMALL_FILE = `a regular file of at most ${MAX_POINTER_BYTES / 1024} KiB`;
/** Alternates of alternates followed before giving up (git itself stops at 5). */
const MAX_ALTERNATE_DEPTH = 5;

/**
 * Where the history tool reads from: the git directory and the common directory, both real and inside the root.
 * `unsafe` marks a repository refused for what it contains (a special file, see git-metadata.ts) rather than for
 * where it is: that is worth one line to the person, a root without .git is not.
 */
export type GitLocation =
  | { ok: true; gitDir: string; commonDir: string; linked?: true; top?: string; prefix?: string }
  | { ok: false; reason: string; unsafe?: true };

/**
 * The repository of a root that may lie below the top of its work tree (`spelunk -C packages/vite`): the root's own
 * repository when it has one (locateGitDir), else the enclosing work tree's, checked exactly as if that work tree were
 * the root (every pointer inside it or a linked worktree of it, no special file, see locateGitDir), with `top` (the
 * work tree) and `prefix` (the root inside it, `packages/vite/`). Every caller that takes a `prefix` confines git to
 * it: the git tool's policy (policy/git-confine.ts) and `audit --diff`. A root inside a git directory is refused: its
 * files are the repository's internals, not a part of its work tree. Never throws.
 */
export async function locateRepository(root: string): Promise<GitLocation> {
  const own = await locateGitDir(root);
  if (own.ok || (await fs.lstat(path.join(root, '.git')).catch(() => null)) !== null) return own;
  const top = findWorkTree(root);
  if (top === null || top === root) return own;
  const found = await locateGitDir(top);
  if (!found.ok) return { ...found, reason: `the work tree at ${top} holding this root: ${found.reason}` };
  if (isInside(found.gitDir, root) || isInside(found.commonDir, root)) {
    return { ok: false, reason: 'the root is inside a git directory, not a part of a work tree' };
  }
  return { ...found, top, prefix: `${path.relative(top, root).split(path.sep).join('/')}/` };
}

/**
 * The work tree containing `root`, found by looking for `.git` (a directory or a gitdir file) from `root` upwards
 * without running git or reading any configuration; null when there is none.
 */
export function findWorkTree(root: string): string | null {
  for (let dir = root; ; dir = path.dirname(dir)) {
    try {
      lstatSync(path.join(dir, '.git'));
      return dir;
    } catch {
      // Not here; try the parent.
    }
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * Finds the repository of `root` (already realpath'd) and proves that every place git would read objects and refs
 * from lies inside the root: `root/.git` itself (a directory, or a `gitdir:` file of a linked worktree or submodule),
 * its `commondir`, the object directory and every `objects/info/alternates` entry, each resolved with realpath.
 * Reading another repository's objects through a pointer is an outside-root read, so any of them pointing outside is
 * a refusal. Only `root/.git` counts here (a root below a work tree is locateRepository's, which confines git to it). Then no entry of
 * either directory, nor the work tree's .gitattributes or .mailmap, may be a symlink, FIFO, socket or device (see
 * git-metadata.ts). Never throws.
 */
export async function locateGitDir(root: string): Promise<GitLocation> {
  const dotGit = path.join(root, '.git');
  const stat = await fs.lstat(dotGit).catch(() => null);
  if (stat === null) return { ok: false, reason: 'the repository root is not the top of a git work tree (no .git there)' };
  const found = stat.isFile() ? await gitdirFile(root, dotGit) : await realInside(root, dotGit, '.git');
  if (typeof found !== 'string' && !('linked' in found)) return found;
  // A linked worktree's git directory and common directory lie outside the root, in the repository it belongs to.
  const linked = typeof found !== 'string';
  const gitDir = typeof found === 'string' ? found : found.linked;
  // Each directory is walked before any pointer file in it is read: a pointer that is a link out is refused as a
  // link, never opened (what it read would depend on the outside file, and on whether it exists).
  const budget = metadataBudget();
  const special = async (dir: string): Promise<GitLocation | null> => {
    const found = await checkGitMetadata(root, dir, budget);
    return found === null ? null : { ok: false, reason: found, unsafe: true };
  };
  const inGitDir = await special(gitDir);
  if (inGitDir !== null) return inGitDir;
  const common = await pointer(path.join(gitDir, 'commondir'));
  if (common === NOT_A_FILE) return { ok: false, reason: `the commondir of .git is not ${SMALL_FILE}` };
  const commonDir =
    common === null
      ? gitDir
      : linked
        ? await linkedCommonDir(gitDir, common)
        : await realInside(root, path.resolve(gitDir, common), 'the commondir of .git');
  if (typeof commonDir !== 'string') return commonDir;
  const inCommonDir = commonDir === gitDir ? null : await special(commonDir);
  if (inCommonDir !== null) return inCommonDir;
  const objects = linked
    ? path.join(commonDir, 'objects')
    : await realInside(root, path.join(commonDir, 'objects'), 'the object directory');
  if (typeof objects !== 'string') return objects;
  const alternates = await checkAlternates(root, objects, 0, special);
  if (alternates !== null) return alternates;
  const workTree = await checkWorkTreeFiles(root);
  if (workTree !== null) return { ok: false, reason: workTree, unsafe: true };
  return { ok: true, gitDir, commonDir, ...(linked ? { linked: true as const } : {}) };
}

/**
 * A `.git` file holds `gitdir: <path>` (relative to the file's directory); its target must be inside the root, or be
 * the git directory of a linked worktree of this very root (`git worktree add`): `<common>/worktrees/<name>` whose
 * own `gitdir` file points back at this `.git`. A planted `.git` file cannot forge that pointer in another
 * repository, so this reads no repository but the root's own. Every other outside target gets one and the same
 * refusal, whether it exists or not.
 */
async function gitdirFile(root: string, dotGit: string): Promise<string | { linked: string } | { ok: false; reason: string }> {
  const text = await pointer(dotGit);
  const match = text === null || text === NOT_A_FILE ? null : /^gitdir: (.+)$/.exec(text);
  if (match?.[1] === undefined) return { ok: false, reason: '.git is a file without a "gitdir:" line' };
  const target = path.resolve(root, match[1]);
  const inside = await realInside(root, target, 'the gitdir: of .git');
  if (typeof inside === 'string' || !inside.reason.includes('points outside')) return inside;
  const refused = { ok: false as const, reason: 'the gitdir: of .git points outside the repository root, and not at a linked worktree of it (git worktree add)' };
  const real = await fs.realpath(target).catch(() => null);
  if (real === null || path.basename(path.dirname(real)) !== 'worktrees') return refused;
  const back = await pointer(path.join(real, 'gitdir'));
  if (typeof back !== 'string') return refused;
  const backReal = await fs.realpath(path.resolve(real, back)).catch(() => null);
  return backReal === dotGit ? { linked: real } : refused;
}

/** A linked worktree's common directory: the repository holding `worktrees/<name>`, and nothing else. */
async function linkedCommonDir(gitDir: string, common: string): Promise<string | { ok: false; reason: string }> {
  const real = await fs.realpath(path.resolve(gitDir, common)).catch(() => null);
  if (real !== null && real === path.dirname(path.dirname(gitDir))) return real;
  return { ok: false, reason: 'the commondir of the linked worktree is not the repository holding it' };
}

/**
 * Every alternate object directory (one per line, `#` comments, relative to `objects`) must be inside the root. Each
 * line is checked exactly as git reads it: git trims nothing (not a space, not the CR of a CRLF) and takes `#` as a
 * comment only in the first column, so a trimmed line could name another directory than the one git opens. Each
 * directory is checked by `special` before its own alternates are read (git reads it like its own objects).
 */
async function checkAlternates(
  root: string,
  objects: string,
  depth: number,
  special: (dir: string) => Promise<GitLocation | null>,
): Promise<GitLocation | null> {
  const text = await readSmall(path.join(objects, 'info', 'alternates'));
  if (text === null) return null;
  if (text === NOT_A_FILE) return { ok: false, reason: `objects/info/alternates is not ${SMALL_FILE}` };
  if (depth >= MAX_ALTERNATE_DEPTH) {
    return { ok: false, reason: `objects/info/alternates are nested more than ${MAX_ALTERNATE_DEPTH} deep` };
  }
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    // A quoted entry uses C escapes; refusing it is simpler than decoding it and loses nothing real.
    if (line.startsWith('"')) return { ok: false, reason: 'objects/info/alternates has a quoted entry, which is not supported' };
    const alternate = await realInside(root, path.resolve(objects, line), 'an objects/info/alternates entry');
    if (typeof alternate !== 'string') return alternate;
    const inAlternate = await special(alternate);
    if (inAlternate !== null) return inAlternate;
    const nested = await checkAlternates(root, alternate, depth + 1, special);
    if (nested !== null) return nested;
  }
  return null;
}

/**
 * The real path of `target` when it exists inside the root; otherwise a refusal naming `what`. Resolved by confine's
 * component walk, which refuses a step out of the root by its text: the answer never depends on whether something
 * outside exists (realpath would stat the outside target and say "points outside" or "does not exist").
 */
async function realInside(root: string, target: string, what: string): Promise<string | { ok: false; reason: string }> {
  const confined = confineSync(root, target, { mustExist: true });
  if (confined.ok) return confined.abs;
  if (confined.outside === true) return { ok: false, reason: `${what} points outside the repository root (reading another repository's objects is an outside read)` };
  return { ok: false, reason: `${what} does not exist or cannot be read` };
}

/**
 * What readSmall gives for a FIFO, device or directory where git expects a small file (git would block on a FIFO), and
 * for a file longer than MAX_POINTER_BYTES: git reads the whole file, so its first part is not what git reads.
 */
const NOT_A_FILE = Symbol('not a regular file');

/**
 * A small pointer file as git reads it: the whole content less its trailing CRs and LFs (git trims nothing else, and
 * a second line is part of the path); null when it is absent. A loop, not a regex: `[\r\n]+$` backtracks quadratically.
 */
async function pointer(file: string): Promise<string | null | typeof NOT_A_FILE> {
  const text = await readSmall(file);
  if (text === null || text === NOT_A_FILE) return text;
  let end = text.length;
  while (text[end - 1] === '\n' || text[end - 1] === '\r') end -= 1;
  return text.slice(0, end);
}

async function readSmall(file: string): Promise<string | null | typeof NOT_A_FILE> {
  // Non-blocking: a FIFO planted as a pointer file must not hang the open; it is then refused as not a file.
  const handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => null);
  if (handle === null) return null;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return NOT_A_FILE;
    // One byte past the limit tells a longer file (even one that grew since the stat) from one of exactly the limit.
    const buffer = Buffer.alloc(MAX_POINTER_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > MAX_POINTER_BYTES ? NOT_A_FILE : buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

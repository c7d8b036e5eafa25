import { randomUUID } from 'node:crypto';
import { constants, existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { isInside } from './paths.js';

/**
 * Files spelunk writes for the user (`--sarif`, `--review-output`, `--baseline --update-baseline`) may be named inside
 * the repository, and the repository is hostile input: a planted `reports -> /elsewhere` directory link or an
 * `out.sarif -> ~/.bashrc` file link must never redirect a write (or a removal) outside it. So a path is resolved one
 * component at a time; links are followed only while the walk is still outside the root (the user's own layout), and
 * a link at or below the root is refused with the reason. The write itself then opens the directories below the root
 * one component at a time with O_NOFOLLOW (through /proc/self/fd, Linux's openat), so a link swapped in after the
 * check fails the open instead of being followed.
 */

/** Symlinks followed outside the root before the path counts as a loop (the kernel's limit). */
const MAX_LINK_HOPS = 40;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A path spelunk will not write through; the message says why and what to do, without the flag name. */
export class OutputPathRefused extends Error {
  override name = 'OutputPathRefused';
  /** The errno a plain write or removal would have met there (EISDIR for a directory), when there is one. */
  constructor(message: string, readonly code?: string) {
    super(message);
  }
}

/** Where a file will go: its real, link-free directory, its name there, and whether that lies inside the root. */
interface OutputTarget {
  dir: string;
  name: string;
  inside: boolean;
  /** True when a regular file is already there. */
  exists: boolean;
}

/** Resolves `file` (absolute, or relative to the process) without following any link at or below `root`. */
// Long on purpose: one walk over the components, whose state (directory so far, pending parts, hops) is shared.
export async function resolveOutputPath(file: string, root: string): Promise<OutputTarget> {
  if (file.includes('\0')) throw new OutputPathRefused('the path contains a NUL byte');
  const parts = path.resolve(file).split('/').filter((p) => p !== '');
  let dir = '/';
  let hops = 0;
  while (parts.length > 0) {
    const part = parts.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      dir = path.dirname(dir);
      continue;
    }
    const next = path.join(dir, part);
    const stat = await fs.lstat(next).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw new OutputPathRefused(`${next} cannot be examined (${error.code ?? error.message})`);
    });
    if (stat === null) {
      if (parts.length > 0) throw new OutputPathRefused(`directory ${next} does not exist (ENOENT)`);
      return { dir, name: part, inside: isInside(root, next), exists: false };
    }
    if (stat.isSymbolicLink()) {
      if (isInside(root, next)) {
        throw new OutputPathRefused(`${next} is a symbolic link inside the repository, and spelunk does not write through links a repository could plant; pick a path outside the repository or a real directory`);
      }
      if (++hops > MAX_LINK_HOPS) throw new OutputPathRefused(`too many symbolic links at ${next} (ELOOP)`);
      const target = await fs.readlink(next);
      parts.unshift(...target.split('/').filter((p) => p !== ''));
      if (path.isAbsolute(target)) dir = '/';
      continue;
    }
    if (parts.length === 0) {
      if (!stat.isFile()) {
        throw new OutputPathRefused(`${next} exists and is not a regular file`, stat.isDirectory() ? 'EISDIR' : undefined);
      }
      return { dir, name: part, inside: isInside(root, next), exists: true };
    }
    if (!stat.isDirectory()) throw new OutputPathRefused(`${next} is not a directory (ENOTDIR)`);
    dir = next;
  }
  throw new OutputPathRefused('the path names no file');
}

/**
 * Writes `text` to `file` atomically (a temporary file in the same directory, then rename, so a reader never sees half
 * a file) and never through a link at or below `root`. Returns the real path written. Throws OutputPathRefused for a
 * refused path and the system error (with its code) for anything else.
 */
export async function writeOutputFile(file: string, text: string, root: string): Promise<string> {
  return writeToTarget(await resolveOutputPath(file, root), text, root);
}

/** The write half of writeOutputFile, for a target resolved earlier (what changed since is refused, not followed). */
export async function writeToTarget(target: OutputTarget, text: string, root: string): Promise<string> {
  return withDirectory(target, root, async (base) => {
    const temp = `${base}/.${target.name}.${randomUUID()}.tmp`;
    try {
      const handle = await fs.open(temp, CREATE_FLAGS, 0o644);
      try {
        await handle.writeFile(text);
      } finally {
        await handle.close();
      }
      // rename replaces a link at the name rather than writing through it; the resolver refused one inside the root.
      await fs.rename(temp, `${base}/${target.name}`);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
    return path.join(target.dir, target.name);
  });
}

/** Removes the regular file at `file` (not through a link at or below `root`); false when there was none. */
export async function removeOutputFile(file: string, root: string): Promise<boolean> {
  const target = await resolveOutputPath(file, root);
  if (!target.exists) return false;
  return withDirectory(target, root, async (base) => {
    await fs.unlink(`${base}/${target.name}`);
    return true;
  });
}

/**
 * Runs `use` with a path prefix that names the target's directory. Below the root that prefix is
 * `/proc/self/fd/N`, N a descriptor opened component by component with O_NOFOLLOW, so each step resolves exactly one
 * name and a link that appeared since the check is refused (ELOOP/ENOTDIR) instead of followed. Outside the root, or
 * where /proc is missing (macOS), the checked path itself is used, its last component opened with O_NOFOLLOW.
 */
async function withDirectory<T>(target: OutputTarget, root: string, use: (base: string) => Promise<T>): Promise<T> {
  const below = target.inside ? path.relative(root, target.dir).split(path.sep).filter((p) => p !== '') : [];
  const viaProc = target.inside && existsSync('/proc/self/fd');
  let handle = await fs.open(viaProc ? root : target.dir, DIR_FLAGS);
  try {
    if (!viaProc) return await use(target.dir);
    for (const part of below) {
      const next = await fs.open(`/proc/self/fd/${handle.fd}/${part}`, DIR_FLAGS).catch((error: NodeJS.ErrnoException) => {
        throw new OutputPathRefused(`${path.join(root, ...below)} changed while spelunk was writing (${error.code ?? error.message} at "${part}"); nothing was written`);
      });
      await handle.close();
      handle = next;
    }
    return await use(`/proc/self/fd/${handle.fd}`);
  } finally {
    await handle.close();
  }
}

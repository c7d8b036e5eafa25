import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileKind, shownPath } from './describe.js';

/**
 * Entries of the git directories looked at before giving up. A packed repository has a few hundred; one with this
 * many is full of loose objects, which `git gc` packs. Past the limit the history is refused rather than half checked.
 */
export const MAX_METADATA_ENTRIES = 200_000;
/** The one special file git itself makes in its directory: the builtin fsmonitor daemon's socket (never opened as a file; core.fsmonitor is off). */
const FSMONITOR_SOCKET = 'fsmonitor--daemon.ipc';
/** Files of the work tree that git opens for history commands (attributes for diffs, the mailmap for log and blame, submodules for diffs). */
const WORK_TREE_FILES = ['.gitattributes', '.mailmap', '.gitmodules'];

/**
 * Why the git directory and common directory cannot be read safely, or null when they can. git never creates a
 * symlink, FIFO, socket or device in them, and each is an attack: a link makes git read a file outside the root and
 * echo its lines in parse errors ("bad graft data: …", "unexpected line in …"), a FIFO makes it wait forever. So every
 * entry is looked at, without following anything (readdir's types, no stat of a target). `dir` is a real path inside
 * `root`; `budget` counts entries across the calls of one check. Never throws.
 */
export async function checkGitMetadata(root: string, dir: string, budget: MetadataBudget = metadataBudget()): Promise<string | null> {
  return walk(root, dir, dir, budget);
}

/** What is left of MAX_METADATA_ENTRIES for one repository's check. */
interface MetadataBudget {
  left: number;
}

export function metadataBudget(): MetadataBudget {
  return { left: MAX_METADATA_ENTRIES };
}

/**
 * Why the work tree's `.gitattributes`, `.mailmap` or `.gitmodules` cannot be handed to git, or null. git opens them
 * for history commands; one that is not a regular file is a FIFO git would wait on, or a link (older gits follow it).
 */
export async function checkWorkTreeFiles(root: string): Promise<string | null> {
  for (const name of WORK_TREE_FILES) {
    const stat = await fs.lstat(path.join(root, name)).catch(() => null);
    if (stat === null || stat.isFile()) continue;
    if (stat.isDirectory()) continue;
    return `${name} is ${fileKind(stat)}, not a regular file: git would read it (or wait on it) for history commands`;
  }
  return null;
}

async function walk(root: string, top: string, dir: string, budget: MetadataBudget): Promise<string | null> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => null);
  // An unreadable directory is one git cannot read either: nothing of it reaches the output.
  if (entries === null) return null;
  budget.left -= entries.length;
  if (budget.left < 0) return `${shownPath(root, top)} has more than ${MAX_METADATA_ENTRIES.toLocaleString('en-US')} entries, too many to check before running git; \`git gc\` packs loose objects`;
  for (const entry of entries) {
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = await walk(root, top, abs, budget);
      if (found !== null) return found;
    } else if (!entry.isFile() && !(dir === top && entry.name === FSMONITOR_SOCKET && entry.isSocket())) {
      return `${shownPath(root, abs)} is ${fileKind(entry)}; git never makes one in its directory, and reading through it could show a file outside the root or wait forever, so the history is not read`;
    }
  }
  return null;
}

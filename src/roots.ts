import { promises as fs, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './errors.js';
import { escapeControls } from './escape.js';
import type { Io } from './io.js';
import { checkRepositoryFiles } from './sandbox/special-files.js';
import { isInside } from './sandbox/paths.js';

/**
 * Which directories may be a run's root. Every subcommand that takes one (ask, the REPL, audit, locate, mcp) resolves
 * it here, before any program starts: `realRoot` refuses the system's own trees and `admitRoot` asks about the home
 * directory and walks the tree once for special files (sandbox/special-files.ts).
 */

/** Kernel interfaces, never a repository: their files are the processes' environments, devices and kernel state. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];
/**
 * Filesystems that are kernel interfaces wherever they are mounted: a root on one, or with one mounted anywhere below
 * it (a chroot's `proc/`, a container's `dev/pts`), would let ripgrep's walk read processes' environments (an API
 * key: spelunk's own), memory maps and devices. proc, sysfs, devtmpfs and devpts are the ones the threat model names;
 * the others are the same kind (cgroup and tracing controls, BPF objects, EFI variables).
 */
const KERNEL_FILESYSTEMS = new Set([
  'proc', 'sysfs', 'devtmpfs', 'devpts', 'cgroup', 'cgroup2', 'debugfs', 'tracefs', 'securityfs', 'bpf', 'configfs',
  'efivarfs', 'pstore', 'mqueue', 'binfmt_misc', 'fusectl', 'hugetlbfs', 'selinuxfs', 'nsfs',
]);
const MOUNTINFO = '/proc/self/mountinfo';
/** The environment variable that, set to 1, does what --allow-home does. */
const ALLOW_HOME_ENV = 'SPELUNK_ALLOW_HOME';

/** One mount as /proc/self/mountinfo lists it: where, and which filesystem. */
export interface Mount {
  point: string;
  type: string;
}

/**
 * The repository root as a real absolute path, so every later containment check compares real paths; a missing
 * directory, a file, or a system tree (systemRootProblem) is a usage error naming what to do.
 */
export async function realRoot(dir: string, cwd: string): Promise<string> {
  const absolute = path.resolve(cwd, dir);
  const real = await fs.realpath(absolute).catch(() => null);
  if (real === null) throw new UsageError(`--dir ${dir}: no such directory; pass the repository root with -C <path>`);
  const stat = await fs.stat(real);
  if (!stat.isDirectory()) throw new UsageError(`--dir ${dir}: not a directory; pass the repository root with -C <path>`);
  const problem = systemRootProblem(real, readMounts());
  if (problem === null) return real;
  const label = real === absolute ? escapeControls(real) : `${escapeControls(dir)} (${escapeControls(real)})`;
  throw new UsageError(`the root ${label} ${problem}; pass -C a repository directory`);
}

/**
 * Why `root` (real, absolute) is a system tree and not a repository, or null. `/` holds them all; /proc, /sys and /dev
 * by path (also where there is no mountinfo, as on macOS); then by mount: a root on a kernel filesystem, or one with a
 * kernel filesystem mounted anywhere below it. `mounts` is null where the mount table cannot be read.
 */
export function systemRootProblem(root: string, mounts: readonly Mount[] | null): string | null {
  if (path.dirname(root) === root) return 'is the whole filesystem (it holds /proc, /sys and /dev), not a repository';
  const tree = SYSTEM_TREES.find((top) => isInside(top, root));
  if (tree !== undefined) return `is ${tree === root ? '' : 'inside '}${tree}, a kernel interface, not a repository`;
  if (mounts === null) return null;
  const on = mounts.filter((m) => isInside(m.point, root)).sort((a, b) => b.point.length - a.point.length)[0];
  if (on !== undefined && KERNEL_FILESYSTEMS.has(on.type)) return `is on a ${on.type} filesystem, a kernel interface, not a repository`;
  const below = mounts.find((m) => m.point !== root && isInside(root, m.point) && KERNEL_FILESYSTEMS.has(m.type));
  if (below === undefined) return null;
  return `contains a ${below.type} mount at ${escapeControls(below.point)} (a kernel interface: process environments, devices), so it is not a repository`;
}

/** The mount table of this process, or null where there is none (macOS, a /proc that is not mounted). */
export function readMounts(file = MOUNTINFO): Mount[] | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  return parseMountinfo(text);
}

/**
 * The mount point (field 5) and filesystem type (the first field after ` - `) of each line of a mountinfo file
 * (proc(5)); octal escapes (`\040` for a space) are decoded.
 */
export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (fields.length < 7 || dash < 0 || fields[dash + 1] === undefined) continue;
    mounts.push({ point: unescapeOctal(fields[4]!), type: fields[dash + 1]! });
  }
  return mounts;
}

function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * Whether `root` is a home directory or contains one (dotfiles: .ssh, .aws, shell histories), and which: `$HOME` and
 * the account's home from the password database, each resolved through symlinks. A root below a home is an ordinary
 * repository.
 */
export function homeInside(root: string, env: Readonly<Record<string, string | undefined>>): string | null {
  const homes = [env.HOME, accountHome()].filter((h): h is string => typeof h === 'string' && path.isAbsolute(h));
  for (const home of homes) {
    const real = realOrSelf(home);
    if (isInside(root, real)) return real;
  }
  return null;
}

function accountHome(): string | undefined {
  try {
    return os.userInfo().homedir || undefined;
  } catch {
    return undefined;
  }
}

function realOrSelf(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

/** How admitRoot ended when it did not admit the root: declined on the terminal, or interrupted there (Ctrl+C). */
type NotAdmitted = 'declined' | 'interrupted';

interface AdmitOptions {
  /** --allow-home (or SPELUNK_ALLOW_HOME=1 in `io.env`): a root that holds a home directory is meant. */
  allowHome: boolean;
  /** No question may be asked (the MCP server: stdin is the protocol). */
  nonInteractive?: boolean;
  /** --quiet: the walk's warning (a tree too large to check whole) is not shown. */
  quiet?: boolean;
  /** Asks the person on the terminal (run/question.ts's confirmOnTerminal, passed in by the front end). */
  ask: (prompt: string) => Promise<'yes' | 'no' | 'interrupted'>;
}

/**
 * The last gate before anything reads `root` (realRoot's result). A root that is or holds a home directory lets the
 * model read its dotfiles: with --allow-home it is admitted; on a terminal the person is asked once (y/N, default
 * no); anywhere else (no terminal, CI, the MCP server) it is refused with the flag to pass. Then one walk of the tree
 * refuses the special files that would make ripgrep or git wait or read outside the root (special-files.ts).
 */
export async function admitRoot(root: string, io: Io, opts: AdmitOptions): Promise<string | NotAdmitted> {
  const home = homeInside(root, io.env);
  if (home !== null && !opts.allowHome && io.env[ALLOW_HOME_ENV] !== '1') {
    const what = home === root ? `is your home directory (${escapeControls(home)})` : `contains your home directory ${escapeControls(home)}`;
    if (!onTerminal(io) || opts.nonInteractive === true) {
      throw new UsageError(
        `the root ${what}: its dotfiles (.ssh/, .aws/, shell history) would be searched like the repository's files; pass -C a repository directory, or --allow-home (${ALLOW_HOME_ENV}=1) if you mean it`,
      );
    }
    const answer = await opts.ask(`The root ${what}: its dotfiles (.ssh/, .aws/, shell history) would be searched like the repository's files. Search it anyway? [y/N] `);
    if (answer !== 'yes') {
      io.stderr.write(answer === 'interrupted' ? '\nspelunk: interrupted; nothing was run\n' : 'spelunk: not started; pass -C a repository directory\n');
      return answer === 'interrupted' ? 'interrupted' : 'declined';
    }
  }
  const files = await checkRepositoryFiles(root);
  if (files.problem !== null) throw new UsageError(files.problem);
  if (files.warning !== null && opts.quiet !== true) io.stderr.write(`warning: ${files.warning}\n`);
  return root;
}

/** A person can answer: both stdin and stderr are terminals, and CI is not set (a CI runner may fake a terminal). */
function onTerminal(io: Io): boolean {
  const ci = io.env.CI;
  return io.stdin.isTTY === true && io.stderr.isTTY === true && (ci === undefined || ci === '' || ci === 'false' || ci === '0');
}

import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isInside } from './paths.js';
import { TRUSTED_PATH } from './programs.js';

/**
 * Which sandbox the programs spelunk starts run in. `kernel`: a bubblewrap namespace sandbox that shows only the
 * repository, read-only, with the policy tables as a second layer. `tables`: the policy tables alone (bwrap missing
 * or unusable, or `--sandbox off`).
 */
export type SandboxKind = 'kernel' | 'tables';

/** One line on what a sandbox kind means, for /context and text mode. */
export function describeSandbox(kind: SandboxKind): string {
  return kind === 'kernel'
    ? 'kernel (bubblewrap: programs see only the repository, read-only; the command tables as a second layer)'
    : 'tables (no kernel sandbox: programs run behind the command tables alone)';
}

/** What the user asked for with `--sandbox` / `SPELUNK_SANDBOX`. */
export type SandboxMode = 'auto' | 'required' | 'off';

export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'required', 'off'];

/** How children are started: under bwrap (the binary's absolute path), or directly with the tables alone. */
export type Sandbox = { kind: 'kernel'; bwrap: string } | { kind: 'tables' };

export const TABLES_ONLY: Sandbox = Object.freeze({ kind: 'tables' });

/** bwrap from TRUSTED_PATH only, never the inherited PATH (a repository's `bin/bwrap`). */
export function bwrapCandidates(dirs: readonly string[] = TRUSTED_PATH.split(':')): string[] {
  return dirs.map((dir) => `${dir}/bwrap`);
}

/** Directories of the host shown read-only in every sandbox: the programs and their libraries, nothing else. */
const SYSTEM_DIRS = ['/usr'];

/** Merged-/usr links, so `/bin/sh`-style paths and the dynamic loader (`/lib64/ld-linux…`) resolve as on the host. */
const SYSTEM_LINKS: readonly (readonly [string, string])[] = [
  ['usr/bin', '/bin'],
  ['usr/sbin', '/sbin'],
  ['usr/lib', '/lib'],
  ['usr/lib64', '/lib64'],
];

/**
 * The bwrap argv (before `--` and the program) that runs a child in `root` seeing only: `root` and each `visible`
 * path read-only at their own paths, /usr read-only, a minimal /dev, an empty private /tmp; no /proc (nothing we run
 * needs it: measured for rg, git, find, tree, file and the text programs), no /etc, no $HOME. Every namespace is new
 * (no network, no IPC, own pid namespace so a killed run leaves nothing behind), every capability is dropped (so even
 * root inside cannot remount anything writable), the session is new (no TIOCSTI into the user's terminal), the child
 * dies with spelunk, and the environment is exactly `env`.
 */
export function bwrapArgs(root: string, env: Readonly<Record<string, string>>, visible: readonly string[] = []): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv'];
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  for (const dir of SYSTEM_DIRS) args.push('--ro-bind', dir, dir);
  for (const [target, link] of SYSTEM_LINKS) args.push('--symlink', target, link);
  args.push('--dev', '/dev', '--tmpfs', '/tmp');
  for (const shown of [root, ...extraMounts(root, visible)]) args.push('--ro-bind', shown, shown);
  args.push('--chdir', root);
  return args;
}

/**
 * The visible paths not already shown through the root or /usr, real (bwrap mounts the target of a link, and the
 * mount point must be the path the child uses), each once. A path that no longer exists is left out: the child then
 * gets "No such file" like any other missing path.
 */
function extraMounts(root: string, visible: readonly string[]): string[] {
  const shown = new Set<string>();
  for (const candidate of visible) {
    const real = realOrNull(candidate);
    if (real === null || isInside(root, real) || SYSTEM_DIRS.some((dir) => isInside(dir, real))) continue;
    shown.add(real);
  }
  return [...shown].sort();
}

function realOrNull(file: string): string | null {
  try {
    return realpathSync(path.resolve(file));
  } catch {
    return null;
  }
}

/** The real path of a program, which is what a sandboxed child is started as (its mount point is that path). */
export function realProgram(file: string): string {
  return realOrNull(file) ?? file;
}

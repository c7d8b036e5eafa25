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
    ? 'kernel (bubblewrap: each program sees only the repository, read-only, and its own files; the command tables as a second layer)'
    : 'tables (no kernel sandbox: programs run behind the command tables alone)';
}

/** What the user asked for with `--sandbox` / `SPELUNK_SANDBOX`. */
export type SandboxMode = 'auto' | 'required' | 'off';

export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'required', 'off'];

/**
 * How children are started: under bwrap (the binary's absolute path), or directly with the tables alone. Under bwrap
 * each child sees only its own program's world (world.ts); `world: 'system'` shows /usr whole instead, as before
 * issue 32: the control rows of the tests and the bench's comparison use it, nothing else does.
 */
export type Sandbox = { kind: 'kernel'; bwrap: string; world?: 'system' } | { kind: 'tables' };

export const TABLES_ONLY: Sandbox = Object.freeze({ kind: 'tables' });

/** bwrap from TRUSTED_PATH only, never the inherited PATH (a repository's `bin/bwrap`). */
export function bwrapCandidates(dirs: readonly string[] = TRUSTED_PATH.split(':')): string[] {
  return dirs.map((dir) => `${dir}/bwrap`);
}

/** The `system` world: /usr read-only, every program and library on the machine. */
const SYSTEM_DIRS = ['/usr'];

/** The `system` world's merged-/usr links, so `/bin/sh`-style paths and the loader resolve as on the host. */
const SYSTEM_LINKS: readonly (readonly [string, string])[] = [
  ['usr/bin', '/bin'],
  ['usr/sbin', '/sbin'],
  ['usr/lib', '/lib'],
  ['usr/lib64', '/lib64'],
];

/**
 * The bwrap argv (before `--` and the program) that runs a child in `root` seeing only: `root` and each `visible`
 * path read-only at their own paths, the files of `world` read-only at their own paths (the program, its shared
 * objects, its loader, its data: see world.ts; null shows /usr whole instead), a minimal /dev and an empty private
 * /tmp; no /proc (nothing we run needs it: measured for rg, git, find, tree, file and the text programs), no /etc, no
 * $HOME, no shell, no other program. Every namespace is new (no network, no IPC, own pid namespace so a killed run
 * leaves nothing behind), every capability is dropped (so even root inside cannot remount anything writable), the
 * session is new (no TIOCSTI into the user's terminal), the child dies with spelunk, and the environment is exactly `env`.
 */
export function bwrapArgs(
  root: string,
  env: Readonly<Record<string, string>>,
  visible: readonly string[],
  world: readonly string[] | null,
): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv'];
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  if (world === null) {
    for (const dir of SYSTEM_DIRS) args.push('--ro-bind', dir, dir);
    for (const [target, link] of SYSTEM_LINKS) args.push('--symlink', target, link);
  }
  args.push('--dev', '/dev', '--tmpfs', '/tmp');
  // At the path the loader opens (a library's listed name is often a link: the mount shows its target's content there).
  for (const file of world ?? []) if (!isInside(root, file)) args.push('--ro-bind', file, file);
  const system = world === null ? SYSTEM_DIRS : [];
  for (const shown of [root, ...extraMounts(root, visible, system)]) args.push('--ro-bind', shown, shown);
  args.push('--chdir', root);
  return args;
}

/**
 * The visible paths not already shown through the root or the `system` directories, real (bwrap mounts the target of a link, and the
 * mount point must be the path the child uses), each once. A path that no longer exists is left out: the child then
 * gets "No such file" like any other missing path.
 */
function extraMounts(root: string, visible: readonly string[], system: readonly string[]): string[] {
  const shown = new Set<string>();
  for (const candidate of visible) {
    const real = realOrNull(candidate);
    if (real === null || isInside(root, real) || system.some((dir) => isInside(dir, real))) continue;
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

import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The third red team's F1/F2 plant: a superproject whose history moves two gitlinks. `sub` has its git directory
 * inside the root (`sub/.git` → `gitdir: ../.evilgit`, whose attributes send every file to the diff driver `pwn`);
 * `vsub` has it outside (`vsub/.git` → `<victim>/.git`, another repository with a secret commit message, author and
 * file). A row sets the superproject's and the submodule's configuration (see configure), runs git, and looks for the
 * markers: each planted command prints `PWNED-<name>` on stderr and creates `<markers>/<name>`.
 */
export interface SubmodulePlant {
  base: string;
  root: string;
  victim: string;
  /** Outside the root and not under /tmp, so a kernel sandbox's private /tmp cannot hide a write there. */
  markers: string;
  /** git in the superproject (`--git-dir=.evilgit` reaches the submodule's), fixed PATH, no system or user config. */
  git(...args: string[]): string;
  /** A planted command: prints PWNED-<name> on stderr, leaves <markers>/<name>, then runs `tail` (for textconv: `cat`). */
  command(name: string, tail?: string): string;
  cleanup(): Promise<void>;
}

export const VICTIM_MESSAGE = 'VICTIM-SECRET-2 password rotation hunter2';
export const VICTIM_AUTHOR = 'Victim Author';
export const VICTIM_CONTENT = 'VICTIM-FILE-CONTENT-8c1e';

/** Where markers go: /var/tmp when it is writable (never private to a sandbox), else the temporary directory. */
async function markerDir(): Promise<string> {
  const base = existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir();
  const made = await fs.mkdtemp(path.join(base, 'spelunk-git-markers-')).catch(() => fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-markers-')));
  return fs.realpath(made);
}

export async function makeSubmodulePlant(): Promise<SubmodulePlant> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-submodule-')));
  const root = path.join(base, 'repo');
  const victim = path.join(base, 'victim');
  const markers = await markerDir();
  const env = { PATH: '/usr/bin:/bin', HOME: base, GIT_CONFIG_NOSYSTEM: '1' };
  const run = (cwd: string, args: string[], name = 't'): string =>
    execFileSync('/usr/bin/git', ['-c', `user.name=${name}`, '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], { cwd, env, encoding: 'utf8' });
  await fs.mkdir(root, { recursive: true });
  await fs.mkdir(victim, { recursive: true });

  await fs.writeFile(path.join(victim, 'v.txt'), 'public\n');
  run(victim, ['init', '-q']);
  run(victim, ['add', 'v.txt'], VICTIM_AUTHOR);
  run(victim, ['commit', '-q', '-m', 'V1 public'], VICTIM_AUTHOR);
  await fs.writeFile(path.join(victim, 'v.txt'), `${VICTIM_CONTENT}\n`);
  run(victim, ['commit', '-q', '-a', '-m', VICTIM_MESSAGE], VICTIM_AUTHOR);
  const [v1, v2] = [run(victim, ['rev-parse', 'HEAD~1']).trim(), run(victim, ['rev-parse', 'HEAD']).trim()];

  // The submodule: keep.txt, then an empty e.txt (empty, so no temporary file write meets RLIMIT_FSIZE=0).
  const sub = path.join(root, 'sub');
  await fs.mkdir(sub);
  run(root, ['init', '-q', '--separate-git-dir', path.join(root, '.evilgit'), sub]);
  await fs.writeFile(path.join(sub, 'keep.txt'), 'k\n');
  run(sub, ['add', 'keep.txt']);
  run(sub, ['commit', '-q', '-m', 's1']);
  await fs.writeFile(path.join(sub, 'e.txt'), '');
  run(sub, ['add', 'e.txt']);
  run(sub, ['commit', '-q', '-m', 's2']);
  const [s1, s2] = [run(sub, ['rev-parse', 'HEAD~1']).trim(), run(sub, ['rev-parse', 'HEAD']).trim()];
  await fs.writeFile(path.join(sub, '.git'), 'gitdir: ../.evilgit\n');
  // git records the submodule's work tree when it is made this way; `sub/.git` names it instead, as in the finding.
  try {
    run(root, ['--git-dir=.evilgit', 'config', '--unset-all', 'core.worktree']);
  } catch {
    // Not recorded.
  }
  await fs.writeFile(path.join(root, '.evilgit', 'info', 'attributes'), '* diff=pwn\n');

  await fs.mkdir(path.join(root, 'vsub'));
  await fs.writeFile(path.join(root, 'vsub', '.git'), `gitdir: ${path.join(victim, '.git')}\n`);

  run(root, ['init', '-q']);
  await fs.writeFile(path.join(root, 'a.txt'), 'a\n');
  await fs.writeFile(path.join(root, '.gitmodules'), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n[submodule "vsub"]\n\tpath = vsub\n\turl = ./vsub\n');
  run(root, ['add', 'a.txt', '.gitmodules']);
  run(root, ['update-index', '--add', '--cacheinfo', `160000,${s1},sub`, '--cacheinfo', `160000,${v1},vsub`]);
  run(root, ['commit', '-q', '-m', 'c1']);
  await fs.writeFile(path.join(root, 'a.txt'), 'a\nb\n');
  run(root, ['add', 'a.txt']);
  run(root, ['update-index', '--cacheinfo', `160000,${s2},sub`, '--cacheinfo', `160000,${v2},vsub`]);
  run(root, ['commit', '-q', '-m', 'c2']);

  return {
    base,
    root,
    victim,
    markers,
    git: (...args) => run(root, args),
    command: (name, tail = 'true') => `echo PWNED-${name} >&2; : > '${path.join(markers, name)}'; ${tail}`,
    cleanup: async () => {
      await fs.rm(base, { recursive: true, force: true });
      await fs.rm(markers, { recursive: true, force: true });
    },
  };
}

/** The markers left so far, sorted. */
export async function markersLeft(plant: SubmodulePlant): Promise<string[]> {
  return (await fs.readdir(plant.markers)).sort();
}

/** Clears the markers (before a row). */
export async function clearMarkers(plant: SubmodulePlant): Promise<void> {
  for (const name of await fs.readdir(plant.markers)) await fs.rm(path.join(plant.markers, name));
}

/** Sets `key` to `value` in the superproject's configuration, or in the submodule's (`--git-dir=.evilgit`); null unsets. */
export function configure(plant: SubmodulePlant, where: 'super' | 'sub', key: string, value: string | null): void {
  const dir = where === 'sub' ? ['--git-dir=.evilgit'] : [];
  if (value !== null) {
    plant.git(...dir, 'config', key, value);
    return;
  }
  try {
    plant.git(...dir, 'config', '--unset-all', key);
  } catch {
    // Not set.
  }
}

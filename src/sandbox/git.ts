import { lstatSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execCapped, firstExecutableSync } from './exec.js';
import { TRUSTED_PATH } from './programs.js';

/** git's output for the small queries spelunk makes (HEAD, config names); more means something is wrong. */
const GIT_MAX_BYTES = 4 * 1024 * 1024;
const GIT_TIMEOUT_MS = 30_000;

/**
 * Settings that make git run nothing and write nothing whatever the repository's configuration says. They come as
 * `-c` options, which take precedence over every configuration file. Filter drivers have per-name keys, so they are
 * neutralised by name (see filterOverrides) rather than listed here.
 */
function overrides(emptyDir: string): string[] {
  const settings = [
    'core.fsmonitor=false',
    `core.hooksPath=${emptyDir}`,
    'diff.external=',
    'core.pager=cat',
    'pager.log=false',
    'log.showSignature=false',
    'core.untrackedCache=false',
    'core.sshCommand=false',
    'core.askPass=',
    'credential.helper=',
    'gpg.program=false',
    'protocol.allow=never',
    'core.quotepath=false',
  ];
  return ['--no-pager', '--no-optional-locks', ...settings.flatMap((setting) => ['-c', setting])];
}

/**
 * The environment: no system or user configuration or attributes, HOME an empty private directory, no prompts, no
 * optional locks (so no index refresh is written), no lazy fetch, and discovery stopped above the work tree spelunk
 * found itself.
 */
function environment(emptyDir: string, ceiling: string): Record<string, string> {
  return {
    PATH: TRUSTED_PATH,
    LC_ALL: 'C',
    HOME: emptyDir,
    XDG_CONFIG_HOME: emptyDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_LAZY_FETCH: '1',
    GIT_CEILING_DIRECTORIES: ceiling,
    GIT_PAGER: 'cat',
  };
}

/** The git binary: from TRUSTED_PATH only, never from the inherited PATH (a repository's `bin/git`). */
export const GIT_BINARY: string | null = firstExecutableSync(TRUSTED_PATH.split(':').map((dir) => `${dir}/git`));

export type GitRun = { ok: true; stdout: string } | { ok: false; error: string; exitCode: number | null };

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
 * Runs git in `root` with the isolation above; `git` is the binary (null: not installed). Every filter driver the effective configuration defines (includes and worktree
 * configuration counted, since git itself reports them) is overridden with empty commands first. Never throws.
 */
export async function runGit(root: string, args: readonly string[], git: string | null = GIT_BINARY): Promise<GitRun> {
  if (git === null) return { ok: false, error: 'git is not installed', exitCode: null };
  const top = findWorkTree(root);
  if (top === null) return { ok: false, error: 'not a git repository', exitCode: null };
  const emptyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-'));
  try {
    const run = (argv: readonly string[]): Promise<GitRun> => gitOnce(git, root, [...overrides(emptyDir), ...argv], environment(emptyDir, path.dirname(top)));
    const names = await run(['config', '--name-only', '-z', '--get-regexp', '^filter\\.']);
    // Exit 1 means no filter is configured; any other failure is a failure.
    if (!names.ok && names.exitCode !== 1) return names;
    return await run([...(names.ok ? filterOverrides(names.stdout) : []), ...args]);
  } finally {
    await fs.rm(emptyDir, { recursive: true, force: true });
  }
}

/**
 * `-c filter.<name>.clean= …smudge= …process= …required=false` for every configured filter driver (a required
 * driver with an empty command makes git fail instead of passing content through). Filters are the one kind of
 * configured program no command-line flag turns off. Diff drivers (`textconv`, `command`, `diff.external`) are:
 * every diffing command spelunk runs must pass `--no-textconv --no-ext-diff`.
 */
export function filterOverrides(nameList: string): string[] {
  const drivers = new Set<string>();
  for (const key of nameList.split('\0')) {
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key.trim());
    if (match?.[1] !== undefined) drivers.add(match[1]);
  }
  return [...drivers].flatMap((name) =>
    ['clean=', 'smudge=', 'process=', 'required=false'].flatMap((setting) => ['-c', `filter.${name}.${setting}`]),
  );
}

async function gitOnce(git: string, cwd: string, args: string[], env: Record<string, string>): Promise<GitRun> {
  const run = await execCapped(git, args, { cwd, env, timeoutMs: GIT_TIMEOUT_MS, maxBytes: GIT_MAX_BYTES, argv0: 'git' });
  if (run.exitCode === 0) return { ok: true, stdout: run.stdout };
  if (run.timedOut) return { ok: false, error: `git took longer than ${GIT_TIMEOUT_MS / 1000} s`, exitCode: null };
  return { ok: false, error: run.stderr.trim().split('\n')[0] || `exit ${run.exitCode ?? run.signal}`, exitCode: run.exitCode };
}

import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execCapped, firstExecutableSync, type ExecResult } from './exec.js';
import { checkIncludes, includeQueryArgs } from './git-includes.js';
import { findWorkTree, locateGitDir, locateRepository, type GitLocation } from './git-repo.js';
import { TRUSTED_PATH } from './programs.js';

/** git's output for the small queries spelunk makes (HEAD, config names); more means something is wrong. */
const GIT_MAX_BYTES = 4 * 1024 * 1024;
const GIT_TIMEOUT_MS = 30_000;

/**
 * Every colour switch of git (color.<command>); each defaults to color.ui, and each overrides it. Not color.pager: a
 * plain boolean ("never" is an error) about output to a pager, and git never starts one here.
 */
export const COLOR_KEYS = ['color.ui', 'color.advice', 'color.branch', 'color.diff', 'color.grep', 'color.interactive',
  'color.push', 'color.remote', 'color.showBranch', 'color.status', 'color.transport'] as const;
/** Column layout (tag, branch, status, clean listings): git pipes the listing through a `git column` child. */
export const COLUMN_KEYS = ['column.ui', 'column.branch', 'column.clean', 'column.status', 'column.tag'] as const;

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
    // Signature programs of every format, as empty commands that cannot start: a signature shown through a format
    // or a configured log.showSignature then reads "cannot run", and nothing the repository names runs.
    'gpg.program=',
    'gpg.ssh.program=',
    'gpg.x509.program=',
    // The default format of log and show: the repository's could name a pretty.<name> alias with %G? or %(describe).
    'format.pretty=medium',
    'protocol.allow=never',
    'core.quotepath=false',
    // Read from anywhere the configuration says; an empty value is "no file".
    'mailmap.file=',
    'mailmap.blob=',
    'core.attributesFile=/dev/null',
    'core.excludesFile=/dev/null',
    // Caches git can do without, each one more file it would open (and echo in a parse error: "invalid
    // commit-graph chain: line '…'"); the answers are the same without them.
    'core.commitGraph=false',
    'core.multiPackIndex=false',
    // GIT_GRAFT_FILE (see environment) names /dev/null, which exists: without this git would advise on every call.
    'advice.graftFileDeprecated=false',
    // Submodules are other repositories: with `diff.submodule=diff` (or `log`) git starts a git inside the submodule,
    // which reads the submodule's own configuration and attributes (its diff drivers run) or another repository's
    // history; `short` prints the two commit ids and never enters it. These reach such children too.
    'diff.submodule=short',
    'submodule.recurse=false',
    'status.submoduleSummary=false',
    // Read from anywhere the configuration says: an existence oracle, and the order of the files shows its lines.
    'diff.orderFile=/dev/null',
    'blame.ignoreRevsFile=',
    // A specific key (color.diff=always) wins over color.ui, so each one is set; a test checks that every boolean
    // colour key of the installed git is here. blame colours by its own key; column layout starts `git column`.
    ...COLOR_KEYS.map((key) => `${key}=never`),
    'blame.coloring=none',
    ...COLUMN_KEYS.map((key) => `${key}=never`),
    // Paths from the repository top in a subdirectory root (the git tool refuses --full-name there).
    'grep.fullName=false',
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
    // Stryker disable next-line StringLiteral: git sets it to 0 itself for --no-optional-locks (overrides above); kept in case that flag goes.
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_LAZY_FETCH: '1',
    GIT_CEILING_DIRECTORIES: ceiling,
    // Grafts are long deprecated; the file's lines come back in "bad graft data: …" errors.
    GIT_GRAFT_FILE: '/dev/null',
    // Stryker disable next-line StringLiteral: with --no-pager git exports GIT_PAGER=cat to its children itself; kept in case that flag goes.
    GIT_PAGER: 'cat',
  };
}

/** The git binary: from TRUSTED_PATH only, never from the inherited PATH (a repository's `bin/git`). */
export const GIT_BINARY: string | null = firstExecutableSync(TRUSTED_PATH.split(':').map((dir) => `${dir}/git`));

/** A failure with `unsafe` is the repository refused for a special file in its git directory (see git-metadata.ts). */
type GitRun = { ok: true; stdout: string } | { ok: false; error: string; exitCode: number | null; unsafe?: true };

export { findWorkTree } from './git-repo.js';

/** Limits and pins for one hardened git call. */
interface GitCallOptions {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
  /**
   * The verified repository (locateGitDir or locateRepository of the root): its git directory is given as GIT_DIR with
   * its work tree (`top`, else the root) as GIT_WORK_TREE, so git reads exactly the repository that was checked instead
   * of discovering one; git still runs in the root, so a relative path means one below it. Without it the call checks
   * the repository of the work tree containing the root itself.
   */
  location?: { gitDir: string; commonDir: string; linked?: true; top?: string };
}

/** Why a call did not get as far as running git; `unsafe` as in GitRun; `timedOut`: the call's time limit ran out first. */
type GitRefusal = { error: string; unsafe?: true; timedOut?: true };

/**
 * Runs git in `root` with the isolation above; `git` is the binary (null: not installed), `timeoutMs` its time limit.
 * The first line of git's complaint, or the reason the repository is refused, is the error. Never throws.
 */
export async function runGit(
  root: string,
  args: readonly string[],
  git: string | null = GIT_BINARY,
  timeoutMs = GIT_TIMEOUT_MS,
): Promise<GitRun> {
  const run = await execGit(root, args, { timeoutMs, maxBytes: GIT_MAX_BYTES }, git);
  if ('error' in run) return { ok: false, error: run.error, exitCode: null, ...(run.unsafe ? { unsafe: true as const } : {}) };
  if (run.exitCode === 0) return { ok: true, stdout: run.stdout };
  if (run.timedOut) return { ok: false, error: `git took longer than ${timeoutMs / 1000} s`, exitCode: null };
  return { ok: false, error: run.stderr.trim().split('\n')[0] || `exit ${run.exitCode ?? run.signal}`, exitCode: run.exitCode };
}

/**
 * The hardened call behind runGit and the git tool. The repository is checked first (locateGitDir: pointers inside
 * the work tree, no special file where git reads; then every configuration include, see git-includes.ts), then the
 * filter query, then `args` under the same overrides and environment, bounded by `opts`. The process result comes
 * back whole (the tool shapes it like bash output); only a failure to get that far is an `error`. Never throws.
 */
export async function execGit(
  root: string,
  args: readonly string[],
  opts: GitCallOptions,
  git: string | null = GIT_BINARY,
): Promise<ExecResult | GitRefusal> {
  if (git === null) return { error: 'git is not installed' };
  const top = findWorkTree(root);
  if (top === null) return { error: 'not a git repository' };
  // A root below the work tree's top: the repository is checked from the top (git reads it from there).
  const located = opts.location === undefined ? await locateGitDir(top) : { ok: true as const, ...opts.location };
  if (!located.ok) return { error: located.reason, ...(located.unsafe ? { unsafe: true as const } : {}) };
  // One time limit for the whole call: the include and filter queries spend from it too.
  const deadline = Date.now() + opts.timeoutMs;
  const left = (): number => Math.max(1, deadline - Date.now());
  // The git directories of a linked worktree or of a work tree above the root lie outside it: the kernel sandbox must
  // show them, read-only (those inside the root are left out by the sandbox). The work tree's top is not shown:
  // history commands read objects and refs only, and git's chdir to the top lands on the sandbox's empty parent.
  const visible = [located.gitDir, located.commonDir];
  return withEmptyDir(async (emptyDir) => {
    const base = environment(emptyDir, path.dirname(top));
    const included = await includesRefusal(top, located, { git, emptyDir, base, signal: opts.signal, left });
    // Past the deadline the refusal is the time limit's (a loaded machine), not the repository's: said as a time-out.
    if (included !== null && Date.now() >= deadline) return { error: `git took longer than ${opts.timeoutMs / 1000} s`, timedOut: true as const };
    if (included !== null) return { error: included, unsafe: true as const };
    const env = { ...base, GIT_DIR: located.gitDir, GIT_WORK_TREE: opts.location === undefined ? top : (opts.location.top ?? root) };
    const run = (argv: readonly string[], maxBytes: number): Promise<ExecResult> =>
      execCapped(git, [...overrides(emptyDir), ...argv], {
        cwd: root,
        env,
        argv0: 'git',
        signal: opts.signal,
        timeoutMs: left(),
        maxBytes,
        visible,
      });
    const names = await run(['config', '--name-only', '-z', '--get-regexp', '^filter\\.'], GIT_MAX_BYTES);
    // Exit 1 means no filter is configured; any other failure is a failure.
    if (names.exitCode !== 0 && names.exitCode !== 1) return names;
    return await run([...(names.exitCode === 0 ? filterOverrides(names.stdout) : []), ...args], opts.maxBytes);
  });
}

/**
 * Everything execGit checks before it runs git: locateRepository (the root's repository, or the enclosing work tree's
 * with the root as its prefix), then the configuration includes (one git process). The git tool is offered only when
 * this passes. Never throws.
 */
export async function checkRepository(root: string, git: string | null = GIT_BINARY, timeoutMs = GIT_TIMEOUT_MS): Promise<GitLocation> {
  const located = await locateRepository(root);
  if (!located.ok || git === null) return located;
  const top = located.top ?? root;
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(1, deadline - Date.now());
  const reason = await withEmptyDir((emptyDir) =>
    includesRefusal(top, located, { git, emptyDir, base: environment(emptyDir, path.dirname(top)), left }),
  );
  return reason === null ? located : { ok: false, reason, unsafe: true };
}

interface QueryContext {
  git: string;
  emptyDir: string;
  base: Record<string, string>;
  signal?: AbortSignal;
  left(): number;
}

/** checkIncludes over the repository's `config` and `config.worktree`, each read by git outside any repository. */
function includesRefusal(top: string, located: { gitDir: string; commonDir: string }, q: QueryContext): Promise<string | null> {
  // An empty directory, discovery stopped above it: the query reads only the file named.
  const env = { ...q.base, GIT_CEILING_DIRECTORIES: path.dirname(q.emptyDir) };
  const query = (file: string): Promise<ExecResult> =>
    execCapped(q.git, [...overrides(q.emptyDir), ...includeQueryArgs(file)], {
      cwd: q.emptyDir,
      env,
      argv0: 'git',
      signal: q.signal,
      timeoutMs: q.left(),
      maxBytes: GIT_MAX_BYTES,
      visible: [top, path.dirname(file)],
    });
  return checkIncludes(top, [path.join(located.commonDir, 'config'), path.join(located.gitDir, 'config.worktree')], query);
}

/** Runs `fn` with a fresh private directory (git's HOME and hooks path), removed afterwards. */
async function withEmptyDir<T>(fn: (emptyDir: string) => Promise<T>): Promise<T> {
  const emptyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-'));
  try {
    return await fn(emptyDir);
  } finally {
    // Stryker disable next-line BooleanLiteral: the directory was made above, so `force` (ignore a missing path) never matters.
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
    // Stryker disable next-line Regex: unanchored, greedy `(.+)` still ends at the last dot; git's keys never end with a dot.
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key.trim());
    if (match?.[1] !== undefined) drivers.add(match[1]);
  }
  return [...drivers].flatMap((name) =>
    ['clean=', 'smudge=', 'process=', 'required=false'].flatMap((setting) => ['-c', `filter.${name}.${setting}`]),
  );
}

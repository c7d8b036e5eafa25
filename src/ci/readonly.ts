import { execFile } from 'node:child_process';
import { realpathSync, statSync, promises as fs } from 'node:fs';
import path from 'node:path';

/** git status of a huge monorepo with many untracked files can be long; beyond this we cannot prove anything. */
const GIT_MAX_BUFFER_BYTES = 64 * 1024 * 1024;
const GIT_TIMEOUT_MS = 60_000;
/** Differences listed in the detail line; the rest are counted. */
const MAX_DETAIL_ITEMS = 10;

/** What identifies a file's content without reading it; ctime cannot be set back by `touch`, so it catches resets. */
export interface Stamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export interface GitState {
  /** Work-tree top level; porcelain paths are relative to it. */
  top: string;
  head: string | null;
  /** Path (relative to top, POSIX) → two-letter status code, for everything under the root. */
  status: Map<string, string>;
  /** Stamps of the files already dirty before the run: a second change to them leaves the status line unchanged. */
  dirty: Map<string, Stamp | null>;
}

/** Repository state before a run; `noteRead` adds each file the tools read, stamped at its first read. */
export interface RepoState {
  root: string;
  /** null outside a git work tree (or without git): only the read manifest is compared. */
  git: GitState | null;
  /** Why git could not be used although it may be a work tree (e.g. "dubious ownership"); the CLI shows it as a warning. */
  warning: string | null;
  reads: Map<string, Stamp | null>;
  noteRead(absPath: string): void;
}

/**
 * Captures the state to compare after the run: in a git work tree, `git status` (untracked files included, ignored
 * excluded) and HEAD; in every case, the lazily filled manifest of files the tools read — which also covers
 * git-ignored files that status cannot see.
 */
export async function snapshotRepoState(root: string): Promise<RepoState> {
  const reads = new Map<string, Stamp | null>();
  const git = await gitState(root);
  return {
    root,
    git: typeof git === 'string' ? null : git,
    warning: typeof git === 'string' ? `read-only check without git (${git}); only files the tools read are compared` : null,
    reads,
    noteRead(absPath) {
      if (!reads.has(absPath)) reads.set(absPath, stampSync(absPath));
    },
  };
}

/**
 * Compares the repository with `before`. `ignore` lists absolute paths spelunk itself writes on request (a SARIF file
 * inside the repository) — better still, write those after this check. Fails closed: if git worked before and fails
 * now, the run is not verified.
 */
export async function verifyReadOnly(
  before: RepoState,
  opts: { ignore?: string[] } = {},
): Promise<{ verified: boolean; detail: string | null }> {
  const ignored = new Set((opts.ignore ?? []).map(realish));
  const changes: string[] = [];
  if (before.git !== null) {
    const gitChanges = await compareGit(before.root, before.git, ignored);
    if (typeof gitChanges === 'string') return { verified: false, detail: gitChanges };
    changes.push(...gitChanges);
  }
  for (const [abs, stamp] of before.reads) {
    if (ignored.has(abs)) continue;
    const change = compareStamp(stamp, stampSync(abs));
    if (change !== null) changes.push(`${change}: ${path.relative(before.root, abs) || abs}`);
  }
  const unique = [...new Set(changes)];
  if (unique.length === 0) return { verified: true, detail: null };
  const shown = unique.slice(0, MAX_DETAIL_ITEMS).join('; ');
  const more = unique.length > MAX_DETAIL_ITEMS ? ` (and ${unique.length - MAX_DETAIL_ITEMS} more)` : '';
  return { verified: false, detail: `${shown}${more}` };
}

/** Full SHA of HEAD, or null outside git or before the first commit. */
export async function gitCommit(root: string): Promise<string | null> {
  const head = await git(root, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  return head.ok ? head.stdout.trim() || null : null;
}

/** The git state, null when the root is not in a work tree, or why git failed. */
async function gitState(root: string): Promise<GitState | null | string> {
  const inside = await git(root, ['rev-parse', '--is-inside-work-tree', '--show-toplevel']);
  if (!inside.ok) return /not a git repository/i.test(inside.error) ? null : inside.error;
  const [flag, top] = inside.stdout.split('\n');
  if (flag !== 'true' || top === undefined || top === '') return null;
  const status = await gitStatus(root);
  if (typeof status === 'string') return status;
  const realTop = await fs.realpath(top);
  const dirty = new Map<string, Stamp | null>();
  for (const [rel, code] of status) {
    if (!code.includes('D')) dirty.set(rel, stampSync(path.join(realTop, rel)));
  }
  return { top: realTop, head: await gitCommit(root), status, dirty };
}

async function compareGit(root: string, before: GitState, ignored: Set<string>): Promise<string[] | string> {
  const status = await gitStatus(root);
  if (typeof status === 'string') return `git status failed after the run: ${status}`;
  const changes: string[] = [];
  const head = await gitCommit(root);
  if (head !== before.head) changes.push(`HEAD moved: ${before.head ?? '(none)'} → ${head ?? '(none)'}`);
  const skip = (rel: string): boolean => ignored.has(path.join(before.top, rel));
  for (const [rel, code] of status) {
    if (skip(rel)) continue;
    const was = before.status.get(rel);
    if (was === undefined) changes.push(`${describe(code)}: ${rel}`);
    else if (was !== code) changes.push(`status ${was.trim()} → ${code.trim()}: ${rel}`);
  }
  for (const [rel, was] of before.status) {
    if (!skip(rel) && !status.has(rel)) changes.push(`status ${was.trim()} → clean: ${rel}`);
  }
  for (const [rel, stamp] of before.dirty) {
    if (skip(rel)) continue;
    const change = compareStamp(stamp, stampSync(path.join(before.top, rel)));
    if (change !== null) changes.push(`${change}: ${rel}`);
  }
  return changes;
}

function describe(code: string): string {
  if (code === '??') return 'created';
  if (code.includes('D')) return 'deleted';
  if (code.includes('R')) return 'renamed';
  return 'modified';
}

/**
 * `git status --porcelain=v1 -z` below the root, parsed to path → code. `--no-optional-locks` (and
 * GIT_OPTIONAL_LOCKS=0) stop status from refreshing and rewriting .git/index, which would itself be a write.
 */
async function gitStatus(root: string): Promise<Map<string, string> | string> {
  const run = await git(root, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=no', '--', '.']);
  if (!run.ok) return run.error;
  const status = new Map<string, string>();
  const fields = run.stdout.split('\0');
  for (let i = 0; i < fields.length; i += 1) {
    const entry = fields[i] ?? '';
    if (entry.length < 4) continue;
    const code = entry.slice(0, 2);
    status.set(entry.slice(3), code);
    // Renames and copies are followed by their source path as a separate field.
    if (code.includes('R') || code.includes('C')) i += 1;
  }
  return status;
}

type GitRun = { ok: true; stdout: string } | { ok: false; error: string };

/**
 * Runs git without a shell, with a minimal environment: GIT_DIR/GIT_WORK_TREE and friends from the caller must not
 * redirect it; HOME stays so a CI's safe.directory setting applies. fsmonitor is off because it runs a configured
 * program.
 */
function git(cwd: string, args: string[]): Promise<GitRun> {
  const env: Record<string, string> = { GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0' };
  for (const key of ['PATH', 'HOME', 'XDG_CONFIG_HOME', 'SYSTEMROOT']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  const full = ['--no-optional-locks', '-c', 'core.fsmonitor=false', '-c', 'core.quotepath=false', ...args];
  return new Promise((resolve) => {
    execFile(
      'git',
      full,
      { cwd, env, shell: false, maxBuffer: GIT_MAX_BUFFER_BYTES, timeout: GIT_TIMEOUT_MS, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ ok: true, stdout });
        const reason = stderr.trim().split('\n')[0] || error.message;
        resolve({ ok: false, error: reason });
      },
    );
  });
}

function stampSync(abs: string): Stamp | null {
  try {
    const stat = statSync(abs);
    return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs };
  } catch {
    return null;
  }
}

function compareStamp(before: Stamp | null, after: Stamp | null): string | null {
  if (before === null) return after === null ? null : 'created';
  if (after === null) return 'deleted';
  if (before.size !== after.size || before.mtimeMs !== after.mtimeMs || before.ctimeMs !== after.ctimeMs) return 'modified';
  return null;
}

/** Resolves symlinks in the directory part so an ignore path matches the real paths the tools report. */
function realish(file: string): string {
  const abs = path.resolve(file);
  try {
    return path.join(realpathSync.native(path.dirname(abs)), path.basename(abs));
  } catch {
    return abs;
  }
}

import { opendirSync, realpathSync, statSync } from 'node:fs';
import { mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execCapped, firstExecutableSync } from './exec.js';
import { GIT_BINARY, runGit } from './git.js';
import { isInside } from './paths.js';
import { TRUSTED_PATH } from './programs.js';

/**
 * The read-only proof. Every change to a file, a directory entry or a symlink sets its ctime to the kernel's clock,
 * and nothing a process can do sets it back (touch -d moves mtime, not ctime). So instead of comparing two full
 * snapshots, spelunk notes when the tools could first run and afterwards lists, with one `find` walk, every entry of
 * the root whose ctime is later: a created or modified file names itself, a deleted or renamed one names its
 * directory. git is asked only for HEAD (hardened, see git.ts); its work-tree comparison, which runs the
 * repository's filter drivers, is never used. Files the tools read are also stamped (size, mtime, ctime) at first
 * read and compared, which does not depend on clocks at all.
 */

/**
 * How far before the snapshot a ctime still counts as "during the run" when the file clock cannot be read (see
 * fileClockNow). File timestamps come from the kernel's coarse clock, which can differ from the one Date.now() reads
 * by a tick or more (1-10 ms; measured up to 4 ms ahead in a VM); on a filesystem that keeps whole seconds only, a
 * change can carry a time up to a second earlier than it happened.
 */
const CLOCK_MARGIN_MS = 25;
/** How long the snapshot waits for the file clock to tick once before it falls back to Date.now() and the margin. */
const FILE_CLOCK_WAIT_MS = 100;
const COARSE_CLOCK_MARGIN_MS = 2_000;
const FIND_TIMEOUT_MS = 120_000;
/**
 * HEAD at the start and at the end of a run: a few ms normally, far less than these caps even under load
 * (docs/bench-log.md). These two (0.5 s each; the saved session records the end's, run-question.ts), a resumed
 * session's HEAD query (0.2 s, resume.ts) and the commit citations (0.6 s together, citations/verify.ts) keep a run
 * that calls no tool under 2 s of git in total, whatever the repository does to slow git down.
 */
const HEAD_TIMEOUT_MS = 500;
/** The walk prints only changed entries; this many bytes of them is far more than the detail line shows. */
const FIND_MAX_BYTES = 1024 * 1024;
/** Differences listed in the detail line; the rest are counted. */
const MAX_DETAIL_ITEMS = 10;
/** Top-level entries sampled to tell a filesystem that keeps only whole seconds. */
const GRANULARITY_SAMPLE = 8;

const FIND_BINARY = firstExecutableSync(TRUSTED_PATH.split(':').map((dir) => `${dir}/find`));

/** What identifies a file's content without reading it; ctime cannot be set back by `touch`, so it catches resets. */
interface Stamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** Repository state before a run; `noteRead` adds each file the tools read, stamped at its first read. */
export interface RepoState {
  root: string;
  /**
   * The instant from which a ctime counts as a change made during the run, as find's `-newerct` reference
   * `@seconds.fraction`: to the nanosecond when read from the file clock, to the millisecond from Date.now().
   */
  sinceRef: string;
  /** HEAD's commit, or null outside git, before the first commit, or when git cannot say. */
  head: string | null;
  /** True when git gave up or was not used (so `head` says nothing): the end's HEAD is then not compared with it. */
  headUnknown: boolean;
  /** Something that weakens the proof (no find on this machine); the CLI shows it as a warning. */
  warning: string | null;
  /** True on a filesystem that keeps whole seconds: a ctime may then be up to a second earlier than the change. */
  coarse: boolean;
  reads: Map<string, Stamp | null>;
  noteRead(absPath: string): void;
}

export interface ProofOptions {
  /** Tests only: the find binary (null: not installed). */
  find?: string | null;
  /** Tests only: the walk's time limit. */
  findTimeoutMs?: number;
  /** HEAD's budget at the start and at the end (default HEAD_TIMEOUT_MS); see Config.headTimeoutMs. */
  headTimeoutMs?: number;
}

/** One difference the proof found: its line in `detail`, the entry it names, and the entry's ctime when known. */
export interface ProofChange {
  text: string;
  /** Relative to the root; a directory ends in `/`; null for HEAD. */
  path: string | null;
  /** The entry's ctime after the run (ms since the epoch), or null (a deleted file, HEAD). */
  ctimeMs: number | null;
}

/** The proof's verdict, and HEAD as it read it at the end (which the saved session records instead of asking again). */
export interface ReadOnlyProof {
  verified: boolean;
  detail: string | null;
  /** Every difference found (the caller may attribute them, see run/concurrent.ts); empty when verified. */
  changes: ProofChange[];
  /** False when the walk could not run or finish (no find, a timeout, too many entries to list): `changes` may miss some. */
  complete: boolean;
  /** HEAD at the end: a commit, null outside git or before the first commit, undefined when git gave up or was not used. */
  head: string | null | undefined;
}

/** Records the start of the run: the time, HEAD, and an empty manifest of reads. Cheap: nothing is walked. */
export async function snapshotRepoState(root: string, opts: ProofOptions = {}): Promise<RepoState> {
  const coarse = coarseTimestamps(root);
  const [git, clock] = await Promise.all([gitHead(root, opts.headTimeoutMs), coarse ? Promise.resolve(null) : fileClockNow(root)]);
  const sinceRef = clock ?? `@${((Date.now() - (coarse ? COARSE_CLOCK_MARGIN_MS : CLOCK_MARGIN_MS)) / 1000).toFixed(3)}`;
  const reads = new Map<string, Stamp | null>();
  const find = findOf(opts);
  return {
    root,
    sinceRef,
    head: git.head,
    headUnknown: git.refused !== null,
    coarse,
    // An unsafe repository is said once by the session (openSession's warnings), a give-up here.
    warning:
      [
        find === null ? 'read-only check without find (not installed); only the files the tools read are compared' : null,
        git.unsafe ? null : git.refused,
      ]
        .filter((w) => w !== null)
        .join('; ') || null,
    reads,
    noteRead(absPath) {
      if (!reads.has(absPath)) reads.set(absPath, stampSync(absPath));
    },
  };
}

/**
 * Compares the repository with `before`. Files spelunk writes on request (a SARIF file inside the repository) are
 * written after this check. Fails closed: a walk that cannot finish is not a proof.
 */
export async function verifyReadOnly(before: RepoState, opts: ProofOptions = {}): Promise<ReadOnlyProof> {
  const find = findOf(opts);
  const changes: ProofChange[] = [];
  const { head, refused } = await gitHead(before.root, opts.headTimeoutMs);
  const after = refused === null ? head : undefined;
  // A HEAD git gave up on (a loaded machine, its 0.5 s), at the start or at the end, is no evidence either way. The walk
  // below sees every write under .git by its ctime (a commit, a moved ref, a rewritten packed-refs), so only without
  // find does an unknown HEAD fail the proof.
  const unknown = before.headUnknown || (refused !== null && before.head !== null);
  const headChange = (text: string): ProofChange => ({ text, path: null, ctimeMs: null });
  if (unknown && find === null) changes.push(headChange(`HEAD could not be compared (${refused ?? before.warning ?? 'git gave up at the start'})`));
  else if (!unknown && head !== before.head) changes.push(headChange(`HEAD moved: ${before.head ?? '(none)'} → ${head ?? '(none)'}`));
  if (find !== null) {
    const changed = await changedSince(find, before.root, before.sinceRef, opts.findTimeoutMs ?? FIND_TIMEOUT_MS);
    if (typeof changed === 'string') return { verified: false, detail: changed, head: after, changes, complete: false };
    changes.push(...changed.map(describeEntry));
  }
  for (const [abs, stamp] of before.reads) {
    const now = stampSync(abs);
    const change = compareStamp(stamp, now);
    const rel = path.relative(before.root, abs) || abs;
    if (change !== null) changes.push({ text: `${change}: ${rel}`, path: rel, ctimeMs: now?.ctimeMs ?? null });
  }
  const unique = [...new Map(changes.map((c) => [c.text, c])).values()];
  const complete = find !== null;
  if (unique.length === 0) return { verified: true, detail: null, head: after, changes: [], complete };
  const shown = unique.slice(0, MAX_DETAIL_ITEMS).map((c) => c.text).join('; ');
  const more = unique.length > MAX_DETAIL_ITEMS ? ` (and ${unique.length - MAX_DETAIL_ITEMS} more)` : '';
  return { verified: false, detail: `${shown}${more}`, head: after, changes: unique, complete };
}

function findOf(opts: ProofOptions): string | null {
  return opts.find === undefined ? FIND_BINARY : opts.find;
}

/** Full SHA of HEAD, or null outside git, before the first commit, or when git is missing or refuses. */
export async function gitCommit(root: string, timeoutMs = HEAD_TIMEOUT_MS): Promise<string | null> {
  return (await gitHead(root, timeoutMs)).head;
}

/** gitCommit, or undefined when git was refused or gave up: HEAD is then unknown, not absent. */
export async function gitCommitIfKnown(root: string, timeoutMs = HEAD_TIMEOUT_MS): Promise<string | null | undefined> {
  const { head, refused } = await gitHead(root, timeoutMs);
  return refused === null ? head : undefined;
}

/**
 * gitCommit, and why HEAD is unknown when git was not used or gave up: the repository holds a special file where git
 * reads (said by the session), or git did not answer within HEAD_TIMEOUT_MS (the snapshot's warning or the proof's
 * detail).
 */
async function gitHead(root: string, timeoutMs = HEAD_TIMEOUT_MS): Promise<{ head: string | null; refused: string | null; unsafe?: true }> {
  const head = await runGit(root, ['rev-parse', '--verify', '--quiet', 'HEAD'], GIT_BINARY, timeoutMs);
  if (head.ok) return { head: head.stdout.trim() || null, refused: null };
  if (head.unsafe === true) return { head: null, refused: `git is not used for this repository: ${head.error}`, unsafe: true };
  if (head.error.startsWith('git took longer')) return { head: null, refused: `git gave up reading HEAD after ${timeoutMs / 1000} s` };
  return { head: null, refused: null };
}

interface ChangedEntry {
  /** find's %y: f, d, l, … */
  type: string;
  rel: string;
  /** find's %C@ (the ctime), in ms. */
  ctimeMs: number;
}

/**
 * The kernel's file clock at the start of the run, as find's `@seconds.nanoseconds`, or null when it cannot be read.
 * A margin on Date.now() would blame the run for a change made just before it (a checkout, the test's own commit);
 * instead a probe file outside the root is stamped until its ctime ticks once: everything changed before the first
 * stamp carries a ctime at most equal to it, and everything the tools do later a strictly later one, so find's strict
 * `-newerct` draws the line exactly. Nothing is written inside the root: a temporary directory inside it is not used.
 */
async function fileClockNow(root: string): Promise<string | null> {
  try {
    // Checked before anything is created: a probe directory inside the root would itself be a change.
    const tmp = realpathSync(os.tmpdir());
    if (isInside(realpathSync(root), tmp)) return null;
    // Stryker disable next-line StringLiteral: the directory's name prefix is for people looking in /tmp; any name works.
    const dir = await mkdtemp(path.join(tmp, 'spelunk-clock-'));
    try {
      return await firstTick(path.join(dir, 'probe'));
    } finally {
      // Stryker disable next-line BooleanLiteral: `force` only matters for a missing path, and the directory was just made.
      await rm(dir, { recursive: true, force: true });
    }
  } catch {
    // Emptied (a mutant), this gives undefined, which the caller's `??` reads as null: equivalent, counted as accepted
    // (a next-line directive cannot reach a catch that shares its line with the end of the try block).
    return null;
  }
}

/** The probe's first ctime, once a later stamp shows the clock has ticked past it; null if it does not tick in time. */
async function firstTick(probe: string): Promise<string | null> {
  // Stryker disable next-line StringLiteral: only the probe's timestamps are read, never its content.
  await writeFile(probe, '');
  const first = (await stat(probe, { bigint: true })).ctimeNs;
  const deadline = Date.now() + FILE_CLOCK_WAIT_MS;
  // Stryker disable next-line EqualityOperator: one more stamp at the deadline's exact millisecond changes nothing.
  while (Date.now() < deadline) {
    await utimes(probe, 0, 0);
    // Returning before the tick (a mutant) survives the tests only by timing: removing the probe directory takes longer
    // than one tick of this machine's file clock. Not equivalent, so not disabled: counted as accepted.
    if ((await stat(probe, { bigint: true })).ctimeNs > first) {
      return `@${first / 1_000_000_000n}.${String(first % 1_000_000_000n).padStart(9, '0')}`;
    }
  }
  return null;
}

/** Every entry below `root` (the root included) whose ctime is later than `at` (find's `@seconds.fraction`), found by one `find -P` walk. */
async function changedSince(find: string, root: string, at: string, timeoutMs: number): Promise<ChangedEntry[] | string> {
  // Stryker disable next-line StringLiteral: -P (never follow symlinks) is find's default, stated so that no reader has to know it.
  const run = await execCapped(find, ['-P', '.', '-newerct', at, '-printf', '%y %C@ %P\\0'], {
    cwd: root,
    timeoutMs,
    maxBytes: FIND_MAX_BYTES,
    argv0: 'find',
  });
  if (run.timedOut) return `the read-only check did not finish within ${timeoutMs / 1000} s`;
  if (run.capped) return 'the repository changed during the run (more changed entries than can be listed)';
  // Exit 1 with output on stderr: some directory could not be read; what could be read is still compared.
  if (run.exitCode !== 0 && !(run.exitCode === 1 && run.stderr !== '')) {
    return `the read-only check could not walk the repository (${run.stderr.trim().split('\n')[0] || `exit ${run.exitCode ?? run.signal}`})`;
  }
  return run.stdout
    .split('\0')
    .map((record) => /^(\S) (\d+(?:\.\d+)?) (.*)$/s.exec(record))
    .filter((m) => m !== null)
    .map((m) => ({ type: m[1] as string, ctimeMs: Number(m[2]) * 1000, rel: m[3] as string }));
}

function describeEntry(entry: ChangedEntry): ProofChange {
  const rel = entry.rel === '' ? '.' : entry.rel;
  if (entry.type === 'd') return { text: `entries created, deleted or renamed in: ${rel}/`, path: `${rel}/`, ctimeMs: entry.ctimeMs };
  return { text: `changed: ${rel}`, path: rel, ctimeMs: entry.ctimeMs };
}

/**
 * True when the root and a sample of its entries all carry whole-second timestamps (FAT, HFS+, small-inode ext), or
 * cannot be read. The sampling can only be told apart on such a filesystem, which neither CI nor a test can mount
 * without root: its mutants are accepted, and the decision itself is tested as a table (wholeSeconds).
 */
function coarseTimestamps(root: string): boolean {
  try {
    const dir = opendirSync(root);
    const names: string[] = [];
    try {
      for (let entry = dir.readSync(); entry !== null && names.length < GRANULARITY_SAMPLE; entry = dir.readSync()) names.push(entry.name);
    } finally {
      dir.closeSync();
    }
    return wholeSeconds([root, ...names.map((name) => path.join(root, name))].map((p) => statSync(p, { bigint: true })));
  } catch {
    return true;
  }
}

/** True when every one of `stats` has a whole-second ctime and mtime. */
export function wholeSeconds(stats: readonly { ctimeNs: bigint; mtimeNs: bigint }[]): boolean {
  return stats.every((st) => st.ctimeNs % 1_000_000_000n === 0n && st.mtimeNs % 1_000_000_000n === 0n);
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
  // Stryker disable next-line ConditionalExpression,LogicalOperator: where ctimes have nanoseconds every change moves it, so size and mtime add nothing a test here can see; they catch a change within one tick on whole-second filesystems.
  if (before.size !== after.size || before.mtimeMs !== after.mtimeMs || before.ctimeMs !== after.ctimeMs) return 'modified';
  return null;
}

import type { AgentEvent } from '../agent/events.js';
import type { ConcurrentChanges, ResultObject } from '../output/result.js';
import { runGit } from '../sandbox/git.js';
import type { SandboxKind } from '../sandbox/kernel.js';
import type { ProofChange, ReadOnlyProof } from '../sandbox/readonly.js';
import type { EventSink } from './ask.js';

/**
 * Who changed the repository during a run. The read-only proof exists to show that *spelunk* changed nothing; on a
 * working machine something else always writes (an editor's save, a test watcher's `__pycache__/`, `cargo check`'s
 * `target/`), and that is information, not a failure.
 *
 * - Under the kernel sandbox every program spelunk runs sees the repository mounted read-only, and spelunk's own
 *   process writes nothing there: any change is another program's, whatever the walk found.
 * - Under the tables alone a program the model asked for could in principle write. The proof's own evidence tells
 *   them apart: every changed entry carries its ctime, which nothing can set back, and spelunk knows when each tool
 *   call ran (its process group is killed when the call ends). A change whose ctime falls outside every tool call
 *   (with a margin for the kernel's coarse clock) cannot be a tool's; one inside a call, or one without a ctime when
 *   the walk could not run, still fails the run. A ctime is the entry's *last* change: a write by a tool that someone
 *   else overwrote later counts as theirs (their content is what is there).
 */

/** Margin around each tool call for the kernel's file clock, which can differ from Date.now() by a tick (1-10 ms). */
const WINDOW_MARGIN_MS = 50;
/** On a filesystem that keeps whole seconds, a ctime may be up to a second earlier than the change. */
const COARSE_WINDOW_MARGIN_MS = 2_000;
/** Paths listed in concurrent_changes; the rest are counted. */
const MAX_LISTED = 20;
/** Paths (and their parent directories) asked of `git check-ignore` per call, and calls at most. */
const CHECK_IGNORE_BATCH = 200;
const CHECK_IGNORE_MAX_PATHS = 2_000;
const CHECK_IGNORE_TIMEOUT_MS = 2_000;

/** The proof as a run reports it: whether spelunk is proven to have changed nothing, how, and what others changed. */
export interface Attribution {
  /** true: spelunk changed nothing; false: a change could be a tool's, or there is no proof; null: never checked. */
  verified: boolean | null;
  /** Why the proof failed (the changes that could be a tool's), or null. */
  detail: string | null;
  /** How the proof was made, in one sentence (null: no proof). */
  how: string | null;
  /** Changes by other programs (null: none). */
  concurrent: ConcurrentChanges | null;
  /** Files the tools read that changed during the run (an audit's evidence moved), relative to the root. */
  readChanged: string[];
}

/** A tool call's span, in Date.now() milliseconds. */
export interface Window {
  start: number;
  end: number;
}

export const PROVEN_BY_KERNEL = 'every program spelunk ran saw the repository mounted read-only (kernel sandbox)';
export const PROVEN_BY_WALK = 'no entry of the repository changed during the run (ctime walk)';
export const PROVEN_BY_TIMING = 'every change happened while no tool call of spelunk was running (ctime walk)';

/** Records each tool call's span; `windows()` closes any still open at `now`. */
export function toolWindows(now: () => number = Date.now): EventSink & { windows(): Window[] } {
  const open = new Map<string, number>();
  const closed: Window[] = [];
  return {
    handle(event: AgentEvent) {
      if (event.type === 'tool_start') open.set(event.id, now());
      if (event.type !== 'tool_end') return;
      closed.push({ start: open.get(event.id) ?? Number.NEGATIVE_INFINITY, end: now() });
      open.delete(event.id);
    },
    windows() {
      return [...closed, ...[...open.values()].map((start) => ({ start, end: Number.POSITIVE_INFINITY }))];
    },
  };
}

interface AttributeInput {
  sandbox: SandboxKind;
  windows: readonly Window[];
  /** The filesystem keeps whole seconds (RepoState.coarse). */
  coarse: boolean;
  /** The files the tools read, relative to the root. */
  reads: readonly string[];
  /** Tells gitignored paths (relative to the root); by default `git check-ignore` in `root`. */
  ignored: (paths: readonly string[]) => Promise<Set<string>>;
}

/** Splits the proof's changes into the ones that could be spelunk's (a failure) and other programs' (information). */
export async function attribute(proof: ReadOnlyProof, input: AttributeInput): Promise<Attribution> {
  const readChanged = [...new Set(proof.changes.map((c) => c.path))].filter((p): p is string => p !== null && input.reads.includes(p));
  if (proof.verified) return { verified: true, detail: null, how: input.sandbox === 'kernel' ? PROVEN_BY_KERNEL : PROVEN_BY_WALK, concurrent: null, readChanged };
  if (input.sandbox === 'kernel') {
    return { verified: true, detail: null, how: PROVEN_BY_KERNEL, concurrent: await summarise(proof.changes, proof.complete, input.ignored), readChanged };
  }
  const margin = input.coarse ? COARSE_WINDOW_MARGIN_MS : WINDOW_MARGIN_MS;
  const duringTool = (at: number): boolean => input.windows.some((w) => at >= w.start - margin && at <= w.end + margin);
  // Without a complete walk, a change without a ctime (a deleted file, HEAD) has nothing to be timed by.
  const couldBeOurs = (c: ProofChange): boolean => (c.ctimeMs === null ? !proof.complete : duringTool(c.ctimeMs));
  const ours = proof.changes.filter(couldBeOurs);
  if (!proof.complete && proof.changes.length === 0) return { verified: false, detail: proof.detail, how: null, concurrent: null, readChanged };
  const others = proof.changes.filter((c) => !couldBeOurs(c));
  const concurrent = others.length > 0 ? await summarise(others, true, input.ignored) : null;
  if (ours.length === 0) return { verified: true, detail: null, how: PROVEN_BY_TIMING, concurrent, readChanged };
  // A change without a ctime (HEAD, a deleted file) was timed by the walk's entries, some of them now in doubt: it goes
  // with the failure too, in the proof's order.
  const failing = proof.changes.filter((c) => ours.includes(c) || c.ctimeMs === null);
  const shown = failing.slice(0, 10).map((c) => c.text).join('; ');
  const more = failing.length > 10 ? ` (and ${failing.length - 10} more)` : '';
  return { verified: false, detail: `${shown}${more} (while a tool call of spelunk ran)`, how: null, concurrent, readChanged };
}

/** `git check-ignore` over `paths` in `root`: the ones git ignores (none outside git, or when git cannot say). */
export function gitIgnored(root: string): (paths: readonly string[]) => Promise<Set<string>> {
  return async (paths) => {
    const found = new Set<string>();
    const asked = paths.filter((p) => p !== '' && !p.startsWith('-') && !p.includes('\n')).slice(0, CHECK_IGNORE_MAX_PATHS);
    for (let i = 0; i < asked.length; i += CHECK_IGNORE_BATCH) {
      const run = await runGit(root, ['check-ignore', '--', ...asked.slice(i, i + CHECK_IGNORE_BATCH)], undefined, CHECK_IGNORE_TIMEOUT_MS);
      // Exit 1: none of these is ignored; anything else that is not ok: git cannot say, so nothing is ignored.
      if (!run.ok) continue;
      for (const line of run.stdout.split('\n')) if (line !== '') found.add(line);
    }
    return found;
  };
}

/**
 * Others' changes as concurrent_changes: gitignored entries (and .git's) by their outermost ignored ancestor; a
 * directory whose only changed entries are ignored (a `__pycache__/` created in it) counted with them.
 */
async function summarise(
  changes: readonly ProofChange[],
  complete: boolean,
  ignoredOf: AttributeInput['ignored'],
): Promise<ConcurrentChanges | null> {
  const paths = [...new Set(changes.map((c) => c.path ?? 'HEAD'))].map((p) => (p === './' ? '' : p));
  const bare = (p: string): string => p.replace(/\/$/, '');
  const candidates = [...new Set(paths.filter((p) => p !== 'HEAD').flatMap((p) => ancestors(bare(p))))];
  const ignored = await ignoredOf(candidates.filter((p) => p !== '.git' && !p.startsWith('.git/')));
  const groupOf = (p: string): string | null => {
    if (p === 'HEAD') return null;
    const hit = ancestors(bare(p)).find((a) => a === '.git' || ignored.has(a));
    if (hit === undefined) return null;
    return hit === bare(p) && !p.endsWith('/') ? hit : `${hit}/`;
  };
  const groups = new Map<string, number>();
  const listed: string[] = [];
  for (const p of paths) {
    const group = groupOf(p) ?? (p.endsWith('/') || p === '' ? foldedInto(p, paths, groupOf) : null);
    if (group !== null) groups.set(group, (groups.get(group) ?? 0) + 1);
    else listed.push(p === '' ? './' : p);
  }
  if (listed.length === 0 && groups.size === 0 && complete) return null;
  return {
    paths: listed.slice(0, MAX_LISTED),
    more: listed.length - Math.min(listed.length, MAX_LISTED),
    ignored: [...groups].map(([path, entries]) => ({ path, entries })).sort((a, b) => b.entries - a.entries || a.path.localeCompare(b.path)),
  };
}

/**
 * The group a changed directory is counted with when one of the entries changed directly inside it is ignored: a
 * directory's ctime moves when an entry is created, deleted or renamed in it, which the ignored one explains.
 */
function foldedInto(dir: string, paths: readonly string[], groupOf: (p: string) => string | null): string | null {
  const children = paths.filter((p) => p !== dir && parentOf(p) === dir);
  return children.map(groupOf).find((g) => g !== null) ?? null;
}

/** `a/b/c` → `['a', 'a/b', 'a/b/c']` (outermost first). */
function ancestors(p: string): string[] {
  if (p === '') return [];
  const parts = p.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** The directory an entry is in, as a change names it (`a/` for `a/b` or `a/b/`; `''` at the top). */
function parentOf(p: string): string {
  const bare = p.replace(/\/$/, '');
  const cut = bare.lastIndexOf('/');
  return cut < 0 ? '' : `${bare.slice(0, cut)}/`;
}

/** One line for a person: the changed paths, then the ignored output summarised. */
function describeConcurrent(changes: ConcurrentChanges): string {
  const listed = changes.paths.join(', ') + (changes.more > 0 ? ` and ${changes.more} more` : '');
  const entries = (n: number): string => `${n} ${n === 1 ? 'entry' : 'entries'}`;
  const ignored = changes.ignored.map((g) => `${g.path} (${entries(g.entries)})`).join(', ');
  return [listed, ignored === '' ? '' : `gitignored: ${ignored}`].filter((s) => s !== '').join('; ') || 'entries the walk could not list';
}

/** The one warning about other programs' changes: what they changed, and how spelunk's own part was proven. */
export function concurrentLine(result: Pick<ResultObject, 'concurrent_changes' | 'readonly_proof'>): string {
  const changes = result.concurrent_changes ? describeConcurrent(result.concurrent_changes) : '';
  return `other programs changed the repository during the run: ${changes} (not spelunk: ${result.readonly_proof ?? 'unproven'})`;
}

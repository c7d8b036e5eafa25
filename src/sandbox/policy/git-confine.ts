import type { GitFlagRule, GitPolicy } from './git-tables.js';

/**
 * The git tool in a root below the top of its work tree (`spelunk -C packages/vite`): git reads the enclosing
 * repository, run from the root, and every command is confined to the root's files. Paths are relative to the root
 * (git resolves a relative pathspec and `REV:./path` against the directory it runs in), every path-taking command
 * gets `-- .` when the model names no path, `REV:path` becomes `REV:./path`, and what would print an object of any
 * other directory (a tree or blob named by id, `cat-file` of a commit) is refused with the form that works. Commit
 * ids, messages and refs stay readable: they are the history's metadata, not its files.
 */

type Step<T> = { ok: true; value: T } | { ok: false; reason: string };

const deny = (reason: string): GitFlagRule => ({ type: 'deny', reason });
const OUTSIDE = 'shows files outside this root, which is a subdirectory of its repository';

/** Flags refused only in a subdirectory root: each would show files outside it in spite of the `-- .` pathspec. */
const CONFINED_DENY: Readonly<
  Record<string, { long?: Readonly<Record<string, GitFlagRule>>; short?: Readonly<Record<string, GitFlagRule>> }>
> = {
  log: {
    long: {
      'pickaxe-all': deny(`${OUTSIDE} (the whole change of each commit found); use -S or -G alone`),
      'full-diff': deny(`${OUTSIDE} (the whole change of each commit); the diff is limited to the root`),
      relative: deny('is fixed here: paths are always relative to this root'),
    },
  },
  show: { long: { relative: deny('is fixed here: paths are always relative to this root') } },
  diff: { long: { relative: deny('is fixed here: paths are always relative to this root') } },
  'rev-list': { long: { objects: deny(`${OUTSIDE} (the ids of every tree and file of each commit); use ls-tree -r HEAD`) } },
  'ls-tree': {
    long: {
      'full-tree': deny(`${OUTSIDE}; ls-tree HEAD lists this root`),
      'full-name': deny('prints paths from the repository top; paths here are relative to this root'),
    },
  },
  grep: { long: { 'full-name': deny('prints paths from the repository top; paths here are relative to this root') } },
  // Blame's copy detection names the other files a line came from, anywhere in the repository.
  blame: { short: { C: deny(`${OUTSIDE} (where copied lines came from); use -M within the file`) } },
};

/** Forced in a subdirectory root: diff paths relative to the root (git also drops changes outside it). */
const CONFINED_FORCED: Readonly<Record<string, readonly string[]>> = { log: ['--relative'], show: ['--relative'], diff: ['--relative'] };

/** Verbs that cannot take a path, so they would show the whole repository's change. */
const CONFINED_VERBS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  stash: { show: `git stash show is refused here: it ${OUTSIDE} and takes no path; use log -p -n 1 stash@{0} -- .` },
};

/** The subcommand's policy with the subdirectory root's denials and forced flags; the same policy otherwise. */
export function confinedPolicy(sub: string, policy: GitPolicy): GitPolicy {
  const extra = Object.hasOwn(CONFINED_DENY, sub) ? CONFINED_DENY[sub] : undefined;
  const forced = Object.hasOwn(CONFINED_FORCED, sub) ? CONFINED_FORCED[sub] ?? [] : [];
  if (extra === undefined && forced.length === 0) return policy;
  return {
    ...policy,
    long: { ...policy.long, ...extra?.long },
    short: { ...policy.short, ...extra?.short },
    forced: [...policy.forced, ...forced],
  };
}

/** Why a verb is refused in a subdirectory root, or null. */
export function confinedVerbReason(sub: string, verb: string | undefined): string | null {
  if (verb === undefined || !Object.hasOwn(CONFINED_VERBS, sub)) return null;
  const verbs = CONFINED_VERBS[sub] ?? {};
  return Object.hasOwn(verbs, verb) ? (verbs[verb] ?? null) : null;
}

/** Subcommands that take pathspecs: `-- .` is added when the model names no path (blame needs its file). */
const PATHSPEC_DEFAULT: ReadonlySet<string> = new Set([
  'log',
  'show',
  'diff',
  'shortlog',
  'rev-list',
  'grep',
  'ls-tree',
  'status',
  'ls-files',
]);

/** The paths a confined command runs with: the model's own (already confined by their text), else `.`. */
export function confinedPaths(sub: string, paths: readonly string[], given: ReadonlySet<string>): string[] {
  // `log -L` names its file in the flag, and git refuses a pathspec beside it; the -L path is checked like any path.
  if (paths.length > 0 || !PATHSPEC_DEFAULT.has(sub) || (sub === 'log' && given.has('-L'))) return [...paths];
  return ['.'];
}

/**
 * One revision of a confined command. `REV:path` is rewritten to `REV:./path` (git reads `./` from the directory it
 * runs in, the root; the path was checked by its text: no `..` out, not absolute, no magic). show and diff print a
 * blob or a tree named by id whatever the pathspec, so a plain revision is peeled to a commit (`REV^{commit}`), which
 * git refuses for anything else. cat-file prints any object, so it takes only `REV:path`; ls-tree and grep already
 * read a tree below the root, and `REV:path` would apply the root twice.
 */
function confineRevision(sub: string, rev: string): Step<string> {
  const colon = rev.startsWith(':/') ? -1 : pathColon(rev);
  if (colon > 0) {
    if (sub === 'ls-tree' || sub === 'grep') return refuse(`git ${sub} ${rev}: in this root give the revision and the path apart, e.g. ${sub === 'grep' ? "grep -n 'pattern' HEAD -- path" : 'ls-tree -r HEAD path'}`);
    const inner = rev.slice(colon + 1).replace(/^(?:\.\/)+/, '');
    return { ok: true, value: `${rev.slice(0, colon)}:./${inner}` };
  }
  if (sub === 'cat-file') {
    return refuse(`git cat-file ${rev} is refused here: this root is a subdirectory of its repository, and cat-file reads only a file or directory below it (cat-file -p ${rev}:path); for a commit use log -n 1 ${rev} -- .`);
  }
  if (sub !== 'show' && sub !== 'diff') return { ok: true, value: rev };
  if (rev.startsWith(':/')) return refuse(`git ${sub} ${rev} is refused here: find the commit with log --grep=TEXT --oneline -- . and name it by its id`);
  return { ok: true, value: peel(rev) };
}

/** Every revision of a confined command through confineRevision; the first refusal stops it. */
export function confineRevisions(sub: string, revs: readonly string[]): Step<string[]> {
  const value: string[] = [];
  for (const rev of revs) {
    const one = confineRevision(sub, rev);
    if (!one.ok) return one;
    value.push(one.value);
  }
  return { ok: true, value };
}

/**
 * The colon that starts the path of `REV:path`, or -1: the first one outside braces (a colon inside `@{…}` or `^{/…}`
 * is part of a date or a message pattern, as git reads it).
 */
function pathColon(rev: string): number {
  let depth = 0;
  for (let i = 0; i < rev.length; i += 1) {
    const ch = rev[i];
    if (ch === '{') depth += 1;
    else if (ch === '}') depth = Math.max(0, depth - 1);
    else if (ch === ':' && depth === 0 && i > 0) return i;
  }
  return -1;
}

/** `A`, `A..B`, `A...B` with each end peeled to a commit; walk forms (`^A`, `A^@`, `A^!`, `A^-`) walk commits already. */
function peel(rev: string): string {
  if (rev.startsWith('^') || /\^(?:[@!]|-\d*)$/.test(rev)) return rev;
  const op = rev.includes('...') ? '...' : rev.includes('..') ? '..' : null;
  const one = (end: string): string => (end === '' ? end : `${end}^{commit}`);
  if (op === null) return one(rev);
  const at = rev.indexOf(op);
  return `${one(rev.slice(0, at))}${op}${one(rev.slice(at + op.length))}`;
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

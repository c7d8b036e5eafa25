import type { GitFlagRule, GitPolicy } from './git-tables.js';
import { NO_DIFF_PROGRAMS } from './git-values.js';

/**
 * The git tool's listing forms of subcommands that otherwise write (stash list, worktree list, notes list, bisect log),
 * remote -v, and the forms that read the work tree or the index (status, ls-files), which run only under the kernel
 * sandbox: there nothing can be written and nothing outside the repository is visible, so the index refresh git tries
 * fails harmlessly and an include or a link can reveal nothing. Under the tables alone they stay refused.
 */

const BOOL: GitFlagRule = { type: 'bool' };
const deny = (reason: string): GitFlagRule => ({ type: 'deny', reason });
const NUL_OUTPUT = deny('prints NUL-separated output meant for scripts; read the plain lines');

const CHANGES = 'changes the repository, and the git tool is read-only';

/** stash show diffs like show: the same programs off, no order file, submodules not entered. */
const STASH: GitPolicy = {
  operands: 'revs',
  forced: [...NO_DIFF_PROGRAMS],
  verbs: ['list', 'show'],
  verbReason: `${CHANGES}; stash list and stash show STASH read the stashes`,
  short: { p: BOOL },
  long: { oneline: BOOL, stat: BOOL, patch: BOOL, 'name-only': BOOL, 'name-status': BOOL, 'no-color': BOOL },
};

/**
 * worktree list: under the kernel sandbox only. git marks a work tree `prunable` when the path its `gitdir` file names
 * does not exist, and that file is the repository's to write: under the tables it answers whether any path of this
 * machine exists. Under the kernel sandbox every path outside the root is absent alike, so the mark tells nothing.
 */
const WORKTREE: GitPolicy = {
  operands: 'none',
  forced: [],
  kernelOnly: true,
  verbs: ['list'],
  verbReason: `${CHANGES}; worktree list shows the work trees`,
  short: { v: BOOL, z: NUL_OUTPUT },
  long: { verbose: BOOL, porcelain: BOOL },
};

const NOTES: GitPolicy = {
  operands: 'revs',
  forced: [],
  verbs: ['list', 'show'],
  verbReason: `${CHANGES}; notes list and notes show REV read the notes`,
  short: {},
  long: {},
};

const BISECT: GitPolicy = {
  operands: 'none',
  forced: [],
  verbs: ['log'],
  verbReason: 'changes the repository and the work tree, and the git tool is read-only; bisect log shows a bisection in progress',
  short: {},
  long: {},
};

/**
 * remote: the names and URLs of the remotes (the tool hides credentials in URLs). It reads the configuration, whose
 * include files may lie outside the repository, so it runs under the kernel sandbox only, where they are invisible.
 */
const REMOTE: GitPolicy = {
  operands: 'none',
  forced: [],
  kernelOnly: true,
  short: { v: BOOL },
  long: { verbose: BOOL },
};

/** status: the work tree against the index and HEAD; submodules are other repositories and are not entered. */
const STATUS: GitPolicy = {
  operands: 'paths',
  forced: ['--ignore-submodules=all'],
  kernelOnly: true,
  clusters: true,
  short: {
    s: BOOL,
    b: BOOL,
    u: { type: 'value', value: 'text', attachedOnly: true, choices: ['no', 'normal', 'all'] },
    z: NUL_OUTPUT,
    v: deny('shows the staged diff through the configured diff programs; use diff --cached'),
  },
  long: {
    short: BOOL,
    branch: BOOL,
    long: BOOL,
    'show-stash': BOOL,
    'ahead-behind': BOOL,
    'no-ahead-behind': BOOL,
    renames: BOOL,
    'no-renames': BOOL,
    porcelain: { type: 'value', value: 'text', attachedOnly: true, choices: ['v1', 'v2'] },
    'untracked-files': { type: 'value', value: 'text', attachedOnly: true, choices: ['no', 'normal', 'all'] },
    ignored: { type: 'value', value: 'text', attachedOnly: true, choices: ['traditional', 'no', 'matching'] },
    verbose: deny('shows the staged diff through the configured diff programs; use diff --cached'),
    'ignore-submodules': deny('is fixed: submodules are other repositories and are not entered; status shows this repository'),
  },
};

/** ls-files: the files in the index (and, with -o, untracked files of the work tree). */
const LS_FILES: GitPolicy = {
  operands: 'paths',
  forced: [],
  kernelOnly: true,
  clusters: true,
  short: {
    c: BOOL, d: BOOL, m: BOOL, o: BOOL, s: BOOL, u: BOOL, k: BOOL, t: BOOL, v: BOOL, f: BOOL,
    x: { type: 'value', value: 'text' },
    i: BOOL,
    z: NUL_OUTPUT,
    X: deny('reads exclude patterns from a file; give them with -x PATTERN'),
  },
  long: {
    cached: BOOL, deleted: BOOL, modified: BOOL, others: BOOL, ignored: BOOL, stage: BOOL, unmerged: BOOL, killed: BOOL,
    directory: BOOL, 'no-empty-directory': BOOL, 'exclude-standard': BOOL, 'full-name': BOOL, 'error-unmatch': BOOL, eol: BOOL,
    deduplicate: BOOL, abbrev: { type: 'value', value: 'count', attachedOnly: true }, exclude: { type: 'value', value: 'text' },
    'exclude-from': deny('reads exclude patterns from a file; give them with -x PATTERN'),
    'exclude-per-directory': deny('reads exclude patterns from files the model names; use --exclude-standard'),
    'recurse-submodules': deny('reads submodules, which are other repositories; list this repository only'),
    format: deny('is not supported; read the plain listing'),
    'with-tree': deny('overlays a tree on the index; use ls-tree REV'),
  },
};

/** reflog: where HEAD and branches pointed (read-only as `reflog` / `reflog show`; expire and delete rewrite it). */
const REFLOG: GitPolicy = {
  operands: 'revs',
  forced: ['--abbrev-commit'],
  verbs: ['show'],
  defaultVerb: 'show',
  verbReason: `${CHANGES}; reflog and reflog show REF list the entries`,
  countShorthand: true,
  short: { n: { type: 'value', value: 'count' } },
  long: { 'max-count': { type: 'value', value: 'count' }, oneline: BOOL, date: { type: 'value', value: 'date' }, all: BOOL },
};

/** show-ref: the refs and the objects they name. */
const SHOW_REF: GitPolicy = {
  operands: 'patterns',
  forced: [],
  clusters: true,
  short: { d: BOOL, s: BOOL, q: BOOL },
  long: {
    head: BOOL,
    heads: BOOL,
    branches: BOOL,
    tags: BOOL,
    dereference: BOOL,
    hash: BOOL,
    verify: BOOL,
    quiet: BOOL,
    abbrev: { type: 'value', value: 'count', attachedOnly: true },
  },
};

/** count-objects: how many loose objects and packs, and their size. */
const COUNT_OBJECTS: GitPolicy = {
  operands: 'none',
  forced: [],
  clusters: true,
  short: { v: BOOL, H: BOOL },
  long: { verbose: BOOL, 'human-readable': BOOL },
};

/** cherry: which commits of HEAD (or a head) have an equivalent upstream. */
const CHERRY: GitPolicy = {
  operands: 'revs',
  forced: [],
  maxRevisions: 3,
  short: { v: BOOL },
  long: { abbrev: { type: 'value', value: 'count', attachedOnly: true } },
};

export const LISTING_POLICIES = {
  stash: STASH,
  worktree: WORKTREE,
  notes: NOTES,
  bisect: BISECT,
  remote: REMOTE,
  reflog: REFLOG,
  'show-ref': SHOW_REF,
  'count-objects': COUNT_OBJECTS,
  cherry: CHERRY,
} as const;

export const WORK_TREE_POLICIES = { status: STATUS, 'ls-files': LS_FILES } as const;

/**
 * Under the kernel sandbox, diff, blame and grep may read the work tree and the index too: diff with fewer than two
 * revisions (or --cached/--staged), blame and grep without one. These are the tables' overrides for that case.
 */
export const KERNEL_RELAXED: Readonly<
  Record<string, { minRevisions: number; long?: Readonly<Record<string, GitFlagRule>>; forced?: readonly string[] }>
> = {
  // A dirty submodule is checked by running git inside it, under its own configuration: submodules are not entered.
  diff: { minRevisions: 0, long: { cached: BOOL, staged: BOOL }, forced: ['--ignore-submodules=all'] },
  blame: { minRevisions: 0 },
  grep: { minRevisions: 0 },
};

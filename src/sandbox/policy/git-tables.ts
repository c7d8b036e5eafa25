import { NO_DIFF_PROGRAMS } from './git-values.js';
import { LISTING_POLICIES, WORK_TREE_POLICIES } from './git-forms.js';

/**
 * The git tool's policy as data: the subcommands it runs (history only: objects and refs, never the work tree, the
 * index or the network), each with its accepted flags and how its operands are read; the subcommands and global
 * options refused with a reason and a suggestion. Anything absent is refused, so an abbreviation or a flag added by a
 * newer git is denied without a rule of its own.
 */

/**
 * How a flag value is checked. `count`: digits; `rev`: a revision (no index forms); `path`: a path confined to the
 * root by its text; `pretty`: a built-in format name, or log placeholders from a whitelist; `ref-format`: for-each-ref atoms from a
 * whitelist; `line-range`: `-L` with its path confined; `date`: a named date style; `text`: anything.
 */
export type GitValue = 'count' | 'rev' | 'path' | 'pretty' | 'ref-format' | 'line-range' | 'date' | 'text';

export type GitFlagRule =
  | { type: 'bool' }
  /** `attachedOnly`: git takes the value only as `--opt=value` / `-nVALUE` (an optional argument); alone it is a switch. */
  | { type: 'value'; value: GitValue; attachedOnly?: boolean; choices?: readonly string[] }
  | { type: 'deny'; reason: string };

/**
 * What the operands are. `revs-paths`: revisions, then paths (after `--`, or existing paths before it); `tree-paths`:
 * one tree-ish, then paths; `object`: exactly one object name; `pattern-revs-paths`: git grep's pattern first;
 * `patterns`: ref patterns; `revs`: revisions only.
 */
type GitOperands = 'revs-paths' | 'tree-paths' | 'object' | 'pattern-revs-paths' | 'patterns' | 'revs' | 'paths' | 'none';

export interface GitPolicy {
  short: Readonly<Record<string, GitFlagRule>>;
  long: Readonly<Record<string, GitFlagRule>>;
  operands: GitOperands;
  /** Inserted right after the subcommand, whatever the model wrote: the read-only or no-program forms. */
  forced: readonly string[];
  /** Revisions required: git would otherwise read the work tree (`blame`, `grep`) or diff against it (`diff`). */
  minRevisions?: number;
  maxRevisions?: number;
  /** `-NUM` means `-n NUM` (log, shortlog, rev-list). */
  countShorthand?: boolean;
  /** One of these flags must be given (`rev-list --count`, `cat-file -p/-t/-s`). */
  requires?: readonly string[];
  /** The first operand must be one of these verbs (`stash list`); any other is refused with `verbReason`. */
  verbs?: readonly string[];
  verbReason?: string;
  /** The verb meant when the first word is a flag, a revision or nothing (`reflog` is `reflog show`). */
  defaultVerb?: string;
  /** Reads the work tree or the index: runs only under the kernel sandbox (GIT_REFUSED_SUBCOMMANDS says why not otherwise). */
  kernelOnly?: true;
  /** Used when no revision is given (shortlog reads standard input without one). */
  defaultRevision?: string;
  /** `forced` is left out when this flag is given (branch --show-current cannot be combined with --list). */
  forcedUnless?: string;
  /** Short switches may be clustered (`-sn`): the subcommand parses options with git's parse-options, which accepts them. */
  clusters?: true;
  /** Operands are list patterns only with -l/--list; without it they would name something to create (branch NAME). */
  createsWithoutList?: string;
}

const BOOL: GitFlagRule = { type: 'bool' };
const TEXT: GitFlagRule = { type: 'value', value: 'text' };
const COUNT: GitFlagRule = { type: 'value', value: 'count' };
const REV: GitFlagRule = { type: 'value', value: 'rev' };
const REF_FORMAT: GitFlagRule = { type: 'value', value: 'ref-format' };
const deny = (reason: string): GitFlagRule => ({ type: 'deny', reason });


const BRANCH_WRITES = deny('changes branches, and the git tool is read-only; describe the change for the person to make');
const TAG_WRITES = deny('creates or deletes tags, and the git tool is read-only; list them with tag -l');
const SIGNATURE = deny('verifies signatures by running gpg, a program; signatures are not checked here');

/** Refused under every subcommand: flags that write, run a program, read outside history or reach the network. */
export const GIT_COMMON_DENY: Readonly<Record<string, GitFlagRule>> = {
  output: deny('writes a file, and the sandbox is read-only; the output comes back here instead'),
  'ext-diff': deny('runs an external diff program the repository configures; the built-in diff is used'),
  textconv: deny('runs a textconv program the repository configures; the raw content is shown'),
  'no-index': deny('compares files of the work tree, not history; use rg and read_file for the current files'),
  'upload-pack': deny('names a program to run for the network protocol; nothing is fetched here'),
  'receive-pack': deny('names a program to run for the network protocol; nothing is pushed here'),
  exec: deny('names a program to run; the git tool runs no programs'),
  'open-files-in-pager': deny('opens a pager program; the matches come back here'),
  cached: deny('reads the index (staging area), which the git tool never does; name two revisions'),
  staged: deny('reads the index (staging area), which the git tool never does; name two revisions'),
  'show-signature': SIGNATURE,
  'git-dir': deny('points git at another repository; only the repository of the root is read'),
  'work-tree': deny('points git at another work tree; only the repository of the root is read'),
  stdin: deny('reads standard input, which is not available; give the revisions as arguments'),
};

const COMMON_DIFF: Readonly<Record<string, GitFlagRule>> = {
  stat: { type: 'value', value: 'count', attachedOnly: true },
  numstat: BOOL,
  shortstat: BOOL,
  'name-only': BOOL,
  'name-status': BOOL,
  patch: BOOL,
  'no-patch': BOOL,
  unified: COUNT,
  'find-renames': { type: 'value', value: 'text', attachedOnly: true },
  'no-renames': BOOL,
  'diff-filter': TEXT,
  'ignore-all-space': BOOL,
  'ignore-space-change': BOOL,
  'ignore-blank-lines': BOOL,
  // Not `color`: it turns colour on whatever color.ui says, and ANSI sequences are noise to the model.
  'word-diff': { type: 'value', value: 'text', attachedOnly: true, choices: ['plain', 'porcelain', 'none'] },
  minimal: BOOL,
  patience: BOOL,
  histogram: BOOL,
  'no-textconv': BOOL,
  'no-ext-diff': BOOL,
  'no-color': BOOL,
  abbrev: { type: 'value', value: 'count', attachedOnly: true },
  'full-index': BOOL,
  'function-context': BOOL,
  'no-prefix': BOOL,
  summary: BOOL,
  // Never attached-only: git reads a bare `--color` as `--color=always`, so the value is required (and rebuilt attached).
  color: { type: 'value', value: 'text', choices: ['never'] },
  'compact-summary': BOOL,
};

const COMMON_DIFF_SHORT: Readonly<Record<string, GitFlagRule>> = {
  p: BOOL,
  u: BOOL,
  s: BOOL,
  U: COUNT,
  M: { type: 'value', value: 'text', attachedOnly: true },
  w: BOOL,
  b: BOOL,
  R: BOOL,
  W: BOOL,
};

/** Revision walking (log, shortlog, rev-list). */
const WALK: Readonly<Record<string, GitFlagRule>> = {
  'max-count': COUNT,
  skip: COUNT,
  since: TEXT,
  after: TEXT,
  until: TEXT,
  before: TEXT,
  author: TEXT,
  committer: TEXT,
  grep: TEXT,
  'all-match': BOOL,
  'invert-grep': BOOL,
  'regexp-ignore-case': BOOL,
  'extended-regexp': BOOL,
  'fixed-strings': BOOL,
  all: BOOL,
  branches: { type: 'value', value: 'text', attachedOnly: true },
  tags: { type: 'value', value: 'text', attachedOnly: true },
  remotes: { type: 'value', value: 'text', attachedOnly: true },
  'first-parent': BOOL,
  merges: BOOL,
  'no-merges': BOOL,
  'min-parents': COUNT,
  'max-parents': COUNT,
  reverse: BOOL,
  'topo-order': BOOL,
  'date-order': BOOL,
  'author-date-order': BOOL,
  'full-history': BOOL,
  'simplify-by-decoration': BOOL,
  'ancestry-path': BOOL,
  'left-right': BOOL,
  'cherry-pick': BOOL,
  boundary: BOOL,
  'no-walk': BOOL,
};

const LOG: GitPolicy = {
  operands: 'revs-paths',
  forced: ['--abbrev-commit', ...NO_DIFF_PROGRAMS],
  countShorthand: true,
  short: {
    ...COMMON_DIFF_SHORT,
    n: COUNT,
    S: TEXT,
    G: TEXT,
    L: { type: 'value', value: 'line-range' },
    i: BOOL,
    E: BOOL,
    F: BOOL,
    m: BOOL,
    c: BOOL,
  },
  long: {
    ...COMMON_DIFF,
    ...WALK,
    oneline: BOOL,
    // --format=NAME is --pretty=NAME: a %-free value is a format name, looked up in the repository's pretty.<name> too.
    format: { type: 'value', value: 'pretty' },
    pretty: { type: 'value', value: 'pretty', attachedOnly: true },
    'abbrev-commit': BOOL,
    'no-abbrev-commit': BOOL,
    date: { type: 'value', value: 'date' },
    decorate: { type: 'value', value: 'text', attachedOnly: true, choices: ['short', 'full', 'no', 'auto'] },
    'no-decorate': BOOL,
    graph: BOOL,
    follow: BOOL,
    'pickaxe-regex': BOOL,
    'pickaxe-all': BOOL,
    parents: BOOL,
    children: BOOL,
    source: BOOL,
    'no-notes': BOOL,
    cc: BOOL,
    'diff-merges': { type: 'value', value: 'text', choices: ['off', 'none', 'on', 'first-parent', '1', 'separate', 'm', 'combined', 'c', 'dense-combined', 'cc', 'remerge', 'r'] },
    'walk-reflogs': deny('reads the reflog, local state rather than history; use log on a revision'),
  },
};

const SHOW: GitPolicy = {
  operands: 'revs-paths',
  forced: ['--abbrev-commit', ...NO_DIFF_PROGRAMS],
  short: COMMON_DIFF_SHORT,
  long: {
    ...COMMON_DIFF,
    oneline: BOOL,
    format: LOG.long.format as GitFlagRule,
    pretty: LOG.long.pretty as GitFlagRule,
    date: LOG.long.date as GitFlagRule,
    'abbrev-commit': BOOL,
    'no-abbrev-commit': BOOL,
  },
};

const DIFF: GitPolicy = {
  operands: 'revs-paths',
  forced: [...NO_DIFF_PROGRAMS],
  minRevisions: 2,
  maxRevisions: 2,
  short: COMMON_DIFF_SHORT,
  long: {
    ...COMMON_DIFF,
    'merge-base': BOOL,
  },
};

const BLAME: GitPolicy = {
  operands: 'revs-paths',
  // A configured blame.ignoreRevsFile is read from anywhere and its first bad line printed (`invalid object name: …`).
  forced: ['--no-textconv', '--no-ignore-revs-file'],
  minRevisions: 1,
  maxRevisions: 1,
  // blame's -L is START,END or :FUNCNAME alone: the path is the operand.
  short: {
    L: TEXT,
    w: BOOL,
    s: BOOL,
    e: BOOL,
    l: BOOL,
    t: BOOL,
    M: BOOL,
    C: BOOL,
    n: BOOL,
    f: BOOL,
  },
  long: {
    porcelain: BOOL,
    'line-porcelain': BOOL,
    'show-email': BOOL,
    'show-name': BOOL,
    'show-number': BOOL,
    'no-textconv': BOOL,
    date: { type: 'value', value: 'date' },
    reverse: BOOL,
    'first-parent': BOOL,
    root: BOOL,
    abbrev: { type: 'value', value: 'count', attachedOnly: true },
    contents: deny('reads a file of the work tree as the final version; blame a revision'),
    'ignore-revs-file': deny('reads a list of revisions from a file; use --ignore-rev REV'),
    'ignore-rev': REV,
    incremental: BOOL,
  },
};

const GREP: GitPolicy = {
  operands: 'pattern-revs-paths',
  // A submodule is another repository (submodule.recurse=true in a configuration would search it).
  forced: ['--no-textconv', '--no-recurse-submodules'],
  minRevisions: 1,
  short: {
    n: BOOL,
    i: BOOL,
    w: BOOL,
    v: BOOL,
    l: BOOL,
    L: BOOL,
    c: BOOL,
    h: BOOL,
    H: BOOL,
    o: BOOL,
    q: BOOL,
    I: BOOL,
    z: deny('prints NUL-separated output meant for scripts; read the plain lines'),
    E: BOOL,
    F: BOOL,
    G: BOOL,
    P: BOOL,
    e: { type: 'value', value: 'text' },
    m: COUNT,
    A: COUNT,
    B: COUNT,
    C: COUNT,
    O: deny('opens the matching files in a pager program; the matches come back here'),
    f: deny('reads the patterns from a file; give them with -e PATTERN'),
  },
  long: {
    'line-number': BOOL,
    'ignore-case': BOOL,
    'word-regexp': BOOL,
    'invert-match': BOOL,
    'files-with-matches': BOOL,
    'files-without-match': BOOL,
    count: BOOL,
    'only-matching': BOOL,
    'extended-regexp': BOOL,
    'fixed-strings': BOOL,
    'basic-regexp': BOOL,
    'perl-regexp': BOOL,
    'max-count': COUNT,
    'max-depth': COUNT,
    'after-context': COUNT,
    'before-context': COUNT,
    context: COUNT,
    'function-context': BOOL,
    'show-function': BOOL,
    heading: BOOL,
    break: BOOL,
    'full-name': BOOL,
    'all-match': BOOL,
    and: BOOL,
    or: BOOL,
    not: BOOL,
    column: BOOL,
    'no-textconv': BOOL,
    untracked: deny('searches untracked files of the work tree; use rg for the current files'),
    'no-exclude-standard': deny('searches files of the work tree; use rg for the current files'),
    recurse: deny('reads submodules, which are other repositories; search this repository only'),
    'recurse-submodules': deny('reads submodules, which are other repositories; search this repository only'),
    threads: deny('is not needed; git chooses'),
  },
};

const LS_TREE: GitPolicy = {
  operands: 'tree-paths',
  forced: [],
  minRevisions: 1,
  maxRevisions: 1,
  short: {
    r: BOOL,
    d: BOOL,
    t: BOOL,
    l: BOOL,
    z: deny('prints NUL-separated output meant for scripts; read the plain lines'),
  },
  long: {
    'name-only': BOOL,
    'name-status': BOOL,
    'object-only': BOOL,
    long: BOOL,
    'full-tree': BOOL,
    'full-name': BOOL,
    abbrev: { type: 'value', value: 'count', attachedOnly: true },
  },
};

const CAT_FILE: GitPolicy = {
  operands: 'object',
  forced: [],
  requires: ['-p', '-t', '-s'],
  short: {
    p: BOOL,
    t: BOOL,
    s: BOOL,
    e: BOOL,
  },
  long: {
    batch: deny('reads object names from standard input; give one object'),
    'batch-check': deny('reads object names from standard input; give one object'),
    'batch-command': deny('reads commands from standard input; give one object'),
    filters: deny('runs the filter programs the repository configures; use -p'),
    'allow-unknown-type': BOOL,
  },
};

const REV_PARSE: GitPolicy = {
  operands: 'revs',
  forced: [],
  short: { q: BOOL },
  long: {
    verify: BOOL,
    quiet: BOOL,
    short: {
      type: 'value',
      value: 'count',
      attachedOnly: true,
    },
    'abbrev-ref': BOOL,
    'symbolic-full-name': BOOL,
    symbolic: BOOL,
    'show-toplevel': deny('prints an absolute path of this machine; paths here are relative to the root'),
    'absolute-git-dir': deny('prints an absolute path of this machine; paths here are relative to the root'),
    'git-common-dir': deny('prints a path of this machine; paths here are relative to the root'),
    'git-path': deny('prints paths of git internals, not history; use log or show for history'),
    'resolve-git-dir': deny('examines a path that may lie outside the repository; only the repository of the root is read'),
    parseopt: deny('reads an option specification from standard input; not for exploring history'),
    'sq-quote': deny('is a quoting helper for scripts; not for exploring history'),
    'local-env-vars': deny('lists environment variables; not for exploring history'),
  },
};

const REV_LIST: GitPolicy = {
  operands: 'revs-paths',
  forced: [],
  countShorthand: true,
  minRevisions: 1,
  short: { n: COUNT },
  long: {
    ...WALK,
    count: BOOL,
    oneline: BOOL,
    'abbrev-commit': BOOL,
    parents: BOOL,
    timestamp: BOOL,
    objects: BOOL,
    format: { type: 'value', value: 'pretty' },
  },
};

const MERGE_BASE: GitPolicy = {
  operands: 'revs',
  forced: [],
  minRevisions: 1,
  short: { a: BOOL },
  long: {
    all: BOOL,
    'is-ancestor': BOOL,
    octopus: BOOL,
    independent: BOOL,
    'fork-point': deny('reads the reflog, local state rather than history; use merge-base A B'),
  },
};

const DESCRIBE: GitPolicy = {
  operands: 'revs',
  forced: [],
  short: {},
  long: {
    tags: BOOL,
    all: BOOL,
    always: BOOL,
    long: BOOL,
    contains: BOOL,
    'exact-match': BOOL,
    'first-parent': BOOL,
    abbrev: { type: 'value', value: 'count', attachedOnly: true },
    candidates: COUNT,
    match: TEXT,
    exclude: TEXT,
    dirty: deny('examines the work tree and refreshes the index, which writes; describe a revision'),
    broken: deny('examines the work tree and refreshes the index, which writes; describe a revision'),
  },
};

const NAME_REV: GitPolicy = {
  operands: 'revs',
  forced: [],
  minRevisions: 1,
  short: {},
  long: {
    'name-only': BOOL,
    tags: BOOL,
    refs: TEXT,
    exclude: TEXT,
    all: BOOL,
    always: BOOL,
    undefined: BOOL,
    'no-undefined': BOOL,
    'annotate-stdin': deny('reads standard input, which is not available; give the revisions as arguments'),
  },
};

const SHORTLOG: GitPolicy = {
  operands: 'revs-paths',
  forced: [],
  // Without a revision shortlog reads a log from standard input (closed here): it would print nothing, so HEAD is meant.
  defaultRevision: 'HEAD',
  clusters: true,
  countShorthand: true,
  short: {
    n: BOOL,
    s: BOOL,
    e: BOOL,
    c: BOOL,
  },
  long: {
    ...WALK,
    numbered: BOOL,
    summary: BOOL,
    email: BOOL,
    committer: BOOL,
    group: { type: 'value', value: 'text', choices: ['author', 'committer'] },
  },
};

const LIST_FILTERS: Readonly<Record<string, GitFlagRule>> = {
  contains: REV,
  'no-contains': REV,
  merged: REV,
  'no-merged': REV,
  'points-at': REV,
  sort: TEXT,
  format: REF_FORMAT,
  'ignore-case': BOOL,
};

const TAG: GitPolicy = {
  operands: 'patterns',
  forced: ['--list'],
  clusters: true,
  createsWithoutList: 'creates a tag, and the git tool is read-only; to list tags matching a pattern use tag -l',
  short: {
    l: BOOL,
    i: BOOL,
    n: { type: 'value', value: 'count', attachedOnly: true },
    d: TAG_WRITES,
    a: TAG_WRITES,
    s: TAG_WRITES,
    f: TAG_WRITES,
    m: TAG_WRITES,
    v: SIGNATURE,
  },
  long: {
    ...LIST_FILTERS,
    list: BOOL,
    delete: TAG_WRITES,
    annotate: TAG_WRITES,
    sign: TAG_WRITES,
    force: TAG_WRITES,
    verify: SIGNATURE,
  },
};

const BRANCH: GitPolicy = {
  operands: 'patterns',
  forced: ['--list'],
  forcedUnless: '--show-current',
  clusters: true,
  createsWithoutList: 'creates a branch, and the git tool is read-only; branch --show-current names the current one, branch -l lists branches matching a pattern',
  short: {
    l: BOOL,
    a: BOOL,
    r: BOOL,
    v: BOOL,
    i: BOOL,
    d: BRANCH_WRITES,
    D: BRANCH_WRITES,
    m: BRANCH_WRITES,
    M: BRANCH_WRITES,
    c: BRANCH_WRITES,
    C: BRANCH_WRITES,
    f: BRANCH_WRITES,
    u: BRANCH_WRITES,
    t: BRANCH_WRITES,
  },
  long: {
    ...LIST_FILTERS,
    list: BOOL,
    all: BOOL,
    remotes: BOOL,
    verbose: BOOL,
    'show-current': BOOL,
    delete: BRANCH_WRITES,
    move: BRANCH_WRITES,
    copy: BRANCH_WRITES,
    force: BRANCH_WRITES,
    'set-upstream-to': BRANCH_WRITES,
    'unset-upstream': BRANCH_WRITES,
    'edit-description': BRANCH_WRITES,
    track: BRANCH_WRITES,
  },
};

const FOR_EACH_REF: GitPolicy = {
  operands: 'patterns',
  forced: [],
  short: {},
  long: {
    ...LIST_FILTERS,
    count: COUNT,
  },
};

/** Every subcommand the git tool runs, with its policy; the tool description lists these keys. */
export const GIT_POLICIES = {
  log: LOG,
  show: SHOW,
  diff: DIFF,
  blame: BLAME,
  grep: GREP,
  'ls-tree': LS_TREE,
  'cat-file': CAT_FILE,
  'rev-parse': REV_PARSE,
  'rev-list': REV_LIST,
  'merge-base': MERGE_BASE,
  describe: DESCRIBE,
  'name-rev': NAME_REV,
  shortlog: SHORTLOG,
  tag: TAG,
  branch: BRANCH,
  'for-each-ref': FOR_EACH_REF,
  ...LISTING_POLICIES,
  ...WORK_TREE_POLICIES,
} as const satisfies Readonly<Record<string, GitPolicy>>;

const WORKTREE = 'reads the work tree or the index, not history; use rg, find and read_file for the current files, git log/show for history';
const WRITES = 'changes the repository, and the git tool is read-only; describe the change for the person to make';
const NETWORK = 'reaches the network, which the git tool never does; only the local history is read';

/** Subcommands refused by name, with why and what to do instead; any other unknown subcommand is refused too. */
export const GIT_REFUSED_SUBCOMMANDS: Readonly<Record<string, string>> = {
  status: WORKTREE,
  'diff-files': WORKTREE,
  'diff-index': WORKTREE,
  'ls-files': `${WORKTREE} (rg --files lists them)`,
  'check-ignore': WORKTREE,
  'check-attr': WORKTREE,
  clean: WRITES,
  add: WRITES,
  commit: WRITES,
  rm: WRITES,
  mv: WRITES,
  restore: WRITES,
  reset: WRITES,
  checkout: WRITES,
  switch: WRITES,
  merge: WRITES,
  rebase: WRITES,
  'cherry-pick': WRITES,
  revert: WRITES,
  am: WRITES,
  apply: WRITES,
  replace: WRITES,
  'update-ref': WRITES,
  'update-index': WRITES,
  'symbolic-ref': WRITES,
  'read-tree': WRITES,
  'write-tree': WRITES,
  'commit-tree': WRITES,
  'hash-object': WRITES,
  mktag: WRITES,
  mktree: WRITES,
  gc: WRITES,
  prune: WRITES,
  repack: WRITES,
  maintenance: WRITES,
  init: WRITES,
  config: 'prints the configuration, which can hold credentials (tokens in URLs and headers) and include files from outside the repository; remote -v lists the remotes with credentials hidden (kernel sandbox)',
  submodule: WRITES,
  'sparse-checkout': WRITES,
  'filter-branch': WRITES,
  'format-patch': WRITES,
  archive: WRITES,
  bundle: WRITES,
  fetch: NETWORK,
  pull: NETWORK,
  push: NETWORK,
  clone: NETWORK,
  'ls-remote': NETWORK,
  'send-email': NETWORK,
  'request-pull': NETWORK,
  daemon: NETWORK,
  instaweb: NETWORK,
  difftool: 'runs a diff program; use diff REV REV',
  mergetool: 'runs a merge program; the git tool is read-only',
  var: 'prints configuration and programs, not history; use log or show for history',
  help: 'opens documentation through a pager program; ask about the repository instead',
  fsck: 'checks the object database and may write; not for exploring history',
  // A policy of its own (git-forms.ts), kernel only: this is why not under the tables.
  worktree: "marks a work tree `prunable` when the path its gitdir file names does not exist, and that file is the repository's to write: without the kernel sandbox it would tell whether any path of this machine exists; worktree list runs only under the kernel sandbox",
};

/** Options before the subcommand, refused by name; any other is refused too. Each would change which repository or which programs git uses. */
export const GIT_GLOBAL_DENY: Readonly<Record<string, string>> = {
  '-c': 'sets configuration, which could name a program to run; the git tool has its configuration fixed',
  '--config-env': 'sets configuration from the environment; the git tool has its configuration fixed',
  '--exec-path': 'changes where git finds its programs; the git tool runs the trusted git only',
  '-C': 'changes the directory git runs in; the git tool always reads the repository of the root',
  '--git-dir': 'points git at another repository; only the repository of the root is read',
  '--work-tree': 'points git at another work tree; only the repository of the root is read',
  '--namespace': 'reads refs from another namespace; only the repository of the root is read',
  '-p': 'starts a pager program; the output comes back here',
  '--paginate': 'starts a pager program; the output comes back here',
  '--bare': 'changes how git finds the repository; the git tool always reads the repository of the root',
  '--super-prefix': 'is internal to git; give the subcommand first',
};

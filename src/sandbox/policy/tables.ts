/**
 * The command policy as data: for each whitelisted program, every accepted flag (does it take a value, and is that
 * value a path, a pattern or plain text) and the flags refused with a reason. Anything absent is refused, so a
 * GNU long-option abbreviation (`--fol`) or a flag added by a newer version is denied without a rule of its own.
 */

import { READER_POLICIES } from './readers.js';

/** How a flag value is checked: paths are confined to the root, patterns must not be unquoted globs. */
export type ValueKind = 'path' | 'pattern' | 'text';

/** Side effects a flag has on how operands are read. */
type Effect = 'pattern' | 'noPattern' | 'recursive';

export type FlagRule =
  | { type: 'bool'; sets?: Effect }
  | {
      type: 'value';
      value: ValueKind;
      /** GNU optional argument: only `--opt=value`, never the next word. */
      optional?: boolean;
      choices?: readonly string[];
      sets?: Effect;
      /** The effect applies only for this value (grep `-d recurse`). */
      setsWhen?: string;
      /** A further check of the value (stat's format directives); null accepts, otherwise the reason. */
      check?: (value: string) => string | null;
    }
  | { type: 'deny'; reason: string };

export interface ProgramPolicy {
  /**
   * gnu: getopt_long; rg: lexopt (`-e=x` drops the `=`); tree: a value flag takes the next word, even mid-cluster;
   * xxd: xxd's own loop, which stops at the first operand and reads the next word as its output file (xxd.ts).
   */
  style: 'gnu' | 'rg' | 'tree' | 'xxd';
  short: Readonly<Record<string, FlagRule>>;
  long: Readonly<Record<string, FlagRule>>;
  /**
   * rg/grep/sed/jq read their first operand as the pattern (script, filter) unless a flag supplied one; `text`
   * operands are strings, never opened (basename); `none`: no operand at all (pwd).
   */
  operands: 'paths' | 'pattern-then-paths' | 'text' | 'none';
  /** Programs that would read stdin without a path operand; stdin is /dev/null, so they must be given a path. */
  needsPath?: 'always' | 'unless-recursive';
  /** What to say when the path is missing under `unless-recursive` (grep: "or -r"). */
  needsPathHint?: string;
  /** Most path operands, and why: a further operand is an output file (uniq IN OUT, xxd IN OUT) or a number (cmp). */
  maxPaths?: { count: number; why: string };
  /** Arguments put before the model's: the non-following or quiet form of the program (diff --no-dereference). */
  forced?: readonly string[];
  /**
   * Flag combinations refused together, with the reason: each flag alone is harmless, together the output would
   * depend on something outside the root (`ls -l -F` marks a symlink's target type). A flag is named as written in
   * the table, `-x` or `--name`, or `--name=value` for a given value.
   */
  conflicts?: ReadonlyArray<{ when: readonly string[]; with: readonly string[]; reason: string }>;
  /** A flag that must be given (sed -n: without it sed prints every line), with what to say when it is not. */
  requires?: { flags: readonly string[]; reason: string };
  /** The pattern operand and pattern-setting flag values are a script checked by this (sed, jq); null accepts. */
  script?: (text: string) => string | null;
  /** Every word starting with `@` is a response file, a flag's value too (binutils strings reads options from it). */
  noResponseFiles?: boolean;
  /**
   * Most path operands after glob expansion while one of `flags` is given, and why (sort -m merges at most 16 files at
   * once and spills the rest into temporary files).
   */
  maxMerged?: { flags: readonly string[]; count: number; why: string };
  /** Operands the program reads as something other than a file (od's traditional `od FILE +OFFSET`), refused with the reason. */
  notPaths?: { pattern: RegExp; reason: string };
  /** The program reads `--name VALUE` only, never `--name=VALUE` (jq 1.6 fails with "Unknown option"). */
  noLongEquals?: true;
  /** `--` before the pattern operand is a usage error (jq 1.6: the filter must come first). */
  noEndBeforePattern?: true;
  /** head/tail accept the obsolete `-NUM` count. */
  countShorthand?: boolean;
  /**
   * GNU tail reads a first argument of the form `[-+][NUM][bcl][f]` as one obsolete option (parse_obsolete_option):
   * `tail -cf FILE` is "bytes, follow forever", not `-c f`. Such a first word ending in `f` is refused.
   */
  obsoleteFollow?: boolean;
  /**
   * Numeric flag values with bounds (threads, sizes): a number is the upper bound in the flag's unit, suffixes K/M/G
   * allowed (ripgrep's sizes); a SizeBound also has a floor and is read in the program's own size syntax.
   */
  bounds?: Readonly<Record<string, number | SizeBound>>;
}

/** A size read as GNU sort reads `-S`: no suffix is KiB, `b` bytes, K M G T … powers of 1024; `%` of memory is refused. */
export interface SizeBound {
  syntax: 'sort';
  /** Bytes. */
  min: number;
  /** Bytes. */
  max: number;
  /** Why the floor, for the refusal. */
  why: string;
}

const BOOL: FlagRule = { type: 'bool' };
const TEXT: FlagRule = { type: 'value', value: 'text' };
const PATTERN: FlagRule = { type: 'value', value: 'pattern' };
const PATH: FlagRule = { type: 'value', value: 'path' };
const choice = (choices: readonly string[], optional = false): FlagRule => ({ type: 'value', value: 'text', choices, optional });
const deny = (reason: string): FlagRule => ({ type: 'deny', reason });

const EXECUTES = deny('runs another program, which the sandbox never allows');
const DECOMPRESS = deny('starts a decompressor program; compressed files cannot be searched here');
const WRITES = deny('writes files, and the sandbox is read-only');
const FOLLOWS = deny('follows symbolic links during traversal, which can lead outside the repository; symlinks are listed, not followed');
const FOLLOW_FOREVER = deny('follows the file forever and would hang; use tail -n N to read the end once');
const FILE_LIST = deny('reads the list of files from another file; pass the files as arguments instead');
const COLOR = choice(['never', 'always', 'auto'], true);
/** tree prints owner names from the host's user database (/etc/passwd), and has no numeric form. */
const OWNER_NAMES = deny("prints owner names from the host's user database (/etc/passwd); ls -ln and find -printf '%U %G %p\\n' show the numeric ids");

/** rg's own resource knobs: a few threads (each a walker and a searcher), and regex sizes within the child's 1 GiB. */
const RG_BOUNDS = { j: 8, threads: 8, 'regex-size-limit': 256 * 1024 * 1024, 'dfa-size-limit': 256 * 1024 * 1024 };

const RG: ProgramPolicy = {
  style: 'rg',
  operands: 'pattern-then-paths',
  bounds: RG_BOUNDS,
  short: {
    e: { type: 'value', value: 'pattern', sets: 'pattern' },
    f: { type: 'value', value: 'path', sets: 'pattern' },
    E: TEXT,
    m: TEXT,
    j: TEXT,
    g: PATTERN,
    d: TEXT,
    t: TEXT,
    T: TEXT,
    A: TEXT,
    B: TEXT,
    C: TEXT,
    M: TEXT,
    r: TEXT,
    s: BOOL,
    F: BOOL,
    i: BOOL,
    v: BOOL,
    x: BOOL,
    U: BOOL,
    P: BOOL,
    S: BOOL,
    a: BOOL,
    w: BOOL,
    '.': BOOL,
    u: BOOL,
    b: BOOL,
    H: BOOL,
    I: BOOL,
    n: BOOL,
    N: BOOL,
    o: BOOL,
    p: BOOL,
    q: BOOL,
    '0': BOOL,
    c: BOOL,
    l: BOOL,
    h: BOOL,
    V: BOOL,
    L: FOLLOWS,
    z: DECOMPRESS,
  },
  long: {
    regexp: { type: 'value', value: 'pattern', sets: 'pattern' },
    file: { type: 'value', value: 'path', sets: 'pattern' },
    'dfa-size-limit': TEXT,
    encoding: TEXT,
    engine: choice(['default', 'pcre2', 'auto']),
    'max-count': TEXT,
    'regex-size-limit': TEXT,
    threads: TEXT,
    glob: PATTERN,
    iglob: PATTERN,
    'ignore-file': PATH,
    'max-depth': TEXT,
    'max-filesize': TEXT,
    type: TEXT,
    'type-not': TEXT,
    'type-add': TEXT,
    'type-clear': TEXT,
    'after-context': TEXT,
    'before-context': TEXT,
    context: TEXT,
    color: choice(['never', 'auto', 'always', 'ansi']),
    colors: TEXT,
    'context-separator': TEXT,
    'field-context-separator': TEXT,
    'field-match-separator': TEXT,
    'max-columns': TEXT,
    'path-separator': TEXT,
    replace: TEXT,
    sort: choice(['path', 'modified', 'accessed', 'created', 'none']),
    sortr: choice(['path', 'modified', 'accessed', 'created', 'none']),
    files: { type: 'bool', sets: 'noPattern' },
    'type-list': { type: 'bool', sets: 'noPattern' },
    'pcre2-version': { type: 'bool', sets: 'noPattern' },
    'case-sensitive': BOOL,
    crlf: BOOL,
    'fixed-strings': BOOL,
    'ignore-case': BOOL,
    'invert-match': BOOL,
    'line-regexp': BOOL,
    mmap: BOOL,
    'no-mmap': BOOL,
    multiline: BOOL,
    'multiline-dotall': BOOL,
    'no-unicode': BOOL,
    'null-data': BOOL,
    pcre2: BOOL,
    'no-pcre2': BOOL,
    'smart-case': BOOL,
    'stop-on-nonmatch': BOOL,
    text: BOOL,
    'word-regexp': BOOL,
    'auto-hybrid-regex': BOOL,
    'no-pcre2-unicode': BOOL,
    binary: BOOL,
    'no-binary': BOOL,
    'glob-case-insensitive': BOOL,
    hidden: BOOL,
    'no-hidden': BOOL,
    'ignore-file-case-insensitive': BOOL,
    'no-ignore': BOOL,
    'no-ignore-dot': BOOL,
    'no-ignore-exclude': BOOL,
    'no-ignore-files': BOOL,
    'no-ignore-global': BOOL,
    'no-ignore-parent': BOOL,
    'no-ignore-vcs': BOOL,
    'no-require-git': BOOL,
    'one-file-system': BOOL,
    unrestricted: BOOL,
    'block-buffered': BOOL,
    'byte-offset': BOOL,
    column: BOOL,
    'no-column': BOOL,
    heading: BOOL,
    'no-heading': BOOL,
    'include-zero': BOOL,
    'line-buffered': BOOL,
    'line-number': BOOL,
    'no-line-number': BOOL,
    'max-columns-preview': BOOL,
    null: BOOL,
    'only-matching': BOOL,
    passthru: BOOL,
    pretty: BOOL,
    quiet: BOOL,
    trim: BOOL,
    vimgrep: BOOL,
    'with-filename': BOOL,
    'no-filename': BOOL,
    'sort-files': BOOL,
    count: BOOL,
    'count-matches': BOOL,
    'files-with-matches': BOOL,
    'files-without-match': BOOL,
    json: BOOL,
    'no-json': BOOL,
    'no-ignore-messages': BOOL,
    'no-messages': BOOL,
    stats: BOOL,
    'no-config': BOOL,
    'no-follow': BOOL,
    'no-search-zip': BOOL,
    'no-context-separator': BOOL,
    version: BOOL,
    help: BOOL,
    pre: EXECUTES,
    'pre-glob': EXECUTES,
    'hostname-bin': EXECUTES,
    'search-zip': DECOMPRESS,
    follow: FOLLOWS,
  },
};

const GREP: ProgramPolicy = {
  style: 'gnu',
  operands: 'pattern-then-paths',
  needsPath: 'unless-recursive',
  short: {
    e: { type: 'value', value: 'pattern', sets: 'pattern' },
    f: { type: 'value', value: 'path', sets: 'pattern' },
    m: TEXT,
    A: TEXT,
    B: TEXT,
    C: TEXT,
    d: { type: 'value', value: 'text', choices: ['read', 'skip', 'recurse'], sets: 'recursive', setsWhen: 'recurse' },
    D: { type: 'value', value: 'text', choices: ['skip'] },
    r: { type: 'bool', sets: 'recursive' },
    E: BOOL,
    F: BOOL,
    G: BOOL,
    P: BOOL,
    i: BOOL,
    v: BOOL,
    w: BOOL,
    x: BOOL,
    c: BOOL,
    L: BOOL,
    l: BOOL,
    o: BOOL,
    q: BOOL,
    s: BOOL,
    b: BOOL,
    H: BOOL,
    h: BOOL,
    n: BOOL,
    T: BOOL,
    Z: BOOL,
    z: BOOL,
    a: BOOL,
    I: BOOL,
    U: BOOL,
    V: BOOL,
    '0': BOOL,
    '1': BOOL,
    '2': BOOL,
    '3': BOOL,
    '4': BOOL,
    '5': BOOL,
    '6': BOOL,
    '7': BOOL,
    '8': BOOL,
    '9': BOOL,
    R: deny('(--dereference-recursive) follows symbolic links during traversal, which can lead outside the repository; use -r, which does not'),
  },
  long: {
    regexp: { type: 'value', value: 'pattern', sets: 'pattern' },
    file: { type: 'value', value: 'path', sets: 'pattern' },
    'max-count': TEXT,
    'after-context': TEXT,
    'before-context': TEXT,
    context: TEXT,
    directories: { type: 'value', value: 'text', choices: ['read', 'skip', 'recurse'], sets: 'recursive', setsWhen: 'recurse' },
    devices: { type: 'value', value: 'text', choices: ['skip'] },
    'binary-files': choice(['binary', 'text', 'without-match']),
    color: COLOR,
    colour: COLOR,
    include: PATTERN,
    exclude: PATTERN,
    'exclude-dir': PATTERN,
    'exclude-from': PATH,
    recursive: { type: 'bool', sets: 'recursive' },
    'extended-regexp': BOOL,
    'fixed-strings': BOOL,
    'basic-regexp': BOOL,
    'perl-regexp': BOOL,
    'ignore-case': BOOL,
    'no-ignore-case': BOOL,
    'invert-match': BOOL,
    'word-regexp': BOOL,
    'line-regexp': BOOL,
    count: BOOL,
    'files-without-match': BOOL,
    'files-with-matches': BOOL,
    'only-matching': BOOL,
    quiet: BOOL,
    silent: BOOL,
    'no-messages': BOOL,
    'byte-offset': BOOL,
    'with-filename': BOOL,
    'no-filename': BOOL,
    'line-number': BOOL,
    'initial-tab': BOOL,
    null: BOOL,
    'null-data': BOOL,
    text: BOOL,
    binary: BOOL,
    'line-buffered': BOOL,
    version: BOOL,
    help: BOOL,
    'dereference-recursive': FOLLOWS,
  },
};

/** With a long listing, these make ls stat a symbolic link's target to mark its type (`l -> /elsewhere/`). */
const LS_TARGET_TYPE = ['-F', '--classify', '--file-type', '--indicator-style=classify', '--indicator-style=file-type'];
const LS_LONG = ['-l', '-g', '-o', '-n', '--format=long', '--format=verbose', '--full-time'];

const LS: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  conflicts: [{
    when: LS_TARGET_TYPE,
    with: LS_LONG,
    reason: 'in a long listing ls marks the type of what a symbolic link points to, which can lie outside the repository; use ls -l (links show as name -> target) or ls -F without -l',
  }],
  short: {
    a: BOOL,
    A: BOOL,
    l: BOOL,
    h: BOOL,
    R: BOOL,
    '1': BOOL,
    d: BOOL,
    F: BOOL,
    p: BOOL,
    t: BOOL,
    S: BOOL,
    r: BOOL,
    X: BOOL,
    v: BOOL,
    U: BOOL,
    c: BOOL,
    u: BOOL,
    i: BOOL,
    s: BOOL,
    n: BOOL,
    g: BOOL,
    o: BOOL,
    G: BOOL,
    Q: BOOL,
    C: BOOL,
    x: BOOL,
    m: BOOL,
    N: BOOL,
    b: BOOL,
    q: BOOL,
    k: BOOL,
    B: BOOL,
    D: BOOL,
    f: BOOL,
    w: TEXT,
    T: TEXT,
    I: PATTERN,
    L: FOLLOWS,
    H: deny('dereferences symbolic links given as arguments; list the link itself, or the directory it points to inside the repository'),
  },
  long: {
    all: BOOL,
    'almost-all': BOOL,
    'human-readable': BOOL,
    si: BOOL,
    recursive: BOOL,
    directory: BOOL,
    'file-type': BOOL,
    reverse: BOOL,
    size: BOOL,
    inode: BOOL,
    'numeric-uid-gid': BOOL,
    'full-time': BOOL,
    literal: BOOL,
    escape: BOOL,
    'quote-name': BOOL,
    'ignore-backups': BOOL,
    dired: BOOL,
    'no-group': BOOL,
    author: BOOL,
    kibibytes: BOOL,
    zero: BOOL,
    help: BOOL,
    version: BOOL,
    classify: COLOR,
    color: COLOR,
    'indicator-style': choice(['none', 'slash', 'file-type', 'classify']),
    sort: choice(['none', 'size', 'time', 'version', 'extension', 'width', 'name']),
    time: TEXT,
    'time-style': TEXT,
    'quoting-style': TEXT,
    width: TEXT,
    tabsize: TEXT,
    'block-size': TEXT,
    // Exact values only: ls also takes a unique prefix (--format=l is long), which the long-listing conflict reads by name.
    format: choice(['long', 'verbose', 'commas', 'horizontal', 'across', 'vertical', 'single-column']),
    ignore: PATTERN,
    hide: PATTERN,
    dereference: FOLLOWS,
    'dereference-command-line': FOLLOWS,
    'dereference-command-line-symlink-to-dir': FOLLOWS,
    'group-directories-first': deny('sorts a symbolic link to a directory with the directories, which depends on its target outside the repository; use ls -l (directories start with d)'),
  },
};

const CAT: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: {
    A: BOOL,
    b: BOOL,
    e: BOOL,
    E: BOOL,
    n: BOOL,
    s: BOOL,
    t: BOOL,
    T: BOOL,
    u: BOOL,
    v: BOOL,
  },
  long: {
    'show-all': BOOL,
    'number-nonblank': BOOL,
    'show-ends': BOOL,
    number: BOOL,
    'squeeze-blank': BOOL,
    'show-tabs': BOOL,
    'show-nonprinting': BOOL,
    help: BOOL,
    version: BOOL,
  },
};

const HEAD: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  countShorthand: true,
  short: {
    c: TEXT,
    n: TEXT,
    q: BOOL,
    v: BOOL,
    z: BOOL,
  },
  long: {
    bytes: TEXT,
    lines: TEXT,
    quiet: BOOL,
    silent: BOOL,
    verbose: BOOL,
    'zero-terminated': BOOL,
    help: BOOL,
    version: BOOL,
  },
};

const TAIL: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  countShorthand: true,
  obsoleteFollow: true,
  short: {
    c: TEXT,
    n: TEXT,
    q: BOOL,
    v: BOOL,
    z: BOOL,
    f: FOLLOW_FOREVER,
    F: FOLLOW_FOREVER,
    s: FOLLOW_FOREVER,
  },
  long: {
    bytes: TEXT,
    lines: TEXT,
    quiet: BOOL,
    silent: BOOL,
    verbose: BOOL,
    'zero-terminated': BOOL,
    help: BOOL,
    version: BOOL,
    follow: FOLLOW_FOREVER,
    retry: FOLLOW_FOREVER,
    pid: FOLLOW_FOREVER,
    'sleep-interval': FOLLOW_FOREVER,
    'max-unchanged-stats': FOLLOW_FOREVER,
  },
};

const WC: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: {
    c: BOOL,
    m: BOOL,
    l: BOOL,
    L: BOOL,
    w: BOOL,
  },
  long: {
    bytes: BOOL,
    chars: BOOL,
    lines: BOOL,
    'max-line-length': BOOL,
    words: BOOL,
    help: BOOL,
    version: BOOL,
    'files0-from': FILE_LIST,
  },
};

const FILE: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: {
    b: BOOL,
    i: BOOL,
    k: BOOL,
    N: BOOL,
    n: BOOL,
    '0': BOOL,
    r: BOOL,
    h: BOOL,
    E: BOOL,
    v: BOOL,
    F: TEXT,
    e: TEXT,
    P: TEXT,
    C: WRITES,
    m: deny('loads a magic file, which can come from anywhere; the system magic database is used'),
    f: FILE_LIST,
    z: DECOMPRESS,
    Z: DECOMPRESS,
    L: FOLLOWS,
    s: deny('reads block and character devices'),
    p: deny('restores access times, which writes file metadata'),
    S: deny('disables the seccomp sandbox'),
  },
  long: {
    brief: BOOL,
    mime: BOOL,
    'mime-type': BOOL,
    'mime-encoding': BOOL,
    'keep-going': BOOL,
    'no-pad': BOOL,
    'no-buffer': BOOL,
    print0: BOOL,
    raw: BOOL,
    'no-dereference': BOOL,
    extension: BOOL,
    apple: BOOL,
    help: BOOL,
    version: BOOL,
    separator: TEXT,
    exclude: TEXT,
    'exclude-quiet': TEXT,
    parameter: TEXT,
    compile: WRITES,
    'magic-file': deny('loads a magic file, which can come from anywhere; the system magic database is used'),
    'files-from': FILE_LIST,
    uncompress: DECOMPRESS,
    'uncompress-noreport': DECOMPRESS,
    dereference: FOLLOWS,
    'special-files': deny('reads block and character devices'),
    'preserve-date': deny('restores access times, which writes file metadata'),
    'no-sandbox': deny('disables the seccomp sandbox'),
  },
};

const TREE: ProgramPolicy = {
  style: 'tree',
  operands: 'paths',
  short: {
    a: BOOL,
    d: BOOL,
    f: BOOL,
    x: BOOL,
    q: BOOL,
    N: BOOL,
    Q: BOOL,
    p: BOOL,
    u: OWNER_NAMES,
    g: OWNER_NAMES,
    s: BOOL,
    h: BOOL,
    D: BOOL,
    F: BOOL,
    v: BOOL,
    t: BOOL,
    c: BOOL,
    U: BOOL,
    r: BOOL,
    i: BOOL,
    A: BOOL,
    S: BOOL,
    n: BOOL,
    C: BOOL,
    X: BOOL,
    J: BOOL,
    L: TEXT,
    P: PATTERN,
    I: PATTERN,
    l: FOLLOWS,
    o: WRITES,
    R: deny('re-runs tree and writes 00Tree.html files, and the sandbox is read-only'),
    H: deny('produces HTML for publishing; use -J for machine-readable output'),
    T: deny('only applies to HTML output'),
  },
  long: {
    gitignore: BOOL,
    matchdirs: BOOL,
    metafirst: BOOL,
    'ignore-case': BOOL,
    prune: BOOL,
    info: BOOL,
    noreport: BOOL,
    si: BOOL,
    du: BOOL,
    inodes: BOOL,
    device: deny('prints the device number of the filesystem each file is on, a fact about the host; ls -i and find -printf describe the files themselves'),
    dirsfirst: BOOL,
    filesfirst: BOOL,
    help: BOOL,
    version: BOOL,
    gitfile: PATH,
    infofile: PATH,
    charset: TEXT,
    filelimit: TEXT,
    timefmt: TEXT,
    sort: choice(['name', 'version', 'size', 'mtime', 'ctime', 'none']),
    fromfile: FILE_LIST,
    fromtabfile: FILE_LIST,
    fflinks: FILE_LIST,
    hintro: deny('reads an HTML intro file; only directory listings are supported'),
    houtro: deny('reads an HTML outro file; only directory listings are supported'),
    nolinks: deny('only applies to HTML output'),
    hyperlink: deny('only applies to terminal hyperlinks'),
  },
};

/** find has no flags in the getopt sense: its expression grammar is FIND_OPTIONS and FIND_PRIMARIES (see find.ts). */
export const FIND_EXPRESSION = 'find-expression';

/**
 * Every program the bash tool may run, with its policy, in the order the tool description lists them. The whitelist
 * is this table's keys (programs.ts), so a program cannot be allowed without a policy.
 */
export const PROGRAM_POLICIES = {
  rg: RG,
  grep: GREP,
  find: FIND_EXPRESSION,
  ls: LS,
  cat: CAT,
  head: HEAD,
  tail: TAIL,
  wc: WC,
  file: FILE,
  tree: TREE,
  ...READER_POLICIES,
} as const satisfies Readonly<Record<string, ProgramPolicy | typeof FIND_EXPRESSION>>;

/** find's leading options, before any path. */
export const FIND_OPTIONS: Readonly<Record<string, FlagRule>> = {
  '-P': BOOL,
  '-H': deny('dereferences symbolic links given as arguments; symlinks are listed, not followed'),
  '-L': FOLLOWS,
};

/** A find primary: how many words it takes and what they are. */
export type FindPrimary =
  | { arity: 0 }
  /** `format`: a -printf format, whose directives are checked (findFormatReason). */
  | {
      arity: 1;
      value: ValueKind;
      choices?: readonly string[];
      format?: true;
      /** Only a number: a name would be looked up in the host's user or group database (-user, -group). */
      numeric?: true;
    }
  | { arity: 'deny'; reason: string };

const P0: FindPrimary = { arity: 0 };
const P_TEXT: FindPrimary = { arity: 1, value: 'text' };
const P_PATTERN: FindPrimary = { arity: 1, value: 'pattern' };
const P_PATH: FindPrimary = { arity: 1, value: 'path' };
const findDeny = (reason: string): FindPrimary => ({ arity: 'deny', reason });

/** access(2) follows a symbolic link: whether a link to /elsewhere is "readable" says whether /elsewhere exists. */
const TARGET_ACCESS = findDeny('asks the kernel about the file a symbolic link points to, which can lie outside the repository; use -perm (e.g. -type f -perm -u=x)');

/** find's expression grammar as data: operators, tests and actions. `-newerXY` is handled by pattern in find.ts. */
export const FIND_PRIMARIES: Readonly<Record<string, FindPrimary>> = {
  '(': P0,
  ')': P0,
  '!': P0,
  ',': P0,
  '-not': P0,
  '-a': P0,
  '-and': P0,
  '-o': P0,
  '-or': P0,
  '-print': P0,
  '-print0': P0,
  '-ls': findDeny("prints owner names from the host's user database (/etc/passwd); use -printf '%M %n %U %G %s %TY-%Tm-%Td %p\\n' (numeric owners)"),
  '-prune': P0,
  '-quit': P0,
  '-true': P0,
  '-false': P0,
  '-empty': P0,
  '-executable': TARGET_ACCESS,
  '-readable': TARGET_ACCESS,
  '-writable': TARGET_ACCESS,
  '-depth': P0,
  '-d': P0,
  '-xdev': P0,
  '-mount': P0,
  '-noleaf': P0,
  '-daystart': P0,
  '-ignore_readdir_race': P0,
  '-noignore_readdir_race': P0,
  '-nouser': findDeny("asks the host's user database (/etc/passwd) whether each owner has a name; use -printf '%U %G %p\\n'"),
  '-nogroup': findDeny("asks the host's group database (/etc/group) whether each group has a name; use -printf '%U %G %p\\n'"),
  '-warn': P0,
  '-nowarn': P0,
  '-help': P0,
  '-version': P0,
  '-name': P_PATTERN,
  '-iname': P_PATTERN,
  '-path': P_PATTERN,
  '-ipath': P_PATTERN,
  '-wholename': P_PATTERN,
  '-iwholename': P_PATTERN,
  '-regex': P_PATTERN,
  '-iregex': P_PATTERN,
  '-lname': P_PATTERN,
  '-ilname': P_PATTERN,
  '-type': P_TEXT,
  '-maxdepth': P_TEXT,
  '-mindepth': P_TEXT,
  '-size': P_TEXT,
  '-mtime': P_TEXT,
  '-mmin': P_TEXT,
  '-atime': P_TEXT,
  '-amin': P_TEXT,
  '-ctime': P_TEXT,
  '-cmin': P_TEXT,
  '-perm': P_TEXT,
  '-user': { arity: 1, value: 'text', numeric: true },
  '-group': { arity: 1, value: 'text', numeric: true },
  '-uid': P_TEXT,
  '-gid': P_TEXT,
  '-links': P_TEXT,
  '-inum': P_TEXT,
  '-printf': { arity: 1, value: 'text', format: true },
  '-used': P_TEXT,
  '-fstype': findDeny("tests the type of the host filesystem a file is on (an oracle for the host's mounts); it says nothing about the repository"),
  '-regextype': { arity: 1, value: 'text', choices: ['findutils-default', 'ed', 'emacs', 'gnu-awk', 'grep', 'posix-awk', 'awk', 'posix-basic', 'posix-egrep', 'egrep', 'posix-extended', 'posix-minimal-basic', 'sed'] },
  '-newer': P_PATH,
  '-anewer': P_PATH,
  '-cnewer': P_PATH,
  '-samefile': P_PATH,
  '-exec': findDeny('runs another program, which the sandbox never allows; use -print or -ls and run the next command yourself'),
  '-execdir': findDeny('runs another program, which the sandbox never allows; use -print or -ls and run the next command yourself'),
  '-ok': findDeny('runs another program, which the sandbox never allows'),
  '-okdir': findDeny('runs another program, which the sandbox never allows'),
  '-delete': findDeny('deletes files, and the sandbox is read-only'),
  '-fprint': findDeny('writes a file, and the sandbox is read-only; use -print'),
  '-fprint0': findDeny('writes a file, and the sandbox is read-only; use -print0'),
  '-fprintf': findDeny('writes a file, and the sandbox is read-only; use -printf'),
  '-fls': findDeny('writes a file, and the sandbox is read-only; use -ls'),
  '-follow': findDeny('follows symbolic links during traversal, which can lead outside the repository'),
  '-xtype': findDeny('inspects the targets of symbolic links, which can lie outside the repository; use -type'),
  '-files0-from': findDeny('reads the list of starting points from a file; pass the paths as arguments'),
  '--': findDeny('is not needed: paths come first, then the expression'),
};

/**
 * A table entry by own property only. Tables are object literals, so `table['constructor']` would be Object's
 * constructor: `find constructor` would become a "leading option" and its start point would never be confined.
 */
export function lookup<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

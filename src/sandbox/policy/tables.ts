/**
 * The command policy as data: for each whitelisted program, every accepted flag (does it take a value, and is that
 * value a path, a pattern or plain text) and the flags refused with a reason. Anything absent is refused, so a
 * GNU long-option abbreviation (`--fol`) or a flag added by a newer version is denied without a rule of its own.
 */

/** How a flag value is checked: paths are confined to the root, patterns must not be unquoted globs. */
export type ValueKind = 'path' | 'pattern' | 'text';

/** Side effects a flag has on how operands are read. */
export type Effect = 'pattern' | 'noPattern' | 'recursive';

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
    }
  | { type: 'deny'; reason: string };

export interface ProgramPolicy {
  /** gnu: getopt_long; rg: lexopt (`-e=x` drops the `=`); tree: a value flag takes the next word, even mid-cluster. */
  style: 'gnu' | 'rg' | 'tree';
  short: Readonly<Record<string, FlagRule>>;
  long: Readonly<Record<string, FlagRule>>;
  /** rg/grep read their first operand as the pattern unless a flag supplied one. */
  operands: 'paths' | 'pattern-then-paths';
  /** Programs that would read stdin without a path operand; stdin is /dev/null, so they must be given a path. */
  needsPath?: 'always' | 'unless-recursive';
  /** head/tail accept the obsolete `-NUM` count. */
  countShorthand?: boolean;
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

const RG: ProgramPolicy = {
  style: 'rg',
  operands: 'pattern-then-paths',
  short: {
    e: { type: 'value', value: 'pattern', sets: 'pattern' }, f: { type: 'value', value: 'path', sets: 'pattern' },
    E: TEXT, m: TEXT, j: TEXT, g: PATTERN, d: TEXT, t: TEXT, T: TEXT, A: TEXT, B: TEXT, C: TEXT, M: TEXT, r: TEXT,
    s: BOOL, F: BOOL, i: BOOL, v: BOOL, x: BOOL, U: BOOL, P: BOOL, S: BOOL, a: BOOL, w: BOOL, '.': BOOL, u: BOOL,
    b: BOOL, H: BOOL, I: BOOL, n: BOOL, N: BOOL, o: BOOL, p: BOOL, q: BOOL, '0': BOOL, c: BOOL, l: BOOL, h: BOOL, V: BOOL,
    L: FOLLOWS, z: DECOMPRESS,
  },
  long: {
    regexp: { type: 'value', value: 'pattern', sets: 'pattern' }, file: { type: 'value', value: 'path', sets: 'pattern' },
    'dfa-size-limit': TEXT, encoding: TEXT, engine: choice(['default', 'pcre2', 'auto']), 'max-count': TEXT,
    'regex-size-limit': TEXT, threads: TEXT, glob: PATTERN, iglob: PATTERN, 'ignore-file': PATH, 'max-depth': TEXT,
    'max-filesize': TEXT, type: TEXT, 'type-not': TEXT, 'type-add': TEXT, 'type-clear': TEXT, 'after-context': TEXT,
    'before-context': TEXT, context: TEXT, color: choice(['never', 'auto', 'always', 'ansi']), colors: TEXT,
    'context-separator': TEXT, 'field-context-separator': TEXT, 'field-match-separator': TEXT, 'max-columns': TEXT,
    'path-separator': TEXT, replace: TEXT, sort: choice(['path', 'modified', 'accessed', 'created', 'none']),
    sortr: choice(['path', 'modified', 'accessed', 'created', 'none']),
    files: { type: 'bool', sets: 'noPattern' }, 'type-list': { type: 'bool', sets: 'noPattern' },
    'pcre2-version': { type: 'bool', sets: 'noPattern' },
    ...bools('case-sensitive crlf fixed-strings ignore-case invert-match line-regexp mmap no-mmap multiline multiline-dotall no-unicode null-data pcre2 no-pcre2 smart-case stop-on-nonmatch text word-regexp auto-hybrid-regex no-pcre2-unicode binary no-binary glob-case-insensitive hidden no-hidden ignore-file-case-insensitive no-ignore no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global no-ignore-parent no-ignore-vcs no-require-git one-file-system unrestricted block-buffered byte-offset column no-column heading no-heading include-zero line-buffered line-number no-line-number max-columns-preview null only-matching passthru pretty quiet trim vimgrep with-filename no-filename sort-files count count-matches files-with-matches files-without-match json no-json no-ignore-messages no-messages stats no-config no-follow no-search-zip no-context-separator version help'),
    pre: EXECUTES, 'pre-glob': EXECUTES, 'hostname-bin': EXECUTES, 'search-zip': DECOMPRESS, follow: FOLLOWS,
  },
};

const GREP: ProgramPolicy = {
  style: 'gnu',
  operands: 'pattern-then-paths',
  needsPath: 'unless-recursive',
  short: {
    e: { type: 'value', value: 'pattern', sets: 'pattern' }, f: { type: 'value', value: 'path', sets: 'pattern' },
    m: TEXT, A: TEXT, B: TEXT, C: TEXT,
    d: { type: 'value', value: 'text', choices: ['read', 'skip', 'recurse'], sets: 'recursive', setsWhen: 'recurse' },
    D: { type: 'value', value: 'text', choices: ['skip'] },
    r: { type: 'bool', sets: 'recursive' },
    ...bools('E F G P i v w x c L l o q s b H h n T Z z a I U V 0 1 2 3 4 5 6 7 8 9'),
    R: deny('(--dereference-recursive) follows symbolic links during traversal, which can lead outside the repository; use -r, which does not'),
  },
  long: {
    regexp: { type: 'value', value: 'pattern', sets: 'pattern' }, file: { type: 'value', value: 'path', sets: 'pattern' },
    'max-count': TEXT, 'after-context': TEXT, 'before-context': TEXT, context: TEXT,
    directories: { type: 'value', value: 'text', choices: ['read', 'skip', 'recurse'], sets: 'recursive', setsWhen: 'recurse' },
    devices: { type: 'value', value: 'text', choices: ['skip'] },
    'binary-files': choice(['binary', 'text', 'without-match']), color: COLOR, colour: COLOR,
    include: PATTERN, exclude: PATTERN, 'exclude-dir': PATTERN, 'exclude-from': PATH,
    recursive: { type: 'bool', sets: 'recursive' },
    ...bools('extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case invert-match word-regexp line-regexp count files-without-match files-with-matches only-matching quiet silent no-messages byte-offset with-filename no-filename line-number initial-tab null null-data text binary line-buffered version help'),
    'dereference-recursive': FOLLOWS,
  },
};

const LS: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  short: {
    ...bools('a A l h R 1 d F p t S r X v U c u i s n g o G Q C x m N b q k B D f'),
    w: TEXT, T: TEXT, I: PATTERN,
    L: FOLLOWS, H: deny('dereferences symbolic links given as arguments; list the link itself, or the directory it points to inside the repository'),
  },
  long: {
    ...bools('all almost-all human-readable si recursive directory file-type reverse size inode numeric-uid-gid group-directories-first full-time literal escape quote-name ignore-backups dired no-group author kibibytes zero help version'),
    classify: COLOR, color: COLOR, 'indicator-style': choice(['none', 'slash', 'file-type', 'classify']),
    sort: choice(['none', 'size', 'time', 'version', 'extension', 'width', 'name']), time: TEXT, 'time-style': TEXT,
    'quoting-style': TEXT, width: TEXT, tabsize: TEXT, 'block-size': TEXT, format: TEXT, ignore: PATTERN, hide: PATTERN,
    dereference: FOLLOWS, 'dereference-command-line': FOLLOWS, 'dereference-command-line-symlink-to-dir': FOLLOWS,
  },
};

const CAT: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: bools('A b e E n s t T u v'),
  long: bools('show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version'),
};

const HEAD: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  countShorthand: true,
  short: { c: TEXT, n: TEXT, ...bools('q v z') },
  long: { bytes: TEXT, lines: TEXT, ...bools('quiet silent verbose zero-terminated help version') },
};

const TAIL: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  countShorthand: true,
  short: { c: TEXT, n: TEXT, ...bools('q v z'), f: FOLLOW_FOREVER, F: FOLLOW_FOREVER, s: FOLLOW_FOREVER },
  long: {
    bytes: TEXT, lines: TEXT, ...bools('quiet silent verbose zero-terminated help version'),
    follow: FOLLOW_FOREVER, retry: FOLLOW_FOREVER, pid: FOLLOW_FOREVER, 'sleep-interval': FOLLOW_FOREVER,
    'max-unchanged-stats': FOLLOW_FOREVER,
  },
};

const WC: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: bools('c m l L w'),
  long: {
    ...bools('bytes chars lines max-line-length words help version'),
    'files0-from': FILE_LIST,
  },
};

const FILE: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: {
    ...bools('b i k N n 0 r h E v'), F: TEXT, e: TEXT, P: TEXT,
    C: WRITES, m: deny('loads a magic file, which can come from anywhere; the system magic database is used'),
    f: FILE_LIST, z: DECOMPRESS, Z: DECOMPRESS, L: FOLLOWS, s: deny('reads block and character devices'),
    p: deny('restores access times, which writes file metadata'), S: deny('disables the seccomp sandbox'),
  },
  long: {
    ...bools('brief mime mime-type mime-encoding keep-going no-pad no-buffer print0 raw no-dereference extension apple help version'),
    separator: TEXT, exclude: TEXT, 'exclude-quiet': TEXT, parameter: TEXT,
    compile: WRITES, 'magic-file': deny('loads a magic file, which can come from anywhere; the system magic database is used'),
    'files-from': FILE_LIST, uncompress: DECOMPRESS, 'uncompress-noreport': DECOMPRESS, dereference: FOLLOWS,
    'special-files': deny('reads block and character devices'), 'preserve-date': deny('restores access times, which writes file metadata'),
    'no-sandbox': deny('disables the seccomp sandbox'),
  },
};

const TREE: ProgramPolicy = {
  style: 'tree',
  operands: 'paths',
  short: {
    ...bools('a d f x q N Q p u g s h D F v t c U r i A S n C X J'),
    L: TEXT, P: PATTERN, I: PATTERN,
    l: FOLLOWS, o: WRITES, R: deny('re-runs tree and writes 00Tree.html files, and the sandbox is read-only'),
    H: deny('produces HTML for publishing; use -J for machine-readable output'), T: deny('only applies to HTML output'),
  },
  long: {
    ...bools('gitignore matchdirs metafirst ignore-case prune info noreport si du inodes device dirsfirst filesfirst help version'),
    gitfile: PATH, infofile: PATH, charset: TEXT, filelimit: TEXT, timefmt: TEXT,
    sort: choice(['name', 'version', 'size', 'mtime', 'ctime', 'none']),
    fromfile: FILE_LIST, fromtabfile: FILE_LIST, fflinks: FILE_LIST,
    hintro: deny('reads an HTML intro file; only directory listings are supported'),
    houtro: deny('reads an HTML outro file; only directory listings are supported'),
    nolinks: deny('only applies to HTML output'), hyperlink: deny('only applies to terminal hyperlinks'),
  },
};

/** Flag tables for every program with a getopt-like syntax; find has its own expression grammar (see find.ts). */
export const POLICIES: Readonly<Record<string, ProgramPolicy>> = {
  rg: RG, grep: GREP, ls: LS, cat: CAT, head: HEAD, tail: TAIL, wc: WC, file: FILE, tree: TREE,
};

/** find's leading options, before any path. */
export const FIND_OPTIONS: Readonly<Record<string, FlagRule>> = {
  '-P': BOOL,
  '-H': deny('dereferences symbolic links given as arguments; symlinks are listed, not followed'),
  '-L': FOLLOWS,
};

/** A find primary: how many words it takes and what they are. */
export type FindPrimary = { arity: 0 } | { arity: 1; value: ValueKind; choices?: readonly string[] } | { arity: 'deny'; reason: string };

const P0: FindPrimary = { arity: 0 };
const P_TEXT: FindPrimary = { arity: 1, value: 'text' };
const P_PATTERN: FindPrimary = { arity: 1, value: 'pattern' };
const P_PATH: FindPrimary = { arity: 1, value: 'path' };
const findDeny = (reason: string): FindPrimary => ({ arity: 'deny', reason });

/** find's expression grammar as data: operators, tests and actions. `-newerXY` is handled by pattern in find.ts. */
export const FIND_PRIMARIES: Readonly<Record<string, FindPrimary>> = {
  '(': P0, ')': P0, '!': P0, ',': P0, '-not': P0, '-a': P0, '-and': P0, '-o': P0, '-or': P0,
  ...Object.fromEntries('-print -print0 -ls -prune -quit -true -false -empty -executable -readable -writable -depth -d -xdev -mount -noleaf -daystart -ignore_readdir_race -noignore_readdir_race -nouser -nogroup -warn -nowarn -help -version'
    .split(' ').map((name) => [name, P0])),
  ...Object.fromEntries('-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname'
    .split(' ').map((name) => [name, P_PATTERN])),
  ...Object.fromEntries('-type -maxdepth -mindepth -size -mtime -mmin -atime -amin -ctime -cmin -perm -user -group -uid -gid -links -inum -printf -used -fstype'
    .split(' ').map((name) => [name, P_TEXT])),
  '-regextype': { arity: 1, value: 'text', choices: ['findutils-default', 'ed', 'emacs', 'gnu-awk', 'grep', 'posix-awk', 'awk', 'posix-basic', 'posix-egrep', 'egrep', 'posix-extended', 'posix-minimal-basic', 'sed'] },
  '-newer': P_PATH, '-anewer': P_PATH, '-cnewer': P_PATH, '-samefile': P_PATH,
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

function bools(names: string): Record<string, FlagRule> {
  return Object.fromEntries(names.split(' ').map((name) => [name, BOOL]));
}

import type { FlagRule, ProgramPolicy, SizeBound } from './tables.js';
import { checkJqFilter, checkSedScript } from './scripts.js';

/**
 * Tables for the text and file readers beyond search and listing: sort, uniq, cut, nl, tac, stat, du, diff, cmp, od,
 * xxd, hexdump, strings, basename, dirname, realpath, pwd, sed (print ranges only) and jq. Each flag that writes a
 * file, runs a program, follows a symlink or reads a file named elsewhere is refused with its reason; anything absent
 * is refused too.
 */

const BOOL: FlagRule = { type: 'bool' };
const TEXT: FlagRule = { type: 'value', value: 'text' };
const PATTERN: FlagRule = { type: 'value', value: 'pattern' };
const PATH: FlagRule = { type: 'value', value: 'path' };
const OPTIONAL: FlagRule = { type: 'value', value: 'text', optional: true };
const deny = (reason: string): FlagRule => ({ type: 'deny', reason });

const WRITES = deny('writes files, and the sandbox is read-only; the output comes back to you');
const TEMP_FILES = deny('writes temporary files elsewhere, and the sandbox is read-only');
const EXECUTES = deny('runs another program, which the sandbox never allows');
const FOLLOWS = deny('follows symbolic links, which can lead outside the repository; symlinks are described, not followed');
const FILE_LIST = deny('reads the list of files from another file; pass the files as arguments instead');
const HELP = { help: BOOL, version: BOOL };

const SORT_BUFFER: SizeBound = {
  syntax: 'sort',
  min: 64 * 1024 ** 2,
  max: 256 * 1024 ** 2,
  why: 'a smaller buffer spills into temporary files outside the repository, a larger one would take the machine',
};

const SORT: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  // Memory and threads: one call may not take the machine (the child's address space is capped at 1 GiB too), and a
  // small buffer makes sort spill into temporary files in $TMPDIR, outside the repository (`sort -S 1` created /tmp/sortXXXXXX).
  bounds: { S: SORT_BUFFER, 'buffer-size': SORT_BUFFER, parallel: 8 },
  // GNU sort merges 16 inputs at a time (NMERGE); with more, `sort -m` merges through temporary files (measured: /tmp/sortXXXXXX).
  maxMerged: { flags: ['-m', '--merge'], count: 16, why: 'with more, sort -m merges through temporary files outside the repository; merge them in groups' },
  short: {
    b: BOOL, d: BOOL, f: BOOL, g: BOOL, i: BOOL, M: BOOL, h: BOOL, n: BOOL, R: BOOL, r: BOOL, V: BOOL, c: BOOL, C: BOOL,
    m: BOOL, s: BOOL, u: BOOL, z: BOOL, k: TEXT, t: TEXT, S: TEXT,
    o: WRITES, T: TEMP_FILES,
  },
  long: {
    ...HELP,
    'ignore-leading-blanks': BOOL, 'dictionary-order': BOOL, 'ignore-case': BOOL, 'general-numeric-sort': BOOL,
    'ignore-nonprinting': BOOL, 'month-sort': BOOL, 'human-numeric-sort': BOOL, 'numeric-sort': BOOL, 'random-sort': BOOL,
    reverse: BOOL, 'version-sort': BOOL, check: OPTIONAL, merge: BOOL, stable: BOOL, unique: BOOL, 'zero-terminated': BOOL,
    debug: BOOL, key: TEXT, 'field-separator': TEXT, 'buffer-size': TEXT, parallel: TEXT,
    sort: { type: 'value', value: 'text', choices: ['general-numeric', 'human-numeric', 'month', 'numeric', 'random', 'version'] },
    'random-source': PATH,
    output: WRITES, 'temporary-directory': TEMP_FILES, 'compress-program': EXECUTES, 'batch-size': TEMP_FILES, 'files0-from': FILE_LIST,
  },
};

const ONE_INPUT = { count: 1, why: 'a second operand is the output file it would write; run one command per file' };

const UNIQ: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  maxPaths: ONE_INPUT,
  short: { c: BOOL, d: BOOL, D: BOOL, i: BOOL, u: BOOL, z: BOOL, f: TEXT, s: TEXT, w: TEXT },
  long: {
    ...HELP,
    count: BOOL, repeated: BOOL, 'all-repeated': OPTIONAL, group: OPTIONAL, 'ignore-case': BOOL, unique: BOOL,
    'zero-terminated': BOOL, 'skip-fields': TEXT, 'skip-chars': TEXT, 'check-chars': TEXT,
  },
};

const CUT: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: { b: TEXT, c: TEXT, d: TEXT, f: TEXT, n: BOOL, s: BOOL, z: BOOL },
  long: {
    ...HELP,
    bytes: TEXT, characters: TEXT, delimiter: TEXT, fields: TEXT, complement: BOOL, 'only-delimited': BOOL,
    'output-delimiter': TEXT, 'zero-terminated': BOOL,
  },
};

const NL: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: { b: TEXT, d: TEXT, f: TEXT, h: TEXT, i: TEXT, l: TEXT, n: TEXT, p: BOOL, s: TEXT, v: TEXT, w: TEXT },
  long: {
    ...HELP,
    'body-numbering': TEXT, 'section-delimiter': TEXT, 'footer-numbering': TEXT, 'header-numbering': TEXT,
    'line-increment': TEXT, 'join-blank-lines': TEXT, 'number-format': TEXT, 'no-renumber': BOOL, 'number-separator': TEXT,
    'starting-line-number': TEXT, 'number-width': TEXT,
  },
};

const TAC: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: { b: BOOL, r: BOOL, s: TEXT },
  long: { ...HELP, before: BOOL, regex: BOOL, separator: TEXT },
};

/**
 * stat's format directives that describe the file itself: name (%n, and %N with a link's target text), size, blocks,
 * type and mode, numeric owners, links, inode (as ls -i and find -printf %i show it) and times. Refused: %U %G (names
 * from the host's user and group databases), %d %D (the device of the host filesystem), %m (its mount point), %o (its
 * preferred I/O size), %t %T %Hd %Ld %Hr %Lr (device numbers) and %C (the host's security context).
 */
const STAT_DIRECTIVE = /%(?:%|[-#+ 0']*\d*(?:\.\d*)?[aAbBfFghinNsuwWxXyYzZ])/y;

/** Every `%` of a stat format must start an accepted directive; null accepts. */
export function statFormatReason(format: string): string | null {
  const directive = new RegExp(STAT_DIRECTIVE.source, 'y');
  for (let at = format.indexOf('%'); at >= 0; at = format.indexOf('%', at)) {
    directive.lastIndex = at;
    const match = directive.exec(format);
    if (match === null) {
      const shown = /^%[-#+ 0']*\d*(?:\.\d*)?[HL]?.?/.exec(format.slice(at))?.[0] ?? '%';
      return `the directive ${shown} is not accepted: it reports the host (its filesystem, devices, mount points or user names), not the file; use %n %N %s %b %F %a %A %u %g %h %i %x %y %z %w`;
    }
    at += match[0].length;
  }
  return null;
}

const STAT_FORMAT: FlagRule = { type: 'value', value: 'text', check: statFormatReason };
const FILE_SYSTEM = deny('reports the host filesystem (its type, size and free space), not the repository');

const STAT: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: { c: STAT_FORMAT, t: BOOL, L: FOLLOWS, f: FILE_SYSTEM },
  long: {
    ...HELP, format: STAT_FORMAT, printf: STAT_FORMAT, terse: BOOL, cached: TEXT, dereference: FOLLOWS, 'file-system': FILE_SYSTEM,
  },
};

const DU: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  short: {
    a: BOOL, b: BOOL, c: BOOL, h: BOOL, k: BOOL, m: BOOL, s: BOOL, x: BOOL, S: BOOL, l: BOOL, P: BOOL, '0': BOOL,
    d: TEXT, B: TEXT, t: TEXT,
    L: FOLLOWS, D: FOLLOWS, H: FOLLOWS, X: FILE_LIST,
  },
  long: {
    ...HELP,
    all: BOOL, 'apparent-size': BOOL, bytes: BOOL, total: BOOL, 'human-readable': BOOL, si: BOOL, summarize: BOOL,
    'one-file-system': BOOL, 'separate-dirs': BOOL, 'count-links': BOOL, 'no-dereference': BOOL, null: BOOL, inodes: BOOL,
    'max-depth': TEXT, 'block-size': TEXT, threshold: TEXT, time: OPTIONAL, 'time-style': TEXT, exclude: PATTERN,
    dereference: FOLLOWS, 'dereference-args': FOLLOWS, 'exclude-from': FILE_LIST, 'files0-from': FILE_LIST,
  },
};

const DIFF_FORMATS = ['old-group-format', 'new-group-format', 'changed-group-format', 'unchanged-group-format', 'line-format',
  'old-line-format', 'new-line-format', 'unchanged-line-format'];

const DIFF: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  maxPaths: { count: 2, why: 'diff compares two files or directories' },
  // GNU diff follows symbolic links when it compares directories (-r): a link to /etc/passwd would be read.
  forced: ['--no-dereference'],
  short: {
    q: BOOL, s: BOOL, c: BOOL, u: BOOL, e: BOOL, n: BOOL, y: BOOL, t: BOOL, T: BOOL, r: BOOL, N: BOOL, i: BOOL, E: BOOL,
    Z: BOOL, b: BOOL, w: BOOL, B: BOOL, a: BOOL, p: BOOL, d: BOOL,
    C: TEXT, U: TEXT, W: TEXT, x: PATTERN, S: TEXT, I: TEXT, F: TEXT, D: TEXT,
    X: FILE_LIST, l: deny('pipes the output through the pr program, which the sandbox never runs'),
  },
  long: {
    ...HELP,
    normal: BOOL, brief: BOOL, 'report-identical-files': BOOL, context: OPTIONAL, unified: OPTIONAL, ed: BOOL, rcs: BOOL,
    'side-by-side': BOOL, width: TEXT, 'left-column': BOOL, 'suppress-common-lines': BOOL, 'show-c-function': BOOL,
    'show-function-line': TEXT, label: TEXT, 'expand-tabs': BOOL, 'initial-tab': BOOL, tabsize: TEXT, 'suppress-blank-empty': BOOL,
    recursive: BOOL, 'no-dereference': BOOL, 'new-file': BOOL, 'unidirectional-new-file': BOOL, 'ignore-file-name-case': BOOL,
    'no-ignore-file-name-case': BOOL, exclude: PATTERN, 'starting-file': TEXT, 'ignore-case': BOOL, 'ignore-tab-expansion': BOOL,
    'ignore-trailing-space': BOOL, 'ignore-space-change': BOOL, 'ignore-all-space': BOOL, 'ignore-blank-lines': BOOL,
    'ignore-matching-lines': TEXT, text: BOOL, 'strip-trailing-cr': BOOL, 'ifdef': TEXT, minimal: BOOL, 'horizon-lines': TEXT,
    'speed-large-files': BOOL, color: { type: 'value', value: 'text', optional: true, choices: ['never', 'always', 'auto'] },
    palette: TEXT, ...Object.fromEntries(DIFF_FORMATS.map((name) => [name, TEXT])),
    'from-file': PATH, 'to-file': PATH, 'exclude-from': FILE_LIST,
    paginate: deny('pipes the output through the pr program, which the sandbox never runs'),
  },
};

const CMP: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  maxPaths: { count: 2, why: 'further operands are byte offsets; use -i SKIP' },
  short: { b: BOOL, l: BOOL, s: BOOL, v: BOOL, i: TEXT, n: TEXT },
  long: { ...HELP, 'print-bytes': BOOL, verbose: BOOL, quiet: BOOL, silent: BOOL, 'ignore-initial': TEXT, bytes: TEXT },
};

const OD: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  // GNU od's traditional form `od FILE [+]OFFSET[.][b]`: a number operand is a byte offset, not a file.
  notPaths: {
    pattern: /^\+?(?:0[xX][0-9a-fA-F]+|[0-9]+\.?)[bB]?$/,
    reason: 'od reads a number operand as a byte offset (od FILE +OFFSET), not a file; use -j N to skip bytes, or ./N for a file named N',
  },
  short: {
    A: TEXT, j: TEXT, N: TEXT, S: TEXT, t: TEXT, v: BOOL, w: { type: 'value', value: 'text', optional: true },
    a: BOOL, b: BOOL, c: BOOL, d: BOOL, f: BOOL, i: BOOL, l: BOOL, o: BOOL, s: BOOL, x: BOOL,
  },
  long: {
    ...HELP,
    'address-radix': TEXT, endian: { type: 'value', value: 'text', choices: ['big', 'little'] }, 'skip-bytes': TEXT,
    'read-bytes': TEXT, strings: OPTIONAL, format: TEXT, 'output-duplicates': BOOL, width: OPTIONAL,
  },
};

/** xxd parses its own arguments (any word starting `-p` is plain, `-cols` takes the next word), see xxd.ts. */
const XXD: ProgramPolicy = {
  style: 'xxd',
  operands: 'paths',
  needsPath: 'always',
  maxPaths: ONE_INPUT,
  short: {
    a: BOOL, b: BOOL, C: BOOL, E: BOOL, e: BOOL, i: BOOL, p: BOOL, u: BOOL, d: BOOL, h: BOOL, v: BOOL,
    c: TEXT, g: TEXT, l: TEXT, s: TEXT, o: TEXT, n: TEXT,
    r: deny('turns a hex dump back into binary, which is for writing files; read the dump instead'),
  },
  long: {},
};

const HEXDUMP: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: {
    b: BOOL,
    c: BOOL,
    C: BOOL,
    d: BOOL,
    o: BOOL,
    x: BOOL,
    v: BOOL,
    e: TEXT,
    f: PATH,
    n: TEXT,
    s: TEXT,
    L: OPTIONAL,
    h: BOOL,
    V: BOOL,
  },
  long: {
    ...HELP,
    'one-byte-octal': BOOL,
    'one-byte-char': BOOL,
    canonical: BOOL,
    'two-bytes-decimal': BOOL,
    'two-bytes-octal': BOOL,
    'two-bytes-hex': BOOL,
    'no-squeezing': BOOL,
    format: TEXT,
    'format-file': PATH,
    length: TEXT,
    skip: TEXT,
    color: OPTIONAL,
  },
};

const STRINGS: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  noResponseFiles: true,
  short: {
    a: BOOL, d: BOOL, f: BOOL, w: BOOL, o: BOOL, h: BOOL, v: BOOL, V: BOOL,
    n: TEXT, t: { type: 'value', value: 'text', choices: ['o', 'd', 'x'] }, e: TEXT, s: TEXT, U: TEXT,
    T: deny('selects an object-file back end; the default reads every file'),
  },
  long: {
    ...HELP,
    all: BOOL, data: BOOL, 'print-file-name': BOOL, 'include-all-whitespace': BOOL, bytes: TEXT, radix: TEXT, encoding: TEXT,
    'output-separator': TEXT, unicode: TEXT, target: deny('selects an object-file back end; the default reads every file'),
  },
};

const BASENAME: ProgramPolicy = {
  style: 'gnu',
  operands: 'text',
  short: { a: BOOL, s: TEXT, z: BOOL },
  long: { ...HELP, multiple: BOOL, suffix: TEXT, zero: BOOL },
};

const DIRNAME: ProgramPolicy = { style: 'gnu', operands: 'text', short: { z: BOOL }, long: { ...HELP, zero: BOOL } };

const REALPATH: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: { e: BOOL, m: BOOL, L: BOOL, P: BOOL, q: BOOL, s: BOOL, z: BOOL },
  long: {
    ...HELP,
    'canonicalize-existing': BOOL, 'canonicalize-missing': BOOL, logical: BOOL, physical: BOOL, quiet: BOOL, strip: BOOL,
    'no-symlinks': BOOL, zero: BOOL, 'relative-to': PATH, 'relative-base': PATH,
  },
};

/** pwd prints the repository root's absolute path (the working directory of every command). */
const PWD: ProgramPolicy = { style: 'gnu', operands: 'none', short: { L: BOOL, P: BOOL }, long: HELP };

const SED_ONLY = 'sed runs here only as sed -n \'N,Mp\' FILE (print lines N to M; also $p, /regex/p, N,+Kp, $=)';

/** sed only prints: the script is checked to be addresses with p, q or = (never w, r, e, s///w or a script file). */
const SED: ProgramPolicy = {
  style: 'gnu',
  operands: 'pattern-then-paths',
  needsPath: 'always',
  script: checkSedScript,
  // GNU sed's own guard: e, r and w are rejected even if a script got past the check.
  forced: ['--sandbox'],
  requires: { flags: ['-n', '--quiet', '--silent'], reason: `without -n sed prints every line as well; ${SED_ONLY}` },
  short: {
    n: BOOL, E: BOOL, r: BOOL, s: BOOL, z: BOOL, u: BOOL,
    e: { type: 'value', value: 'pattern', sets: 'pattern' },
    i: deny('edits files in place, and the sandbox is read-only'),
    f: deny('reads the script from a file; give it on the command line'),
  },
  long: {
    ...HELP,
    quiet: BOOL, silent: BOOL, 'regexp-extended': BOOL, separate: BOOL, 'null-data': BOOL, unbuffered: BOOL, posix: BOOL,
    expression: { type: 'value', value: 'pattern', sets: 'pattern' },
    'in-place': deny('edits files in place, and the sandbox is read-only'),
    file: deny('reads the script from a file; give it on the command line'),
    sandbox: BOOL, debug: BOOL,
  },
};

/** jq reads JSON files inside the root; the filter may not reach the environment or load modules from anywhere. */
const JQ: ProgramPolicy = {
  style: 'gnu',
  operands: 'pattern-then-paths',
  noLongEquals: true,
  noEndBeforePattern: true,
  needsPath: 'unless-recursive',
  needsPathHint: 'give it a JSON file, or -n to read no input',
  script: checkJqFilter,
  short: {
    r: BOOL, j: BOOL, c: BOOL, n: { type: 'bool', sets: 'recursive' }, e: BOOL, s: BOOL, S: BOOL, C: BOOL, M: BOOL, a: BOOL,
    R: BOOL, h: BOOL, V: BOOL,
    f: deny('reads the filter from a file; give it on the command line'),
    L: deny('loads modules from a directory, which can lie outside the repository'),
  },
  long: {
    ...HELP,
    'raw-output': BOOL, 'join-output': BOOL, 'compact-output': BOOL, 'null-input': { type: 'bool', sets: 'recursive' },
    'exit-status': BOOL, slurp: BOOL, 'sort-keys': BOOL, 'color-output': BOOL, 'monochrome-output': BOOL, 'ascii-output': BOOL,
    'raw-input': BOOL, tab: BOOL, indent: TEXT, seq: BOOL, stream: BOOL, 'stream-errors': BOOL, 'raw-output0': BOOL,
    'from-file': deny('reads the filter from a file; give it on the command line'),
    'library-path': deny('loads modules from a directory, which can lie outside the repository'),
    arg: deny('binds a variable from two further words; write the value into the filter instead'),
    argjson: deny('binds a variable from two further words; write the value into the filter instead'),
    slurpfile: deny('reads a file into a variable; pass the file as an input instead'),
    rawfile: deny('reads a file into a variable; pass the file as an input instead'),
    args: deny('turns the remaining words into values instead of files; write the values into the filter'),
    jsonargs: deny('turns the remaining words into values instead of files; write the values into the filter'),
  },
};

const BASE64: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  maxPaths: { count: 1, why: 'base64 reads one file' },
  short: { d: BOOL, i: BOOL, w: TEXT },
  long: { ...HELP, decode: BOOL, 'ignore-garbage': BOOL, wrap: TEXT },
};

const PASTE: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: { d: TEXT, s: BOOL, z: BOOL },
  long: { ...HELP, delimiters: TEXT, serial: BOOL, 'zero-terminated': BOOL },
};

/** Checksums of files inside the root; -c is refused: it reads file names from a file and opens them. */
const CHECKSUM: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  short: { b: BOOL, t: BOOL, z: BOOL, c: FILE_LIST },
  long: { ...HELP, binary: BOOL, text: BOOL, tag: BOOL, zero: BOOL, check: FILE_LIST },
};

const COMM: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  maxPaths: { count: 2, why: 'comm compares two files' },
  short: { '1': BOOL, '2': BOOL, '3': BOOL, i: BOOL, z: BOOL },
  long: { ...HELP, 'check-order': BOOL, 'nocheck-order': BOOL, 'output-delimiter': TEXT, total: BOOL, 'zero-terminated': BOOL },
};

const JOIN: ProgramPolicy = {
  style: 'gnu',
  operands: 'paths',
  needsPath: 'always',
  maxPaths: { count: 2, why: 'join joins two files' },
  short: { a: TEXT, e: TEXT, i: BOOL, j: TEXT, o: TEXT, t: TEXT, v: TEXT, z: BOOL, '1': TEXT, '2': TEXT },
  long: { ...HELP, 'ignore-case': BOOL, 'check-order': BOOL, 'nocheck-order': BOOL, header: BOOL, 'zero-terminated': BOOL },
};

/** The readers, in the order the tool description lists them after the search and listing programs. */
export const READER_POLICIES = {
  sort: SORT, uniq: UNIQ, cut: CUT, nl: NL, tac: TAC, stat: STAT, du: DU, diff: DIFF, cmp: CMP, od: OD, xxd: XXD, hexdump: HEXDUMP,
  strings: STRINGS, basename: BASENAME, dirname: DIRNAME, realpath: REALPATH, pwd: PWD, sed: SED, jq: JQ, base64: BASE64, paste: PASTE,
  sha256sum: CHECKSUM, sha1sum: CHECKSUM, md5sum: CHECKSUM, comm: COMM, join: JOIN,
} as const satisfies Readonly<Record<string, ProgramPolicy>>;

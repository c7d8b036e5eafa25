import { promises as fs } from 'node:fs';
import path from 'node:path';
import { groupDigits } from '../digits.js';
import { confine } from './paths.js';
import type { Programs } from './programs.js';
import { WHITELIST } from './programs.js';
import { parseFind } from './policy/find.js';
import { parseFlags, type Role } from './policy/flags.js';
import { expandGlob } from './policy/glob.js';
import { lex, type Word } from './policy/lexer.js';
import { FIND_EXPRESSION, lookup, PROGRAM_POLICIES, type ProgramPolicy } from './policy/tables.js';
import { rewriteLs, rewriteStat } from './policy/rewrites.js';
import { MAX_TREE_WALK_ENTRIES, outsideLinks } from './policy/tree-walk.js';

/** Most arguments after glob expansion. */
export const MAX_EXPANDED_ARGS = 1024;

/**
 * Most bytes of arguments after glob expansion (256 KiB). The kernel refuses an exec whose arguments pass ARG_MAX
 * (2 MiB with an 8 MiB stack) with E2BIG; a repository with deep, long paths makes `wc -l deep/*` pass it well within
 * MAX_EXPANDED_ARGS, so the size is capped too, with a refusal the model can act on.
 */
export const MAX_EXPANDED_ARG_BYTES = 256 * 1024;

/** The outcome of checking a command: the exact argv to spawn, or a refusal written for the model. */
export type Verdict =
  | {
      ok: true;
      file: string;
      args: string[];
      program: string;
      /** Real paths of every confined operand and path value. */
      paths: string[];
      /** What the model should know although the command runs (glob matches that were skipped). */
      notes: string[];
    }
  | { ok: false; reason: string };

/** Programs that run other programs; named so the refusal can say "run it directly". */
const WRAPPERS = new Set(['env', 'sudo', 'doas', 'su', 'runuser', 'timeout', 'nice', 'ionice', 'nohup', 'setsid', 'stdbuf', 'xargs',
  'parallel', 'watch', 'time', 'exec', 'command', 'builtin', 'eval', 'source', '.', 'sh', 'bash', 'dash', 'zsh', 'ksh', 'fish',
  'csh', 'tcsh', 'busybox', 'toybox', 'chroot', 'strace', 'ltrace', 'script', 'flock', 'taskset', 'chrt', 'unshare', 'nsenter',
  'firejail', 'python', 'python3', 'perl', 'ruby', 'node', 'awk', 'gawk']);

/** Names that run as another program with a flag: the system egrep and fgrep are shell scripts that exec grep. */
const ALIASES: Readonly<Record<string, readonly [string, string]>> = { egrep: ['grep', '-E'], fgrep: ['grep', '-F'] };

/** Alternatives for programs the model often reaches for. */
const WRITES_INSTEAD = 'nothing can be changed here (the sandbox is read-only); describe the change for the person to make';
const RUNS_INSTEAD = 'spelunk only reads, it runs no build, test or script; read the file (cat, read_file) or search it (rg -n)';
const INSTEAD: Readonly<Record<string, string>> = {
  awk: "use rg -o / -r to extract text, cut -d ' ' -f 2 FILE for fields, or read_file to read it",
  git: 'git is not run through bash; use the git tool for history when it is offered, and rg, find and ls for the working tree',
  echo: 'echo is not needed; just say it in your answer', printf: 'printf is not needed; just say it in your answer',
  less: 'use read_file or cat -n FILE', more: 'use read_file or cat -n FILE', ag: 'use rg', ack: 'use rg', fd: 'use find or rg --files',
  tr: 'use rg -o / -r to transform matches, or read the text with cat',
  readlink: 'ls -l LINK shows where a link points, realpath FILE the real path of a file inside the repository', column: 'read the output as it is',
  cd: 'every command runs in the repository root; give the directory as an argument instead (ls src, rg -n x src)',
  which: 'the programs come from a fixed list (see the tool description)', type: 'the programs come from a fixed list (see the tool description)',
  locate: "use find . -name 'NAME' or rg --files -g '*NAME*'", zcat: 'compressed files cannot be read here', gzip: 'compressed files cannot be read here',
  rm: WRITES_INSTEAD, mv: WRITES_INSTEAD, cp: WRITES_INSTEAD, mkdir: WRITES_INSTEAD, touch: WRITES_INSTEAD, chmod: WRITES_INSTEAD,
  ln: WRITES_INSTEAD, tee: WRITES_INSTEAD, dd: WRITES_INSTEAD, patch: WRITES_INSTEAD,
  npm: RUNS_INSTEAD, npx: RUNS_INSTEAD, yarn: RUNS_INSTEAD, pnpm: RUNS_INSTEAD, make: RUNS_INSTEAD, cargo: RUNS_INSTEAD, go: RUNS_INSTEAD,
  pytest: RUNS_INSTEAD, pip: RUNS_INSTEAD, tsc: RUNS_INSTEAD, mvn: RUNS_INSTEAD, gradle: RUNS_INSTEAD,
  curl: 'there is no network here; read the repository\'s files instead', wget: 'there is no network here; read the repository\'s files instead',
};

/**
 * Programs refused as a pipeline's later stage: GNU tac copies an input it cannot seek (a pipe) into a temporary file
 * first, and no child may write one (RLIMIT_FSIZE 0; no host /tmp in the tables).
 */
const PIPED_INPUT_REFUSED: Readonly<Record<string, string>> = {
  tac: 'copies its input to a temporary file, which nothing here may write; run tac FILE on the file itself',
};

/**
 * Decides whether a model-supplied command may run and, if so, the argv to spawn: quote removal only (never a
 * shell), a whitelisted program resolved from a trusted location, every flag in that program's table, every path
 * operand and path-valued flag confined to the root, unquoted globs expanded inside the root. `stdin`: the command is a
 * later stage of a pipeline, whose input is the stage before it: it may read standard input and names no file operand.
 */
export async function checkCommand(command: string, ctx: { root: string; programs: Programs; stdin?: boolean }): Promise<Verdict> {
  const lexed = lex(command);
  if (!lexed.ok) return { ok: false, reason: fundamentalReason(command, ctx.programs) ?? lexed.reason };
  const [head, ...words] = lexed.words;
  // Stryker disable next-line ObjectLiteral,BooleanLiteral,StringLiteral: lex() refuses a command without words, so this only narrows the type
  if (head === undefined) return { ok: false, reason: 'the command is empty' };
  if (head.text === 'git' && words.length > 0) {
    return { ok: false, reason: `git is not run through bash; use the git tool and send it \`${quoteCommand(words.map((w) => w.text))}\` (history; with the kernel sandbox also status and diff)` };
  }
  const program = resolveProgram(head, ctx.programs);
  if (!program.ok) return program;
  const policy = lookup<(typeof PROGRAM_POLICIES)[keyof typeof PROGRAM_POLICIES]>(PROGRAM_POLICIES, program.name);
  if (policy === undefined) return { ok: false, reason: `${program.name} has no policy` };
  const given = [...program.prefix.map((text) => ({ text, glob: [] })), ...words];
  // A pipeline's later stage (`stdin`) reads the stage before it, so the tables' "needs a path" does not apply to it.
  const table = policy !== FIND_EXPRESSION && ctx.stdin === true ? { ...policy, needsPath: undefined } : policy;
  const parsed = table === FIND_EXPRESSION ? parseFind(given) : parseFlags(program.name, table, given);
  if (!parsed.ok) return parsed;
  const args = await materialise(program.name, given, parsed.roles, ctx.root);
  if (!args.ok) return args;
  const piped = ctx.stdin === true ? lookup(PIPED_INPUT_REFUSED, program.name) : undefined;
  if (piped !== undefined) return { ok: false, reason: `${program.name} after a pipe ${piped}` };
  if (ctx.stdin === true && args.operands.length > 0) {
    return { ok: false, reason: `${program.name} after a pipe reads the output before it, so it takes no file here; run \`${quoteCommand(lexed.words.map((w) => w.text))}\` as its own command` };
  }
  const merged = policy === FIND_EXPRESSION ? undefined : (policy as ProgramPolicy).maxMerged;
  if (merged !== undefined && merged.flags.some((flag) => parsed.given?.has(flag)) && args.operands.length > merged.count) {
    return { ok: false, reason: `${program.name} ${merged.flags[0]} takes at most ${merged.count} files here (${args.operands.length} given): ${merged.why}` };
  }
  if (program.name === 'tree') {
    const walked = await treeReason(lexed.words, parsed.roles, parsed.given ?? new Set(), args.operands, ctx.root);
    if (walked !== null) return { ok: false, reason: walked };
  }
  const forced = policy === FIND_EXPRESSION ? [] : (policy as ProgramPolicy).forced ?? [];
  const flags = parsed.given ?? new Set<string>();
  const final =
    program.name === 'ls' ? rewriteLs(args.args, parsed.roles, flags)
    : program.name === 'stat' ? rewriteStat(args.args, flags)
    : { args: args.args, notes: [] };
  return {
    ok: true,
    program: program.name,
    file: program.file,
    args: [...forced, ...final.args],
    paths: args.paths,
    notes: [...args.notes, ...final.notes],
  };
}

/**
 * tree stats what every symbolic link points to, so it runs only where no link leads outside the root (decided from
 * inside the root alone); otherwise the refusal names the links and the same command with them left out (-I).
 */
async function treeReason(
  words: readonly Word[],
  roles: readonly Role[],
  given: ReadonlySet<string>,
  operands: readonly string[],
  root: string,
): Promise<string | null> {
  const values = (flag: string): string[] =>
    roles.flatMap((role, i) => (role.kind === 'value' && role.flag === flag ? [(words[i + 1] as Word).text] : []));
  const depth = Number(values('-L').at(-1));
  const ignored = new Set(
    values('-I')
      .flatMap((pattern) => pattern.split('|'))
      .filter((name) => !/[*?[\\\]]/.test(name)),
  );
  const scope = {
    starts: operands.length > 0 ? operands : [root],
    depth: Number.isInteger(depth) && depth > 0 ? depth : undefined,
    all: given.has('-a'),
    ignored,
  };
  const walked = await outsideLinks(root, scope);
  if (!walked.ok) {
    return `tree: the directories hold more than ${groupDigits(MAX_TREE_WALK_ENTRIES)} entries; give -L 2 or a subdirectory (tree -L 2 src)`;
  }
  if (walked.outside.length === 0) return null;
  const names = [...new Set(walked.outside.map((rel) => path.basename(rel)))];
  const why = `tree: ${listed(walked.outside)} ${walked.outside.length === 1 ? 'is a symbolic link' : 'are symbolic links'} to outside the repository, and tree describes what a link points to (its type, the counts), which would reveal what lies outside`;
  if (names.some((name) => /[|*?[\]\\]/.test(name))) return `${why}; list with find instead (find . -maxdepth 2)`;
  return `${why}; leave ${walked.outside.length === 1 ? 'it' : 'them'} out: ${quoteCommand([...words.map((w) => w.text), '-I', names.join('|')])}`;
}

/**
 * When the lexer refuses a command, the reason a table gives is often the one that matters: `find . -exec cat {} ;`
 * is refused for `-exec`, not for its braces, so the model does not fix the quoting only to be refused again. The
 * words are split leniently (whitespace, quotes dropped) only to look for a refused program or a denied flag; the
 * command stays refused whatever this finds.
 */
function fundamentalReason(command: string, programs: Programs): string | null {
  const [head, ...rest] = command.split(/[ \t]+/).filter((w) => w !== '').map((w) => w.replace(/['"]/g, ''));
  // A head with shell or non-ASCII characters is the lexer's to explain (`cat$IFS/etc/passwd`, a BOM in `rg`).
  if (head === undefined || /[^\x21-\x7e]|[|&;<>()$`\\{}=*?[\]~#]/.test(head)) return null;
  const program = resolveProgram({ text: head, glob: [] }, programs);
  if (!program.ok) return program.reason;
  // Stryker disable next-line ArrayDeclaration: parseFlags and parseFind read a word's text only, never its glob flags
  const words = rest.map((text) => ({ text, glob: [] }));
  const policy = lookup<(typeof PROGRAM_POLICIES)[keyof typeof PROGRAM_POLICIES]>(PROGRAM_POLICIES, program.name);
  if (policy === undefined) return null;
  const parsed = policy === FIND_EXPRESSION ? parseFind(words) : parseFlags(program.name, policy, words);
  return !parsed.ok && parsed.reason.includes(' is refused') ? parsed.reason : null;
}

/** `prefix`: flags an alias stands for (egrep is grep -E). */
type Resolved = { ok: true; name: string; file: string; prefix: readonly string[] } | { ok: false; reason: string };

function resolveProgram(head: Word, programs: Programs): Resolved {
  const name = head.text;
  const alias = lookup(ALIASES, name);
  const aliased = alias === undefined ? undefined : programs.get(alias[0]);
  if (alias !== undefined && aliased !== undefined && !head.glob.some(Boolean)) {
    return { ok: true, name: alias[0], file: aliased, prefix: [alias[1]] };
  }
  const allowed = WHITELIST.filter((p) => programs.has(p)).join(', ');
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(name)) {
    return { ok: false, reason: 'variable assignments (NAME=value) are not supported: the environment is fixed; run the program directly' };
  }
  if (head.glob.some(Boolean)) return { ok: false, reason: 'the program name cannot be a glob; use one of: ' + allowed };
  if (name.includes('/')) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    return { ok: false, reason: `run programs by bare name (${base}, not ${name}): they come from a trusted location, never from a path` };
  }
  const file = programs.get(name);
  if (file !== undefined) return { ok: true, name, file, prefix: [] };
  const lower = name.toLowerCase();
  if ((WHITELIST as readonly string[]).includes(lower) && lower !== name) {
    return { ok: false, reason: `program names are case-sensitive: use ${lower}, not ${name}` };
  }
  if ((WHITELIST as readonly string[]).includes(name)) {
    return { ok: false, reason: `${name} is not installed on this machine; use one of: ${allowed}` };
  }
  if (WRAPPERS.has(name) && lookup(INSTEAD, name) === undefined) {
    return { ok: false, reason: `${name} runs other programs and is not supported; run the program directly, e.g. rg -n 'pattern' src (allowed: ${allowed})` };
  }
  const instead = lookup(INSTEAD, name);
  return { ok: false, reason: `${name} is not an allowed program${instead ? `; ${instead}` : ''}. Allowed: ${allowed} (no shell; rg is preferred for searching)` };
}

/** `operands`: the real paths of the path operands alone (tree's start directories). */
type Materialised = { ok: true; args: string[]; paths: string[]; operands: string[]; notes: string[] } | { ok: false; reason: string };

/**
 * Expands operand globs and confines every path; refuses unquoted globs anywhere a shell would mangle them. Each
 * path is handed to the program as the symlink-free form confine() checked, relative to the root (the child's cwd),
 * so the program cannot resolve the string differently (`/proc/self/…` differs per process).
 */
async function materialise(program: string, words: readonly Word[], roles: readonly Role[], root: string): Promise<Materialised> {
  const args: string[] = [];
  const paths: string[] = [];
  const operands: string[] = [];
  const notes: string[] = [];
  for (const [i, word] of words.entries()) {
    // Stryker disable next-line ObjectLiteral,StringLiteral: parseFlags and parseFind give every word a role; the fallback only satisfies the index type
    const role = roles[i] ?? { kind: 'operand', value: 'path' };
    const isGlob = word.glob.some(Boolean);
    if (role.kind === 'operand' && role.value === 'path') {
      const expanded = await expandGlob(root, word);
      if (!expanded.ok) return expanded;
      const skipped: string[] = [];
      for (const p of expanded.paths) {
        const checked = await checkPath(root, p, isGlob && !expanded.matched ? ' (the glob matched nothing)' : '');
        if ('error' in checked) {
          // One bad match (a symlink out of the root) does not sink the command: bash would list it, we skip it.
          if (isGlob && expanded.matched) {
            skipped.push(p);
            continue;
          }
          return { ok: false, reason: `${program}: ${checked.error}` };
        }
        paths.push(checked.abs);
        operands.push(checked.abs);
        args.push(childPath(checked.rel, p));
      }
      if (skipped.length > 0) {
        if (skipped.length === expanded.paths.length) {
          return { ok: false, reason: `${program}: every match of ${word.text} is a link out of the repository or a file that cannot be read here (${listed(skipped)})` };
        }
        notes.push(`skipped ${skipped.length} match(es) of ${word.text} that cannot be read here (links out of the repository, special or hard-linked files): ${listed(skipped)}`);
      }
      if (args.length > MAX_EXPANDED_ARGS) {
        return { ok: false, reason: `${program}: the arguments expand to more than ${MAX_EXPANDED_ARGS} paths; search a directory instead` };
      }
      if (argBytes(args) > MAX_EXPANDED_ARG_BYTES) {
        return { ok: false, reason: `${program}: the arguments expand to more than ${MAX_EXPANDED_ARG_BYTES / 1024} KiB of paths; search a directory instead` };
      }
      continue;
    }
    if (isGlob) return { ok: false, reason: globReason(program, word, role) };
    const pathValue = role.kind === 'value' && role.value === 'path' ? word.text : role.kind === 'flag' ? role.attachedPath : undefined;
    if (pathValue === undefined) {
      args.push(word.text);
      continue;
    }
    const checked = await checkPath(root, pathValue, '');
    if ('error' in checked) return { ok: false, reason: `${program} ${role.kind === 'value' ? role.flag : word.text}: ${checked.error}` };
    paths.push(checked.abs);
    // An attached value (`--ignore-file=x`, `-fx`) keeps its flag text before the checked path.
    args.push(word.text.slice(0, word.text.length - pathValue.length) + childPath(checked.rel, pathValue));
  }
  return { ok: true, args, paths, operands, notes };
}

/** Characters that make a leading word an option or an operator (find's `!`, `(`): such a path gets `./`. */
const LEADING_SPECIAL = /^[-+()!,]/;

/** The checked relative path as the child receives it; a trailing slash is kept, so a glob ending in a slash lists directories only. */
function childPath(rel: string, asked: string): string {
  const withSlash = asked.endsWith('/') && rel !== '.' ? `${rel}/` : rel;
  return LEADING_SPECIAL.test(withSlash) ? `./${withSlash}` : withSlash;
}

/** Bytes the kernel counts for an argument list: each argument and its terminating NUL. */
function argBytes(args: readonly string[]): number {
  return args.reduce((sum, arg) => sum + Buffer.byteLength(arg) + 1, 0);
}

/** Words as a command line the lexer reads back to the same words: plain words bare, others in single quotes. */
export function quoteCommand(words: readonly string[]): string {
  return words.map((word) => (/^[A-Za-z0-9_./:=,+@%-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)).join(' ');
}

function listed(items: readonly string[]): string {
  const shown = items.slice(0, 5).join(', ');
  return items.length > 5 ? `${shown} and ${items.length - 5} more` : shown;
}

function globReason(program: string, word: Word, role: Role): string {
  const quoted = `'${word.text}'`;
  if (role.kind === 'operand') {
    return `${program}: the pattern ${word.text} contains unquoted glob characters, which a shell would expand to file names; put it in single quotes: ${quoted}`;
  }
  if (role.kind === 'value') {
    return `${program}: ${word.text} after ${role.flag} is an unquoted glob, which a shell would expand to file names; quote it: ${role.flag} ${quoted}`;
  }
  return `${program}: ${word.text} contains an unquoted glob, which a shell would expand; quote it: ${quoted}`;
}

/**
 * The checked path when `p` is an existing regular file or directory inside the root; otherwise why not. A regular
 * file with several hard links is refused: another link may be a file outside the root, and which one is the
 * original cannot be told.
 */
async function checkPath(root: string, p: string, note: string): Promise<{ abs: string; rel: string } | { error: string }> {
  if (p === '-') return { error: 'reading standard input ("-") is not supported; pass a file path' };
  const confined = await confine(root, p, { mustExist: true });
  if (!confined.ok) return { error: confined.reason + note };
  const stat = await fs.lstat(confined.abs).catch(() => null);
  if (stat === null) return { error: `${p} cannot be examined; check the path` };
  if (stat.isDirectory()) return { abs: confined.abs, rel: confined.rel };
  if (stat.isFile() && stat.nlink > 1) {
    return { error: `${p} has ${stat.nlink} hard links, and another link may be a file outside the repository; it is not read` };
  }
  if (stat.isFile()) return { abs: confined.abs, rel: confined.rel };
  const kind = stat.isFIFO() ? 'a FIFO (named pipe)' : stat.isSocket() ? 'a socket' : 'a device';
  return { error: `${p} is ${kind}; only regular files and directories can be read (reading it could hang)` };
}

import { promises as fs } from 'node:fs';
import { confine } from './paths.js';
import type { Programs } from './programs.js';
import { WHITELIST } from './programs.js';
import { parseFind } from './policy/find.js';
import { parseFlags, type Role } from './policy/flags.js';
import { expandGlob } from './policy/glob.js';
import { lex, type Word } from './policy/lexer.js';
import { FIND_EXPRESSION, lookup, PROGRAM_POLICIES } from './policy/tables.js';

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
  'firejail', 'python', 'python3', 'perl', 'ruby', 'node', 'awk', 'gawk', 'sed']);

/** Alternatives for programs the model often reaches for. */
const INSTEAD: Readonly<Record<string, string>> = {
  sed: 'use read_file with start_line/end_line to read a range, or rg -n to find lines',
  awk: 'use rg -o / -r to extract text, or read_file to read it',
  git: 'git is not run through bash; use the git tool for history when it is offered, and rg, find and ls for the working tree',
  echo: 'echo is not needed; just say it in your answer',
  less: 'use read_file', more: 'use read_file', ag: 'use rg', ack: 'use rg', fd: 'use find or rg --files', du: 'use tree --du or ls -la',
};

/**
 * Decides whether a model-supplied command may run and, if so, the argv to spawn: quote removal only (never a
 * shell), a whitelisted program resolved from a trusted location, every flag in that program's table, every path
 * operand and path-valued flag confined to the root, unquoted globs expanded inside the root.
 */
export async function checkCommand(command: string, ctx: { root: string; programs: Programs }): Promise<Verdict> {
  const lexed = lex(command);
  if (!lexed.ok) return { ok: false, reason: fundamentalReason(command, ctx.programs) ?? lexed.reason };
  const [head, ...words] = lexed.words;
  // Stryker disable next-line ObjectLiteral,BooleanLiteral,StringLiteral: lex() refuses a command without words, so this only narrows the type
  if (head === undefined) return { ok: false, reason: 'the command is empty' };
  const program = resolveProgram(head, ctx.programs);
  if (!program.ok) return program;
  const policy = lookup<(typeof PROGRAM_POLICIES)[keyof typeof PROGRAM_POLICIES]>(PROGRAM_POLICIES, program.name);
  if (policy === undefined) return { ok: false, reason: `${program.name} has no policy` };
  const parsed = policy === FIND_EXPRESSION ? parseFind(words) : parseFlags(program.name, policy, words);
  if (!parsed.ok) return parsed;
  const args = await materialise(program.name, words, parsed.roles, ctx.root);
  if (!args.ok) return args;
  return { ok: true, program: program.name, file: program.file, args: args.args, paths: args.paths, notes: args.notes };
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

type Resolved = { ok: true; name: string; file: string } | { ok: false; reason: string };

function resolveProgram(head: Word, programs: Programs): Resolved {
  const name = head.text;
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
  if (file !== undefined) return { ok: true, name, file };
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

type Materialised = { ok: true; args: string[]; paths: string[]; notes: string[] } | { ok: false; reason: string };

/**
 * Expands operand globs and confines every path; refuses unquoted globs anywhere a shell would mangle them. Each
 * path is handed to the program as the symlink-free form confine() checked, relative to the root (the child's cwd),
 * so the program cannot resolve the string differently (`/proc/self/…` differs per process).
 */
async function materialise(program: string, words: readonly Word[], roles: readonly Role[], root: string): Promise<Materialised> {
  const args: string[] = [];
  const paths: string[] = [];
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
  return { ok: true, args, paths, notes };
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

import { MAX_CAPTURE_BYTES } from '../sandbox/exec.js';
import { checkRepository, execGit, GIT_BINARY } from '../sandbox/git.js';
import { locateRepository } from '../sandbox/git-repo.js';
import { GIT_SUBCOMMANDS, LOG_PLACEHOLDERS } from '../sandbox/policy/git-values.js';
import { groupDigits } from '../digits.js';
import { MAX_MODEL_CHARS, shape } from './bash.js';
import { commandInputParser, commandInputSchema, printableCommand, refusal, type CommandInput } from './command.js';
import { answerLine, type OneRun } from './pipeline.js';
import { runProgram } from './run-program.js';
import type { Programs } from '../sandbox/programs.js';
import type { Tool, ToolOutcome } from './tool.js';

/**
 * Whether the git tool is offered for `root`: the binary (trusted location) and a repository whose pointers stay in
 * its work tree. `linkedTo`: the repository of a linked worktree; `confinedTo`: the root is a subdirectory of the work
 * tree `top`, and the tool reads only the history of the files below `prefix`.
 */
export type GitAvailability =
  | { available: true; git: string; linkedTo?: string; confinedTo?: { top: string; prefix: string } }
  | { available: false; reason: string; unsafe?: true };

/**
 * Decides once per session whether the git tool is offered, and why not (the system prompt says it in one line; a
 * repository refused for what it holds, `unsafe`, is said on stderr too).
 */
export async function gitAvailability(root: string, git: string | null = GIT_BINARY): Promise<GitAvailability> {
  if (git === null) return { available: false, reason: 'git is not installed on this machine' };
  const location = await checkRepository(root, git);
  if (!location.ok) return { available: false, reason: location.reason, ...(location.unsafe ? { unsafe: true as const } : {}) };
  const confinedTo =
    location.top !== undefined && location.prefix !== undefined ? { confinedTo: { top: location.top, prefix: location.prefix } } : {};
  return { available: true, git, ...(location.linked ? { linkedTo: location.commonDir } : {}), ...confinedTo };
}

const SCHEMA = commandInputSchema(
  "One git command without the shell, e.g. \"log --oneline -n 20 -- src/app.ts\" or \"log -S 'createServer' --oneline\".",
);

/**
 * The read-only history tool: a policy-checked git subcommand, run hardened (see sandbox/git.ts), output bounded. Its
 * input is `{command: string}`, like bash: the model writes git commands as it reads them in documentation, the same
 * lexer and its refusals (`$…`, unquoted globs) apply, and one string is one reviewable line in the transcript. A
 * pipeline's later stages are the bash tool's programs (`programs`; none: such a stage is not run), checked alike.
 */
export function createGitTool(git: string, programs: Programs | null = null): Tool<CommandInput> {
  return {
    name: 'git',
    description: DESCRIPTION,
    inputSchema: SCHEMA,
    parse: commandInputParser(SCHEMA, 'git', 'log --oneline -n 10', 'a subcommand'),
    // `git` first, as the person would type it.
    display: (input) => printableCommand(input.command.startsWith('git ') ? input.command : `git ${input.command}`),
    async run(input, ctx): Promise<ToolOutcome> {
      // Checked on every call, not only at start-up: the pointers are a few stats, and a repository may be swapped.
      const location = await locateRepository(ctx.root);
      if (!location.ok) return refusal(`the repository cannot be read safely: ${location.reason}`);
      // Loaded on the first call: the tables are ~25 KB that every start-up would otherwise parse for nothing.
      const { checkGitCommand } = await import('../sandbox/git-policy.js');
      const stages = programs === null ? null : { root: ctx.root, programs, signal: ctx.signal, ...(ctx.onRead ? { onRead: ctx.onRead } : {}) };
      return answerLine(input.command, {
        root: ctx.root,
        timeoutMs: ctx.timeoutMs,
        stage: stages === null ? null : (command, stdin, timeoutMs) => runProgram(command, stages, timeoutMs, stdin),
        async run(command): Promise<OneRun> {
          // A root below its work tree's top: every command is confined to the root (policy/git-confine.ts).
          const verdict = await checkGitCommand(command, ctx.root, ctx.sandbox ?? 'tables', location.prefix !== undefined);
          if (!verdict.ok) return verdict;
          const run = await execGit(
            ctx.root,
            verdict.args,
            { timeoutMs: ctx.timeoutMs, maxBytes: MAX_CAPTURE_BYTES, signal: ctx.signal, location },
            git,
          );
          // The configuration's includes are checked by the call itself (they take a git process to read): a refusal.
          if ('error' in run && run.unsafe === true) return { ok: false, reason: `the repository cannot be read safely: ${run.error}` };
          // Stryker disable next-line all: reached only if .git vanishes between locateGitDir and this call, a race no test can time.
          if ('error' in run) return { ok: false, reason: `git could not run: ${run.error}` };
          // Remote URLs may carry credentials (https://user:token@host/…, ?private_token=…): they are never shown.
          const verbose = verdict.args.includes('-v') || verdict.args.includes('--verbose');
          const shown =
            verdict.subcommand === 'remote' ? { ...run, stdout: hideCredentials(run.stdout, verbose), stderr: hideCredentials(run.stderr, false) } : run;
          return { ok: true, program: `git ${verdict.subcommand}`, result: shown, notes: [] };
        },
        shape(program, result): ToolOutcome {
          const outcome = shape(program, result, ctx.timeoutMs);
          // Confined to a subdirectory, a commit that touches nothing below it shows nothing: say why, once.
          if (location.prefix !== undefined && result.exitCode === 0 && result.stdout === '') {
            return { ...outcome, content: `${outcome.content}\n[this root is ${location.prefix} of its repository: history is shown only as it concerns files below it]` };
          }
          if (!/unknown revision or path not in the working tree|bad revision/.test(result.stderr)) return outcome;
          return { ...outcome, content: `${outcome.content}\n[a path that exists only in history goes after --: log --oneline -- old/path.ts]` };
        },
        hint: () => 'Instead: log --grep TEXT (commit messages), log -S TEXT (code added or removed), grep -n PATTERN HEAD -- path, log --oneline -n N, rev-list --count HEAD',
      });
    },
  };
}

/** A line of `remote -v`: the name, a tab, the URL as configured (which may hold spaces, tabs, `@`), `(fetch)` or `(push)`. */
const REMOTE_LINE = /^([^\t]*)\t(.*) \((fetch|push)\)$/s;

/**
 * Output of `remote` with the secrets of its URLs hidden (see hideUrl). `verbose` (remote -v): every line must be
 * `name<TAB>url (fetch|push)`; any other line is part of a URL that holds a line break, and is hidden whole. Otherwise
 * (names, or git's complaints) each line is masked as if it were a URL, which hides more than needed, never less.
 */
export function hideCredentials(text: string, verbose: boolean): string {
  return text
    .split('\n')
    .map((line) => {
      if (line === '') return line;
      const entry = REMOTE_LINE.exec(line);
      if (entry !== null) return `${entry[1] as string}\t${hideUrl(entry[2] as string)} (${entry[3] as string})`;
      return verbose ? '[a line of a remote URL that holds a line break: hidden]' : hideUrl(line);
    })
    .join('\n');
}

/**
 * A URL with its credentials hidden: everything between the scheme (or the start) and the LAST `@` (a password may
 * hold `@`, `/`, `?`, `#`, spaces; a path with an `@` loses its host too, which hides more, never less), and every
 * query value and the fragment (`?private_token=***`, `#***`). `scp`-style `user@host:path` the same.
 */
export function hideUrl(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0] ?? '';
  const at = url.lastIndexOf('@');
  if (at < scheme.length) return scheme + hideQuery(url.slice(scheme.length));
  return `${scheme}***${hideQuery(url.slice(at))}`;
}

/** `host/r?a=1&b#f` → `host/r?a=***&b=***#***`: what follows `?` or `#` is often a token. */
function hideQuery(rest: string): string {
  const hash = rest.indexOf('#');
  const beforeHash = hash === -1 ? rest : rest.slice(0, hash);
  const fragment = hash === -1 ? '' : '#***';
  const mark = beforeHash.indexOf('?');
  if (mark === -1) return beforeHash + fragment;
  const params = beforeHash.slice(mark + 1).split('&').map((param) => {
    const eq = param.indexOf('=');
    return eq === -1 ? '***' : `${param.slice(0, eq)}=***`;
  });
  return `${beforeHash.slice(0, mark)}?${params.join('&')}${fragment}`;
}

const DESCRIPTION = [
  `Read the repository's git history (read-only). Subcommands: ${GIT_SUBCOMMANDS.join(', ')}.`,
  'Give one git command without "git" or the shell: "log --oneline -n 20 -- src/app.ts". The same splitting as bash: quote ' +
    "patterns and formats ('%h %s'), no $VAR, no unquoted globs; after a pipe, the bash tool's programs read git's output.",
  'History, never the network: diff takes two revisions (diff A B, diff A..B); blame and grep take a revision (blame HEAD -- path, ' +
    'grep -n PATTERN HEAD -- path); paths that exist only in history go after --. The work tree and the index (status, ls-files, ' +
    'diff with fewer revisions or --cached, blame/grep without a revision), remote -v and worktree list are read only under the kernel sandbox.',
  'Pipes are rarely needed: log --oneline -n 5 instead of | head, log --grep X or -S X instead of | grep, shortlog -sn for authors, ' +
    'branch --show-current, rev-list --count HEAD. Listings: stash list, worktree list, notes list, bisect log, tag -l, branch -a.',
  'Useful: log -S TEXT / -G REGEX (when a string appeared or vanished), log -L START,END:PATH or -L :FUNC:PATH (history of lines), ' +
    'log --follow -- PATH (across renames), show REV, show REV:PATH (a file as it was), blame REV -L A,B -- PATH.',
  `--format accepts only: ${LOG_PLACEHOLDERS}. Signatures, external diff and textconv programs, pagers and -c/-C/--git-dir are refused.`,
  'Cite commits by their short sha (abc1234) and files as path:line.',
  `Output beyond ${groupDigits(MAX_MODEL_CHARS)} characters is cut in the middle; narrow with -n, a path or a range.`,
].join('\n');

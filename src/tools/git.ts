import { MAX_CAPTURE_BYTES } from '../sandbox/exec.js';
import { execGit, GIT_BINARY } from '../sandbox/git.js';
import { locateGitDir } from '../sandbox/git-repo.js';
import { GIT_SUBCOMMANDS, LOG_PLACEHOLDERS } from '../sandbox/policy/git-values.js';
import { groupDigits } from '../digits.js';
import { escapeControls } from '../escape.js';
import { MAX_MODEL_CHARS, shape } from './bash.js';
import type { ParseResult, Tool, ToolOutcome } from './tool.js';

/** Longest command shown to the person, in characters. */
const MAX_DISPLAY_CHARS = 300;

/**
 * `{command: string}`, like bash: the model writes git commands as it reads them in documentation, the same lexer
 * and its refusals (pipes, `$…`, unquoted globs) apply, and one string is one reviewable line in the transcript.
 */
export interface GitInput {
  command: string;
}

/** Whether the git tool is offered for `root`: the binary (trusted location) and a repository confined to the root. */
export type GitAvailability = { available: true; git: string } | { available: false; reason: string };

/** Decides once per session whether the git tool is offered, and why not (the system prompt says it in one line). */
export async function gitAvailability(root: string, git: string | null = GIT_BINARY): Promise<GitAvailability> {
  if (git === null) return { available: false, reason: 'git is not installed on this machine' };
  const location = await locateGitDir(root);
  return location.ok ? { available: true, git } : { available: false, reason: location.reason };
}

/** The read-only history tool: a policy-checked git subcommand, run hardened (see sandbox/git.ts), output bounded. */
export function createGitTool(git: string): Tool<GitInput> {
  return {
    name: 'git',
    description: DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: "One git command without the shell, e.g. \"log --oneline -n 20 -- src/app.ts\" or \"log -S 'createServer' --oneline\"." },
      },
      required: ['command'],
      additionalProperties: false,
    },
    parse,
    display: (input) => printable(input.command),
    async run(input, ctx): Promise<ToolOutcome> {
      // Checked on every call, not only at start-up: the pointers are a few stats, and a repository may be swapped.
      const location = await locateGitDir(ctx.root);
      if (!location.ok) return refused(`the repository cannot be read safely: ${location.reason}`);
      // Loaded on the first call: the tables are ~25 KB that every start-up would otherwise parse for nothing.
      const { checkGitCommand } = await import('../sandbox/git-policy.js');
      const verdict = await checkGitCommand(input.command, ctx.root);
      if (!verdict.ok) return refused(verdict.reason);
      const run = await execGit(ctx.root, verdict.args, { timeoutMs: ctx.timeoutMs, maxBytes: MAX_CAPTURE_BYTES, signal: ctx.signal, gitDir: location.gitDir }, git);
      if ('error' in run) return { content: `git could not run: ${run.error}`, summary: 'git could not run', isError: true, infrastructure: true };
      const outcome = shape(`git ${verdict.subcommand}`, run, ctx.timeoutMs);
      if (!/unknown revision or path not in the working tree|bad revision/.test(run.stderr)) return outcome;
      return { ...outcome, content: `${outcome.content}\n[a path that exists only in history goes after --: log --oneline -- old/path.ts]` };
    },
  };
}

const DESCRIPTION = [
  `Read the repository's git history (read-only). Subcommands: ${GIT_SUBCOMMANDS.join(', ')}.`,
  'Give one git command without "git" or the shell: "log --oneline -n 20 -- src/app.ts". The same splitting as bash: quote ' +
    "patterns and formats ('%h %s'), no pipes, no $VAR, no unquoted globs.",
  'History only, never the work tree, the index or the network: diff takes two revisions (diff A B, diff A..B); blame and grep ' +
    'take a revision (blame HEAD -- path, grep -n PATTERN HEAD -- path); paths that exist only in history go after --.',
  'Useful: log -S TEXT / -G REGEX (when a string appeared or vanished), log -L START,END:PATH or -L :FUNC:PATH (history of lines), ' +
    'log --follow -- PATH (across renames), show REV, show REV:PATH (a file as it was), blame REV -L A,B -- PATH.',
  `--format accepts only: ${LOG_PLACEHOLDERS}. Signatures, external diff and textconv programs, pagers and -c/-C/--git-dir are refused.`,
  'Cite commits by their short sha (abc1234) and files as path:line.',
  `Output beyond ${groupDigits(MAX_MODEL_CHARS)} characters is cut in the middle; narrow with -n, a path or a range.`,
].join('\n');

function parse(input: unknown): ParseResult<GitInput> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, error: 'expected an object like {"command": "log --oneline -n 10"}' };
  }
  const extra = Object.keys(input).filter((key) => key !== 'command');
  if (extra.length > 0) return { ok: false, error: `unexpected field ${extra.join(', ')}; git takes only {"command": "…"}` };
  const { command } = input as { command?: unknown };
  if (typeof command !== 'string') return { ok: false, error: '"command" must be a string, e.g. "log --oneline -n 10"' };
  if (command.trim() === '') return { ok: false, error: '"command" is empty; give a subcommand, e.g. "log --oneline -n 10"' };
  return { ok: true, value: { command } };
}

function refused(reason: string): ToolOutcome {
  const clause = reason.split('; ')[0] ?? reason;
  return { content: `Command refused: ${reason}`, summary: `denied: ${clause.length > 100 ? `${clause.slice(0, 97)}…` : clause}`, isError: true };
}

/** The command as one printable line, `git` first: control characters are shown escaped, never sent to the terminal. */
function printable(command: string): string {
  const safe = escapeControls(command.startsWith('git ') ? command : `git ${command}`);
  return safe.length > MAX_DISPLAY_CHARS ? `${safe.slice(0, MAX_DISPLAY_CHARS - 1)}…` : safe;
}

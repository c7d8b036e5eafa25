import { MAX_CAPTURE_BYTES, type ExecResult } from '../sandbox/exec.js';
import { WHITELIST, type Programs } from '../sandbox/programs.js';
import { commandInputParser, commandInputSchema, printableCommand, type CommandInput } from './command.js';
import { answerLine } from './pipeline.js';
import { runProgram } from './run-program.js';
import type { Tool, ToolOutcome } from './tool.js';
import { countLines } from '../lines.js';
import { groupDigits } from '../digits.js';

/** Most characters of output the model sees per call; head and tail are kept, the middle is omitted. */
export const MAX_MODEL_CHARS = 30_000;
/** Characters of stderr kept when it is long; stdout gets the rest of MAX_MODEL_CHARS. */
const MAX_STDERR_CHARS = 5_000;
/** Room kept for the status lines appended after the output, in characters. */
const STATUS_RESERVE_CHARS = 600;

/** Programs whose exit status 1 means "nothing matched", not failure. */
const NO_MATCH_EXIT_1 = new Set(['rg', 'grep', 'git grep']);

/** The whitelist-only command tool: argv from a policy check, spawned without a shell, output bounded. */
export function createBashTool(programs: Programs): Tool<CommandInput> {
  const installed = WHITELIST.filter((name) => programs.has(name));
  const schema = commandInputSchema(`One command line: a program from the list (${installed.join(', ')}) and its arguments. No shell features.`);
  return {
    name: 'bash',
    description: describe(installed),
    inputSchema: schema,
    parse: commandInputParser(schema, 'bash', "rg -n 'pattern' src", 'a program and its arguments'),
    display: (input) => printableCommand(input.command),
    async run(input, ctx): Promise<ToolOutcome> {
      const programCtx = { root: ctx.root, programs, signal: ctx.signal, ...(ctx.onRead ? { onRead: ctx.onRead } : {}) };
      return answerLine(input.command, {
        root: ctx.root,
        timeoutMs: ctx.timeoutMs,
        run: (command) => runProgram(command, programCtx, ctx.timeoutMs),
        stage: (command, stdin, timeoutMs) => runProgram(command, programCtx, timeoutMs, stdin),
        shape: (program, result) => shape(program, result, ctx.timeoutMs),
        hint: stageHint,
      });
    },
  };
}

/** What to send instead of a pipeline stage that is refused, by the stage's program. */
function stageHint(stage: string): string {
  const program = stage.trim().split(/\s+/)[0] ?? '';
  const hints: Record<string, string> = {
    awk: "for fields use cut -d ' ' -f N, to extract text rg -o 'PATTERN' or rg -r '$1' 'PAT(TERN)'",
    xargs: "pass the files as arguments, or let one search find them: rg -n 'PATTERN' -g 'GLOB' or grep -rn --include='GLOB' 'PATTERN' .",
    sed: "to read a range use sed -n 'N,Mp' (or read_file); to extract text rg -o",
    tr: 'read the output as it is, or extract what you need with rg -o',
  };
  return `Instead: ${hints[program] ?? 'run the next step yourself on the output above, or search the files directly with rg'}`;
}

function describe(installed: readonly string[]): string {
  return [
    `Run one read-only command to search or list the repository. Available programs: ${installed.join(', ')}. ` +
      "egrep/fgrep run as grep -E/-F; sed runs only as sed -n 'N,Mp' FILE.",
    'There is no shell: the command is split into words and run directly. Redirects (> <), background (&), substitution ' +
      '($(…), backticks), variables ($VAR), ~ and {a,b} are refused. In a pipeline (a | b | c) each command is checked and ' +
      'run on its own, and the output of one is the input of the next; a command after a pipe reads that input, so it names no ' +
      'file. a && b runs each command on its own. 2>/dev/null is not needed: stderr comes back separately.',
    "Pipe-free forms: grep -n PAT FILE (not cat FILE | grep), rg -c PAT (count), rg -l PAT (files), rg -m 5 PAT (per file), " +
      "find . -path '*PAT*' (not find | grep), ls -d *PAT* (not ls | grep), head -n 20 FILE, sed -n '10,20p' FILE.",
    "Put patterns in single quotes: rg -n 'foo.*bar' src. Unquoted globs are expanded only for file arguments " +
      "(wc -l src/*.ts); quote globs given to flags (rg -g '*.ts', find . -name '*.py').",
    'Paths are relative to the repository root, which is the working directory; nothing outside it can be read and ' +
      'symlinks are not followed.',
    "Prefer rg for searching (it skips .gitignored files): rg -n 'pattern' path, rg -l, rg --files -g '*.ts'. " +
      'Use read_file to read a file.',
    'Refused: flags that run programs, write files, follow symlinks or read file lists (find -exec/-delete, rg --pre/-z, ' +
      'grep -R, tail -f, tree -o …) and reading standard input, except a command after a pipe.',
    `Output beyond ${groupDigits(MAX_MODEL_CHARS)} characters is cut in the middle; narrow the search to see all of it. ` +
      'rg and grep exit 1 means no matches.',
  ].join('\n');
}

/** Shapes a finished process into what the model and the person see (the git tool's output too). */
export function shape(program: string, result: ExecResult, timeoutMs: number): ToolOutcome {
  if (result.aborted) return { content: 'cancelled: the command was stopped before it finished', summary: 'cancelled', isError: true };
  const stderrText = clip(result.stderr, MAX_STDERR_CHARS);
  const stdoutText = clip(result.stdout, MAX_MODEL_CHARS - stderrText.text.length - STATUS_RESERVE_CHARS);
  const sections: string[] = [];
  if (stdoutText.text !== '') sections.push(stdoutText.text.replace(/\n$/, ''));
  if (stderrText.text !== '') sections.push(`[stderr]\n${stderrText.text.replace(/\n$/, '')}`);
  const lines = countLines(result.stdout);
  const noMatches = NO_MATCH_EXIT_1.has(program) && result.exitCode === 1;
  if (result.timedOut) {
    const seconds = Number((timeoutMs / 1000).toFixed(3));
    sections.push(`[timed out after ${seconds}s and was stopped; narrow the search (a path, -g glob, --max-count)]`);
    return { content: sections.join('\n'), summary: `timed out after ${seconds}s`, isError: true };
  }
  if (stdoutText.cut || stderrText.cut) {
    sections.push('[output truncated: narrow the search — add a path or -g glob, use -l to list files or -m/--max-count, or read a range with read_file]');
  }
  if (result.capped) {
    sections.push(`[output passed ${MAX_CAPTURE_BYTES / (1024 * 1024)} MB, so the command was stopped; narrow the search]`);
  }
  if (noMatches) {
    sections.push('[no matches (exit 1)]');
    return { content: sections.join('\n'), summary: 'no matches', isError: false };
  }
  if (result.exitCode === 0 || result.capped) {
    if (sections.length === 0) sections.push('(no output)');
    sections.push(result.exitCode === 0 ? '[exit 0]' : '[stopped at the output cap]');
    return { content: sections.join('\n'), summary: lineSummary(lines, result.capped), isError: false };
  }
  if (result.exitCode === null) {
    // No exit code and no signal: the program never started (missing binary, exec failure), spelunk's fault.
    if (result.signal === null) {
      return { content: sections.join('\n'), summary: `${program} could not start`, isError: true, infrastructure: true };
    }
    sections.push(`[killed by ${result.signal}]`);
    return { content: sections.join('\n'), summary: `killed by ${result.signal}`, isError: true };
  }
  sections.push(`[exit ${result.exitCode}]`);
  return { content: sections.join('\n'), summary: `exit ${result.exitCode}`, isError: true };
}

/** Keeps head and tail of `text` within `max` characters, cutting at line boundaries and saying what was left out. */
export function clip(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const budget = Math.max(0, max - 60);
  const half = Math.floor(budget / 2);
  let head = text.slice(0, half);
  let tail = text.slice(text.length - half);
  const headBreak = head.lastIndexOf('\n');
  if (headBreak >= half / 2) head = head.slice(0, headBreak + 1);
  const tailBreak = tail.indexOf('\n');
  // No newline (-1) slices from 0: the tail stays whole.
  if (tailBreak < half / 2) tail = tail.slice(tailBreak + 1);
  const middle = text.slice(head.length, text.length - tail.length);
  const omittedLines = countLines(middle);
  const marker = omittedLines > 1 ? `[… ${omittedLines} lines omitted …]` : `[… ${middle.length} characters omitted …]`;
  return { text: `${head}${head.endsWith('\n') || head === '' ? '' : '\n'}${marker}\n${tail}`, cut: true };
}

function lineSummary(lines: number, capped: boolean): string {
  const base = lines === 0 ? 'no output' : lines === 1 ? '1 line' : `${lines} lines`;
  return capped ? `${base} (stopped at ${MAX_CAPTURE_BYTES / (1024 * 1024)} MB)` : base;
}

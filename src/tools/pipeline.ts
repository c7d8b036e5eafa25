import { MAX_CAPTURE_BYTES, type ExecResult } from '../sandbox/exec.js';
import { refusal } from './command.js';
import { splitCompound, type Compound } from './compound.js';
import type { ToolOutcome } from './tool.js';

/**
 * One command checked and run by a tool: its process result (and its stdout as the bytes it wrote, when the runner
 * kept them), or the policy's refusal.
 */
export type OneRun =
  | { ok: true; program: string; result: ExecResult; notes: readonly string[]; bytes?: Buffer }
  | { ok: false; reason: string };

interface LineRunner {
  /** The repository root: `cd ROOT && …` is answered as `…`. */
  root: string;
  /** The call's time limit: one pipeline's stages share it. */
  timeoutMs: number;
  run(command: string): Promise<OneRun>;
  /**
   * Checks and runs a pipeline's later stage on `input` (the output of the stage before it) within `timeoutMs`; null when
   * this tool runs no later stages.
   */
  stage: ((command: string, input: Buffer, timeoutMs: number) => Promise<OneRun>) | null;
  shape(program: string, result: ExecResult): ToolOutcome;
  /** What to say instead of a stage that is refused (`| awk …`), for this tool. */
  hint(stage: string): string;
}

/** A pager after a pipe copies its input to its output when that output is not a terminal: the stage is left out. */
const PAGER = /^(?:less|more)$/;

/**
 * Answers a command line in one call: one command as the policy says; a pipeline as each of its commands checked and
 * run on its own, spelunk handing one command's output to the next as its standard input, up to a refused stage
 * (then the output so far, labelled unfiltered, with what to send instead); a chain (a && b, a; b) as its commands in
 * order, each checked on its own. Dropped stderr redirects are named. Nothing ever runs through a shell.
 */
export async function answerLine(line: string, runner: LineRunner): Promise<ToolOutcome> {
  const compound = splitCompound(line);
  const dropped = compound.dropped.length === 0 ? [] : [`[${compound.dropped.join(' ')} dropped: stderr always comes back separately, after [stderr]]`];
  const outcome = await answerCompound(compound, runner);
  return dropped.length === 0 ? outcome : { ...outcome, content: `${outcome.content}\n${dropped.join('\n')}` };
}

async function answerCompound(compound: Compound, runner: LineRunner): Promise<ToolOutcome> {
  if (compound.kind === 'single') return answerOne(compound.command, runner);
  if (compound.kind === 'pipeline') return answerPipeline(compound.first, compound.stages, runner);
  const sections: string[] = [];
  let last: ToolOutcome | null = null;
  for (const part of compound.parts) {
    const cd = /^cd(?:\s+(\S+))?$/.exec(part.command);
    if (cd !== null) {
      const toRoot = cd[1] === undefined || cd[1] === '.' || cd[1] === './' || cd[1].replace(/\/+$/, '') === runner.root;
      sections.push(`$ ${part.command}\n[${toRoot ? 'not needed: every command runs in the repository root' : 'not run: every command runs in the repository root; give the directory as an argument instead (ls DIR, rg -n PATTERN DIR)'}]`);
      if (!toRoot) last = refusal('cd changes nothing here');
      continue;
    }
    if (part.when === 'ok' && last?.isError === true) {
      sections.push(`$ ${part.command}\n[not run: the command before && failed]`);
      continue;
    }
    if (part.when === 'failed' && last !== null && !last.isError) {
      sections.push(`$ ${part.command}\n[not run: the command before || succeeded]`);
      continue;
    }
    if (/^(?:echo|printf|true|:)(?:\s|$)/.test(part.command)) {
      // A fallback message (`|| echo "not found"`) says nothing the status above does not.
      sections.push(`$ ${part.command}\n[not run: ${part.command.split(/\s/)[0] as string} only prints its arguments; the status above answers]`);
      continue;
    }
    last = await answerCompound(splitCompound(part.command), runner);
    sections.push(`$ ${part.command}\n${last.content}`);
  }
  const note = '[the chained commands ran one at a time, in order, each checked on its own; next time send one command per call]';
  return { content: `${sections.join('\n\n')}\n${note}`, summary: `${compound.parts.length} commands`, isError: last?.isError ?? true };
}

async function answerOne(command: string, runner: LineRunner): Promise<ToolOutcome> {
  const run = await runner.run(command);
  if (!run.ok) return refusal(run.reason);
  const outcome = runner.shape(run.program, run.result);
  return run.notes.length === 0 ? outcome : { ...outcome, content: `${outcome.content}\n${run.notes.map((n) => `[${n}]`).join('\n')}` };
}

async function answerPipeline(first: string, stages: readonly string[], runner: LineRunner): Promise<ToolOutcome> {
  const deadline = Date.now() + runner.timeoutMs;
  const head = await runner.run(first);
  if (!head.ok) return refusal(`${head.reason} (the first command of the pipeline)`);
  let last: Ran = { command: first, run: head };
  const ran: Ran[] = [last];
  const notes: string[] = [];
  for (const [i, stage] of stages.entries()) {
    if (stopped(last.run.result)) {
      notes.push(`[not run: \`| ${stages.slice(i).join(' | ')}\`, because \`${last.command}\` did not finish]`);
      break;
    }
    if (PAGER.test(stage)) {
      notes.push(`[\`| ${stage}\` left out: a pager after a pipe passes its input through unchanged]`);
      continue;
    }
    const input = last.run.bytes ?? Buffer.from(last.run.result.stdout);
    const next: OneRun =
      runner.stage === null
        ? { ok: false, reason: 'this tool runs no command after a pipe' }
        : await runner.stage(stage, input, Math.max(1, deadline - Date.now()));
    if (!next.ok) return unfiltered(ran, notes, stages.slice(i), next.reason, runner);
    notes.push(...handOver(last, stage));
    last = { command: stage, run: next };
    ran.push(last);
  }
  const outcome = runner.shape(last.run.program, combined(ran));
  const story = `[no shell: ${ranStory(ran)}]`;
  return { ...outcome, content: [outcome.content, ...runNotes(ran), ...notes, story].join('\n') };
}

/** A command of a pipeline that ran, and how. */
interface Ran {
  command: string;
  run: Extract<OneRun, { ok: true }>;
}

/** The output so far, said to be unfiltered: `rest` (from the refused stage on) was not run, and why. */
function unfiltered(ran: readonly Ran[], notes: readonly string[], rest: readonly string[], reason: string, runner: LineRunner): ToolOutcome {
  const last = ran.at(-1) as Ran;
  const outcome = runner.shape(last.run.program, combined(ran));
  const shown = ran.map((r) => r.command).join(' | ');
  const refused = rest[0] as string;
  const label =
    `[UNFILTERED: above is the output of \`${shown}\` — \`| ${rest.join(' | ')}\` was not run: \`${refused}\` is refused (${reason}). ` +
    `${runner.hint(refused)}]`;
  return { ...outcome, content: [outcome.content, ...runNotes(ran), ...notes, label].join('\n'), summary: `${outcome.summary} (unfiltered)` };
}

/** The last command's result, with the stderr of every command that ran, in order (as a shell's terminal shows it). */
function combined(ran: readonly Ran[]): ExecResult {
  const result = (ran.at(-1) as Ran).run.result;
  return { ...result, stderr: ran.map((r) => r.run.result.stderr).join('') };
}

/** The policy's notes of each command (skipped glob matches), marked with the command when there are several. */
function runNotes(ran: readonly Ran[]): string[] {
  return ran.flatMap((r) => r.run.notes.map((n) => (ran.length === 1 ? `[${n}]` : `[\`${r.command}\`: ${n}]`)));
}

/** What the next stage should know about the input it got: cut at the output cap, or from a command that failed. */
function handOver(from: Ran, stage: string): string[] {
  const { result, program } = from.run;
  if (result.capped) {
    return [`[the output of \`${from.command}\` passed ${MAX_CAPTURE_BYTES / (1024 * 1024)} MB and was stopped there: \`| ${stage}\` read only that much of it]`];
  }
  // grep and rg exit 1 when nothing matched: the empty input says so already.
  if (result.exitCode === 0 || (result.exitCode === 1 && /^(?:rg|grep|git grep)$/.test(program))) return [];
  const how = result.exitCode === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited ${result.exitCode}`;
  return [`[\`${from.command}\` ${how}; \`| ${stage}\` read what it wrote before that]`];
}

/** A command that did not run to its end (time limit, cancel, never started): nothing after it runs. */
function stopped(result: ExecResult): boolean {
  return result.timedOut || result.aborted || (result.exitCode === null && result.signal === null && !result.capped);
}

function ranStory(ran: readonly Ran[]): string {
  const [first, ...rest] = ran.map((r) => `\`${r.command}\``);
  if (rest.length === 0) return `ran ${first as string}`;
  return `ran ${first as string}, then ${rest.join(', then ')}, each on the output of the one before (each checked and run on its own)`;
}

import type { ExecResult } from '../sandbox/exec.js';
import { quoteCommand } from '../sandbox/policy.js';
import { lex } from '../sandbox/policy/lexer.js';
import { refusal } from './command.js';
import { splitCompound, type Compound } from './compound.js';
import { applyFilters, parseFilter, type Filter } from './filters.js';
import type { ToolOutcome } from './tool.js';

/** One command checked and run by a tool: its process result, or the policy's refusal. */
export type OneRun = { ok: true; program: string; result: ExecResult; notes: readonly string[] } | { ok: false; reason: string };

export interface LineRunner {
  /** The repository root: `cd ROOT && …` is answered as `…`. */
  root: string;
  run(command: string): Promise<OneRun>;
  shape(program: string, result: ExecResult): ToolOutcome;
  /** What to say instead of a stage that is not a filter (`| awk …`), for this tool. */
  hint(stage: string): string;
}

/** Programs that read a file named at the end as `cat FILE |` would give it to them: `cat f | grep x` is `grep x f`. */
const READS_A_FILE = new Set(['grep', 'rg', 'head', 'tail', 'sort', 'uniq', 'cut', 'nl', 'tac', 'sed', 'jq', 'od', 'xxd', 'strings']);

/**
 * Answers a command line in one call: one command as the policy says; a pipeline as its first command with the later
 * stages applied here when they are filters (filters.ts), or else the first command's output labelled unfiltered with
 * what to send instead; a chain (a && b, a; b) as its commands in order, each checked on its own. Dropped stderr
 * redirects are named. Nothing ever runs through a shell.
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
  const folded = foldCat(first, stages);
  if (folded !== null) {
    return answerLineParts(folded.first, folded.stages, runner, `\`${first} | ${stages[0] as string}\` is \`${folded.first}\``);
  }
  return answerLineParts(first, stages, runner, null);
}

async function answerLineParts(first: string, stages: readonly string[], runner: LineRunner, folded: string | null): Promise<ToolOutcome> {
  const parsed = stages.map((stage) => ({ stage, filter: parseFilter(stage) }));
  const run = await runner.run(first);
  if (!run.ok) return refusal(`${run.reason} (the first command of the pipeline; pipes are not run, but head, tail, wc, sort, uniq, cut and grep with a plain pattern after it are applied here)`);
  const bad = parsed.find((p) => !p.filter.ok);
  const lead = folded === null ? '' : `${folded}; `;
  if (bad !== undefined) {
    const outcome = runner.shape(run.program, run.result);
    const label = `[UNFILTERED: pipes are not run; above is the output of \`${first}\` alone — \`| ${bad.stage}\` was not applied. ${lead}${runner.hint(bad.stage)}]`;
    return { ...outcome, content: `${outcome.content}\n${label}`, summary: `${outcome.summary} (unfiltered)` };
  }
  const filters = parsed.map((p) => (p.filter as { ok: true; filter: Filter }).filter);
  const filtered: ExecResult = { ...run.result, stdout: applyFilters(run.result.stdout, filters) };
  const outcome = runner.shape(run.program, filtered);
  const applied = `[no shell: ${lead}ran \`${first}\` and applied \`| ${stages.join(' | ')}\` to its output here]`;
  return { ...outcome, content: `${outcome.content}\n${applied}` };
}

/** `cat FILE | prog ARGS | …` → `prog ARGS FILE | …` when prog reads a file operand the way it reads standard input. */
function foldCat(first: string, stages: readonly string[]): { first: string; stages: string[] } | null {
  const lexed = lex(first);
  const next = stages[0] === undefined ? null : lex(stages[0]);
  if (!lexed.ok || next === null || !next.ok || lexed.words.some((w) => w.glob.some(Boolean))) return null;
  const [cat, file, ...more] = lexed.words.map((w) => w.text);
  const [program, ...args] = next.words.map((w) => w.text);
  if (
    cat !== 'cat' ||
    file === undefined ||
    file.startsWith('-') ||
    more.length > 0 ||
    program === undefined ||
    !READS_A_FILE.has(program)
  ) {
    return null;
  }
  return { first: quoteCommand([program, ...args, file]), stages: stages.slice(1) };
}

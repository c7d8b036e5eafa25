import { execCapped } from '../sandbox/exec.js';
import { checkCommand } from '../sandbox/policy.js';
import type { Programs } from '../sandbox/programs.js';
import type { OneRun } from './pipeline.js';

/** What a checked program needs to run: the root, the installed programs, the call's signal and read log. */
export interface ProgramContext {
  root: string;
  programs: Programs;
  signal: AbortSignal;
  onRead?: (absPath: string) => void;
}

/**
 * One command line checked by the policy tables and run by the spawner, with its stdout kept as bytes too (a later
 * stage reads exactly what the program wrote, invalid UTF-8 included). `input`: the command is a pipeline's later
 * stage, checked as one (it reads standard input and names no file) and given these bytes on its standard input.
 */
export async function runProgram(command: string, ctx: ProgramContext, timeoutMs: number, input?: Buffer): Promise<OneRun> {
  // A policy check that throws is spelunk's bug: the registry reports it as a tool failure, which fails the run.
  const verdict = await checkCommand(command, { root: ctx.root, programs: ctx.programs, stdin: input !== undefined });
  if (!verdict.ok) return verdict;
  for (const abs of verdict.paths) ctx.onRead?.(abs);
  const chunks: Buffer[] = [];
  const result = await execCapped(verdict.file, verdict.args, {
    cwd: ctx.root,
    timeoutMs,
    signal: ctx.signal,
    argv0: verdict.program,
    onStdout: (chunk) => chunks.push(chunk),
    ...(input === undefined ? {} : { input }),
  });
  const bytes = Buffer.concat(chunks);
  return { ok: true, program: verdict.program, result: { ...result, stdout: bytes.toString('utf8') }, notes: verdict.notes, bytes };
}

import { execCapped } from '../sandbox/exec.js';
import { checkCommand } from '../sandbox/policy.js';
import type { Programs } from '../sandbox/programs.js';
import type { OneRun } from './pipeline.js';

/** What a checked program needs to run: the root, the installed programs, the call's signal and read log. */
interface ProgramContext {
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
  const args = input !== undefined && verdict.program === 'sort' ? [...sortBuffer(input.length), ...verdict.args] : verdict.args;
  const result = await execCapped(verdict.file, args, {
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

/** Bytes of sort buffer per byte of piped input: 10 MB of empty lines (10 million lines) sort within it, measured. */
const SORT_BUFFER_PER_INPUT_BYTE = 64;

/**
 * GNU sort reading a pipe cannot size its buffer from the input, and past its default (300,000 short lines failed here)
 * it spills into a temporary file, which no child may write (SIGXFSZ). A later-stage sort gets a buffer that holds all
 * of its input, and one thread (each thread takes its own share of the 1 GiB address space). Given several -S, sort
 * uses the largest (measured), so a smaller one of the model's own changes nothing.
 */
function sortBuffer(inputBytes: number): string[] {
  const kib = Math.max(1024, Math.ceil((inputBytes * SORT_BUFFER_PER_INPUT_BYTE) / 1024));
  return ['--parallel=1', `--buffer-size=${kib}K`];
}

import { EventEmitter } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { main } from '../../src/cli.js';
import type { Io, OutStream } from '../../src/io.js';

/** XDG_STATE_HOME of in-process runs: saved sessions land here, keyed by the (temporary) repository root. */
export const TEST_STATE_HOME = process.env.SPELUNK_TEST_STATE_HOME ?? path.join(os.tmpdir(), `spelunk-test-state-${process.pid}`);

/** HEAD's budget in in-process runs (config.headTimeoutMs): far past any load, still short of the test's timeout. */
export const IN_PROCESS_HEAD_TIMEOUT_MS = 15_000;

/** A captured output stream; `isTTY` can be faked to exercise terminal behaviour. */
export class Capture implements OutStream {
  text = '';
  readonly writes: string[] = [];
  columns?: number;
  constructor(public isTTY = false) {}
  write(chunk: string): boolean {
    this.text += chunk;
    this.writes.push(chunk);
    return true;
  }
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  stdoutWrites: string[];
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  /** Text piped to stdin; undefined = an empty, closed, non-TTY stdin (as in CI). */
  stdin?: string;
  cwd?: string;
  signals?: EventEmitter;
  /** Called with the stderr capture so a test can react to live output (e.g. send SIGINT after a tool starts). */
  onStart?: (io: { stderr: Capture; stdout: Capture; signals: EventEmitter }) => void;
  /** Fakes terminals: both streams report isTTY and this many columns. */
  tty?: { columns: number };
}

/** Runs the real CLI entry (`main(argv, io)`) in-process with injected streams. */
export async function runCli(argv: string[], opts: CliOptions = {}): Promise<CliRun> {
  const stdout = new Capture(opts.tty !== undefined);
  const stderr = new Capture(opts.tty !== undefined);
  if (opts.tty) {
    stdout.columns = opts.tty.columns;
    stderr.columns = opts.tty.columns;
  }
  const signals = opts.signals ?? new EventEmitter();
  const stdin = Readable.from(opts.stdin === undefined ? [] : [Buffer.from(opts.stdin)]) as Io['stdin'];
  const io: Io = {
    stdout,
    stderr,
    stdin,
    // Saved sessions go to a scratch state directory (one per root inside it), never to the real home.
    env: { HOME: '/nonexistent-home', XDG_STATE_HOME: TEST_STATE_HOME, ...opts.env },
    cwd: opts.cwd ?? process.cwd(),
    signals: signals as Io['signals'],
  };
  opts.onStart?.({ stderr, stdout, signals });
  // git gets all the time it needs for HEAD: a loaded machine (a mutation run beside the tests) must not turn a moved
  // HEAD into an unknown one and drop a "HEAD moved" line. The production budgets are tested on their own.
  const code = await main(argv, io, { headTimeoutMs: IN_PROCESS_HEAD_TIMEOUT_MS });
  return { code, stdout: stdout.text, stderr: stderr.text, stdoutWrites: stdout.writes };
}

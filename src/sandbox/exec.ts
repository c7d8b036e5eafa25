import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { bwrapArgs, realProgram, TABLES_ONLY, type Sandbox } from './kernel.js';
import { TRUSTED_PATH } from './programs.js';
import { Slots } from './slots.js';
import { programWorld } from './world.js';

/**
 * The one place spelunk starts a process (git for HEAD, rg for the listing and suggestions, find for the read-only
 * proof, the bash tool's programs): a fixed environment, no shell, its own process group, stdin closed, a time
 * limit, an output cap and kernel resource limits. Callers pass absolute paths from a trusted resolver.
 */

/** Hard cap on stdout + stderr bytes read from one process; past it reading stops and the process group is killed. */
export const MAX_CAPTURE_BYTES = 10 * 1024 * 1024;

/** Address space of a child (1 GiB): `grep -E '(a{1,1000}){1,1000}'` fails with "memory exhausted" instead of taking the machine. */
export const CHILD_ADDRESS_SPACE_BYTES = 1024 * 1024 * 1024;

/**
 * The complete environment of every spawned program. Nothing is inherited: no API key, no RIPGREP_CONFIG_PATH,
 * no GREP_OPTIONS, no HOME (so no user config files), no PATH into the repository.
 */
export const CHILD_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: TRUSTED_PATH,
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  // A directory that cannot exist (below a device): `sort` spilling a big input, and any program that makes its
  // temporary files in TMPDIR, fails instead of writing to the host's /tmp (the kernel sandbox's /tmp is private anyway).
  TMPDIR: '/dev/null/spelunk-no-temp-files',
  // Times (ls -l, stat, find -printf, git log) in UTC in both layers, never in the host's /etc/localtime zone.
  TZ: 'UTC',
});

/**
 * util-linux prlimit, which sets the limits and then execs the program: Node cannot call setrlimit for a child, and
 * setting them after spawn (`prlimit --pid`) would leave a window in which the child runs unbounded. Looked up once.
 */
export const LIMITER: string | null = firstExecutableSync(TRUSTED_PATH.split(':').map((dir) => `${dir}/prlimit`));

/**
 * util-linux setpriv, which sets the parent-death signal (SIGKILL) and then execs the rest of the chain: with the
 * tables alone a child blocked on a FIFO would otherwise outlive a spelunk killed with SIGKILL (bwrap has
 * --die-with-parent). The signal survives prlimit's exec and the program's. Looked up once, on the same path as
 * prlimit; a setpriv without the option (util-linux before 2.33) would fail every child, so its binary is checked for
 * the option's name rather than started at start-up. Absent: children run without it, quietly.
 */
export const PARENT_DEATH: string | null = withOption(firstExecutableSync(TRUSTED_PATH.split(':').map((dir) => `${dir}/setpriv`)), 'pdeathsig');

export interface ExecResult {
  stdout: string;
  stderr: string;
  /**
   * Null when the process was killed by a signal or could not start, and when the time limit or the abort ended the
   * run: the kill destroys the output streams, so a process that had already exited 0 but whose output was not read
   * yet would otherwise come back as a success with its output cut (git's HEAD read as "no commit" on a loaded machine).
   */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** True when output passed maxBytes and the process was killed. */
  capped: boolean;
  durationMs: number;
}

interface ExecOptions {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  maxBytes?: number;
  /** The name messages should use (`wc:` rather than `/usr/bin/wc:`). */
  argv0?: string;
  /** Added to CHILD_ENV (git's isolation variables); nothing from process.env is ever passed. */
  env?: Readonly<Record<string, string>>;
  /** Streaming consumers: a chunk given to one of them is not collected into the result. */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /**
   * Absolute paths outside `cwd` that the program must see, read-only, under the kernel sandbox (a linked worktree's
   * git directory, the rg binary). `cwd` itself is always visible, read-only.
   */
  visible?: readonly string[];
  /** The sandbox to start the program in; the process-wide one (see useSandbox) when absent. */
  sandbox?: Sandbox;
  /** Tests only: run without the kernel limits, as on a machine without prlimit. */
  limiter?: string | null;
  /**
   * Written to the child's stdin, which is then closed (a pipeline's later stage reading the stage before it); without
   * it stdin is /dev/null. Bounded by the caller (the earlier stage's output cap). A child that exits without reading
   * it all is not an error: the rest is dropped, as a shell's pipe would.
   */
  input?: Buffer;
  /** Tests only: run without the parent-death signal, as on a machine without setpriv. */
  parentDeath?: string | null;
  /**
   * Called once the child is spawned (a spawn that fails after that, its directory gone, is still reported as "could
   * not start"); never when the call gives up before spawning. Under bwrap the spawn waits for the program's world to
   * be worked out, so a caller that means to work while the child runs waits for this first.
   */
  onSpawn?: () => void;
}

/**
 * Runs one program without a shell, in its own process group, with stdin /dev/null (or `input`), under CPU, memory,
 * file-size (0: nothing can be written) and core limits. On timeout, abort or output cap the whole group gets
 * SIGKILL, so a grandchild can never outlive the call. Never rejects.
 */
export async function execCapped(file: string, args: readonly string[], opts: ExecOptions): Promise<ExecResult> {
  const started = performance.now();
  const maxBytes = opts.maxBytes ?? MAX_CAPTURE_BYTES;
  const result = { timedOut: false, aborted: opts.signal?.aborted === true, capped: false };
  if (result.aborted) return finish(started, result, [], [], null, null);
  // Checked here because a limiter that fails to exec the program would look like the program failing.
  if (!isExecutable(file)) {
    return finish(started, result, [], [Buffer.from(`could not start ${file}: not an executable file\n`)], null, null);
  }

  // Awaited only under bwrap: with the tables the spawn stays in this call's synchronous part, as it always was.
  const sandbox = opts.sandbox ?? processSandbox;
  const world = sandbox.kind === 'kernel' && sandbox.world !== 'system' ? await programWorld(realProgram(file), listLoader) : WHOLE;
  if (!world.ok) return finish(started, result, [], [Buffer.from(`could not start ${file} in the sandbox: ${world.error}\n`)], null, null);

  // Waits for a child slot where the process bounds its children (spelunk mcp); an abort meanwhile starts nothing.
  const release = childSlots === null ? null : await childSlots.acquire(opts.signal);
  if (release === 'aborted' || release === 'full') return finish(started, { ...result, aborted: true }, [], [], null, null);
  try {
    return await spawnCapped(file, args, { ...opts, world: world.files }, started, result, maxBytes);
  } finally {
    release?.();
  }
}

/** One process from spawn to close: the kill, the output cap, the timer and the abort share its state. */
async function spawnCapped(
  file: string,
  args: readonly string[],
  opts: ExecOptions & { world: readonly string[] | null },
  started: number,
  result: { timedOut: boolean; aborted: boolean; capped: boolean },
  maxBytes: number,
): Promise<ExecResult> {
  const launch = startChild(file, args, opts);
  if (typeof launch === 'string') return finish(started, result, [], [Buffer.from(`could not start ${file}: ${launch}\n`)], null, null);
  const { child, program } = launch;
  opts.onSpawn?.();
  if (child.stdin !== null) {
    // EPIPE when the child exits first (`| head -1`): what is left of the input is not wanted.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input);
  }
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let total = 0;
  let killed = false;

  // The guard is there so that a later signal can never reach a group whose id was given out again. No test can see a
  // second kill of a group already gone (it throws and is caught), so `if (false)` here survives: accepted, not
  // disabled, since `if (true)` (never kill) is killed by the timeout, abort and cap tests.
  const signalGroup = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
  };
  const killGroup = (): void => {
    if (killed) return;
    // Stryker disable next-line BooleanLiteral: `killed` is read only by the guard above and by collect, whose check is unreachable after a kill (see there).
    killed = true;
    signalGroup();
    child.stdout.destroy();
    child.stderr.destroy();
  };
  const collect = (into: Buffer[], consumer: ((chunk: Buffer) => void) | undefined) => (chunk: Buffer): void => {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: unreachable in practice (killGroup destroys both streams, and a destroyed stream emits no more data); kept so that nothing can be read past a kill.
    if (result.capped || killed) return;
    const kept = chunk.subarray(0, maxBytes - total);
    total += kept.length;
    if (consumer) consumer(kept);
    else into.push(kept);
    if (total >= maxBytes) {
      result.capped = true;
      killGroup();
    }
  };
  child.stdout.on('data', collect(stdout, opts.onStdout));
  child.stderr.on('data', collect(stderr, opts.onStderr));
  // What the program left in its group when it exited (a background grandchild; under bwrap, the sandbox's init when
  // the launcher died before starting the program, as it does in a pid namespace whose /proc is another's) would hold
  // its output open until the time limit: it gets SIGKILL at once. The output already written is still read to its
  // end. The group's id cannot have been given out again: libuv reaped the child in this same callback, and an id
  // stays taken while any member of its group lives.
  child.once('exit', () => {
    // Stryker disable next-line ConditionalExpression: after killGroup a second kill finds the group gone (caught there).
    if (!killed) signalGroup();
  });

  const timer = setTimeout(() => {
    result.timedOut = true;
    killGroup();
  }, opts.timeoutMs);
  const onAbort = (): void => {
    result.aborted = true;
    killGroup();
  };
  opts.signal?.addEventListener('abort', onAbort);

  return new Promise<ExecResult>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (spawnError !== undefined) stderr.push(Buffer.from(`could not start ${file}: ${spawnError.message}\n`));
      const shown = opts.argv0 === undefined ? undefined : { from: `${program}:`, to: `${opts.argv0}:` };
      resolve(finish(started, result, stdout, stderr, result.timedOut || result.aborted ? null : code, signal, shown));
    };
    child.once('error', (error) => done(null, null, error));
    child.once('close', (code, signal) => done(code, signal));
  });
}

/** Spawns the program under prlimit and the sandbox; the message of a spawn that threw (E2BIG) instead of a child. */
function startChild(
  file: string,
  args: readonly string[],
  opts: ExecOptions & { world: readonly string[] | null },
): { child: ChildProcessByStdio<Writable | null, Readable, Readable>; program: string } | string {
  const limiter = opts.limiter === undefined ? LIMITER : opts.limiter;
  const env = { ...CHILD_ENV, ...opts.env };
  const sandbox = opts.sandbox ?? processSandbox;
  const program = sandbox.kind === 'kernel' ? realProgram(file) : file;
  // Under bwrap the program's world holds no prlimit: prlimit runs outside and execs bwrap, whose children inherit
  // the limits, so they still apply to the program from its first instruction. With the tables alone setpriv comes
  // first: its parent is spelunk, and the parent-death signal outlives the execs after it.
  const sandboxed = sandbox.kind === 'kernel'
    ? [sandbox.bwrap, ...bwrapArgs(opts.cwd, env, [...(opts.world === null ? [program] : []), ...(opts.visible ?? [])], opts.world), '--', program, ...args]
    : [program, ...args];
  const limited = limiter === null ? sandboxed : [limiter, ...limitArgs(opts.timeoutMs), '--', ...sandboxed];
  const deathSignal = sandbox.kind === 'kernel' ? null : opts.parentDeath === undefined ? PARENT_DEATH : opts.parentDeath;
  const chain = deathSignal === null ? limited : [deathSignal, '--pdeathsig', 'KILL', '--', ...limited];
  const [command, argv] = [chain[0] as string, chain.slice(1)];
  try {
    const child = spawn(command, argv, {
      cwd: opts.cwd,
      // Under prlimit the name would only rename prlimit itself, heard only if its own limits fail to apply.
      // Stryker disable next-line ConditionalExpression,LogicalOperator: so passing it there too cannot be seen by a test.
      ...(opts.argv0 === undefined || limiter !== null || deathSignal !== null || sandbox.kind === 'kernel' ? {} : { argv0: opts.argv0 }),
      env,
      shell: false,
      detached: true,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
    return { child, program };
  } catch (error) {
    // Some exec failures (E2BIG: arguments over ARG_MAX) are thrown by spawn itself rather than emitted.
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * prlimit options: address space, CPU seconds (the wall-clock limit plus one, so a busy child is stopped by the
 * kernel even if the timer is late), no file may grow past 0 bytes (pipes are not files), no core dumps.
 */
function limitArgs(timeoutMs: number): string[] {
  const cpuSeconds = Math.ceil(timeoutMs / 1000) + 1;
  return [`--as=${CHILD_ADDRESS_SPACE_BYTES}`, `--cpu=${cpuSeconds}`, '--fsize=0', '--core=0'];
}

function finish(
  started: number,
  flags: { timedOut: boolean; aborted: boolean; capped: boolean },
  stdout: Buffer[],
  stderr: Buffer[],
  exitCode: number | null,
  signal: NodeJS.Signals | null,
  rename?: { from: string; to: string },
): ExecResult {
  const errors = Buffer.concat(stderr).toString('utf8');
  return {
    stdout: Buffer.concat(stdout).toString('utf8'),
    // Under the limiter argv[0] is the absolute path; messages keep the short name the model used.
    stderr: rename === undefined ? errors : errors.replaceAll(rename.from, rename.to),
    exitCode,
    signal,
    ...flags,
    durationMs: performance.now() - started,
  };
}

/** What a child sees with the tables (everything) or in the `system` world (/usr whole): no per-program world. */
const WHOLE: { ok: true; files: null } = { ok: true, files: null };

/** The world's queries (the loader's listing, `file --version`): outside any sandbox, with the fixed environment and limits. */
async function listLoader(loader: string, args: readonly string[]): Promise<ExecResult> {
  return execCapped(loader, args, { cwd: '/', timeoutMs: LISTING_TIMEOUT_MS, maxBytes: LISTING_MAX_BYTES, sandbox: TABLES_ONLY });
}

/** A loader's listing is a few lines; it runs once per program per process. */
const LISTING_TIMEOUT_MS = 10_000;
const LISTING_MAX_BYTES = 256 * 1024;

/** `file` when its binary contains `option` (as its getopt table does), else null. */
function withOption(file: string | null, option: string): string | null {
  try {
    return file !== null && readFileSync(file).includes(option) ? file : null;
  } catch {
    return null;
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    // Emptied (a mutant), this returns undefined, which every caller reads as false: equivalent, counted as accepted
    // (a next-line directive cannot reach a catch that shares its line with the end of the try block).
    return false;
  }
}

/**
 * The sandbox every child of this process starts in unless a call names its own: set once at start-up from
 * `--sandbox` after the probe (see chooseSandbox in choose.ts), before any child runs. Module state on purpose: the choice is the
 * process's, like its PATH, and a spawner that could be handed "no sandbox" by any caller is what this replaces.
 */
let processSandbox: Sandbox = { kind: 'tables' };

/** Children of this process that may run at once; null: no bound beyond the callers' own (see limitChildren). */
let childSlots: Slots | null = null;

/**
 * Bounds the children of this process (start-up only): with each child allowed CHILD_ADDRESS_SPACE_BYTES, `n` children
 * bound the total allowance. Calls over the bound wait for a slot (never refused: the calls above them are bounded).
 */
export function limitChildren(n: number | null): Slots | null {
  childSlots = n === null ? null : new Slots(n);
  return childSlots;
}

/** Sets the process-wide sandbox (start-up only). */
export function useSandbox(sandbox: Sandbox): void {
  processSandbox = sandbox;
}

/**
 * The process-wide sandbox in force: read once per session when it opens (run/session.ts), which hands the choice on
 * in the run's context (the tools', the proof's, the result's); nothing deeper in the stack reads it.
 */
export function currentSandbox(): Sandbox {
  return processSandbox;
}

/** The first candidate that is an executable regular file, or null. */
export function firstExecutableSync(candidates: readonly string[]): string | null {
  return candidates.find(isExecutable) ?? null;
}

import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { TRUSTED_PATH } from './programs.js';

/** Hard cap on stdout + stderr bytes read from one process; past it reading stops and the process group is killed. */
export const MAX_CAPTURE_BYTES = 10 * 1024 * 1024;

/**
 * The complete environment of every spawned program. Nothing is inherited: no API key, no RIPGREP_CONFIG_PATH,
 * no GREP_OPTIONS, no HOME (so no user config files), no PATH into the repository.
 */
export const CHILD_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: TRUSTED_PATH,
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
});

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** Null when the process was killed by a signal or could not start. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** True when output passed maxBytes and the process was killed. */
  capped: boolean;
  durationMs: number;
}

/**
 * Runs one program without a shell (`argv0` lets messages say `wc:` rather than `/usr/bin/wc:`), in its own process group, with stdin closed to /dev/null. On timeout, abort or
 * output cap the whole group gets SIGKILL, so a grandchild can never outlive the call. Never rejects.
 */
export async function execCapped(
  file: string,
  args: string[],
  opts: { cwd: string; timeoutMs: number; signal: AbortSignal; maxBytes?: number; argv0?: string },
): Promise<ExecResult> {
  const started = performance.now();
  const maxBytes = opts.maxBytes ?? MAX_CAPTURE_BYTES;
  const result = { timedOut: false, aborted: opts.signal.aborted, capped: false };
  if (result.aborted) return finish(started, result, [], [], null, null);

  const child = spawn(file, args, {
    cwd: opts.cwd,
    ...(opts.argv0 === undefined ? {} : { argv0: opts.argv0 }),
    env: { ...CHILD_ENV },
    shell: false,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let total = 0;
  let killed = false;

  const killGroup = (): void => {
    if (killed) return;
    killed = true;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
    child.stdout?.destroy();
    child.stderr?.destroy();
  };
  const collect = (into: Buffer[]) => (chunk: Buffer): void => {
    if (result.capped) return;
    const room = maxBytes - total;
    into.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    total += Math.min(chunk.length, room);
    if (total >= maxBytes) {
      result.capped = true;
      killGroup();
    }
  };
  child.stdout?.on('data', collect(stdout));
  child.stderr?.on('data', collect(stderr));

  const timer = setTimeout(() => {
    result.timedOut = true;
    killGroup();
  }, opts.timeoutMs);
  const onAbort = (): void => {
    result.aborted = true;
    killGroup();
  };
  opts.signal.addEventListener('abort', onAbort, { once: true });

  return new Promise<ExecResult>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void => {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      if (spawnError !== undefined) stderr.push(Buffer.from(`could not start ${file}: ${spawnError.message}\n`));
      resolve(finish(started, result, stdout, stderr, code, signal));
    };
    child.once('error', (error) => done(null, null, error));
    child.once('close', (code, signal) => done(code, signal));
  });
}

function finish(
  started: number,
  flags: { timedOut: boolean; aborted: boolean; capped: boolean },
  stdout: Buffer[],
  stderr: Buffer[],
  exitCode: number | null,
  signal: NodeJS.Signals | null,
): ExecResult {
  return {
    stdout: Buffer.concat(stdout).toString('utf8'),
    stderr: Buffer.concat(stderr).toString('utf8'),
    exitCode,
    signal,
    ...flags,
    durationMs: performance.now() - started,
  };
}

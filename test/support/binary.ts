import { spawn } from 'node:child_process';
import { BIN, scratchState } from './pty.js';

/** How one run of the built binary ended and what it wrote. */
export interface BinaryRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs dist/spelunk.js as a process of its own, stdout and stderr on pipes. `env` is the whole environment apart from
 * PATH (nothing else is inherited); `stdin` is piped in and closed, else stdin is /dev/null; `onSpawn` gets the pid.
 */
export function runBinary(
  args: readonly string[],
  opts: { cwd: string; env: Record<string, string>; stdin?: string; onSpawn?: (pid: number) => void },
): Promise<BinaryRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    // Saved sessions go to the run's scratch state directory unless a test says otherwise: without XDG_STATE_HOME and
    // HOME the binary falls back to the account's home directory (os.homedir()), the developer's real one.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...scratchState(), ...opts.env },
    stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  opts.onSpawn?.(child.pid!);
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

import { lstatSync, promises as fs, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execCapped, firstExecutableSync } from './exec.js';
import { bwrapCandidates, SANDBOX_MODES, TABLES_ONLY, type Sandbox, type SandboxMode } from './kernel.js';

/** The probe runs `true`: anything slower than this means the sandbox is not usable in practice. */
const PROBE_TIMEOUT_MS = 5_000;
const PROBE_PROGRAM = '/usr/bin/true';

/** How to get the kernel sandbox, said wherever it is missing. */
const SANDBOX_HINT = 'install bubblewrap (apt-get install bubblewrap) and allow user namespaces';

/** The sandbox chosen for this process, the line to print about it (if any), and what the probe cost. */
export type SandboxChoice =
  | { ok: true; sandbox: Sandbox; notice: string | null; probeMs: number }
  | { ok: false; error: string };

/** `--sandbox`, else `SPELUNK_SANDBOX`, else auto; null when the value is not a mode. */
export function sandboxMode(flag: string | undefined, env: string | undefined): SandboxMode | null {
  const value = (flag ?? env ?? 'auto').trim();
  return (SANDBOX_MODES as readonly string[]).includes(value) ? (value as SandboxMode) : null;
}

/**
 * Chooses the sandbox for `mode`. `auto` uses bwrap when a trivial sandboxed run succeeds and otherwise falls back to
 * the tables with one line saying so and how to get it; `required` fails closed; `off` says on every run that it is
 * for debugging. Probed with the real argv a child gets, so the check is the thing used. Never throws. `dirs` (where
 * bwrap is looked for) and `proc` (the /proc whose `self` is checked) are for tests.
 */
export async function chooseSandbox(mode: SandboxMode, dirs?: readonly string[], proc = '/proc'): Promise<SandboxChoice> {
  if (mode === 'off') {
    return { ok: true, sandbox: TABLES_ONLY, notice: 'spelunk: --sandbox off: programs run without the kernel sandbox, behind the command tables alone (for debugging)', probeMs: 0 };
  }
  const started = performance.now();
  const problem = await probe(dirs, proc);
  const probeMs = performance.now() - started;
  if (typeof problem !== 'string') return { ok: true, sandbox: problem, notice: null, probeMs };
  // Installing bubblewrap is no answer to a /proc that is not this namespace's.
  const hint = problem === FOREIGN_PROC ? PROC_HINT : SANDBOX_HINT;
  if (mode === 'required') return { ok: false, error: `--sandbox required, but the kernel sandbox cannot run here: ${problem}; ${hint}` };
  return { ok: true, sandbox: TABLES_ONLY, notice: `spelunk: no kernel sandbox (${problem}); programs run behind the command tables alone; ${hint}`, probeMs };
}

const FOREIGN_PROC = '/proc does not show this process as /proc/self (a pid namespace without its own /proc)';
const PROC_HINT = 'mount a /proc for this pid namespace (as unshare --mount-proc does)';

/** The kernel sandbox if bwrap exists and a sandboxed `true` exits 0; otherwise why not, in a few words. */
async function probe(dirs: readonly string[] | undefined, proc: string): Promise<Sandbox | string> {
  const bwrap = firstExecutableSync(bwrapCandidates(dirs));
  if (bwrap === null) {
    // One that is there but cannot be run (not executable for this user, a dangling link) is not "not installed".
    const present = bwrapCandidates(dirs).find((file) => lstatSync(file, { throwIfNoEntry: false }) !== undefined);
    return present === undefined ? 'bwrap is not installed' : `${present} is there but cannot be run by this user (not an executable file)`;
  }
  // bwrap looks up its child's namespaces in /proc by the pid this process sees. Under a /proc that another pid
  // namespace mounted (`unshare --pid` without `--mount-proc`), that pid names another process or none, so its runs
  // would fail at random, whatever one trial run showed.
  if (!ownProc(proc)) return FOREIGN_PROC;
  const sandbox: Sandbox = { kind: 'kernel', bwrap };
  // In an empty directory, in the world `true` gets (its binary, libraries and loader): the probe also proves that
  // a program's world can be listed and mounted here.
  const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-probe-')).catch((error: unknown) => error as Error);
  if (empty instanceof Error) return `no empty directory for a trivial run (${empty.message})`;
  const run = await execCapped(PROBE_PROGRAM, [], {
    cwd: empty,
    timeoutMs: PROBE_TIMEOUT_MS,
    maxBytes: 64 * 1024,
    sandbox,
    limiter: null,
  }).finally(() => fs.rm(empty, { recursive: true, force: true }));
  if (run.exitCode === 0) return sandbox;
  if (run.timedOut) return `bwrap did not finish a trivial run within ${PROBE_TIMEOUT_MS / 1000} s`;
  const said = run.stderr.trim().split('\n')[0]?.replace(/^bwrap: /, '') ?? '';
  return `bwrap failed a trivial run (${said === '' ? `exit ${run.exitCode ?? run.signal ?? 'unknown'}` : said})`;
}

/** Whether `proc` is this pid namespace's /proc: its `self` link names this process's own pid. */
function ownProc(proc: string): boolean {
  try {
    return readlinkSync(path.join(proc, 'self')) === String(process.pid);
  } catch {
    return false;
  }
}

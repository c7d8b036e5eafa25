// Child processes the benchmark times: node itself, ripgrep, and the built CLI against the local API server.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Prints the child's own peak resident set (VmHWM, KiB) just before it exits. */
const PRINT_OWN_HWM =
  "process.stdout.write(require('fs').readFileSync('/proc/self/status','utf8').match(/VmHWM:\\s+(\\d+)/)[1])";

/** Peak resident set (VmHWM, KiB) of a live process, or null when it is gone. */
export function readHwm(pid) {
  try {
    const match = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * CPU time (ms) the main thread of a live process has used so far (/proc/<pid>/schedstat, nanoseconds), or null.
 * On a loaded machine this is the honest start-up cost: wall time there is mostly waiting for a core.
 */
export function readCpuMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/** Main-thread CPU time (ms) of a bare `node -e`, as printed by itself just before it exits. */
export async function nodeCpu(env) {
  const run = await timed(process.execPath, ['-e', "process.stdout.write(require('fs').readFileSync('/proc/self/schedstat','utf8').split(' ')[0])"], { env, capture: true });
  if (run.code !== 0) throw new Error(`node -e failed: ${run.stderr.trim()}`);
  return Number(run.stdout) / 1e6;
}

/** Spawns `file args` (never through a shell) and resolves with its wall time in ms, exit code and output. */
export function timed(file, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, args, { stdio: ['ignore', opts.capture ? 'pipe' : 'ignore', 'pipe'], env: opts.env, cwd: opts.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ ms: performance.now() - started, code, signal, stdout, stderr }));
  });
}

/** `node -e 0`: the start-up floor every Node CLI pays. */
export const timeNode = (env) => timed(process.execPath, ['-e', '0'], { env });

/** ripgrep listing the repository to depth 3, output discarded. */
export const timeRg = (rgPath, repo, env) => timed(rgPath, ['--files', '--max-depth', '3', repo], { env });

/** VmHWM (KiB) of a bare `node -e`, as printed by itself. */
export async function nodeHwm(env) {
  const run = await timed(process.execPath, ['-e', PRINT_OWN_HWM], { env, capture: true });
  if (run.code !== 0) throw new Error(`node -e failed: ${run.stderr.trim()}`);
  return Number(run.stdout);
}

/**
 * Runs the built CLI once on `repo` with a one-shot question. `replies` are queued on the server first; the first one
 * is wrapped so that, the moment the server has the first request, it records the elapsed time since spawn and the
 * child's VmHWM (`nodeArgs` go to node before the script, e.g. --cpu-prof). Resolves with those, the exit code, the
 * output and this run's recorded requests.
 */
export async function runSpelunk({ api, dist, repo, env, args = [], question, replies, nodeArgs = [] }) {
  const before = api.requests.length;
  let first = null;
  let child = null;
  let started = 0;
  const [head, ...rest] = replies;
  api.enqueue((req) => {
    first = { ms: performance.now() - started, hwmKb: child ? readHwm(child.pid) : null, cpuMs: child ? readCpuMs(child.pid) : null, request: req };
    return typeof head === 'function' ? head(req) : head;
  }, ...rest);
  const done = new Promise((resolve, reject) => {
    started = performance.now();
    child = spawn(process.execPath, [...nodeArgs, dist, '-C', repo, ...args, question], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const { code, stdout, stderr } = await done;
  const requests = api.requests.slice(before);
  if (first === null) {
    throw new Error(`spelunk sent no request (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
  return { ...first, code, stdout, stderr, requests };
}

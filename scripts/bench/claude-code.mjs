// Claude Code as the reference client for the start-up row: its native binary ships in the platform package of
// @anthropic-ai/claude-agent-sdk (a devDependency, installed from the registry by `npm ci`; no install script needed),
// and `claude -p` honours ANTHROPIC_BASE_URL, so it runs against the same local server on the same repository.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { readCpuMs } from './procs.mjs';

/** The platform package that holds the `claude` binary (glibc builds; the musl ones are named -musl). */
const PLATFORM_PACKAGE = `@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}`;
/** What installs it when it is missing (the platform package is an optional dependency of the Agent SDK). */
export const CLAUDE_CODE_INSTALL = 'npm ci (installs @anthropic-ai/claude-agent-sdk and its platform package from the registry)';

/** `{ bin }`, or `{ skip }` with the reason and the command that installs it. */
export function claudeCodeBinary(projectRoot) {
  try {
    const pkg = createRequire(path.join(projectRoot, 'package.json')).resolve(`${PLATFORM_PACKAGE}/package.json`);
    const bin = path.join(path.dirname(pkg), 'claude');
    if (existsSync(bin)) return { bin };
    return { skip: `${PLATFORM_PACKAGE} has no claude binary; run ${CLAUDE_CODE_INSTALL}` };
  } catch {
    return { skip: `${PLATFORM_PACKAGE} is not installed (no build for this platform, or optional dependencies omitted); run ${CLAUDE_CODE_INSTALL}` };
  }
}

/**
 * Runs `claude -p QUESTION` in `repo` against `api` with a home of its own under `tmp` (its settings and session
 * files go there). Claude Code sends the key as a bearer token only when it comes as ANTHROPIC_AUTH_TOKEN, which the
 * local server requires; nonessential traffic (telemetry, update checks) is off, as nothing but the local server is
 * reachable. Resolves like runSpelunk: time and main-thread CPU from spawn to the first API request, exit code.
 */
export async function runClaudeCode({ api, bin, repo, tmp, question, replies }) {
  const home = path.join(tmp, 'claude-home');
  mkdirSync(home, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_AUTH_TOKEN: 'bench',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    NO_COLOR: '1',
  };
  let first = null;
  let child = null;
  let started = 0;
  const [head, ...rest] = replies;
  api.enqueue((req) => {
    first = { ms: performance.now() - started, cpuMs: child ? readCpuMs(child.pid) : null };
    return typeof head === 'function' ? head(req) : head;
  }, ...rest);
  const { code, stderr } = await new Promise((resolve, reject) => {
    started = performance.now();
    child = spawn(bin, ['-p', question], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (exit) => resolve({ code: exit, stderr: err }));
  });
  if (first === null) throw new Error(`claude -p sent no request (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return { ...first, code };
}

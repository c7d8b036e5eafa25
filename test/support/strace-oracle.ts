import { spawn, spawnSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The oracle of the argv differential test: a real program run under `strace -f -e trace=%file`, and what it did with
 * each word of its command line. A word counts as opened when a path the program passed to a file system call
 * (relative to its working directory, or absolute) is the word, or lies below it (a directory walked). Calls relative
 * to another directory's descriptor are a walk's own entries and are not counted.
 */

/** strace from the trusted directories, or null with why the oracle is missing. */
export function findStrace(): { file: string } | { reason: string } {
  const file = ['/usr/bin/strace', '/bin/strace'].find((candidate) => existsSync(candidate));
  if (file === undefined) return { reason: 'strace is not installed (Debian package strace)' };
  const probe = spawnSync(file, ['-f', '-qq', '-e', 'trace=%file', '-o', '/dev/null', '/bin/true'], { encoding: 'utf8' });
  if (probe.status !== 0) return { reason: `strace cannot trace here (${(probe.stderr || String(probe.error)).trim().split('\n')[0]})` };
  return { file };
}

/** What the traced run did: paths it named (and with which call), paths it wrote, programs it started beyond itself. */
export interface Trace {
  /** Every path passed to a file system call relative to the working directory, or absolute. */
  paths: string[];
  /** Paths opened for writing, created, removed, renamed or truncated. */
  writes: string[];
  /** Programs started after the first exec (which is the program itself). */
  execs: string[];
  exitCode: number | null;
  stderr: string;
}

/** System calls that change the file system; `open`-style calls count when their flags write. */
const WRITING_CALLS = /^(?:creat|mkdir|mkdirat|unlink|unlinkat|rmdir|rename|renameat2?|link|linkat|symlink|symlinkat|truncate|chmod|fchmodat|chown|lchown|fchownat|utimensat|utimes|utime|mknod|mknodat)$/;
const WRITING_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC/;

/** Runs `file args` in `cwd` under strace with the child environment `env`; never through a shell. */
export async function traceRun(strace: string, file: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<Trace> {
  const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-strace-'));
  const log = path.join(logDir, 'trace');
  try {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(strace, ['-f', '-qq', '-s', '4096', '-e', 'trace=%file', '-o', log, file, ...args], {
        cwd,
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 20_000,
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        if (err.length < 4096) err += chunk;
      });
      child.on('close', (exit) => resolve({ code: exit, stderr: err }));
    });
    return { ...parseTrace(await fs.readFile(log, 'utf8')), exitCode: code, stderr };
  } finally {
    await fs.rm(logDir, { recursive: true, force: true });
  }
}

/** strace's C-style string escapes undone (`\"`, `\\`, `\n`, `\t`, octal and hex bytes). */
function unquote(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i] as string;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch));
      continue;
    }
    const next = text[i + 1] as string;
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, v: 11, f: 12, '"': 34, '\\': 92 };
    if (next in simple) {
      bytes.push(simple[next] as number);
      i += 1;
    } else if (next === 'x') {
      bytes.push(parseInt(text.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1))?.[0] ?? '0';
      bytes.push(parseInt(octal, 8));
      i += octal.length;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseTrace(text: string): Omit<Trace, 'exitCode' | 'stderr'> {
  const paths: string[] = [];
  const writes: string[] = [];
  const execs: string[] = [];
  let execCount = 0;
  for (const line of text.split('\n')) {
    // `PID call(args…` or `PID <... call resumed>…` (the second half of a call split by another process's line).
    const call = /^\d+\s+(\w+)\((.*)$/.exec(line);
    if (call === null) continue;
    const [, name, rest] = call as unknown as [string, string, string];
    // A call relative to a directory descriptor (`openat(3, "x")`, `statx(4, "y")`) names an entry of a walk.
    if (/^\d+,\s*"(?!\/)/.test(rest)) continue;
    const strings = [...rest.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => unquote(m[1] as string));
    const first = strings[0];
    if (first === undefined) continue;
    // getcwd reports the working directory; it opens nothing.
    if (name === 'getcwd') continue;
    if (name === 'execve' || name === 'execveat') {
      execCount += 1;
      if (execCount > 1) execs.push(first);
      continue;
    }
    if (first === '' && /AT_EMPTY_PATH/.test(rest)) continue;
    paths.push(first);
    const renamed = /^(?:rename|link|symlink)/.test(name) ? strings.slice(0, 2) : [first];
    const writing = WRITING_CALLS.test(name) || (/^open/.test(name) && WRITING_FLAGS.test(rest));
    if (writing) writes.push(...renamed.filter((p) => !p.startsWith('/dev/')));
  }
  return { paths, writes, execs };
}

/** The candidates among `words` the trace opened: each candidate whose path (as written, or resolved in `cwd`) it named. */
export function openedAmong(trace: Trace, candidates: Iterable<string>, cwd: string): string[] {
  const named = (candidate: string): boolean => {
    const abs = path.resolve(cwd, candidate);
    return trace.paths.some((p) => p === candidate || p.startsWith(`${candidate}/`) || p === abs || p.startsWith(`${abs}/`));
  };
  return [...new Set(candidates)].filter(named);
}

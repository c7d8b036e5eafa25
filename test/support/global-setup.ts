import { mkdtempSync, openSync, readSync, closeSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildBinary } from './pty.js';

/**
 * Builds dist/ once per test run, before any file starts: the binary and pseudo-terminal tests run the real bundle.
 * Also makes the run's scratch XDG_STATE_HOME (saved sessions of in-process runs; the test workers inherit the
 * variable) and removes it at the end.
 */
export default function setup(): () => void {
  buildBinary();
  const state = mkdtempSync(path.join(os.tmpdir(), 'spelunk-test-state-'));
  process.env.SPELUNK_TEST_STATE_HOME = state;
  const started = Date.now();
  return () => {
    const roots = readRoots(state);
    rmSync(state, { recursive: true, force: true });
    // Nothing a test runs may write spelunk's state or cache under the real home (issue 33): the run fails if it did.
    // Other programs on the machine may write there meanwhile; only entries naming a repository this run made count.
    const written = ownWrites(realHomeDirs().flatMap((dir) => writtenSince(dir, started)), roots);
    if (written.length > 0) throw new Error(`the tests wrote under the real home directory: ${written.slice(0, 5).join(', ')}`);
  };
}

/** spelunk's state and cache directories under the account's real home. */
function realHomeDirs(): string[] {
  const home = os.userInfo().homedir;
  return [path.join(home, '.local', 'state', 'spelunk'), path.join(home, '.cache', 'spelunk')];
}

/** Entries below `dir` changed at or after `since` (ms): a bounded walk, none when `dir` does not exist. */
export function writtenSince(dir: string, since: number, limit = 10_000): string[] {
  const found: string[] = [];
  const stack = [dir];
  let seen = 0;
  while (stack.length > 0 && seen < limit) {
    const current = stack.pop()!;
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      seen++;
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else if ((statSync(full, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= since) found.push(full);
    }
  }
  return found;
}

/** The repositories this run made (temp-repo.ts records each in the scratch state directory's `roots.txt`). */
function readRoots(state: string): string[] {
  try {
    return readFileSync(path.join(state, 'roots.txt'), 'utf8').split('\n').filter((r) => r !== '');
  } catch {
    return [];
  }
}

/** The files among `files` whose first 4 KB name one of `roots` (a saved session's header, a cache entry's root). */
export function ownWrites(files: readonly string[], roots: readonly string[]): string[] {
  return files.filter((file) => {
    const head = readHead(file);
    return roots.some((root) => head.includes(JSON.stringify(root).slice(1, -1)));
  });
}

function readHead(file: string): string {
  try {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(4096);
      return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

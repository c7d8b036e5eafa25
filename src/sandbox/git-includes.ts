import { promises as fs } from 'node:fs';
import path from 'node:path';
import { escapeControls } from '../escape.js';
import { shownPath } from './describe.js';
import type { ExecResult } from './exec.js';
import { confineSync } from './paths.js';

/** Include depth git itself allows (MAX_INCLUDE_DEPTH); deeper chains are refused, as git refuses them. */
const MAX_INCLUDE_DEPTH = 10;
/** Configuration files checked per call at most: the repository's own two and a handful of includes. */
const MAX_CONFIG_FILES = 32;

/** Runs `git config --file <file> --no-includes …` for one file and returns the raw result. */
type ConfigQuery = (file: string) => Promise<ExecResult>;

/** The arguments of that query: every include.path and includeIf.<condition>.path, NUL-terminated, includes not followed. */
export function includeQueryArgs(file: string): string[] {
  return ['config', '--file', file, '--no-includes', '-z', '--get-regexp', '^include(if\\..+)?\\.path$'];
}

/**
 * Why the repository's configuration cannot be handed to git, or null. git follows `include.path` and
 * `includeIf.*.path` wherever they point: a FIFO there freezes every call, and a file outside the root is read (its
 * lines echoed in "bad config line" errors, its existence told by whether git complains). So each include is read by
 * git itself without following it (`--no-includes`), and must stay inside `root` by its text (confine: decided
 * without looking outside, so the answer is the same whether an outside file exists) and be absent or a regular file,
 * whose own includes are then checked the same way. `~` and `%(prefix)` paths are refused: they name places outside.
 * Every condition of includeIf counts, met or not. Never throws.
 */
export async function checkIncludes(root: string, files: readonly string[], query: ConfigQuery): Promise<string | null> {
  const queue = files.map((file) => ({ file, depth: 0 }));
  const seen = new Set<string>();
  while (queue.length > 0) {
    const { file, depth } = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (seen.size > MAX_CONFIG_FILES) return `the configuration includes more than ${MAX_CONFIG_FILES} files`;
    const stat = await fs.lstat(file).catch(() => null);
    if (stat === null) continue;
    if (!stat.isFile()) return `${shownPath(root, file)} is not a regular file; git would read it (or wait on it) as configuration`;
    const run = await query(file);
    // A query the time limit or an abort ended answered nothing: "no include" cannot be read from it, so the call is
    // refused (fail closed) rather than git being run on a configuration nobody checked.
    if (run.exitCode === null) return `the includes of ${shownPath(root, file)} could not be checked (git ${run.timedOut ? 'ran out of time' : 'did not finish'}); try again`;
    // Exit 1: no include here. Any other code is a configuration git itself will refuse to read, inside the root.
    if (run.exitCode !== 0) continue;
    for (const value of includeValues(run.stdout)) {
      const target = resolveInclude(root, file, value);
      if (typeof target !== 'string') return target.reason;
      if (depth + 1 > MAX_INCLUDE_DEPTH) return `the configuration's includes are nested more than ${MAX_INCLUDE_DEPTH} deep`;
      queue.push({ file: target, depth: depth + 1 });
    }
  }
  return null;
}

/** The values of `key\nvalue\0` records; a key without a value (no newline) has none. */
function includeValues(stdout: string): string[] {
  return stdout
    .split('\0')
    .filter((record) => record.includes('\n'))
    .map((record) => record.slice(record.indexOf('\n') + 1));
}

/** The symlink-free path an include names (relative to its file's directory), when it stays inside the root. */
function resolveInclude(root: string, file: string, value: string): string | { reason: string } {
  const outside = { reason: `${shownPath(root, file)} includes "${escapeControls(value)}", outside the repository root; configuration outside the root is never read (its content, or whether it exists, would reach the output)` };
  if (value.startsWith('~') || value.startsWith('%(prefix)')) return outside;
  const confined = confineSync(root, path.resolve(path.dirname(file), value), { mustExist: false });
  if (!confined.ok) {
    return confined.outside === true ? outside : { reason: `${shownPath(root, file)} includes "${escapeControls(value)}": ${confined.reason}` };
  }
  return confined.abs;
}

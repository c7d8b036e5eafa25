import { lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';

/** Pseudo-filesystems that expose the host (processes, devices, kernel state); never readable even if linked. */
const FORBIDDEN_ROOTS = ['/proc', '/dev', '/sys'];

export type Confined =
  | { ok: true; abs: string; rel: string; exists: boolean }
  /** `outside` when the path leaves the root (or is in /proc, /dev, /sys): decided without looking outside. */
  | { ok: false; reason: string; outside?: true };

/** True when `target` is `root` or lies below it, compared by path segments (never a string prefix). */
export function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return !rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel);
}

/**
 * `abs` with its longest existing ancestor resolved through symlinks (a directory linked into the repository counts as
 * inside it).
 */
export function realPrefix(abs: string): string {
  const rest: string[] = [];
  for (let at = abs; ; at = path.dirname(at)) {
    try {
      return path.join(realpathSync.native(at), ...rest.reverse());
    } catch {
      if (path.dirname(at) === at) return abs;
      rest.push(path.basename(at));
    }
  }
}

/** Symlinks followed for one path before it counts as a loop (the kernel's limit is 40). */
const MAX_LINK_HOPS = 40;

/**
 * Resolves a model-supplied path against the real root and confines it, one component at a time, the way the
 * kernel does (`link/..` follows `link` first), but without ever asking the filesystem about anything outside the
 * root: a step that leaves the root (a `..` above it, a symlink whose target lies outside) is refused at once, so
 * the answer is the same whether the outside path exists or not. A symlink whose target starts in /proc, /dev or /sys
 * is refused by its text, so a `/proc/self/…` link can never mean one thing here and another in a child process.
 * The result is symlink-free (`abs`, and `rel` from the root), which is what callers hand to a child: the path that
 * was checked is the path that is used. That holds for `exists: true` only: past the first missing component the rest
 * is lexical (`nope/../link-etc` gives `link-etc`, a link), so a missing path's `abs` must never be opened or created.
 * Never throws.
 */
export async function confine(root: string, input: string, opts: { mustExist: boolean }): Promise<Confined> {
  return confineSync(root, input, opts);
}

/** confine, synchronously (it only ever used synchronous lstat and readlink): for callers that read many small files. */
export function confineSync(root: string, input: string, opts: { mustExist: boolean }): Confined {
  if (input.includes('\0')) return { ok: false, reason: 'path contains a NUL byte' };
  const lexical = path.resolve(root, input);
  const forbidden = forbiddenRoot(lexical);
  if (forbidden) return { ok: false, reason: `${forbidden} is never readable`, outside: true };
  const outside = { ok: false as const, reason: `${input} is outside the repository root`, outside: true as const };
  const start = path.isAbsolute(input) ? insideTail(root, input) : input;
  if (start === null) return outside;
  const walked = walk(root, start, input);
  if (!walked.ok) return walked.outside ? outside : { ok: false, reason: walked.reason, ...(walked.forbidden ? { outside: true } : {}) };
  const rel = walked.parts.join('/');
  const abs = rel === '' ? root : `${root}${root.endsWith(path.sep) ? '' : path.sep}${rel}`;
  if (walked.missing && opts.mustExist) return { ok: false, reason: `no such file or directory: ${input}` };
  if (forbiddenRoot(abs)) return { ok: false, reason: `${forbiddenRoot(abs)} is never readable`, outside: true };
  return { ok: true, abs, rel: rel || '.', exists: !walked.missing };
}

type Walked =
  | { ok: true; parts: string[]; missing: boolean }
  | { ok: false; outside: true }
  | { ok: false; outside: false; forbidden?: true; reason: string };

/** The component walk behind confine: `parts` is the real position below the root, never above it. */
function walk(root: string, relative: string, input: string): Walked {
  const parts: string[] = [];
  const queue = relative.split('/');
  let hops = 0;
  let missing = false;
  while (queue.length > 0) {
    const name = queue.shift() as string;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (parts.length === 0) return { ok: false, outside: true };
      parts.pop();
      continue;
    }
    if (missing) {
      parts.push(name);
      continue;
    }
    const here = path.join(root, ...parts, name);
    const st = lstatOrCode(here);
    if (typeof st === 'string') {
      if (st !== 'ENOENT') return { ok: false, outside: false, reason: failureReason(st, input) };
      missing = true;
      parts.push(name);
      continue;
    }
    if (!st.isSymbolicLink()) {
      // Anything after a file, even a trailing slash, makes the kernel answer ENOTDIR.
      if (!st.isDirectory() && queue.length > 0) {
        return { ok: false, outside: false, reason: failureReason('ENOTDIR', input) };
      }
      parts.push(name);
      continue;
    }
    hops += 1;
    if (hops > MAX_LINK_HOPS) return { ok: false, outside: false, reason: failureReason('ELOOP', input) };
    const target = readlinkOrNull(here);
    if (target === null) return { ok: false, outside: false, reason: `${input} cannot be resolved (the link changed while it was read)` };
    if (path.isAbsolute(target)) {
      const forbidden = forbiddenRoot(path.resolve(target));
      if (forbidden) {
        return { ok: false, outside: false, forbidden: true, reason: `${forbidden} is never readable (${input} is a link into it)` };
      }
      const tail = insideTail(root, target);
      if (tail === null) return { ok: false, outside: true };
      parts.length = 0;
      queue.unshift(...tail.split('/'));
      continue;
    }
    queue.unshift(...target.split('/'));
  }
  return { ok: true, parts, missing };
}

/**
 * For an absolute path, what follows the root when its leading components are exactly the root's (no `..` among
 * them); null when it does not start inside the root. The root is a real path, so those components hold no link.
 */
function insideTail(root: string, absolute: string): string | null {
  const rootParts = root.split('/').filter((p) => p !== '');
  const parts = absolute.split('/');
  let i = 0;
  let matched = 0;
  // A path shorter than the root runs out of parts: undefined is no root component, so it returns null.
  for (; matched < rootParts.length; i += 1) {
    const part = parts[i];
    if (part === '' || part === '.') continue;
    if (part !== rootParts[matched]) return null;
    matched += 1;
  }
  return parts.slice(i).join('/');
}

function readlinkOrNull(p: string): string | null {
  try {
    return readlinkSync(p);
  } catch {
    return null;
  }
}

function lstatOrCode(p: string): Stats | string {
  try {
    return lstatSync(p);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
  }
}

function forbiddenRoot(p: string): string | undefined {
  return FORBIDDEN_ROOTS.find((forbidden) => isInside(forbidden, p));
}

function failureReason(code: string, input: string): string {
  if (code === 'ELOOP') return `${input} is a symlink loop (too many levels of symbolic links)`;
  if (code === 'ENOTDIR') return `${input}: a component of the path is a file, not a directory`;
  if (code === 'EACCES') return `${input}: permission denied`;
  if (code === 'ENAMETOOLONG') return `${input}: the path is too long`;
  return `${input} cannot be resolved (${code})`;
}

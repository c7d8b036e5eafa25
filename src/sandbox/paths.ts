import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Pseudo-filesystems that expose the host (processes, devices, kernel state); never readable even if linked. */
const FORBIDDEN_ROOTS = ['/proc', '/dev', '/sys'];

export type Confined =
  | { ok: true; abs: string; rel: string; exists: boolean }
  | { ok: false; reason: string };

/** True when `target` is `root` or lies below it, compared by path segments (never a string prefix). */
export function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * Resolves a model-supplied path against the real root and confines it.
 * Symlinks are followed with the native realpath (which resolves `link/..` after following `link`, as the kernel
 * does); the result must stay inside the root. A path that does not exist is refused when `mustExist`, otherwise its
 * nearest existing ancestor is realpath'd and must be inside. Broken symlinks and symlink loops are always refused.
 * Never throws.
 */
export async function confine(root: string, input: string, opts: { mustExist: boolean }): Promise<Confined> {
  if (input.includes('\0')) return { ok: false, reason: 'path contains a NUL byte' };
  // Plain concatenation, not path.join/resolve: those collapse `link/..` lexically, so `link-to-etc/../etc/passwd`
  // would be checked as `<root>/etc/passwd` while a program given the same string opens /etc/passwd.
  const joined = path.isAbsolute(input) ? input : `${root}${root.endsWith(path.sep) ? '' : path.sep}${input}`;
  const forbidden = forbiddenRoot(path.resolve(joined));
  if (forbidden) return { ok: false, reason: `${forbidden} is never readable` };
  const resolved = await realpathOf(joined);
  if ('code' in resolved) {
    if (resolved.code !== 'ENOENT') return { ok: false, reason: failureReason(resolved.code, input) };
    if (opts.mustExist) return { ok: false, reason: `no such file or directory: ${input}` };
    return confineMissing(root, joined, input);
  }
  const real = resolved.real;
  const forbiddenReal = forbiddenRoot(real);
  if (forbiddenReal) return { ok: false, reason: `${forbiddenReal} is never readable` };
  if (!isInside(root, real)) return { ok: false, reason: `${input} is outside the repository root` };
  return { ok: true, abs: real, rel: path.relative(root, real) || '.', exists: true };
}

function forbiddenRoot(p: string): string | undefined {
  return FORBIDDEN_ROOTS.find((forbidden) => isInside(forbidden, p));
}

/** Walks up to the nearest ancestor that resolves; the missing tail is appended to its real path. */
async function confineMissing(root: string, joined: string, input: string): Promise<Confined> {
  let probe = joined.replace(/(.)\/+$/, '$1');
  for (;;) {
    // An entry that lstat sees but realpath cannot resolve is a broken symlink: where it points is unknown to
    // us but not to a program that later opens it (or to whoever creates the target), so refuse it.
    if (await isSymlink(probe)) return { ok: false, reason: `${input} goes through a broken symlink` };
    const parent = path.dirname(probe);
    if (parent === probe) return { ok: false, reason: `${input} is outside the repository root` };
    probe = parent;
    const resolved = await realpathOf(probe);
    if ('code' in resolved) {
      if (resolved.code !== 'ENOENT') return { ok: false, reason: failureReason(resolved.code, input) };
      continue;
    }
    const forbidden = forbiddenRoot(resolved.real);
    if (forbidden) return { ok: false, reason: `${forbidden} is never readable` };
    if (!isInside(root, resolved.real)) return { ok: false, reason: `${input} is outside the repository root` };
    const abs = path.join(resolved.real, path.relative(probe, joined));
    if (!isInside(root, abs)) return { ok: false, reason: `${input} is outside the repository root` };
    return { ok: true, abs, rel: path.relative(root, abs) || '.', exists: false };
  }
}

async function realpathOf(p: string): Promise<{ real: string } | { code: string }> {
  try {
    // fs.promises.realpath uses the native realpath(3): `a/link/../b` follows `link` before applying `..`.
    return { real: await fs.realpath(p) };
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN' };
  }
}

async function isSymlink(p: string): Promise<boolean> {
  try {
    return (await fs.lstat(p)).isSymbolicLink();
  } catch {
    return false;
  }
}

function failureReason(code: string, input: string): string {
  if (code === 'ELOOP') return `${input} is a symlink loop (too many levels of symbolic links)`;
  if (code === 'ENOTDIR') return `${input}: a component of the path is a file, not a directory`;
  if (code === 'EACCES') return `${input}: permission denied`;
  if (code === 'ENAMETOOLONG') return `${input}: the path is too long`;
  return `${input} cannot be resolved (${code})`;
}

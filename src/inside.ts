import { realpathSync } from 'node:fs';
import path from 'node:path';

/** True when `abs` is `root` or below it (both absolute, already resolved). */
export function isInside(abs: string, root: string): boolean {
  const rel = path.relative(root, abs);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** `abs` with its longest existing ancestor resolved through symlinks (a directory linked into the repository counts as inside it). */
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

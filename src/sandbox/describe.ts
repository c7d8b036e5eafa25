import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import { escapeControls } from '../escape.js';

/** A path below `root` as a refusal names it: relative, `.` for the root itself, terminal controls escaped. */
export function shownPath(root: string, abs: string): string {
  return escapeControls(path.relative(root, abs) || '.');
}

/** What a file that should be regular is instead, as a refusal words it. */
export function fileKind(entry: Dirent | Stats): string {
  if (entry.isSymbolicLink()) return 'a symlink';
  if (entry.isFIFO()) return 'a FIFO';
  if (entry.isSocket()) return 'a socket';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'a device';
  return 'not a regular file';
}

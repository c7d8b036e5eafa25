import { createHash } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import { confineSync } from '../sandbox/paths.js';

/** Files larger than this (512 KiB) are not parsed: generated bundles and data, rarely where a definition is written. */
export const MAX_PARSE_BYTES = 512 * 1024;
/** A file whose longest line passes this many characters, with lines this long on average, counts as minified. */
const MINIFIED_LINE_CHARS = 1_000;
const MINIFIED_MEAN_CHARS = 300;

/**
 * A file's text as read for parsing, with the SHA-256 of its bytes (what caches key on: a size and mtime can be
 * restored over other content, a hash cannot), or why it was skipped (a one-line note for the person or the model).
 */
type SourceText = { ok: true; text: string; size: number; sha256: string } | { ok: false; note: string };

/**
 * Reads one file inside `root` for parsing. The path is confined by realpath segments (a symlink leaving the root is
 * refused without looking outside), must be a regular file with one link (another link may live outside the root),
 * and is opened with O_NOFOLLOW|O_NONBLOCK so a swap to a symlink or FIFO after the check is never followed or waited
 * on. Huge, binary and minified files are skipped with a note. Never throws.
 */
export async function readSource(root: string, rel: string): Promise<SourceText> {
  const confined = confineSync(root, rel, { mustExist: true });
  if (!confined.ok) return { ok: false, note: `${rel}: ${confined.reason}` };
  const st = await fs.lstat(confined.abs).catch(() => null);
  if (st === null || !st.isFile()) return { ok: false, note: `${rel}: not a regular file` };
  if (st.nlink > 1) return { ok: false, note: `${rel}: hard-linked, not read` };
  if (st.size > MAX_PARSE_BYTES) {
    return { ok: false, note: `${rel}: skipped, ${st.size} bytes is over the ${MAX_PARSE_BYTES / 1024} KiB parse limit` };
  }
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(confined.abs, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return { ok: false, note: `${rel}: cannot open (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== st.ino || opened.size > MAX_PARSE_BYTES) {
      return { ok: false, note: `${rel}: changed while it was being opened` };
    }
    const bytes = Buffer.alloc(opened.size);
    const { bytesRead } = await handle.read(bytes, 0, opened.size, 0);
    const data = bytes.subarray(0, bytesRead);
    if (data.includes(0)) return { ok: false, note: `${rel}: binary, not parsed` };
    const text = data.toString('utf8');
    if (isMinified(text)) return { ok: false, note: `${rel}: minified (very long lines), not parsed` };
    return { ok: true, text, size: data.length, sha256: createHash('sha256').update(data).digest('hex') };
  } catch (error) {
    return { ok: false, note: `${rel}: read error (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Long lines that are also long on average: one long string literal in a normal file does not count. */
export function isMinified(text: string): boolean {
  let longest = 0;
  let lines = 0;
  let start = 0;
  for (let nl = text.indexOf('\n'); ; nl = text.indexOf('\n', start)) {
    const end = nl === -1 ? text.length : nl;
    longest = Math.max(longest, end - start);
    lines += 1;
    if (nl === -1) break;
    start = nl + 1;
  }
  return longest > MINIFIED_LINE_CHARS && text.length / lines > MINIFIED_MEAN_CHARS;
}

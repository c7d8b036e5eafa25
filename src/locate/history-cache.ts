import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isInside } from '../sandbox/paths.js';
import { readBounded } from '../symbols/disk-cache.js';

/**
 * The mined history across runs, under `$XDG_CACHE_HOME/spelunk/history/` (beside the symbol cache): one file per
 * (root, HEAD commit id) holding git's log text as read. A commit id names its whole history, so an entry never goes
 * stale; it is untrusted input all the same (anything may have written it): read without following links or waiting on
 * a FIFO, bounded, and used only when its format, root and HEAD are exactly the ones asked about. The log text is then
 * parsed like git's own output, so a doctored entry can change a ranking's history weights and nothing else.
 */

/** Bumped when the log's format or what is read from it changes. */
const FORMAT = 1;
/** The largest entry read or written (the log itself is capped below it in history.ts). */
const MAX_HISTORY_ENTRY_BYTES = 24 * 1024 * 1024;
/** Entries kept: past it the oldest by name is dropped on each write (names are hashes: an arbitrary one). */
const MAX_ENTRIES = 64;
const COMMIT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The cached log of `head` under `root`, or null (none, another root or HEAD, malformed, too large). Never throws. */
export async function cachedLog(dir: string, root: string, head: string): Promise<string | null> {
  if (!COMMIT_ID.test(head)) return null;
  const text = await readBounded(entryFile(dir, root, head), MAX_HISTORY_ENTRY_BYTES);
  if (text === null) return null;
  try {
    const entry = JSON.parse(text) as Record<string, unknown>;
    const same = entry.v === FORMAT && entry.root === root && entry.head === head && typeof entry.log === 'string';
    return same ? (entry.log as string) : null;
  } catch {
    return null;
  }
}

/** Stores a log atomically (temporary name, then rename); never inside the repository being read. Never throws. */
export async function storeLog(dir: string, root: string, head: string, log: string): Promise<void> {
  if (!COMMIT_ID.test(head)) return;
  const text = JSON.stringify({ v: FORMAT, root, head, log });
  if (Buffer.byteLength(text) > MAX_HISTORY_ENTRY_BYTES) return;
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    if (isInside(root, await fs.realpath(dir))) return;
    const names = (await fs.readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    for (const name of names.slice(0, Math.max(0, names.length - MAX_ENTRIES + 1))) await fs.rm(path.join(dir, name), { force: true });
    const file = entryFile(dir, root, head);
    const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await fs.writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
    await fs.rename(temporary, file).catch(async () => fs.rm(temporary, { force: true }));
  } catch {
    // A read-only or full cache directory only costs the next run a git log.
  }
}

function entryFile(dir: string, root: string, head: string): string {
  const id = createHash('sha256').update(`${FORMAT}\0${root}\0${head}`).digest('hex');
  return path.join(dir, `${id.slice(0, 32)}.json`);
}

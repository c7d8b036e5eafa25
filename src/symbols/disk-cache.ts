import { createHash } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { isInside } from '../sandbox/paths.js';
import type { FileSymbols, SymbolKey, SymbolStore, SymbolTag } from './index.js';

/**
 * The symbol layer's cache across runs, under `$XDG_CACHE_HOME/spelunk/symbols/` (else `~/.cache/spelunk/symbols/`):
 * one small JSON file per (root, path, mode), named by a hash, holding the tags with the SHA-256 of the bytes they
 * were parsed from (not the size and mtime: a same-size rewrite with its mtime restored would keep stale tags). The
 * files are untrusted input (anything may have written them): every entry is validated field by field on read, and
 * one whose root, path, mode or content hash differs from the file being asked about is ignored, so the cache can only
 * ever save a parse, never change what is reported.
 */

/** Bumped when the entry format or the tags queries change meaning (3: keyed by content hash, not size and mtime; one entry per definition, kinds in the language's words, Rust impls). */
const FORMAT = 3;
/** An entry larger than this is neither written nor read (a file's tags are capped far below it). */
const MAX_ENTRY_BYTES = 512 * 1024;
/** Entries per shard directory (256 shards): past it one is dropped per write, so the cache stays bounded. */
const MAX_SHARD_ENTRIES = 256;
const MAX_TAGS = 5_000;
const MAX_NAME_CHARS = 200;
const KIND = /^[a-z_]{1,40}$/;
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** `$XDG_CACHE_HOME/spelunk/symbols`, else `$HOME/.cache/spelunk/symbols`; null when neither is an absolute path. */
export function symbolCacheDir(env: Readonly<Record<string, string | undefined>>): string | null {
  const base = env.XDG_CACHE_HOME || (env.HOME ? path.join(env.HOME, '.cache') : null);
  if (!base || !path.isAbsolute(base)) return null;
  return path.join(base, 'spelunk', 'symbols');
}

/** What identifies an entry: the tags of `rel` under `root`, in `mode`, parsed from bytes of this SHA-256. */
type EntryKey = SymbolKey;
const SHA256 = /^[0-9a-f]{64}$/;

type Parsed = Extract<FileSymbols, { ok: true }>;

/** Reads and writes entries in one cache directory; never throws (a broken cache costs a parse, nothing else). */
export class SymbolDiskCache implements SymbolStore {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The cached tags for exactly this key, or null (missing, other version, other content, malformed). */
  async get(key: EntryKey): Promise<Parsed | null> {
    if (!SHA256.test(key.sha256)) return null;
    const text = await readBounded(this.#file(key));
    if (text === null) return null;
    try {
      return validEntry(JSON.parse(text) as unknown, key);
    } catch {
      return null;
    }
  }

  /** Writes an entry atomically (temporary name, then rename); never inside the repository being read. */
  async put(key: EntryKey, symbols: Parsed): Promise<void> {
    const text = JSON.stringify({ v: FORMAT, ...key, definitions: symbols.definitions, references: symbols.references });
    if (Buffer.byteLength(text) > MAX_ENTRY_BYTES) return;
    const file = this.#file(key);
    const shard = path.dirname(file);
    try {
      await fs.mkdir(shard, { recursive: true, mode: 0o700 });
      // A cache directory inside the repository (`-C ~` with the cache under ~/.cache) is never written.
      if (isInside(key.root, await fs.realpath(shard))) return;
      await evictIfFull(shard);
      const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      await fs.writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
      await fs.rename(temporary, file).catch(async () => fs.rm(temporary, { force: true }));
    } catch {
      // A read-only or full cache directory only costs the next run its parse.
    }
  }

  #file(key: EntryKey): string {
    const id = createHash('sha256').update(`${FORMAT}\0${key.root}\0${key.rel}\0${key.mode}`).digest('hex');
    return path.join(this.#dir, id.slice(0, 2), `${id.slice(2, 34)}.json`);
  }
}

/**
 * A cache file's text, opened without following a link or waiting on a FIFO, at most `maxBytes` (null otherwise).
 * Also read by locate's history cache (src/locate/history-cache.ts).
 */
export async function readBounded(file: string, maxBytes = MAX_ENTRY_BYTES): Promise<string | null> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, READ_FLAGS);
  } catch {
    return null;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > maxBytes) return null;
    const bytes = Buffer.alloc(st.size);
    const { bytesRead } = await handle.read(bytes, 0, st.size, 0);
    return bytes.subarray(0, bytesRead).toString('utf8');
  } catch {
    return null;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The entry as tags when every field is what it must be and it describes exactly `key`; else null. */
function validEntry(value: unknown, key: EntryKey): Parsed | null {
  if (typeof value !== 'object' || value === null) return null;
  const entry = value as Record<string, unknown>;
  const same =
    entry.v === FORMAT &&
    entry.root === key.root &&
    entry.rel === key.rel &&
    entry.mode === key.mode &&
    typeof entry.sha256 === 'string' &&
    entry.sha256 === key.sha256;
  if (!same) return null;
  const definitions = validTags(entry.definitions);
  const references = validTags(entry.references);
  if (definitions === null || references === null) return null;
  return { ok: true, definitions, references };
}

function validTags(value: unknown): SymbolTag[] | null {
  if (!Array.isArray(value) || value.length > MAX_TAGS) return null;
  const tags: SymbolTag[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) return null;
    const { name, kind, line } = item as Record<string, unknown>;
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_CHARS) return null;
    if (typeof kind !== 'string' || !KIND.test(kind)) return null;
    if (typeof line !== 'number' || !Number.isSafeInteger(line) || line < 1) return null;
    tags.push({ name, kind, line });
  }
  return tags;
}

/** Drops the first entry by name (names are hashes: an arbitrary one) when the shard is full. */
async function evictIfFull(shard: string): Promise<void> {
  const names = (await fs.readdir(shard)).filter((n) => n.endsWith('.json')).sort();
  if (names.length < MAX_SHARD_ENTRIES) return;
  await fs.rm(path.join(shard, names[0]!), { force: true });
}

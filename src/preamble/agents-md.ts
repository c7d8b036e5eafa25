import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { confine } from '../sandbox/paths.js';
import { compareUtf8 } from './listing.js';
import { errorCode, walkFiles } from './rg-walk.js';

/** Project instructions beyond this many bytes are cut (on a UTF-8 character boundary) and the cut is announced. */
export const INSTRUCTIONS_MAX_BYTES = 32 * 1024;
/** Nested AGENTS.md paths named in the prompt; the rest are counted. */
export const NESTED_MAX = 50;
/** Default depth of the nested AGENTS.md search: the listing's default, so it costs no more than the listing walk. */
const NESTED_DEFAULT_DEPTH = 3;
/** The nested search is a convenience: past this it is skipped (reported as a warning), never partially used. */
const NESTED_TIMEOUT_MS = 3_000;
/** Root files tried in order: AGENTS.md is the shared convention, CLAUDE.md the fallback. */
const CANDIDATES = ['AGENTS.md', 'CLAUDE.md'] as const;

/** The repository's own instructions for agents, as loaded for the system prompt. */
export interface ProjectInstructions {
  file: 'AGENTS.md' | 'CLAUDE.md' | null;
  /** The (possibly cut) text, decoded as UTF-8 with replacement characters; null when no file was loaded. */
  text: string | null;
  /** Size of the whole file in bytes. */
  bytes: number;
  /** Bytes left out past INSTRUCTIONS_MAX_BYTES (0 when complete). */
  truncatedBytes: number;
  /** Other AGENTS.md files, relative to the root, sorted bytewise, at most NESTED_MAX. */
  nested: string[];
  /** Nested AGENTS.md files found beyond NESTED_MAX. */
  nestedOmitted?: number;
  /** One-line notes for stderr, e.g. a refused symlink or a skipped search. */
  warnings?: string[];
}

type Candidate = (typeof CANDIDATES)[number];
type Loaded =
  | { kind: 'missing' }
  | { kind: 'refused'; reason: string }
  | { kind: 'loaded'; text: string; bytes: number; truncatedBytes: number };

/**
 * Loads the root AGENTS.md (or CLAUDE.md when AGENTS.md is missing or unusable) and lists nested AGENTS.md files.
 * `root` must be the realpath'd repository root. Only regular files inside the root are read: a symlink out of the
 * root, a FIFO or a directory is refused with a warning. Never throws.
 */
export async function loadProjectInstructions(
  root: string,
  rgPath?: string,
  opts: { maxDepth?: number; signal?: AbortSignal } = {},
): Promise<ProjectInstructions> {
  const nestedPromise = rgPath ? findNested(root, rgPath, opts.maxDepth ?? NESTED_DEFAULT_DEPTH, opts.signal) : null;
  const warnings: string[] = [];
  let found: { file: Candidate; text: string; bytes: number; truncatedBytes: number } | null = null;
  for (const file of CANDIDATES) {
    const loaded = await readInstructions(root, file);
    if (loaded.kind === 'missing') continue;
    if (loaded.kind === 'refused') {
      warnings.push(`${file} not loaded: ${loaded.reason}`);
      continue;
    }
    found = { file, text: loaded.text, bytes: loaded.bytes, truncatedBytes: loaded.truncatedBytes };
    break;
  }
  const nested = nestedPromise ? await nestedPromise : { paths: [], omitted: 0 };
  if ('warning' in nested) warnings.push(nested.warning);
  if (found?.truncatedBytes) {
    warnings.push(`${found.file} is ${found.bytes} bytes; only the first ${found.bytes - found.truncatedBytes} are in the prompt`);
  }
  return {
    file: found?.file ?? null,
    text: found?.text ?? null,
    bytes: found?.bytes ?? 0,
    truncatedBytes: found?.truncatedBytes ?? 0,
    nested: nested.paths,
    ...(nested.omitted > 0 ? { nestedOmitted: nested.omitted } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

async function readInstructions(root: string, name: Candidate): Promise<Loaded> {
  try {
    await fs.lstat(path.join(root, name));
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { kind: 'missing' };
    return { kind: 'refused', reason: `cannot be read (${errorCode(error)})` };
  }
  const confined = await confine(root, name, { mustExist: true }).catch((error: unknown) => ({
    ok: false as const,
    reason: `cannot be resolved (${errorCode(error)})`,
  }));
  if (!confined.ok) return { kind: 'refused', reason: confined.reason };
  // O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOFOLLOW: the realpath'd name must not have been
  // swapped for a symlink since confine() looked.
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(confined.abs, flags);
  } catch (error) {
    return { kind: 'refused', reason: `cannot be opened (${errorCode(error)})` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { kind: 'refused', reason: 'not a regular file' };
    const want = Math.min(stat.size, INSTRUCTIONS_MAX_BYTES);
    const buffer = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await handle.read(buffer, got, want - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    const cut = stat.size > got ? utf8Cut(buffer, got) : got;
    const text = new TextDecoder('utf-8').decode(buffer.subarray(0, cut));
    return { kind: 'loaded', text, bytes: stat.size, truncatedBytes: Math.max(0, stat.size - cut) };
  } catch (error) {
    return { kind: 'refused', reason: `cannot be read (${errorCode(error)})` };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The largest length ≤ `length` that does not end inside a multi-byte UTF-8 sequence. */
export function utf8Cut(buffer: Uint8Array, length: number): number {
  let lead = length - 1;
  while (lead >= 0 && length - lead < 4 && (buffer[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return length;
  const byte = buffer[lead]!;
  const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return lead + size <= length ? length : lead;
}

type Nested = { paths: string[]; omitted: number } | { paths: string[]; omitted: number; warning: string };

/** Other AGENTS.md files, ignore rules honoured, to `maxDepth`; the NESTED_MAX smallest paths kept, sorted. */
async function findNested(root: string, rgPath: string, maxDepth: number, signal?: AbortSignal): Promise<Nested> {
  const paths: string[] = [];
  let total = 0;
  const walk = await walkFiles({
    rgPath,
    cwd: root,
    args: ['--max-depth', String(Math.max(1, Math.floor(maxDepth) || 1)), '-g', 'AGENTS.md'],
    signal,
    timeoutMs: NESTED_TIMEOUT_MS,
    onPath: (rel) => {
      if (rel === 'AGENTS.md' || path.posix.basename(rel) !== 'AGENTS.md') return;
      total++;
      paths.push(rel);
      // Keep memory bounded on a pathological repository: sort and trim whenever the list doubles.
      if (paths.length >= NESTED_MAX * 2) trim(paths);
    },
  });
  if (!walk.ok) return { paths: [], omitted: 0, warning: `nested AGENTS.md search skipped: ${walk.reason}` };
  trim(paths);
  return { paths, omitted: total - paths.length };
}

function trim(paths: string[]): void {
  paths.sort(compareUtf8);
  paths.length = Math.min(paths.length, NESTED_MAX);
}

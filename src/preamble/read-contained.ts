import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { confineSync, type Confined } from '../sandbox/paths.js';
import { errorCode } from './rg-walk.js';

/** A repository file read for the preamble: missing, refused (with why), or its first bytes. */
export type Contained =
  | { kind: 'missing' }
  | { kind: 'refused'; reason: string }
  | { kind: 'loaded'; text: string; bytes: number; truncatedBytes: number };

/**
 * Reads `rel` below `root` under read_file's containment rules: the path is confined component by component (no
 * symlink out of the root), only a regular file is read (a FIFO or a device is refused without blocking), and at most
 * `maxBytes`, cut on a UTF-8 character boundary. The repository is hostile: this never throws and never waits on it.
 * Synchronous inside: a preamble file is a few syscalls on a local disk (manifests are read by the dozen while
 * ripgrep walks), and a promise per syscall cost more CPU than the reads. A FIFO cannot block it (O_NONBLOCK).
 */
export async function readContained(root: string, rel: string, maxBytes: number): Promise<Contained> {
  try {
    lstatSync(path.join(root, rel));
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'refused', reason: `cannot be read (${errorCode(error)})` };
  }
  let confined: Confined;
  try {
    confined = confineSync(root, rel, { mustExist: true });
  } catch (error) {
    return { kind: 'refused', reason: `cannot be resolved (${errorCode(error)})` };
  }
  if (!confined.ok) return { kind: 'refused', reason: confined.reason };
  // O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOFOLLOW: the realpath'd name must not have been
  // swapped for a symlink since confine() looked.
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
  let fd: number;
  try {
    fd = openSync(confined.abs, flags);
  } catch (error) {
    return { kind: 'refused', reason: `cannot be opened (${errorCode(error)})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: 'refused', reason: 'not a regular file' };
    const want = Math.min(stat.size, maxBytes);
    const buffer = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const bytesRead = readSync(fd, buffer, got, want - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    const cut = stat.size > got ? utf8Cut(buffer, got) : got;
    const text = new TextDecoder('utf-8').decode(buffer.subarray(0, cut));
    return { kind: 'loaded', text, bytes: stat.size, truncatedBytes: Math.max(0, stat.size - cut) };
  } catch (error) {
    return { kind: 'refused', reason: `cannot be read (${errorCode(error)})` };
  } finally {
    closeSync(fd);
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

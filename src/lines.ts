import { createReadStream, readFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * A file up to this size is read in one synchronous call instead of streamed: a few syscalls and no thread-pool round
 * trips, which halves the CPU of checking 50 citations; the cap bounds how long one read can hold the event loop.
 */
const WHOLE_READ_MAX_BYTES = 64 * 1024;
/** Size of each streamed read (64 KiB, the size of a read stream's chunks). */
const STREAM_CHUNK_BYTES = 64 * 1024;

/** Lines in `text`; a last line without a newline counts, an empty text has none. The one rule the tools share. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let count = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) count += 1;
  return text.endsWith('\n') ? count : count + 1;
}

/** Lines in a file by the same rule, streamed: memory stays at one chunk whatever the size. */
export async function countFileLines(abs: string, signal?: AbortSignal): Promise<number> {
  let newlines = 0;
  let last = -1;
  for await (const chunk of createReadStream(abs, signal ? { signal } : {}) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines += 1;
    if (chunk.length > 0) last = chunk[chunk.length - 1] ?? -1;
  }
  return last === -1 || last === 10 ? newlines : newlines + 1;
}

/** Reads up to `length` bytes at `position` into the start of `buf`; 0 at the end of the file. */
type ReadAt = (buf: Buffer, length: number, position: number) => Promise<number> | number;

/** A line of the window as the scanner hands it over. */
export interface ScannedLine {
  lineNo: number;
  /** The line's first `keepBytes` bytes (its CR included when they reach the end); a copy, safe to keep. */
  head: Buffer;
  /** The line's full length in bytes, without its newline. */
  bytes: number;
  /** The line ends with a CR (a CRLF file). */
  cr: boolean;
}

/** What one pass over a file's lines does. */
interface LineScan {
  /** 1-based, inclusive: the lines handed to onLine. */
  from: number;
  to: number;
  /** Bytes of each window line kept (the rest is only measured): bounds memory on a file with one huge line. */
  keepBytes: number;
  chunkBytes: number;
  /** After the window, newlines are counted in at most this many more bytes (default: to the end of the file). */
  countScanBytes?: number;
  /** Each line of the window, in order; 'count' ends the window early (the rest of the file is only counted). */
  onLine(line: ScannedLine): 'count' | void;
  signal?: AbortSignal;
}

/** The file's line count (or a lower bound when counting stopped at countScanBytes). */
interface ScanResult {
  total: number;
  exact: boolean;
}

/**
 * The one streaming line-window reader (read_file's window and the citation check both use it): one pass in
 * chunkBytes reads; lines before `from` are only counted, lines of the window are handed over (at most keepBytes of
 * each), and after it newlines are counted for at most countScanBytes more. Memory: one chunk plus one line's head.
 */
export async function scanLines(readAt: ReadAt, scan: LineScan): Promise<ScanResult> {
  const countScanBytes = scan.countScanBytes ?? Infinity;
  const buf = Buffer.allocUnsafe(scan.chunkBytes);
  let phase: 'skip' | 'show' | 'count' = scan.from <= 1 && scan.to >= 1 ? 'show' : 'skip';
  const line = { no: 1, hasBytes: false, parts: [] as Buffer[], kept: 0, bytes: 0, lastByte: -1 };
  let pos = 0;
  let countFrom = 0;
  const endLine = (): void => {
    const head = Buffer.concat(line.parts, line.kept);
    const { no: lineNo, bytes, lastByte } = line;
    if (scan.onLine({ lineNo, head, bytes, cr: lastByte === 13 }) === 'count') {
      phase = 'count';
      countFrom = pos;
    }
  };
  for (;;) {
    scan.signal?.throwIfAborted();
    const bytesRead = await readAt(buf, scan.chunkBytes, pos);
    if (bytesRead === 0) break;
    pos += bytesRead;
    const view = buf.subarray(0, bytesRead);
    for (let i = 0; i < bytesRead; ) {
      const nl = view.indexOf(10, i);
      const stop = nl === -1 ? bytesRead : nl;
      if (stop > i) {
        line.hasBytes = true;
        // Stryker disable next-line UnaryOperator: never used (stop > i ≥ 0 so the byte exists); +1 is not a CR either.
        line.lastByte = view[stop - 1] ?? -1;
      }
      if (phase === 'show') {
        line.bytes += stop - i;
        const take = Math.min(stop - i, scan.keepBytes - line.kept);
        if (take > 0) {
          // Copied: `buf` is reused for the next chunk.
          line.parts.push(Buffer.from(view.subarray(i, i + take)));
          line.kept += take;
        }
      }
      if (nl === -1) break;
      if (phase === 'show') endLine();
      nextLine(line);
      i = nl + 1;
      // line.no passes `from` once (never when it is 1), before any line was shown: the phase is still 'skip'.
      if (line.no === scan.from && scan.from <= scan.to) phase = 'show';
      if (phase === 'show' && line.no > scan.to) {
        phase = 'count';
        countFrom = pos;
      }
    }
    if (phase === 'count' && pos - countFrom >= countScanBytes) {
      return { total: line.no - 1 + (line.hasBytes ? 1 : 0), exact: (await readAt(buf, 1, pos)) === 0 };
    }
  }
  if (phase === 'show' && line.hasBytes) endLine();
  return { total: line.no - 1 + (line.hasBytes ? 1 : 0), exact: true };
}

/** The scanner's state for the line after a newline. */
function nextLine(line: { no: number; hasBytes: boolean; parts: Buffer[]; kept: number; bytes: number; lastByte: number }): void {
  line.no += 1;
  line.hasBytes = false;
  if (line.parts.length > 0) line.parts = [];
  line.kept = 0;
  line.bytes = 0;
  // Stryker disable next-line UnaryOperator: lastByte is only compared with 13 (CR); -1 and +1 both mean "not a CR".
  line.lastByte = -1;
}

/** A ReadAt over an open file. */
export function handleReader(handle: FileHandle): ReadAt {
  return async (buf, length, position) => (await handle.read(buf, 0, length, position)).bytesRead;
}

/** A ReadAt over bytes already in memory. */
function bufferReader(data: Buffer): ReadAt {
  return (buf, length, position) => data.copy(buf, 0, Math.min(position, data.length), Math.min(position + length, data.length));
}

/** A window of a file's lines, and its line count by the same rule, in one pass. */
interface LineWindow {
  lineCount: number;
  /** Lines `from`…`to` (1-based, inclusive, those that exist), without their newline; each cut at `maxLineChars`. */
  lines: string[];
}

/**
 * Reads `abs` once with scanLines: counts its lines (as countLines/countFileLines do) and keeps lines `from`…`to`
 * (their CR kept: the citation check compares them as the file has them). A file larger than WHOLE_READ_MAX_BYTES
 * (or of unknown size) is streamed.
 */
export async function readLineWindow(
  abs: string,
  from: number,
  to: number,
  opts: { size?: number; maxLineChars?: number } = {},
): Promise<LineWindow> {
  const maxLineChars = opts.maxLineChars ?? 2_000;
  const lines: string[] = [];
  const scan: LineScan = {
    from,
    to,
    // Enough bytes for more than maxLineChars characters of any width.
    keepBytes: maxLineChars * 4 + 4,
    chunkBytes: STREAM_CHUNK_BYTES,
    onLine({ head }) {
      const text = head.toString('utf8');
      lines.push(text.length > maxLineChars ? text.slice(0, maxLineChars) : text);
    },
  };
  // Small files (the size comes from the caller's stat): see WHOLE_READ_MAX_BYTES.
  if (opts.size !== undefined && opts.size <= WHOLE_READ_MAX_BYTES) {
    const data = readFileSync(abs);
    // One chunk the size of the file: one copy, no second read.
    const { total } = await scanLines(bufferReader(data), { ...scan, chunkBytes: data.length + 1 });
    return { lineCount: total, lines };
  }
  const handle = await open(abs, 'r');
  try {
    const { total } = await scanLines(handleReader(handle), scan);
    return { lineCount: total, lines };
  } finally {
    await handle.close();
  }
}

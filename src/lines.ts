import { createReadStream, readFileSync } from 'node:fs';

/**
 * A file up to this size is read in one synchronous call instead of streamed: a few syscalls and no thread-pool round
 * trips, which halves the CPU of checking 50 citations; the cap bounds how long one read can hold the event loop.
 */
const WHOLE_READ_MAX_BYTES = 64 * 1024;

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

/** A window of a file's lines, and its line count by the same rule, in one streamed pass. */
export interface LineWindow {
  lineCount: number;
  /** Lines `from`…`to` (1-based, inclusive, those that exist), without their newline; each cut at `maxLineChars`. */
  lines: string[];
}

/**
 * Reads `abs` once: counts its lines (as countLines/countFileLines do) and keeps lines `from`…`to`. A file larger than
 * WHOLE_READ_MAX_BYTES (or of unknown size) is streamed: memory is one chunk plus the window, whatever its size.
 */
export async function readLineWindow(abs: string, from: number, to: number, opts: { size?: number; maxLineChars?: number } = {}): Promise<LineWindow> {
  const maxLineChars = opts.maxLineChars ?? 2_000;
  // Small files (the size comes from the caller's stat): see WHOLE_READ_MAX_BYTES.
  if (opts.size !== undefined && opts.size <= WHOLE_READ_MAX_BYTES) {
    const text = readFileSync(abs, 'utf8');
    const all = text.split('\n');
    const lines = all.slice(from - 1, Math.min(to, countLines(text))).map((l) => (l.length > maxLineChars ? l.slice(0, maxLineChars) : l));
    return { lineCount: countLines(text), lines };
  }
  const lines: string[] = [];
  let line = 1;
  let partial = '';
  let last = -1;
  let newlines = 0;
  const keep = (text: string): void => {
    if (line >= from && line <= to) lines.push(text.length > maxLineChars ? text.slice(0, maxLineChars) : text);
  };
  for await (const chunk of createReadStream(abs) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
      if (line >= from && line <= to) keep(partial + chunk.toString('utf8', start, i));
      partial = '';
      start = i + 1;
      line += 1;
      newlines += 1;
    }
    if (line >= from && line <= to && partial.length < maxLineChars) partial += chunk.toString('utf8', start);
    if (chunk.length > 0) last = chunk[chunk.length - 1] ?? -1;
  }
  const lineCount = last === -1 || last === 10 ? newlines : newlines + 1;
  if (lineCount > newlines) keep(partial);
  return { lineCount, lines };
}

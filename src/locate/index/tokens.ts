/**
 * What the index stores of one file's content: every maximal run of ASCII word characters (`[A-Za-z0-9_]`, the
 * characters rg's `\b` separates with `--no-unicode`), lower-cased, with the line of each occurrence. A literal term of
 * word characters can only match inside one run, so the runs and their lines are all the search needs to answer it
 * exactly as rg does (see match.ts).
 */

/** rg's `-m`: matching lines read per file. A run's occurrences are kept on its first this-many distinct lines. */
export const MAX_LINES_PER_FILE = 60;
/** rg's `--max-filesize 1M`: larger files are not searched (rg skips a file whose size is above it). */
export const MAX_FILE_BYTES = 1024 * 1024;

const WORD = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  WORD[c] = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 ? 1 : 0;
}

/** A run's occurrence lines in one file (ascending, a line repeated per occurrence on it) and its distinct lines. */
export interface Occurrences {
  lines: number[];
  distinct: number;
}

/** Runs of `bytes` → their occurrence lines, each run's kept to its first MAX_LINES_PER_FILE distinct lines. */
export function tokenize(bytes: Buffer): Map<string, Occurrences> {
  const out = new Map<string, Occurrences>();
  // Decoded once and cut, not decoded per run: most runs are lower case already and need no second string. A long cut
  // may share the text's memory, so a run kept past this file is copied (SegmentBuilder's word table does).
  const text = bytes.toString('latin1');
  const n = bytes.length;
  let line = 1;
  let i = 0;
  while (i < n) {
    const c = bytes[i]!;
    if (c === 10) {
      line += 1;
      i += 1;
      continue;
    }
    if (WORD[c] === 0) {
      i += 1;
      continue;
    }
    const start = i;
    let upper = false;
    for (; i < n; i += 1) {
      const d = bytes[i]!;
      if (WORD[d] === 0) break;
      if (d >= 65 && d <= 90) upper = true;
    }
    const word = upper ? text.slice(start, i).toLowerCase() : text.slice(start, i);
    const seen = out.get(word);
    if (seen === undefined) out.set(word, { lines: [line], distinct: 1 });
    else if (seen.lines[seen.lines.length - 1] === line) seen.lines.push(line);
    else if (seen.distinct < MAX_LINES_PER_FILE) {
      seen.lines.push(line);
      seen.distinct += 1;
    }
  }
  return out;
}

/** Whether rg treats the content as binary and reports nothing from it: it holds a NUL byte. */
export function isBinary(bytes: Buffer): boolean {
  return bytes.includes(0);
}

import { crc32 } from 'node:zlib';
import type { Occurrences } from './tokens.js';

/**
 * One immutable file of the index: a base (every file of the tree) or a delta (the files changed since its base, and
 * the base's rows they supersede). Little-endian binary, every section length-prefixed and padded to 8 bytes:
 *
 *   header (64 B): magic, FORMAT, kind, id, base id, written-at ms, files, words, total length, CRC-32 of the body,
 *                  CRC-32 of the header
 *   root (UTF-8) · paths (UTF-8, NUL-separated) · stats (f64 × 4 per file: size, mtime, ctime, inode) ·
 *   hashes (SHA-1, 20 B per file) · states (1 B per file) · vocabulary (the runs, `\n`-separated) ·
 *   word starts (u32 per word + 1) · posting starts (u32 per word + 1) · postings · tombstones (u32 base rows) ·
 *   ignored directories (UTF-8, NUL-separated: what rg's walk skipped as ignored, pruned by the freshness check)
 *
 * A word's postings: for each file holding it (ascending): varint file-row delta, varint occurrences, then one varint
 * line delta per occurrence (0: the same line again). Stored files are untrusted input: decode checks the lengths,
 * both checksums, the version and every offset, and the postings reader checks each varint as it goes.
 */

const MAGIC = 'SPLKIDX\0';
/** Bumped whenever the layout or the meaning of a run changes. */
export const FORMAT = 2;
const HEADER_BYTES = 64;
/** An index larger than this is not written (the search then runs rg per question, as without an index). */
export const MAX_INDEX_BYTES = 512 * 1024 * 1024;
/** Longest path kept, in bytes (PATH_MAX). */
const MAX_PATH_BYTES = 4096;
/** Ignored directories kept per segment (each is three arguments of the freshness check's find). */
export const MAX_IGNORED_DIRS = 256;
const SECTIONS = 11;

/** Why a file has no runs: read and indexed, above rg's size cap, binary (a NUL byte), or not read (see store.ts). */
export const enum FileState {
  Indexed = 0,
  Large = 1,
  Binary = 2,
  Refused = 3,
}

export interface FileRow {
  rel: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  /** SHA-1 of the bytes read (20 zero bytes when the file was not read). */
  hash: Uint8Array;
  state: FileState;
}

export interface Segment {
  kind: 'base' | 'delta';
  id: number;
  baseId: number;
  root: string;
  writtenAtMs: number;
  paths: string[];
  stats: Float64Array;
  hashes: Uint8Array;
  states: Uint8Array;
  vocab: string;
  wordStarts: Uint32Array;
  postingStarts: Uint32Array;
  postings: Uint8Array;
  tombstones: Uint32Array;
  /** Directories (relative) rg skipped whole as ignored when this segment's listing was walked. */
  ignoredDirs: string[];
}

/** What a segment says of itself besides its files (see Segment). */
export interface SegmentMeta {
  kind: 'base' | 'delta';
  id: number;
  baseId: number;
  root: string;
  writtenAtMs: number;
  tombstones: readonly number[];
  ignoredDirs: readonly string[];
}

/** Thrown by decode and the postings reader: the caller drops the index and rebuilds it. */
export class CorruptIndex extends Error {}

/**
 * What a SegmentBuilder has collected, as plain data (typed arrays and strings, so a worker thread can post it): its
 * rows as columns, its words in the order first seen, and its file-ordered stream of word records.
 */
export interface BuiltPart {
  rels: string[];
  stats: Float64Array;
  hashes: Uint8Array;
  states: Uint8Array;
  words: string[];
  stream: Uint8Array;
  /** Per word: its posting bytes in the part (the first record's file distance counted from row 0), first and last row. */
  wordBytes: Uint32Array;
  firstFile: Int32Array;
  lastFile: Int32Array;
}

/** Collects files and their runs, then lays the segment out (postings grouped by word). */
export class SegmentBuilder {
  readonly #words = new Map<string, number>();
  readonly #wordList: string[] = [];
  #stream = new Bytes();
  #wordBytes: Uint32Array = new Uint32Array(1024);
  #lastFile: Int32Array = new Int32Array(1024);
  /** Each word's first row (-1: none yet), for part(); not kept by absorb(), since a builder that absorbed is no part. */
  #firstFile: Int32Array = new Int32Array(1024).fill(-1);
  /**
   * The streams before #stream, in file order: this builder's own up to an absorbed part (ids null: already this
   * builder's), and each part's with its word ids mapped to this builder's.
   */
  readonly #pieces: { stream: Uint8Array; files: number; ids: Uint32Array | null }[] = [];
  /** Files whose records are in #pieces. */
  #piecedFiles = 0;
  /** The rows as columns (a row object per file held 200k small arrays at once). */
  readonly #rels: string[] = [];
  #stats = new Float64Array(4 * 1024);
  #hashes = new Uint8Array(20 * 1024);
  #states = new Uint8Array(1024);

  /** Adds one file's row and runs (null: a file without content in the index). */
  add(row: FileRow, runs: Map<string, Occurrences> | null): void {
    const file = this.#row(row.rel);
    this.#stats.set([row.size, row.mtimeMs, row.ctimeMs, row.ino], file * 4);
    this.#hashes.set(row.hash.subarray(0, 20), file * 20);
    this.#states[file] = row.state;
    for (const [word, occ] of runs ?? []) {
      const id = this.#wordId(word);
      this.#stream.varint(id + 1);
      const payload = this.#stream.length;
      this.#stream.varint(occ.lines.length);
      let previous = 0;
      for (const line of occ.lines) {
        this.#stream.varint(line - previous);
        previous = line;
      }
      this.#counted(file, id, this.#stream.length - payload);
    }
    this.#stream.varint(0);
  }

  /** What was collected, for absorb() in another builder (this one is not used after). */
  part(): BuiltPart {
    if (this.#pieces.length > 0) throw new Error('a builder that absorbed parts is not a part');
    const n = this.#rels.length;
    const nWords = this.#wordList.length;
    return {
      rels: this.#rels,
      stats: this.#stats.slice(0, n * 4),
      hashes: this.#hashes.slice(0, n * 20),
      states: this.#states.slice(0, n),
      words: this.#wordList,
      stream: this.#stream.view(),
      wordBytes: this.#wordBytes.slice(0, nWords),
      firstFile: this.#firstFile.slice(0, nWords),
      lastFile: this.#lastFile.slice(0, nWords),
    };
  }

  /**
   * Appends another builder's files after this one's, as if each had been added here in its order. Its stream is kept
   * as it is, with its word ids mapped to this builder's (a new word the next free id, in the order the other first
   * saw them, which is the order add() would have given them), and its per-word byte counts are carried over with only
   * each word's first record's file distance changed; finish() lays it out in its place. So the segment is byte for
   * byte the one a single builder makes (test/locate/index-stream.test.ts). Throws CorruptIndex when the part does not
   * hold together (its stream itself is checked as finish() reads it).
   */
  absorb(part: BuiltPart): void {
    const n = part.rels.length;
    const nWords = part.words.length;
    const lengths = [part.stats.length === n * 4, part.hashes.length === n * 20, part.states.length === n];
    const words = [part.wordBytes.length, part.firstFile.length, part.lastFile.length].every((l) => l === nWords);
    if (!lengths.every(Boolean) || !words) throw new CorruptIndex('a part with columns of other lengths');
    this.#endPiece();
    const offset = this.#rels.length;
    for (let f = 0; f < n; f++) this.#row(part.rels[f]!);
    this.#stats.set(part.stats, offset * 4);
    this.#hashes.set(part.hashes, offset * 20);
    this.#states.set(part.states, offset);
    const ids = new Uint32Array(nWords);
    for (let w = 0; w < nWords; w++) {
      const first = part.firstFile[w]!;
      const last = part.lastFile[w]!;
      if (first < 0 || first > last || last >= n || part.wordBytes[w]! < varintBytes(first)) throw new CorruptIndex('a part with a word outside its files');
      const id = this.#wordId(part.words[w]!);
      ids[w] = id;
      // In the part the first record's distance was from row 0; here it is from the word's last row before it.
      this.#wordBytes[id]! += part.wordBytes[w]! - varintBytes(first) + varintBytes(offset + first - this.#lastFile[id]!);
      this.#lastFile[id] = offset + last;
    }
    this.#pieces.push({ stream: part.stream, files: n, ids });
    this.#piecedFiles = this.#rels.length;
  }

  /** Closes the stream of the files added since the last piece, if any: later files go after the part absorbed next. */
  #endPiece(): void {
    const files = this.#rels.length - this.#piecedFiles;
    if (files === 0) return;
    this.#pieces.push({ stream: this.#stream.view(), files, ids: null });
    this.#piecedFiles = this.#rels.length;
    this.#stream = new Bytes();
  }

  /** A new row for `rel`: its number. */
  #row(rel: string): number {
    const file = this.#rels.length;
    this.#rels.push(rel);
    if (file >= this.#states.length) this.#growRows();
    return file;
  }

  /** The posting bytes `file` adds to word `id`: its payload and its row's distance from the word's previous file. */
  #counted(file: number, id: number, payloadBytes: number): void {
    if (this.#firstFile[id] === -1) this.#firstFile[id] = file;
    const delta = file - this.#lastFile[id]!;
    this.#lastFile[id] = file;
    this.#wordBytes[id]! += varintBytes(delta) + payloadBytes;
  }

  get files(): number {
    return this.#rels.length;
  }

  #growRows(): void {
    const stats = new Float64Array(this.#stats.length * 2);
    stats.set(this.#stats);
    this.#stats = stats;
    const hashes = new Uint8Array(this.#hashes.length * 2);
    hashes.set(this.#hashes);
    this.#hashes = hashes;
    const states = new Uint8Array(this.#states.length * 2);
    states.set(this.#states);
    this.#states = states;
  }

  /** The segment's bytes, or null when they would pass MAX_INDEX_BYTES. */
  finish(meta: SegmentMeta): Buffer | null {
    const nWords = this.#wordList.length;
    const postingStarts = new Uint32Array(nWords + 1);
    let total = 0;
    for (let w = 0; w < nWords; w++) {
      postingStarts[w] = total;
      total += this.#wordBytes[w]!;
      if (total > MAX_INDEX_BYTES) return null;
    }
    postingStarts[nWords] = total;
    const wordStarts = new Uint32Array(nWords + 1);
    let at = 0;
    for (let w = 0; w < nWords; w++) {
      wordStarts[w] = at;
      at += this.#wordList[w]!.length + 1;
    }
    wordStarts[nWords] = at;
    const n = this.#rels.length;
    // The paths and the words are written string by string: joined first, they were two more large copies at the peak.
    const sections: Section[] = [
      Buffer.from(meta.root, 'utf8'),
      joined(this.#rels, '\0', 'utf8', false),
      bytesOf(this.#stats.subarray(0, n * 4)),
      this.#hashes.subarray(0, n * 20),
      this.#states.subarray(0, n),
      joined(this.#wordList, '\n', 'latin1', true),
      bytesOf(wordStarts),
      bytesOf(postingStarts),
      total,
      bytesOf(Uint32Array.from(meta.tombstones)),
      Buffer.from(meta.ignoredDirs.join('\0'), 'utf8'),
    ];
    const bodyLength = sections.reduce<number>((sum, s) => sum + 8 + pad8(lengthOf(s)), 0);
    if (HEADER_BYTES + bodyLength > MAX_INDEX_BYTES) return null;
    const out = Buffer.alloc(HEADER_BYTES + bodyLength);
    let off = HEADER_BYTES;
    for (const s of sections) {
      const length = lengthOf(s);
      out.writeUInt32LE(length, off);
      // The postings are laid out in place, then the file-ordered stream is let go: one copy of them at a time.
      if (typeof s === 'number') this.#scatter(postingStarts, out.subarray(off + 8, off + 8 + length));
      else if (s instanceof Uint8Array) out.set(s, off + 8);
      else if (!writeJoined(out, off + 8, s)) return null;
      off += 8 + pad8(length);
    }
    this.#stream = new Bytes(16);
    this.#pieces.length = 0;
    out.write(MAGIC, 0, 'latin1');
    out.writeUInt32LE(FORMAT, 8);
    out.writeUInt32LE(meta.kind === 'base' ? 0 : 1, 12);
    out.writeUInt32LE(meta.id >>> 0, 16);
    out.writeUInt32LE(meta.baseId >>> 0, 20);
    out.writeDoubleLE(meta.writtenAtMs, 24);
    out.writeUInt32LE(n, 32);
    out.writeUInt32LE(nWords, 36);
    out.writeUInt32LE(out.length, 40);
    out.writeUInt32LE(crc32(out.subarray(HEADER_BYTES)), 44);
    out.writeUInt32LE(crc32(out.subarray(0, 48)), 48);
    return out;
  }

  #wordId(word: string): number {
    const known = this.#words.get(word);
    if (known !== undefined) return known;
    const id = this.#wordList.length;
    // A copy: the tokenizer's run may be a cut of its whole file's text, which the table would otherwise keep.
    const own = Buffer.from(word, 'latin1').toString('latin1');
    this.#words.set(own, id);
    this.#wordList.push(own);
    if (id >= this.#wordBytes.length) {
      this.#wordBytes = grow32(this.#wordBytes);
      const last = new Int32Array(this.#lastFile.length * 2);
      last.set(this.#lastFile);
      this.#lastFile = last;
      const first = new Int32Array(this.#firstFile.length * 2).fill(-1);
      first.set(this.#firstFile);
      this.#firstFile = first;
    }
    this.#lastFile[id] = 0;
    return id;
  }

  /** Moves each record of the file-ordered streams to its word's place, with the file-row delta in front. */
  #scatter(postingStarts: Uint32Array, out: Uint8Array): void {
    const cursor = postingStarts.slice();
    const last = new Int32Array(this.#wordList.length);
    this.#endPiece();
    let file = 0;
    for (const { stream, files, ids } of this.#pieces) {
      let at = 0;
      for (const end = file + files; file < end; file++) {
        for (;;) {
          const [tag, afterTag] = readVarint(stream, at);
          at = afterTag;
          if (tag === 0) break;
          const id = ids === null ? tag - 1 : ids[tag - 1];
          if (id === undefined || id >= last.length) throw new CorruptIndex('a record naming a word the part does not hold');
          const payloadStart = at;
          const [count, afterCount] = readVarint(stream, at);
          at = afterCount;
          for (let k = 0; k < count; k++) at = readVarint(stream, at)[1];
          const written = writeVarintAt(out, cursor[id]!, file - last[id]!);
          last[id] = file;
          if (written + at - payloadStart > postingStarts[id + 1]!) throw new CorruptIndex('a record past its word\'s postings');
          out.set(stream.subarray(payloadStart, at), written);
          cursor[id] = written + at - payloadStart;
        }
      }
      if (at !== stream.length) throw new CorruptIndex('a stream with bytes past its files');
    }
  }
}

/** Reads and checks a segment; throws CorruptIndex for anything but a well-formed segment of this FORMAT. */
export function decode(buf: Buffer): Segment {
  if (buf.length < HEADER_BYTES || buf.toString('latin1', 0, 8) !== MAGIC) throw new CorruptIndex('not an index file');
  if (buf.readUInt32LE(48) !== crc32(buf.subarray(0, 48))) throw new CorruptIndex('header checksum');
  if (buf.readUInt32LE(8) !== FORMAT) throw new CorruptIndex('another format version');
  const kindCode = buf.readUInt32LE(12);
  if (kindCode > 1) throw new CorruptIndex('unknown kind');
  if (buf.readUInt32LE(40) !== buf.length) throw new CorruptIndex('truncated or extended');
  if (buf.readUInt32LE(44) !== crc32(buf.subarray(HEADER_BYTES))) throw new CorruptIndex('body checksum');
  const n = buf.readUInt32LE(32);
  const nWords = buf.readUInt32LE(36);
  const writtenAtMs = buf.readDoubleLE(24);
  if (!Number.isFinite(writtenAtMs)) throw new CorruptIndex('written-at time');
  const sections: Buffer[] = [];
  let off = HEADER_BYTES;
  for (let i = 0; i < SECTIONS; i++) {
    if (off + 8 > buf.length) throw new CorruptIndex('section header past the end');
    const len = buf.readUInt32LE(off);
    if (off + 8 + len > buf.length) throw new CorruptIndex('section past the end');
    sections.push(buf.subarray(off + 8, off + 8 + len));
    off += 8 + pad8(len);
  }
  if (off !== buf.length) throw new CorruptIndex('trailing bytes');
  const [root, paths, stats, hashes, states, vocab, wordStarts, postingStarts, postings, tombstones, ignored] = sections as [
    Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer,
  ];
  const rels = n === 0 ? [] : paths.toString('utf8').split('\0');
  if (rels.length !== n || rels.some((r) => r === '' || Buffer.byteLength(r) > MAX_PATH_BYTES)) throw new CorruptIndex('paths');
  if (stats.length !== n * 32 || hashes.length !== n * 20 || states.length !== n) throw new CorruptIndex('file table');
  if (states.some((s) => s > FileState.Refused)) throw new CorruptIndex('file state');
  if (wordStarts.length !== (nWords + 1) * 4 || postingStarts.length !== (nWords + 1) * 4) throw new CorruptIndex('word table');
  if (tombstones.length % 4 !== 0) throw new CorruptIndex('tombstones');
  const ignoredDirs = ignored.length === 0 ? [] : ignored.toString('utf8').split('\0');
  if (ignoredDirs.length > MAX_IGNORED_DIRS || !ignoredDirs.every(isRelativeDir)) throw new CorruptIndex('ignored directories');
  const vocabText = vocab.toString('latin1');
  if (/[^a-z0-9_\n]/.test(vocabText)) throw new CorruptIndex('vocabulary');
  const seg: Segment = {
    kind: kindCode === 0 ? 'base' : 'delta',
    id: buf.readUInt32LE(16),
    baseId: buf.readUInt32LE(20),
    root: root.toString('utf8'),
    writtenAtMs,
    paths: rels,
    stats: float64s(stats),
    hashes,
    states,
    vocab: vocabText,
    wordStarts: uint32s(wordStarts),
    postingStarts: uint32s(postingStarts),
    postings,
    tombstones: uint32s(tombstones),
    ignoredDirs,
  };
  checkMonotonic(seg.wordStarts, vocabText.length, 'word starts');
  checkMonotonic(seg.postingStarts, postings.length, 'posting starts');
  for (let w = 0; w < nWords; w++) {
    const end = seg.wordStarts[w + 1]! - 1;
    if (end <= seg.wordStarts[w]! || vocabText.charCodeAt(end) !== 10) throw new CorruptIndex('vocabulary boundaries');
  }
  return seg;
}

/** A path below the root as rg lists it: relative, no `.` or `..` step, no empty step, no control character. */
export function isRelativeDir(rel: string): boolean {
  return Buffer.byteLength(rel) <= MAX_PATH_BYTES && !/[\x00-\x1f]/.test(rel) && rel.split('/').every((step) => step !== '' && step !== '.' && step !== '..');
}

/** Calls `visit(fileRow, lines)` for each file holding word `w` of `seg`; throws CorruptIndex on a malformed posting. */
export function forEachPosting(seg: Segment, w: number, visit: (file: number, lines: readonly number[]) => void): void {
  const end = seg.postingStarts[w + 1]!;
  const bytes = seg.postings;
  let at = seg.postingStarts[w]!;
  let file = 0;
  let first = true;
  while (at < end) {
    const [delta, afterDelta] = readVarint(bytes, at, end);
    const [count, afterCount] = readVarint(bytes, afterDelta, end);
    at = afterCount;
    file += delta;
    if ((!first && delta === 0) || file >= seg.paths.length || count === 0 || count > MAX_OCCURRENCES) throw new CorruptIndex('posting');
    first = false;
    const lines: number[] = [];
    let line = 0;
    for (let k = 0; k < count; k++) {
      const [step, next] = readVarint(bytes, at, end);
      at = next;
      line += step;
      if (line < 1 || (k === 0 && step === 0)) throw new CorruptIndex('posting line');
      lines.push(line);
    }
    visit(file, lines);
  }
}

/** Occurrences one posting may hold: a 1 MiB file has at most half a million runs. */
const MAX_OCCURRENCES = 1024 * 1024;

/** The word spanning character `at` of the vocabulary (binary search over the starts). */
export function wordAt(seg: Segment, at: number): number {
  let lo = 0;
  let hi = seg.wordStarts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (seg.wordStarts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function checkMonotonic(starts: Uint32Array, limit: number, what: string): void {
  if (starts[0] !== 0 || starts[starts.length - 1] !== limit) throw new CorruptIndex(what);
  for (let i = 1; i < starts.length; i++) if (starts[i]! < starts[i - 1]!) throw new CorruptIndex(what);
}

/**
 * A section as numbers, viewed in place when the segment's buffer puts it on an element boundary (every section starts
 * at a multiple of 8 from the segment's start, and a segment read or built whole has a buffer of its own), else
 * copied. In place, a 200k-file segment's tables are not held twice (about 16 MiB of the build's and a question's peak).
 */
function float64s(b: Buffer): Float64Array {
  return b.byteOffset % 8 === 0 ? new Float64Array(b.buffer, b.byteOffset, b.length / 8) : new Float64Array(copied(b));
}

function uint32s(b: Buffer): Uint32Array {
  return b.byteOffset % 4 === 0 ? new Uint32Array(b.buffer, b.byteOffset, b.length / 4) : new Uint32Array(copied(b));
}

function copied(b: Buffer): ArrayBuffer {
  const out = new ArrayBuffer(b.length);
  new Uint8Array(out).set(b);
  return out;
}

function bytesOf(a: Float64Array | Uint32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A section as finish lays it out: bytes, the postings' length (scattered in place), or strings to be joined. */
type Section = Uint8Array | number | Joined;

function lengthOf(s: Section): number {
  return typeof s === 'number' ? s : s instanceof Uint8Array ? s.length : s.bytes;
}

/** Strings to be written joined by `separator` (after the last one too when `trailing`), and their byte length. */
interface Joined {
  strings: readonly string[];
  separator: string;
  encoding: 'utf8' | 'latin1';
  trailing: boolean;
  bytes: number;
}

function joined(strings: readonly string[], separator: string, encoding: Joined['encoding'], trailing: boolean): Joined {
  let bytes = 0;
  for (const s of strings) bytes += Buffer.byteLength(s, encoding);
  const separators = strings.length === 0 ? 0 : trailing ? strings.length : strings.length - 1;
  return { strings, separator, encoding, trailing, bytes: bytes + separators * Buffer.byteLength(separator, encoding) };
}

/**
 * Writes `j` at `at`, as Buffer.from(strings.join(separator) + (trailing ? separator : ''), encoding) would hold it;
 * false if the bytes written are not the bytes counted (then no segment is written).
 */
function writeJoined(out: Buffer, at: number, j: Joined): boolean {
  const end = at + j.bytes;
  j.strings.forEach((s, i) => {
    at += out.write(s, at, j.encoding);
    if (j.trailing || i < j.strings.length - 1) at += out.write(j.separator, at, j.encoding);
  });
  return at === end;
}

function pad8(n: number): number {
  return (n + 7) & ~7;
}

function grow32(a: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length * 2);
  out.set(a);
  return out;
}

function varintBytes(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n += 1;
  }
  return n;
}

/** Writes `v` as a varint at `at`; returns the offset after it. */
function writeVarintAt(buf: Uint8Array, at: number, v: number): number {
  let rest = v;
  while (rest >= 0x80) {
    buf[at++] = (rest & 0x7f) | 0x80;
    rest = Math.floor(rest / 128);
  }
  buf[at++] = rest;
  return at;
}

/** [value, next offset]; throws CorruptIndex past `end` or beyond 32 bits. */
function readVarint(bytes: Uint8Array, at: number, end = bytes.length): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 5; i++) {
    if (at >= end) throw new CorruptIndex('varint past the end');
    const b = bytes[at++]!;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return [value, at];
    scale *= 128;
  }
  throw new CorruptIndex('varint too long');
}

/** A growable byte buffer. */
class Bytes {
  #buf: Uint8Array;
  length = 0;

  constructor(capacity = 1 << 16) {
    this.#buf = new Uint8Array(Math.max(capacity, 16));
  }

  varint(v: number): void {
    this.#ensure(this.length + 5);
    this.length = writeVarintAt(this.#buf, this.length, v);
  }

  view(): Uint8Array {
    return this.#buf.subarray(0, this.length);
  }

  #ensure(n: number): void {
    if (n <= this.#buf.length) return;
    // By half again, not double: at 200k files the stream is tens of MiB and doubling left most of it empty.
    let size = Math.ceil(this.#buf.length * 1.5);
    while (size < n) size = Math.ceil(size * 1.5);
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.length));
    this.#buf = next;
  }
}

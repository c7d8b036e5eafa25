import { createHash, randomInt } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { isInside } from '../../sandbox/paths.js';
import { execCapped } from '../../sandbox/exec.js';
import type { Term } from '../query.js';
import { MAX_OUTPUT_BYTES, stripDotSlash, WALK_FLAGS, type SearchResult } from '../search.js';
import { indexable, matchIndex, type Part } from './match.js';
import { ignoredDirsOf, recentFiles } from './fresh.js';
import { readFile, lstatOrNull, type ReadFile } from './read.js';
import { CorruptIndex, decode, FileState, MAX_INDEX_BYTES, SegmentBuilder, type BuiltPart, type Segment, type SegmentMeta } from './segment.js';

/**
 * The persistent index of a repository's content, under `$XDG_CACHE_HOME/spelunk/index/<hash of the root>/` (else
 * `~/.cache/spelunk/index/…`): `base.six` (every listed file) and `delta.six` (the files changed since). A warm
 * question first asks find which entries changed since the newest segment was written (fresh.ts): when no directory
 * or ignore file did, the listing is the segments' own and only the recently changed files are checked. Otherwise it
 * lists the files as the search does (rg --files, the same walk flags), lstats them against the stored size, mtime,
 * ctime and inode, re-reads what differs (and what was modified in the same second the segment was written: its
 * stored stat cannot tell a later edit, so its content hash decides), and writes a new delta; past COMPACT_FILES the
 * delta is folded into a new base. A segment that fails to decode (see segment.ts) is rebuilt, never trusted.
 */

/** A tree with more listed files than this is searched with rg per question, without an index. */
export const MAX_INDEXED_FILES = 500_000;
/** A delta holding more files than this (or an eighth of the base) is folded into a new base. */
const COMPACT_FILES = 2_000;
/** Timestamps are compared at this granularity for the racy check (coarse file systems keep whole seconds). */
const RACY_MS = 1_000;
const SEGMENT_LIMIT = MAX_INDEX_BYTES;
/**
 * Files read (or, in the full check, stat'ed ×8) between two returns to the event loop: a cold build of 100k files
 * would otherwise hold the MCP server's loop for seconds. Counted in files, not time, so the work never depends on load.
 */
const BATCH_FILES = 128;

/** Returns to the event loop once (what is queued meanwhile, such as another MCP request, runs first). */
type Pause = () => Promise<void>;
const yieldToLoop: Pause = () => new Promise((resolve) => setImmediate(resolve));
/**
 * A cold build's batches (ListedBuild): every other one is read by a worker thread, which is started by the first
 * complete second batch; its start (a thread, the worker's own small bundle) costs about what 2,000 files cost.
 */
const SHARE_FILES = 2048;
/** The worker thread's heap bound: it holds a batch at a time (a whole cold command at 200k files peaks near 350 MiB). */
const WORKER_HEAP_MIB = 1024;
/** The cold build's worker thread, beside the bundle (dist/build-worker.cjs); null when running from src/ (the tests pass dist's). */
const BUILD_WORKER = besideBundle('build-worker.cjs');

/** A file beside this module's bundle, or null when there is none there (a run from src/). */
function besideBundle(name: string): string | null {
  const file = fileURLToPath(new URL(`./${name}`, import.meta.url));
  return existsSync(file) ? file : null;
}

/** `$XDG_CACHE_HOME/spelunk/index`, else `$HOME/.cache/spelunk/index`; null when neither is an absolute path. */
export function indexCacheDir(env: Readonly<Record<string, string | undefined>>): string | null {
  const base = env.XDG_CACHE_HOME || (env.HOME ? path.join(env.HOME, '.cache') : null);
  if (!base || !path.isAbsolute(base)) return null;
  return path.join(base, 'spelunk', 'index');
}

/** What one walk of the tree found (or, on a warm question, what the newest segment recorded of the last one). */
interface Listing {
  files: string[];
  ignoredDirs: readonly string[];
}

interface SearchOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The find program for the freshness check (fresh.ts's default when absent; null: none, so every question lists). */
  find?: string | null;
}

/**
 * A search begun (RepoIndexes.begin): the stored listing and the stored segments' hits, if any, and the answer once the
 * tree has been checked. settle() gives back these very objects when they still hold (the hits only with the listing).
 */
export interface PendingSearch {
  files: readonly string[] | null;
  hits: SearchResult['hits'] | null;
  settle: () => Promise<SearchResult | null>;
}

/** What begin found and started, for settle. */
interface Begun {
  started: number;
  current: Loaded | null;
  checking: Promise<Set<string> | null>;
  stored: { files: string[]; hits: SearchResult['hits'] } | null;
}

interface Loaded {
  base: Segment;
  delta: Segment | null;
  /** The bytes of the segment this update built (the new base, else the new delta), to be written. */
  fresh?: Buffer;
}

/**
 * The indexes of the roots searched in this process (the MCP server keeps one across calls, so segments are decoded
 * once and re-read only when their file changed on disk). Methods never throw.
 */
export class RepoIndexes {
  readonly #dir: string | null;
  readonly #open = new Map<string, { loaded: Loaded; key: string }>();
  readonly #with: BuildWith;
  /** Files the worker thread read in the last new base this object built (0: none), for the tests. */
  lastInWorker = 0;

  /**
   * `pause`: how a build returns to the event loop between batches (tests count the calls); `worker`: the build's
   * worker thread file (BUILD_WORKER; tests run from src/ pass dist's, null for none) and `shareFiles`, the size of the
   * batches it and this thread take in turn.
   */
  constructor(dir: string | null, opts: Partial<BuildWith> = {}) {
    this.#dir = dir;
    this.#with = {
      pause: opts.pause ?? yieldToLoop,
      worker: opts.worker === undefined ? BUILD_WORKER : opts.worker,
      shareFiles: opts.shareFiles ?? SHARE_FILES,
      onWorker: (files) => (this.lastInWorker = files),
    };
  }

  /**
   * The content search answered from the index (updated first), or null when the index cannot answer: a term that
   * is not a literal of word characters, no writable cache directory, a listing cut short, a tree past the bounds.
   * The caller then runs rg's search, which gives the same hits (test/locate/index-differential.test.ts).
   */
  async search(rg: string, root: string, terms: readonly Term[], opts: SearchOptions): Promise<SearchResult | null> {
    return (await this.begin(rg, root, terms, opts)).settle();
  }

  /**
   * search() in two steps, so that work depending only on the listing runs while the freshness check (a find child,
   * fresh.ts) walks the tree. `files` is the listing the stored segments hold (null: none stored); `settle()` answers
   * as search() does, and its `files` is that same array whenever the check finds the listing unchanged, so what was
   * computed from it still holds. Resolves once find runs (or has finished): work done after that overlaps its walk.
   * The stored segments' own hits are computed here too, and kept when they are current.
   */
  async begin(rg: string, root: string, terms: readonly Term[], opts: SearchOptions): Promise<PendingSearch> {
    const none: PendingSearch = { files: null, hits: null, settle: async () => null };
    if (this.#dir === null || !indexable(terms)) return none;
    const dir = segmentDir(this.#dir, root);
    if (dir === null) return none;
    let checking: Promise<Set<string> | null> = Promise.resolve(null);
    try {
      // Before any look at the tree: a change made after this instant has a later ctime, and the next check sees it.
      const started = Date.now();
      const key = segmentKey(dir);
      const cached = this.#open.get(root);
      const current = cached !== undefined && cached.key === key ? cached.loaded : load(dir, root);
      // Warm: one find walk tells whether rg's listing can have changed and which listed files may have (fresh.ts).
      const newest = current === null ? null : (current.delta ?? current.base);
      if (newest !== null) {
        let spawned = (): void => {};
        const running = new Promise<void>((resolve) => (spawned = resolve));
        checking = recentFiles(root, newest.writtenAtMs, { ...opts, prune: newest.ignoredDirs, onSpawn: spawned });
        await Promise.race([running, checking]);
      }
      const stored = current === null ? null : { files: listedPaths(current), hits: matchIndex(parts(current), terms) };
      const settle = () => this.#settle(rg, root, dir, terms, opts, { started, current, checking, stored });
      return { files: stored?.files ?? null, hits: stored?.hits ?? null, settle };
    } catch (error) {
      // The find started (if any) is let finish before anything else is done to the index.
      return { files: null, hits: null, settle: () => checking.then(() => this.#dropped(root, dir, error)) };
    }
  }

  async #settle(rg: string, root: string, dir: string, terms: readonly Term[], opts: SearchOptions, begun: Begun): Promise<SearchResult | null> {
    const { started, current, checking, stored } = begun;
    try {
      const recent = await checking;
      // Cold: each listed file is read as rg prints it, while its walk goes on.
      const reading = current === null ? new ListedBuild(root, this.#with) : null;
      const listing = current !== null && stored !== null && recent !== null ? { files: stored.files, ignoredDirs: (current.delta ?? current.base).ignoredDirs } : await this.#list(rg, root, opts, reading);
      if (listing === null || listing.files.length > MAX_INDEXED_FILES) {
        reading?.cancel();
        return null;
      }
      const loaded = await this.#refresh(root, dir, current, listing, recent, started, reading);
      if (loaded === null) return null;
      const sameListing = stored !== null && current !== null && listing.files === stored.files;
      if (sameListing && loaded.base === current.base && loaded.delta === current.delta) return { files: listing.files, hits: stored.hits, note: null };
      // The listing the check left as it was stays the listing of the segments an edit wrote (in another order, which
      // no answer depends on), so the next question in this process gets the very array back.
      if (sameListing && !listings.has(loaded)) listings.set(loaded, listing.files);
      const patched = sameListing ? replacedRows(stored.hits, current, loaded, terms) : null;
      return { files: listing.files, note: null, ...(patched ?? { hits: matchIndex(parts(loaded), terms) }) };
    } catch (error) {
      return this.#dropped(root, dir, error);
    }
  }

  /** A segment that decoded but whose postings do not: dropped, rebuilt by the next question. Anything else is rethrown. */
  #dropped(root: string, dir: string, error: unknown): null {
    if (!(error instanceof CorruptIndex)) throw error;
    this.#open.delete(root);
    rmSync(dir, { recursive: true, force: true });
    return null;
  }

  /**
   * The files rg lists (the search's own walk), and the directories it skipped whole as ignored (from its `--debug`
   * lines, see ignoredDirsOf); null when the listing was cut short. When the debug lines (one per ignored entry) push
   * the output past its cap, the walk runs again without them. `reading` gets each path of the first walk as rg prints
   * it, and is cancelled when that walk is not the one kept.
   */
  async #list(rg: string, root: string, opts: { timeoutMs: number; signal?: AbortSignal }, reading: ListedBuild | null = null): Promise<Listing | null> {
    const walk = async (debug: boolean, onPath: (rel: string) => void) => {
      const records = new PathRecords(onPath);
      const run = await execCapped(rg, ['--files', ...(debug ? ['--debug'] : []), ...WALK_FLAGS], {
        cwd: root,
        timeoutMs: opts.timeoutMs,
        maxBytes: MAX_OUTPUT_BYTES,
        onStdout: (chunk) => records.feed(chunk),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      return { run, files: records.end() };
    };
    let listed = await walk(true, (rel) => reading?.push(rel));
    const debugged = !listed.run.capped;
    if (!debugged) {
      reading?.cancel();
      listed = await walk(false, () => undefined);
    }
    const { run, files } = listed;
    if (run.timedOut || run.capped || run.aborted || run.exitCode === null) return null;
    if (debugged) reading?.end();
    return { files, ignoredDirs: debugged ? ignoredDirsOf(root, run.stderr, files) : [] };
  }

  /**
   * Brings the index of `root` up to date with `files` (`suspects`: the only files that may have changed, when the
   * listing is known not to have); null when it cannot be written.
   */
  async #refresh(
    root: string,
    dir: string,
    current: Loaded | null,
    listing: Listing,
    suspects: ReadonlySet<string> | null,
    started: number,
    reading: ListedBuild | null,
  ): Promise<Loaded | null> {
    const next = current !== null
      ? await update(root, current, listing, started, suspects, this.#with)
      : reading !== null
        ? await reading.base(listing, started)
        : await build(root, listing, started, this.#with);
    if (next === null) return null;
    if (next !== current && !save(dir, next)) return null;
    // The state itself when nothing was written: what was derived from it (its listing) stays its own.
    const { fresh: _written, ...written } = next;
    const kept = next === current ? current : written;
    this.#open.set(root, { loaded: kept, key: segmentKey(dir) });
    return kept;
  }
}

/** Each loaded state's listing (listedPaths). */
const listings = new WeakMap<Loaded, string[]>();

/**
 * The paths the segments hold, as rg last listed them (the base's live rows, then the delta's): made once per loaded
 * state and never changed, so a process asking again while the segments hold (the MCP server) gets the very array, and
 * what locate derived from it stands (locate.ts, listingWork).
 */
function listedPaths(loaded: Loaded): string[] {
  let known = listings.get(loaded);
  if (known === undefined) {
    const { base, delta } = loaded;
    const dead = new Uint8Array(base.paths.length);
    for (const row of delta?.tombstones ?? []) dead[row] = 1;
    known = delta === null ? base.paths.slice() : [...base.paths.filter((_rel, row) => dead[row] === 0), ...delta.paths];
    listings.set(loaded, known);
  }
  return known;
}

/**
 * The stored hits with the files an update re-read answered again (an edit the freshness check found): when the base
 * is the same and the new delta holds every file of the old one and of its own tombstones, no other file's rows
 * changed, so the rest of the stored hits stand as they are. Null otherwise. `changed` names the re-read files.
 */
function replacedRows(stored: SearchResult['hits'], current: Loaded, loaded: Loaded, terms: readonly Term[]): Pick<SearchResult, 'hits' | 'changed'> | null {
  const delta = loaded.delta;
  if (loaded.base !== current.base || delta === null) return null;
  const changed = new Set(delta.paths);
  const covered = (rel: string | undefined): boolean => rel !== undefined && changed.has(rel);
  if (!(current.delta?.paths ?? []).every(covered) || !Array.from(delta.tombstones).every((row) => covered(loaded.base.paths[row]))) return null;
  const hits: SearchResult['hits'] = new Map();
  for (const [rel, file] of stored) if (!changed.has(rel)) hits.set(rel, file);
  for (const [rel, file] of matchIndex([{ seg: delta, skip: null }], terms)) hits.set(rel, file);
  return { hits, changed };
}

function parts(loaded: Loaded): Part[] {
  if (loaded.delta === null) return [{ seg: loaded.base, skip: null }];
  const skip = new Uint8Array(loaded.base.paths.length);
  for (const row of loaded.delta.tombstones) skip[row] = 1;
  return [
    { seg: loaded.base, skip },
    { seg: loaded.delta, skip: null },
  ];
}

/** Where the segments of `root` live under the cache directory: named by the SHA-256 of its real path. */
export function indexDirOf(cache: string, root: string): string {
  return path.join(cache, createHash('sha256').update(root).digest('hex').slice(0, 32));
}

/** The directory of `root`'s segments, created; null when it cannot be, or when it would lie inside the root. */
function segmentDir(cache: string, root: string): string | null {
  const dir = indexDirOf(cache, root);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // A cache directory inside the repository (`-C ~` with the cache under ~/.cache) is never written.
    return isInside(root, realpathSync.native(dir)) ? null : dir;
  } catch {
    return null;
  }
}

/** Identifies the segment files on disk (size, mtime, inode), so a process reuses what it decoded until they change. */
function segmentKey(dir: string): string {
  return ['base.six', 'delta.six']
    .map((name) => {
      const st = lstatOrNull(path.join(dir, name));
      return st === null ? '-' : `${st.size}:${st.mtimeMs}:${st.ino}`;
    })
    .join('|');
}

/** The stored segments when both decode and belong together; a delta of another base is dropped; else null. */
function load(dir: string, root: string): Loaded | null {
  const base = readSegment(path.join(dir, 'base.six'), root, 'base');
  if (base === null) return null;
  const delta = readSegment(path.join(dir, 'delta.six'), root, 'delta');
  const valid = delta !== null && delta.baseId === base.id && delta.tombstones.every((row) => row < base.paths.length);
  return { base, delta: valid ? delta : null };
}

function readSegment(file: string, root: string, kind: 'base' | 'delta'): Segment | null {
  const bytes = readRegular(file);
  if (bytes === null) return null;
  try {
    const seg = decode(bytes);
    return seg.kind === kind && seg.root === root ? seg : null;
  } catch (error) {
    if (error instanceof CorruptIndex) return null;
    throw error;
  }
}

/** A regular file's bytes, opened without following a link or waiting on a FIFO, at most SEGMENT_LIMIT. */
function readRegular(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > SEGMENT_LIMIT) return null;
    const out = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < out.length) {
      const n = readSync(fd, out, got, out.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return out.subarray(0, got);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * rg's NUL-terminated paths as its output arrives, each handed on whole (one may straddle two chunks) and kept in
 * `files`: what `stdout.split('\0')` gives, but for empty records, each without a leading `./`. NUL is no byte of any
 * other UTF-8 character, so decoding each record alone decodes it as the whole output would
 * (test/locate/index-stream.test.ts holds the two equal, invalid UTF-8 included).
 */
export class PathRecords {
  readonly files: string[] = [];
  readonly #onPath: (rel: string) => void;
  #partial: Buffer[] = [];

  constructor(onPath: (rel: string) => void) {
    this.#onPath = onPath;
  }

  feed(chunk: Buffer): void {
    let from = 0;
    for (let nul = chunk.indexOf(0); nul >= 0; nul = chunk.indexOf(0, from)) {
      const piece = chunk.subarray(from, nul);
      this.#record(this.#partial.length === 0 ? piece : Buffer.concat([...this.#partial, piece]));
      this.#partial = [];
      from = nul + 1;
    }
    if (from < chunk.length) this.#partial.push(chunk.subarray(from));
  }

  /** The last record (rg ends each with a NUL, so there is none) and the paths. */
  end(): string[] {
    if (this.#partial.length > 0) this.#record(Buffer.concat(this.#partial));
    this.#partial = [];
    return this.files;
  }

  #record(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const rel = stripDotSlash(bytes.toString('utf8'));
    this.files.push(rel);
    this.#onPath(rel);
  }
}

/**
 * A new base read while rg walks: each path is read as soon as rg prints it, so the walk and the reading overlap (a
 * cold question used to wait for the whole listing first; rg's output, read between batches of BATCH_FILES, keeps
 * pace with the reading). The listing is cut into batches of SHARE_FILES paths by position; from the first odd one
 * that is complete, a worker thread (BuildHelper) reads every complete odd batch while this thread reads the even ones,
 * and the parts are appended in listing order (SegmentBuilder.absorb: the same bytes as one thread reading all). A
 * batch the worker could not read is read here. The base is kept only for the very paths of the listing kept
 * (`base`); otherwise, or once cancelled, what was read is dropped. Past MAX_INDEXED_FILES paths it stops reading:
 * that listing is refused.
 */
export class ListedBuild {
  readonly #root: string;
  readonly #with: BuildWith;
  readonly #paths: string[] = [];
  #ended = false;
  #cancelled = false;
  #wake: (() => void) | null = null;
  readonly #read: Promise<SegmentBuilder | null>;

  constructor(root: string, how: BuildWith) {
    this.#root = root;
    this.#with = how;
    this.#read = this.#run();
    // Awaited by base(); a cancelled build is never awaited, and what it throws must not go unhandled.
    this.#read.catch(() => undefined);
  }

  push(rel: string): void {
    this.#paths.push(rel);
    this.#wakeUp();
  }

  /** The listing is complete: read what is left. */
  end(): void {
    this.#ended = true;
    this.#wakeUp();
  }

  /** The listing is not the one kept: stop, and drop what was read. */
  cancel(): void {
    this.#cancelled = true;
    this.#wakeUp();
  }

  /** The new base of `listing`: from what was read when it is this build's own paths, else read again. */
  async base(listing: Listing, started: number): Promise<Loaded | null> {
    const builder = await this.#read;
    if (this.#cancelled || !sameOrder(this.#paths, listing.files)) return build(this.#root, listing, started, this.#with);
    return builder === null ? null : finish(builder, baseMeta(this.#root, listing, started), null);
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Waits until `n` paths are listed (true) or the listing ended or was cancelled short of them (false). */
  async #listed(n: number): Promise<boolean> {
    while (this.#paths.length < n && !this.#ended && !this.#cancelled) await new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#paths.length >= n && !this.#cancelled;
  }

  async #run(): Promise<SegmentBuilder | null> {
    const builder = new SegmentBuilder();
    const dirs = new Map<string, boolean>();
    let helper: BuildHelper | null = null;
    // Parts read apart from `builder` (the worker's, and this thread's own once one of the worker's is ahead of them),
    // in listing order; `part` is set once read (null: the worker failed it).
    const queue: QueuedPart[] = [];
    let sinceBreak = 0;
    let fromWorker = 0;
    const readInto = async (into: SegmentBuilder, from: number, to: number): Promise<boolean> => {
      for (let i = from; i < to; i++) {
        if (!(await this.#listed(i + 1))) return false;
        add(into, readFile(this.#root, this.#paths[i]!, dirs));
        if (++sinceBreak % BATCH_FILES === 0) await this.#with.pause();
      }
      return true;
    };
    // Appends the read parts at the head of the queue (all of them, waiting for the worker's, when `all`).
    const drain = async (all: boolean): Promise<void> => {
      for (let head = queue[0]; head !== undefined && (head.read || all); head = queue[0]) {
        if (!head.read) await new Promise<void>((resolve) => (head.wake = resolve));
        queue.shift();
        if (head.part === null) {
          await readInto(builder, head.from, head.to);
          continue;
        }
        builder.absorb(head.part);
        if (head.byWorker) fromWorker += head.part.rels.length;
      }
    };
    try {
      for (let k = 0; ; k++) {
        const from = k * this.#with.shareFiles;
        const to = from + this.#with.shareFiles;
        if (this.#cancelled || from >= MAX_INDEXED_FILES) return null;
        if (!(await this.#listed(from + 1))) break;
        const worker = this.#with.worker;
        if (k % 2 === 1 && worker !== null && (await this.#listed(to))) {
          helper ??= new BuildHelper(worker, this.#root);
          const entry: QueuedPart = { from, to, read: false, part: null, byWorker: true };
          queue.push(entry);
          void helper.read(k, this.#paths.slice(from, to)).then((part) => {
            entry.part = part;
            entry.read = true;
            entry.wake?.();
          });
          continue;
        }
        if (queue.length === 0) {
          if (!(await readInto(builder, from, to))) break;
          continue;
        }
        const own = new SegmentBuilder();
        const whole = await readInto(own, from, to);
        queue.push({ from, to, read: true, part: own.part(), byWorker: false });
        await drain(false);
        if (!whole) break;
      }
      if (this.#cancelled) return null;
      await drain(true);
      if (fromWorker > 0) this.#with.onWorker?.(fromWorker);
      return builder;
    } finally {
      helper?.close();
    }
  }
}

/** A batch of a build read apart from its builder, waiting for its place: `part` once `read` (null: to be read here). */
interface QueuedPart {
  from: number;
  to: number;
  read: boolean;
  part: BuiltPart | null;
  byWorker: boolean;
  wake?: () => void;
}

/** How a build reads: its pause between batches, its worker thread (the file; null: none) and the batches' size. */
export interface BuildWith {
  pause: Pause;
  worker: string | null;
  shareFiles: number;
  /** Told how many of the files appended were the worker's, when some were. */
  onWorker?: (files: number) => void;
}

/**
 * The worker thread of one build (build-worker.ts): reads the batches it is given, in order, and answers each with its
 * part; null for every batch once it failed (it could not start, threw, ran out of its heap or exited). It never keeps
 * the process alive, and is ended with the build.
 */
export class BuildHelper {
  readonly #worker: Worker | null;
  readonly #waiting = new Map<number, (part: BuiltPart | null) => void>();
  #failed = false;

  constructor(file: string, root: string) {
    let worker: Worker | null = null;
    try {
      worker = new Worker(file, { workerData: { root }, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MIB } });
    } catch {
      this.#failed = true;
    }
    this.#worker = worker;
    if (worker === null) return;
    worker.unref();
    worker.on('message', ({ batch, part }: { batch: number; part: BuiltPart }) => {
      this.#waiting.get(batch)?.(part);
      this.#waiting.delete(batch);
    });
    const failed = (): void => {
      this.#failed = true;
      for (const resolve of this.#waiting.values()) resolve(null);
      this.#waiting.clear();
    };
    worker.once('error', failed);
    worker.once('exit', failed);
  }

  read(batch: number, files: string[]): Promise<BuiltPart | null> {
    const worker = this.#worker;
    if (this.#failed || worker === null) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.#waiting.set(batch, resolve);
      worker.postMessage({ batch, files });
    });
  }

  close(): void {
    void this.#worker?.terminate();
  }
}

/** A new base from every listed file. */
function build(root: string, listing: Listing, started: number, how: BuildWith): Promise<Loaded | null> {
  const reading = new ListedBuild(root, how);
  for (const rel of listing.files) reading.push(rel);
  reading.end();
  return reading.base(listing, started);
}

function baseMeta(root: string, { ignoredDirs }: Listing, started: number): SegmentMeta {
  return { kind: 'base', id: randomInt(1, 2 ** 31), baseId: 0, root, writtenAtMs: started, tombstones: [], ignoredDirs };
}

function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((rel, i) => rel === b[i]);
}

/**
 * The segments after the changes since they were written: `current` itself when nothing changed, else a new delta
 * (the old delta's files and the changed ones, re-read) or, past COMPACT_FILES, a new base.
 */
async function update(
  root: string,
  current: Loaded,
  listing: Listing,
  started: number,
  suspects: ReadonlySet<string> | null,
  how: BuildWith,
): Promise<Loaded | null> {
  const { pause } = how;
  if (suspects !== null && suspects.size === 0) return current;
  const { base, delta } = current;
  const { files, ignoredDirs } = listing;
  // With suspects the listing is the segments' own: only the suspects' rows are looked up, and nothing was deleted.
  const wanted = (rel: string): boolean => suspects === null || suspects.has(rel);
  const view = new Map<string, { seg: Segment; row: number }>();
  const dead = new Uint8Array(base.paths.length);
  for (const row of delta?.tombstones ?? []) dead[row] = 1;
  base.paths.forEach((rel, row) => dead[row] === 0 && wanted(rel) && view.set(rel, { seg: base, row }));
  delta?.paths.forEach((rel, row) => wanted(rel) && view.set(rel, { seg: delta, row }));
  // A suspect the segments do not hold is a file rg does not list, changed in place: it stays unlisted.
  const checked = suspects === null ? files : [...suspects].filter((rel) => view.has(rel));
  const dirs = new Map<string, boolean>();
  const dirty: string[] = [];
  for (let i = 0; i < checked.length; i++) {
    const rel = checked[i]!;
    if (i % (BATCH_FILES * 8) === BATCH_FILES * 8 - 1) await pause();
    const known = view.get(rel);
    view.delete(rel);
    if (known === undefined || changed(root, rel, known.seg, known.row, dirs)) dirty.push(rel);
  }
  // What is left in the view was not listed: deleted, renamed or newly ignored. After a full walk a delta is written
  // even when nothing listed changed: its later stamp is what lets the next question skip the walk again (a temporary
  // file that came and went would otherwise send every later question to the walk), and it records the directories
  // this walk skipped.
  if (suspects !== null && dirty.length === 0 && view.size === 0) return current;
  const listedSet = suspects === null ? new Set(files) : null;
  const listed = (rel: string): boolean => listedSet === null || listedSet.has(rel);
  const inDelta = (delta?.paths ?? []).filter(listed);
  const redo = [...new Set([...inDelta, ...dirty])];
  if (redo.length > Math.max(COMPACT_FILES, base.paths.length / 8)) return build(root, listing, started, how);
  const redoSet = new Set(redo);
  const tombstones: number[] = [];
  base.paths.forEach((rel, row) => (redoSet.has(rel) || !listed(rel)) && tombstones.push(row));
  const builder = new SegmentBuilder();
  for (let i = 0; i < redo.length; i++) {
    add(builder, readFile(root, redo[i]!, dirs));
    if (i % BATCH_FILES === BATCH_FILES - 1) await pause();
  }
  return finish(builder, { kind: 'delta', id: randomInt(1, 2 ** 31), baseId: base.id, root, writtenAtMs: started, tombstones, ignoredDirs }, base);
}

/**
 * Whether a listed file may differ from its row: another size, mtime, ctime or inode; or a timestamp in the same
 * second as the segment was written (or later), where only the content hash can tell (git's "racy" entries).
 */
function changed(root: string, rel: string, seg: Segment, row: number, dirs: Map<string, boolean>): boolean {
  // Joined by hand: rg's listing is relative and normalised, and path.join was a tenth of a warm question's CPU.
  const st = lstatOrNull(`${root}/${rel}`);
  const s = seg.stats;
  const at = row * 4;
  if (st === null || st.size !== s[at] || st.mtimeMs !== s[at + 1] || st.ctimeMs !== s[at + 2] || st.ino !== s[at + 3]) return true;
  const racy = Math.floor(Math.max(st.mtimeMs, st.ctimeMs) / RACY_MS) >= Math.floor(seg.writtenAtMs / RACY_MS);
  if (!racy || seg.states[row] === FileState.Refused || seg.states[row] === FileState.Large) return racy;
  const now = readFile(root, rel, dirs);
  return now.row.state !== seg.states[row] || !Buffer.from(now.row.hash).equals(seg.hashes.subarray(row * 20, row * 20 + 20));
}

function add(builder: SegmentBuilder, file: ReadFile): void {
  builder.add(file.row, file.runs);
}

function finish(builder: SegmentBuilder, meta: SegmentMeta, base: Segment | null): Loaded | null {
  const bytes = builder.finish(meta);
  if (bytes === null) return null;
  const seg = decode(bytes);
  return base === null ? { base: seg, delta: null, fresh: bytes } : { base, delta: seg, fresh: bytes };
}

/** Writes the segments that are new (temporary name, then rename); false when the directory is not writable. */
function save(dir: string, next: Loaded): boolean {
  if (next.fresh === undefined) return true;
  try {
    if (next.delta === null) {
      writeAtomic(path.join(dir, 'base.six'), next.fresh);
      rmSync(path.join(dir, 'delta.six'), { force: true });
    } else writeAtomic(path.join(dir, 'delta.six'), next.fresh);
    return true;
  } catch {
    return false;
  }
}

function writeAtomic(file: string, bytes: Buffer): void {
  const temporary = `${file}.${process.pid}.${randomInt(2 ** 31).toString(36)}.tmp`;
  try {
    writeFileSync(temporary, bytes, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}

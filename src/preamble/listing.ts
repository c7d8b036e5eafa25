import { promises as fs, readdirSync } from 'node:fs';
import path from 'node:path';
import { errorCode, walkFiles, type WalkResult } from './rg-walk.js';
import { DEEP_LEVELS, planMap, type MapStats } from './map.js';
import { MARKER_CHARS } from './map-render.js';
import { quote } from './names.js';
import { isKeyFile, mentionedPaths, type MentionSource } from './rank.js';
import { compareUtf8, newDir, summarise, TreeCollector, type DirNode } from './tree.js';
import { renderWorkspaces, WORKSPACE_SHARE } from './workspace-block.js';
import { sameDirs, type DeepHint } from './deep-hint.js';
import { findWorkspaces, type WorkspaceMember } from './workspaces.js';

/** Default size of the map (`--map-tokens`), at the ~4 characters per token the preamble estimates with. */
const DEFAULT_MAP_TOKENS = 2_000;
/** Characters per token of the estimate (the same as `/context`'s). */
const CHARS_PER_TOKEN = 4;
/** Hard cap on the listing text at the default budget (kept for callers that size against it). */
export const MAX_LISTING_CHARS = DEFAULT_MAP_TOKENS * CHARS_PER_TOKEN;
/** A listing that takes longer than this is reported as unavailable rather than cut at a random point. */
const LISTING_TIMEOUT_MS = 15_000;
/**
 * A shown directory below the top level with more files than this is not read for file-less subdirectories: reading
 * a directory costs ~2 µs per entry in Node, and one that large rarely hides a subdirectory without files.
 */
const DISCOVER_MAX_FILES = 256;
/**
 * File names kept per directory while walking (the bytewise-smallest): a directory shows at most this many. Keeping
 * more costs memory and garbage collection on every file of a large repository, for names the budget rarely fits.
 */
const KEEP_FILES_MAX = 200;
/** Key files named on their line. */
const KEY_FILES_MAX = 24;
/**
 * Files the walk below the depth limit may return (map.ts openDeep); past it the map stays at the limit. The set a
 * walk returns is fixed for a tree, so the cut-off is too.
 */
const DEEP_FILES_MAX = 20_000;

/** The map of the repository that goes into the system prompt. */
export interface Listing {
  text: string;
  /** Entries (files and directories, group members counted) named. */
  shown: number;
  /** Entries found within the depth limit but not named. */
  omitted: number;
  /** Directories (the root included) that end with a "… (N more)" line. */
  truncatedDirs: number;
  /** Budget use and coverage; absent when the listing is unavailable. */
  map?: MapStats;
  /** Workspace members the repository declares (package.json workspaces, Cargo.toml [workspace], …). */
  workspaces?: { sources: string[]; members: WorkspaceMember[] };
}

export interface ListingOptions {
  depth: number;
  /** Cap on the map's lines; null or absent: only the token budget limits it. */
  maxEntries?: number | null;
  /** The map's budget in estimated tokens (DEFAULT_MAP_TOKENS when absent). */
  mapTokens?: number;
  rgPath: string;
  signal?: AbortSignal;
  /** Texts of the instructions files: directories they mention rank first. */
  instructions?: Promise<readonly MentionSource[]> | readonly MentionSource[];
  /**
   * Sees each file of the first walk (to `depth`) and then its outcome, always once, also when the root cannot be
   * read: the nested AGENTS.md search reads this walk instead of walking the tree again (agents-md.ts nestedSearch).
   */
  firstWalk?: { add(rel: string): void; done(walk: WalkResult): void };
  /**
   * The directories opened below the depth limit last time (deep-hint.ts): walked beside the first walk, used only if
   * the plan chooses exactly them; `chosen` hears what the plan chose ([] for none).
   */
  deep?: DeepHint;
}

/**
 * Maps the repository to `depth` levels with ripgrep (ignore files honoured, `.git` skipped, symlinks not followed):
 * key files, the declared workspace members, then the tree, directories before files and names before depth, within
 * a token budget (see map.ts). Byte-identical for the same repository state. Never throws: failures become a
 * "(listing unavailable: …)" text.
 */
export async function buildListing(root: string, opts: ListingOptions): Promise<Listing> {
  const depth = Math.max(1, Math.floor(opts.depth) || 1);
  const maxEntries = opts.maxEntries == null ? Infinity : Math.max(0, Math.floor(opts.maxEntries) || 0);
  const budgetTokens = Math.max(1, Math.floor(opts.mapTokens ?? DEFAULT_MAP_TOKENS) || DEFAULT_MAP_TOKENS);
  const problem = await unreadableDir(root);
  if (problem) {
    opts.firstWalk?.done({ ok: false, reason: problem });
    return unavailable(problem);
  }
  const collector = new TreeCollector(Math.min(maxEntries, KEEP_FILES_MAX), isKeyFile);
  const observer = opts.firstWalk;
  const walking = walkFiles({
    rgPath: opts.rgPath,
    cwd: root,
    args: ['--max-depth', String(depth)],
    signal: opts.signal,
    timeoutMs: LISTING_TIMEOUT_MS,
    onPath: observer ? (rel) => (collector.add(rel), observer.add(rel)) : (rel) => collector.add(rel),
    onIgnored: (rel) => collector.ignore(rel),
  });
  if (observer) void walking.then((walk) => observer.done(walk));
  // The guessed deep walk runs beside the first; dropped (and stopped) when the plan chooses otherwise.
  const guess = opts.deep?.guess ?? null;
  const early = guess !== null && guess.length > 0 ? startDeepWalk(root, guess, opts) : null;
  // Declarations and member manifests are read while ripgrep walks; only `**` member patterns wait for the tree.
  const workspacesPromise = findWorkspaces(root, walking.then(() => collector.tree));
  const walk = await walking;
  let chosen: readonly string[] = [];
  try {
    if (!walk.ok) {
      await workspacesPromise;
      return unavailable(walk.reason);
    }
    const deepened: string[] = [];
    const limitOf = (rel: string) => (deepened.some((d) => rel === d || rel.startsWith(`${d}/`)) ? depth + DEEP_LEVELS : depth);
    const discover = (rel: string, level: number, node: DirNode) => discoverDirs(root, rel, level, node, limitOf(rel), collector);
    const deepen = async (rels: string[]) => {
      chosen = rels;
      const found = early !== null && sameDirs(rels, guess!) ? await early.result : await startDeepWalk(root, rels, opts).result;
      return addDeeper(found, rels, collector, deepened);
    };
    return await planListing({ depth, maxEntries, budgetTokens, opts, collector, workspacesPromise, discover, deepen, deepened });
  } finally {
    if (early !== null && !sameDirs(chosen, guess!)) early.stop();
    if (walk.ok) opts.deep?.chosen(chosen);
  }
}

interface PlanListingInput {
  depth: number;
  maxEntries: number;
  budgetTokens: number;
  opts: ListingOptions;
  collector: TreeCollector;
  workspacesPromise: ReturnType<typeof findWorkspaces>;
  discover: (rel: string, level: number, node: DirNode) => void;
  deepen: (rels: string[]) => Promise<boolean>;
  deepened: readonly string[];
}

/** The map from the walked tree: key files, the workspace block, then the planned tree (see map.ts). */
async function planListing(input: PlanListingInput): Promise<Listing> {
  const { depth, maxEntries, budgetTokens, opts, collector, workspacesPromise, discover, deepen, deepened } = input;
  discover('', 0, collector.tree);
  if (summarise(collector.tree) === 0) {
    return { text: '(no files: the repository is empty or everything in it is ignored)', shown: 0, omitted: 0, truncatedDirs: 0 };
  }
  const [workspaces, texts] = await Promise.all([workspacesPromise, opts.instructions ?? []]);
  const budgetChars = budgetTokens * CHARS_PER_TOKEN;
  const keyFiles = [...new Set(collector.rootKeyFiles)].sort(compareUtf8).slice(0, KEY_FILES_MAX);
  const keyLine = keyFiles.length > 0 ? [`Key files: ${keyFiles.map(quote).join(', ')}`] : [];
  const block = renderWorkspaces(workspaces, Math.floor(budgetChars * WORKSPACE_SHARE));
  const head = [header(depth, 9_999_999, 9_999_999), ...keyLine, ...block.lines, ...(block.lines.length ? ['Directories:'] : [])];
  const plan = await planMap({
    tree: collector.tree,
    depth,
    maxEntries: Math.max(0, maxEntries - keyFiles.length),
    // The root's own "… (N more)" line is reserved here (every other directory reserves its own).
    budgetChars: budgetChars - head.join('\n').length - 1 - (MARKER_CHARS + 1),
    hints: { mentioned: mentionedPaths(texts), workspace: workspaceDirs(workspaces.members) },
    keyFiles: new Set(keyFiles),
    workspaceNamed: block.named,
    memberPaths: workspaces.members.map((m) => m.path),
    discover,
    deepen,
    deepenChars: DEEPER_NOTE.length,
  });
  // Directories found without files (discovered while planning) count as entries too.
  const total = summarise(collector.tree);
  const shown = plan.shown + keyFiles.length;
  const text = [header(depth, shown, total, deepened.length > 0), ...head.slice(1), ...plan.lines].join('\n');
  const tokens = Math.ceil(text.length / CHARS_PER_TOKEN);
  return {
    text,
    shown,
    omitted: Math.max(0, total - shown),
    truncatedDirs: plan.truncatedDirs,
    map: { tokens, budgetTokens, ...plan.stats },
    ...(workspaces.sources.length > 0 ? { workspaces: { sources: workspaces.sources, members: workspaces.members } } : {}),
  };
}

/** What the header adds when the core source was opened below the depth limit (paid from the map's budget). */
const DEEPER_NOTE = `; the main source directories are opened ${DEEP_LEVELS} levels further`;

function header(depth: number, shown: number, total: number, deeper = false): string {
  const below = deeper ? DEEPER_NOTE : '';
  return (
    `Map of the repository to depth ${depth}${below}: ${shown} of ${total} entries named. Directories come first, end with "/" ` +
    `and give the files below them (to depth ${depth}); "{a,b}/" names sibling directories on one line; ` +
    `"… (N more)" marks entries left out. Ignored files, .git and symlinks are not listed.`
  );
}

/** What a walk below the depth limit found; null when it failed or passed DEEP_FILES_MAX. */
type DeepFound = { paths: string[]; ignored: string[] } | null;

/**
 * Walks `rels` (directories at the depth limit) DEEP_LEVELS + 1 levels further with the same ripgrep rules. The extra
 * level gives the deepest named directories their file counts. `stop` ends a walk whose result is not needed.
 */
function startDeepWalk(root: string, rels: readonly string[], opts: ListingOptions): { result: Promise<DeepFound>; stop(): void } {
  const paths: string[] = [];
  const ignored: string[] = [];
  const stopper = new AbortController();
  const result = walkFiles({
    rgPath: opts.rgPath,
    cwd: root,
    args: ['--max-depth', String(DEEP_LEVELS + 1), '--', ...rels],
    signal: opts.signal ? AbortSignal.any([opts.signal, stopper.signal]) : stopper.signal,
    timeoutMs: LISTING_TIMEOUT_MS,
    onPath: (rel) => {
      if (paths.length <= DEEP_FILES_MAX) paths.push(rel);
    },
    onIgnored: (rel) => ignored.push(rel),
  }).then((walk) => (walk.ok && paths.length <= DEEP_FILES_MAX ? { paths, ignored } : null));
  return { result, stop: () => stopper.abort() };
}

/**
 * Adds a deeper walk's files to the tree only when the whole walk succeeded within DEEP_FILES_MAX files, so the tree,
 * and the map, depend only on the repository.
 */
function addDeeper(found: DeepFound, rels: readonly string[], collector: TreeCollector, deepened: string[]): boolean {
  if (found === null) return false;
  for (const rel of found.paths) collector.add(rel);
  for (const rel of found.ignored) collector.ignore(rel);
  deepened.push(...rels);
  summarise(collector.tree);
  return true;
}

/** Member directories and every directory above one. */
function workspaceDirs(members: readonly WorkspaceMember[]): Set<string> {
  const dirs = new Set<string>();
  for (const { path: rel } of members) {
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return dirs;
}

/**
 * Completes a directory before it is named. Directories come from ripgrep's files, but one whose files all lie
 * deeper than `depth` (src/ in src/main/java/…) has none within reach: readdir finds it, and ripgrep's ignored set
 * says whether it is ignored. ripgrep visited every entry of this non-ignored directory (it is within the depth), so
 * an entry missing from that set is not ignored. Only directories about to be expanded are read.
 */
function discoverDirs(root: string, rel: string, level: number, node: DirNode, depth: number, collector: TreeCollector): void {
  const worthReading = rel === '' || node.fileCount <= DISCOVER_MAX_FILES;
  if (level >= depth || !worthReading || collector.ignoredOverflow) return;
  for (const name of subdirectories(path.join(root, rel))) {
    const childRel = rel === '' ? name : `${rel}/${name}`;
    if (name !== '.git' && !node.dirs.has(name) && !collector.ignored.has(childRel)) {
      node.dirs.set(name, newDir());
    }
  }
}

/**
 * Names of the real subdirectories (never symlinks) of `dir`; an unreadable directory has none. Synchronous: only
 * directories about to be expanded are read (a few hundred at most, ~20 µs each), and a promise per read cost more.
 */
function subdirectories(dir: string): string[] {
  try {
    const entries = readdirSync(dir, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return []; // unreadable or vanished since ripgrep walked it: show what ripgrep found
  }
}

async function unreadableDir(root: string): Promise<string | null> {
  try {
    const stat = await fs.stat(root);
    return stat.isDirectory() ? null : 'the root is not a directory';
  } catch (error) {
    return `the root cannot be read (${errorCode(error)})`;
  }
}

function unavailable(reason: string): Listing {
  return { text: `(listing unavailable: ${reason})`, shown: 0, omitted: 0, truncatedDirs: 0 };
}


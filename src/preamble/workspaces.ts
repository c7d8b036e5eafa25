import { promises as fs } from 'node:fs';
import path from 'node:path';
import { compileSegment, expandGlob, globMatch, MAX_GLOB_WILDCARDS } from '../sandbox/policy/glob.js';
import { confine } from '../sandbox/paths.js';
import { JSON_BUDGET, overBudget, TOML_BUDGET, tomlTable, YAML_BUDGET, yamlEntry, type ParseBudget } from './declaration-text.js';
import { readContained } from './read-contained.js';
import type { DirNode } from './tree.js';

/** A declaration file (package.json, Cargo.toml, …) larger than this is not parsed. */
const DECLARATION_MAX_BYTES = 1024 * 1024;
/** A member's manifest is read up to this size (a name sits near the top; a cut file is parsed as far as it goes). */
const MANIFEST_MAX_BYTES = 256 * 1024;
/** Patterns taken from one repository, and characters per pattern: beyond them the rest is ignored. */
const PATTERNS_MAX = 500;
const PATTERN_MAX_CHARS = 256;
/** Members found; beyond this the list is cut (the block says so). */
const MEMBERS_MAX = 2_000;
/** Manifests read at once. */
const READ_CONCURRENCY = 16;

/** One workspace member: its directory (relative, `/`-separated) and its package or crate name when known. */
export interface WorkspaceMember {
  path: string;
  name: string | null;
}

export interface Workspaces {
  /** The declarations found, e.g. `package.json workspaces`, `Cargo.toml [workspace]`. */
  sources: string[];
  members: WorkspaceMember[];
  /** Members beyond MEMBERS_MAX, not listed. */
  omitted: number;
  /** Declarations that could not be used (refused symlink, parse error), for warnings. */
  problems: string[];
  /** The same, in the map's words (`pnpm-workspace.yaml (over the parse budget …)`): no parser message, no file content. */
  skipped: string[];
}

type Manifest = 'package.json' | 'Cargo.toml' | 'go.mod' | 'pyproject.toml';

interface Declaration {
  source: string;
  manifest: Manifest;
  include: string[];
  exclude: string[];
}

/**
 * The parsers of each declaration file: a library for each format (JSON, YAML, TOML); go.work is line-based. The
 * YAML and TOML parsers are loaded only when such a file exists, so start-up does not pay for them, and they get only
 * the part of the file that holds the members (`part`, see declaration-text.ts), within the parse budget.
 */
const DECLARATIONS: ReadonlyArray<{
  file: string;
  part: (text: string) => string;
  budget: ParseBudget;
  read: (text: string) => Promise<Declaration | null>;
}> = [
  {
    file: 'package.json',
    part: whole,
    budget: JSON_BUDGET,
    read: async (text) => npmWorkspaces(JSON.parse(text), 'package.json workspaces'),
  },
  {
    file: 'pnpm-workspace.yaml',
    part: (text) => section(text, yamlEntry(text, 'packages'), 'packages', YAML_BUDGET),
    budget: YAML_BUDGET,
    read: async (text) => npmWorkspaces({ workspaces: asRecord(await parseYaml(text))?.packages }, 'pnpm-workspace.yaml'),
  },
  {
    file: 'lerna.json',
    part: whole,
    budget: JSON_BUDGET,
    read: async (text) => npmWorkspaces({ workspaces: asRecord(JSON.parse(text))?.packages ?? ['packages/*'] }, 'lerna.json'),
  },
  {
    file: 'Cargo.toml',
    part: (text) => section(text, tomlTable(text, 'workspace'), 'workspace', TOML_BUDGET),
    budget: TOML_BUDGET,
    read: async (text) => tableMembers(await parseToml(text), ['workspace'], 'Cargo.toml [workspace]', 'Cargo.toml'),
  },
  {
    file: 'pyproject.toml',
    part: (text) => section(text, tomlTable(text, 'tool.uv.workspace'), 'workspace', TOML_BUDGET),
    budget: TOML_BUDGET,
    read: async (text) =>
      tableMembers(await parseToml(text), ['tool', 'uv', 'workspace'], 'pyproject.toml [tool.uv.workspace]', 'pyproject.toml'),
  },
  {
    file: 'go.work',
    part: whole,
    budget: { bytes: DECLARATION_MAX_BYTES, nesting: Infinity, items: Infinity },
    read: async (text) => goWork(text),
  },
];

function whole(text: string): string {
  return text;
}

/**
 * The section that holds the members when the file has one; else the whole file when it is small or names `word`
 * (an inline or unusual form: the budget then decides), else nothing (a large file that declares no workspace).
 */
function section(text: string, found: string, word: string, budget: ParseBudget): string {
  if (found !== '') return found;
  return overBudget(text, budget) === null || text.includes(word) ? text : '';
}

async function parseToml(text: string): Promise<Record<string, unknown>> {
  return (await import('smol-toml')).parse(text);
}

async function parseYaml(text: string): Promise<unknown> {
  // maxAliasCount bounds alias expansion ("billion laughs"); the file is also size-capped before parsing.
  return (await import('yaml')).parse(text, { maxAliasCount: 100 });
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/**
 * Reads the repository's own workspace declarations at the root and resolves their members, then each member's name
 * from its manifest. Patterns without `**` are expanded on the filesystem inside the root (the bash tool's glob
 * expansion: confined, sorted, capped), so all of this can run while ripgrep walks; `**` patterns wait for the walked
 * `tree` (ignore rules honoured, bounded by the depth). Every file is read with read_file's containment rules and a
 * size cap. Never throws.
 */
export async function findWorkspaces(root: string, tree: DirNode | Promise<DirNode>): Promise<Workspaces> {
  const result: Workspaces = { sources: [], members: [], omitted: 0, problems: [], skipped: [] };
  const found = new Map<string, Manifest>();
  const skip = (file: string, problem: string, why: string) => {
    result.problems.push(`${file} not read for workspaces: ${problem}`);
    result.skipped.push(`${file} (${why})`);
  };
  for (const { file, part, budget, read } of DECLARATIONS) {
    const loaded = await readContained(root, file, DECLARATION_MAX_BYTES);
    if (loaded.kind === 'missing') continue;
    if (loaded.kind === 'refused') {
      skip(file, loaded.reason, `not read: ${loaded.reason}`);
      continue;
    }
    if (loaded.truncatedBytes > 0) {
      skip(file, `larger than ${DECLARATION_MAX_BYTES / 1024} KiB`, `larger than ${DECLARATION_MAX_BYTES / 1024} KiB`);
      continue;
    }
    const text = part(loaded.text);
    if (text === '') continue;
    const over = overBudget(text, budget);
    if (over !== null) {
      skip(file, over, over);
      continue;
    }
    let declaration: Declaration | null;
    try {
      declaration = await read(text);
    } catch (error) {
      skip(file, String((error as Error)?.message ?? error).split('\n')[0]!.slice(0, 120), 'could not be parsed');
      continue;
    }
    if (declaration === null || declaration.include.length === 0) continue;
    result.sources.push(declaration.source);
    for (const rel of await resolveMembers(root, tree, declaration)) if (!found.has(rel)) found.set(rel, declaration.manifest);
  }
  const paths = [...found.keys()].sort();
  result.omitted = Math.max(0, paths.length - MEMBERS_MAX);
  const kept = paths.slice(0, MEMBERS_MAX);
  const names = await mapLimited(kept, READ_CONCURRENCY, (rel) => memberName(root, rel, found.get(rel)!));
  result.members = kept.flatMap((rel, i) => (names[i] === undefined ? [] : [{ path: rel, name: names[i] ?? null }]));
  return result;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').slice(0, PATTERNS_MAX) : [];
}

function splitPatterns(patterns: string[]): { include: string[]; exclude: string[] } {
  const include = patterns.filter((p) => !p.startsWith('!'));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  return { include, exclude };
}

function npmWorkspaces(json: unknown, source: string): Declaration | null {
  if (json === null || typeof json !== 'object') return null;
  const raw = (json as Record<string, unknown>).workspaces;
  const list = Array.isArray(raw) ? raw : (raw as Record<string, unknown> | undefined)?.packages;
  return { source, manifest: 'package.json', ...splitPatterns(strings(list)) };
}

function tableMembers(doc: Record<string, unknown>, keys: string[], source: string, manifest: Manifest): Declaration | null {
  let table: unknown = doc;
  for (const key of keys) {
    table = table !== null && typeof table === 'object' && Object.hasOwn(table, key) ? (table as Record<string, unknown>)[key] : undefined;
  }
  if (table === null || typeof table !== 'object') return null;
  const record = table as Record<string, unknown>;
  return { source, manifest, include: strings(record.members), exclude: strings(record.exclude) };
}

/** go.work: `use ./dir` and `use ( ./a ./b )` directives; comments (`//`) dropped. */
function goWork(text: string): Declaration {
  const include: string[] = [];
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (inBlock) {
      if (line === ')') inBlock = false;
      else if (line !== '') include.push(unquoteGo(line));
      continue;
    }
    if (line === 'use (') inBlock = true;
    else if (line.startsWith('use ')) include.push(unquoteGo(line.slice(4).trim()));
  }
  return { source: 'go.work use', manifest: 'go.mod', include: include.slice(0, PATTERNS_MAX), exclude: [] };
}

function unquoteGo(text: string): string {
  return text.replace(/^["`](.*)["`]$/, '$1');
}

/** Normalised member pattern segments, or null for one that reaches outside the root or is too long. */
function segments(pattern: string): string[] | null {
  if (pattern.length > PATTERN_MAX_CHARS || pattern.startsWith('/')) return null;
  // Consecutive `**` mean what one does.
  const parts = pattern.split('/').filter((part, i, all) => part !== '' && part !== '.' && !(part === '**' && all[i - 1] === '**'));
  if (parts.length === 0 || parts.includes('..')) return null;
  const wildcards = [...pattern].filter((c) => c === '*' || c === '?' || c === '[').length;
  return wildcards > MAX_GLOB_WILDCARDS ? null : parts;
}

function isGlob(segment: string): boolean {
  return /[*?[]/.test(segment);
}

async function resolveMembers(root: string, tree: DirNode | Promise<DirNode>, declaration: Declaration): Promise<string[]> {
  const excluded = declaration.exclude.map(segments).filter((s): s is string[] => s !== null);
  const members = new Set<string>();
  for (const pattern of declaration.include) {
    const parts = segments(pattern);
    if (parts === null) continue;
    const matches = parts.includes('**') ? expand(await tree, parts) : await onDisk(root, parts);
    for (const rel of matches) {
      if (members.size >= MEMBERS_MAX + 1) break;
      if (!excluded.some((ex) => matchesPath(ex, rel.split('/')))) members.add(rel);
    }
  }
  return [...members];
}

/** Existing directories matching a pattern without `**`, expanded inside the root; a manifest read confirms each. */
async function onDisk(root: string, parts: string[]): Promise<string[]> {
  const text = parts.join('/');
  if (!parts.some(isGlob)) return (await isDirectory(root, text)) ? [text] : [];
  const expanded = await expandGlob(root, { text, glob: Array.from(text, () => true) }).catch(() => null);
  if (!expanded?.ok || !expanded.matched) return [];
  return expanded.paths.filter((p) => !p.startsWith('/'));
}

/** Directories of the walked tree matching the segments; `**` spans any number of levels (within the walk). */
function expand(tree: DirNode, parts: string[]): string[] {
  const out: string[] = [];
  // Each (segment, directory) pair is visited once, so `**` patterns stay linear in the size of the tree.
  const seen = new Set<string>();
  const visit = (node: DirNode, i: number, prefix: string) => {
    const key = `${i}\0${prefix}`;
    if (out.length > MEMBERS_MAX || seen.has(key)) return;
    seen.add(key);
    if (i === parts.length) {
      if (prefix !== '') out.push(prefix);
      return;
    }
    const part = parts[i]!;
    const join = (name: string) => (prefix === '' ? name : `${prefix}/${name}`);
    if (part === '**') {
      visit(node, i + 1, prefix);
      for (const [name, child] of node.dirs) if (!name.startsWith('.')) visit(child, i, join(name));
      return;
    }
    if (!isGlob(part)) {
      const child = node.dirs.get(part);
      if (child) visit(child, i + 1, join(part));
      return;
    }
    const tokens = compileSegment(part);
    for (const [name, child] of node.dirs) {
      if (name.startsWith('.') && !part.startsWith('.')) continue;
      if (globMatch(tokens, name)) visit(child, i + 1, join(name));
    }
  };
  visit(tree, 0, '');
  return out;
}

/** Whether a path's segments match a pattern's (used for exclusions); `**` matches any number of segments. */
function matchesPath(pattern: string[], rel: string[]): boolean {
  // Memoised on (pattern index, path index): at most pattern × path steps, whatever the `**`s.
  const memo = new Map<number, boolean>();
  const go = (p: number, r: number): boolean => {
    const key = p * (rel.length + 1) + r;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (p === pattern.length) result = r === rel.length;
    else if (pattern[p] === '**') result = go(p + 1, r) || (r < rel.length && go(p, r + 1));
    else result = r < rel.length && globMatch(compileSegment(pattern[p]!), rel[r]!) && go(p + 1, r + 1);
    memo.set(key, result);
    return result;
  };
  return go(0, 0);
}

async function isDirectory(root: string, rel: string): Promise<boolean> {
  const confined = await confine(root, rel, { mustExist: true }).catch(() => null);
  if (!confined?.ok) return false;
  try {
    return (await fs.stat(confined.abs)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The member's name from its manifest; undefined when the manifest is missing (npm and cargo skip such a directory),
 * null when it cannot be read or names nothing.
 */
async function memberName(root: string, rel: string, manifest: Manifest): Promise<string | null | undefined> {
  const loaded = await readContained(root, path.posix.join(rel, manifest), MANIFEST_MAX_BYTES);
  if (loaded.kind === 'missing') return undefined;
  if (loaded.kind === 'refused') return null;
  try {
    return await nameIn(manifest, loaded.text);
  } catch {
    return null;
  }
}

async function nameIn(manifest: Manifest, text: string): Promise<string | null> {
  const pick = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
  if (manifest === 'package.json') return pick(asRecord(JSON.parse(text))?.name);
  if (manifest === 'go.mod') return pick(/^module[ \t]+(\S+)/m.exec(text)?.[1]);
  const table = manifest === 'Cargo.toml' ? 'package' : 'project';
  // Only the one table is parsed (a crate's manifest can be 150 KB of examples), within the declarations' budget.
  const part = tomlTable(text, table) || text;
  if (overBudget(part, TOML_BUDGET) !== null) return null;
  return pick(asRecord((await parseToml(part))[table])?.name);
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

import { isDemoted, isPushedDown } from './kinds.js';
import type { DirNode } from './tree.js';

// locate/conventions.ts ranks paths with the map's pushed-down trees.
export { isPushedDown };

/**
 * Root files shown first, on the map's "Key files" line: what a newcomer opens first (README), the manifests and
 * build files that say how the project is put together, and the usual entry points. Lower-cased names.
 */
const KEY_FILES = new Set([
  'readme', 'readme.md', 'readme.rst', 'readme.txt', 'readme.adoc', 'agents.md', 'claude.md', 'contributing.md',
  'package.json', 'pnpm-workspace.yaml', 'lerna.json', 'nx.json', 'turbo.json', 'deno.json', 'deno.jsonc', 'tsconfig.json',
  'cargo.toml', 'go.mod', 'go.work', 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt', 'pipfile',
  'gemfile', 'composer.json', 'pom.xml', 'build.gradle', 'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts',
  'build.sbt', 'mix.exs', 'pubspec.yaml', 'package.swift', 'cmakelists.txt', 'meson.build', 'configure.ac',
  'makefile', 'gnumakefile', 'justfile', 'taskfile.yml', 'build.zig', 'build', 'workspace', 'module.bazel', 'build.bazel',
  'dockerfile', 'docker-compose.yml', 'compose.yaml', 'flake.nix', 'main.go', 'main.rs', 'main.py', 'index.js',
  'index.ts', 'main.ts', 'main.js', 'app.py', 'manage.py', 'gulpfile.js', 'gulpfile.ts',
]);
/** Directories that usually hold the code itself (a small bonus when something must be cut). */
const CONVENTIONAL = new Set([
  'src', 'lib', 'cmd', 'pkg', 'packages', 'crates', 'apps', 'internal', 'app', 'core', 'cli', 'server', 'client',
  'api', 'libs', 'modules', 'components', 'services', 'runtime', 'ext', 'include', 'source', 'scripts', 'tools', 'bin',
]);

/** Whether a root file belongs on the "Key files" line. */
export function isKeyFile(name: string): boolean {
  return KEY_FILES.has(name.toLowerCase());
}

/** Segments of a mentioned path that count (deeper ones are below any map depth worth asking for). */
const MENTION_SEGMENTS_MAX = 16;

/**
 * An instructions text, and where the root lies below the file's own directory (`cli/tools` when deno's CLAUDE.md is
 * read from `deno/cli/tools`): its paths are relative to its directory, the map's to the root.
 */
export type MentionSource = string | { text: string; below: string };

/** Directory paths (no leading `./`, no trailing `/`) and every parent of them that the instructions mention. */
export function mentionedPaths(sources: readonly MentionSource[]): Set<string> {
  const found = new Set<string>();
  for (const source of sources) {
    const text = typeof source === 'string' ? source : source.text;
    const below = typeof source === 'string' || source.below === '' ? null : source.below.split('/');
    // One linear split: path-like runs of characters; everything else separates them.
    for (const raw of text.split(/[^A-Za-z0-9_.\-/@+]+/)) {
      // A sentence's full stop is not part of the path ("Tools are in cli/tools.").
      const token = trimDots(raw.replace(/^(?:\.\/)+/, '').replace(/^\/+/, ''));
      if (!token.includes('/')) continue;
      let parts = token.split('/').filter((part) => part !== '' && part !== '.' && part !== '..');
      if (below) {
        // Only mentions inside the root mean anything to the map; re-root them.
        if (!below.every((segment, i) => parts[i] === segment)) continue;
        parts = parts.slice(below.length);
      }
      // The map never goes deeper than a few levels: a longer path adds nothing but quadratic work.
      let prefix = '';
      for (const part of parts.slice(0, MENTION_SEGMENTS_MAX)) {
        prefix = prefix === '' ? part : `${prefix}/${part}`;
        found.add(prefix);
      }
    }
  }
  return found;
}

/** `s` without trailing dots, by a loop (a `\.+$` regex is quadratic on a long run of dots that is not at the end). */
function trimDots(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x2e) end--;
  return s.slice(0, end);
}

/** What a directory's rank is made of: its size, mentions, workspace membership and conventional name. */
export interface RankHints {
  mentioned: ReadonlySet<string>;
  /** Workspace member paths, and every directory that contains one. */
  workspace: ReadonlySet<string>;
}

/**
 * A directory's weight among its siblings: its source code first (files of programming languages outside tests,
 * examples, fixtures and assets, log scale), all its files a little (log scale, so size matters but does not swamp
 * the rest), +8 when the instructions name it, +4 for a workspace member or a directory holding members, +3 for a
 * conventional code directory, −10 for examples, tests, assets and docs, −20 for a pushed-down tree.
 */
export function score(rel: string, name: string, node: DirNode, hints: RankHints): number {
  let value = 2 * Math.log2(1 + node.coreFiles) + 0.5 * Math.log2(1 + node.totalFiles + node.dirs.size);
  if (hints.mentioned.has(rel)) value += 8;
  if (hints.workspace.has(rel)) value += 4;
  if (CONVENTIONAL.has(name.toLowerCase())) value += 3;
  if (isDemoted(name)) value -= 10;
  if (isPushedDown(name)) value -= 20;
  return value;
}

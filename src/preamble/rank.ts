import type { DirNode } from './tree.js';

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
/**
 * Trees that are rarely where an answer starts: vendored, generated, fixture, snapshot and CI-template directories
 * (and tool caches). They stay on the map as one collapsed line, never expanded.
 */
const PUSHED_DOWN = new Set([
  'vendor', 'vendored', 'third_party', 'third-party', 'thirdparty', 'external', 'node_modules', 'generated',
  '__generated__', 'gen', 'fixtures', 'fixture', '__fixtures__', 'testdata', 'test-data', 'snapshots', '__snapshots__',
  'issue_template', 'pull_request_template', 'discussion_template', '.yarn', '.pnpm-store', '.cache', 'dist', 'out',
  'coverage', 'target', '.husky', '.vscode', '.idea', '.devcontainer', '.codesandbox', '.changeset', 'patches',
]);

/** Whether a root file belongs on the "Key files" line. */
export function isKeyFile(name: string): boolean {
  return KEY_FILES.has(name.toLowerCase());
}

/** Whether a directory is kept collapsed: vendored, generated, fixtures, snapshots, CI templates, caches. */
export function isPushedDown(name: string): boolean {
  return PUSHED_DOWN.has(name.toLowerCase());
}

/** Directory paths (no leading `./`, no trailing `/`) and every parent of them that the instructions mention. */
export function mentionedPaths(texts: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const text of texts) {
    // One linear split: path-like runs of characters; everything else separates them.
    for (const raw of text.split(/[^A-Za-z0-9_.\-/@+]+/)) {
      const token = raw.replace(/^(?:\.\/)+/, '').replace(/^\/+/, '');
      if (!token.includes('/')) continue;
      const parts = token.split('/').filter((part) => part !== '' && part !== '.' && part !== '..');
      for (let i = 1; i <= parts.length; i++) found.add(parts.slice(0, i).join('/'));
    }
  }
  return found;
}

/** What a directory's rank is made of: its size, mentions, workspace membership and conventional name. */
export interface RankHints {
  mentioned: ReadonlySet<string>;
  /** Workspace member paths, and every directory that contains one. */
  workspace: ReadonlySet<string>;
}

/**
 * A directory's weight among its siblings: tracked files (log scale, so size matters but does not swamp the rest),
 * +8 when the instructions name it, +4 for a workspace member or a directory holding members, +3 for a conventional
 * code directory, −20 for a pushed-down tree.
 */
export function score(rel: string, name: string, node: DirNode, hints: RankHints): number {
  let value = Math.log2(1 + node.totalFiles + node.dirs.size);
  if (hints.mentioned.has(rel)) value += 8;
  if (hints.workspace.has(rel)) value += 4;
  if (CONVENTIONAL.has(name.toLowerCase())) value += 3;
  if (isPushedDown(name)) value -= 20;
  return value;
}

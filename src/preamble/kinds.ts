/**
 * What a directory or a file is, from its name alone: the map ranks directories by the source code they hold, so it
 * must tell code from the assets, fixtures, examples and tests beside it. Names only (no content is read).
 */

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

/**
 * Trees around the code rather than the code: examples and playgrounds, tests and benchmarks, assets and documentation.
 * They are expanded only after the core source (below the depth limit included) has had its share of the budget, and
 * their files do not count as source for the directories above them. (vite's map was 75% `playground/`.) Plural
 * forms only where the singular is also a package name (`com/example/` in Java).
 */
const DEMOTED = new Set([
  'examples', 'playground', 'playgrounds', 'samples', 'demos', 'starters', 'templates',
  'test', 'tests', '__tests__', '__mocks__', 'spec', 'specs', 'e2e', 'integration-tests', 'bench', 'benches',
  'benchmark', 'benchmarks', 'assets', 'docs', 'doc', 'documentation', 'website', 'images', 'img', '.github',
]);

/**
 * Extensions of programming-language source files (not markup, data, styles or assets). Lower-cased, without the dot.
 */
const SOURCE_EXTENSIONS = new Set([
  'ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs', 'vue', 'svelte', 'astro', 'py', 'pyi', 'go', 'rs', 'java', 'kt',
  'kts', 'scala', 'groovy', 'c', 'h', 'cc', 'cpp', 'cxx', 'hpp', 'hh', 'hxx', 'm', 'mm', 'cs', 'fs', 'vb', 'swift',
  'rb', 'php', 'dart', 'lua', 'ex', 'exs', 'erl', 'hrl', 'hs', 'ml', 'mli', 'clj', 'cljs', 'zig', 'nim', 'jl', 'r',
  'pl', 'pm', 'sh', 'bash', 'sol', 'elm', 'v', 'sv', 'vhd', 'wgsl', 'wesl', 'glsl', 'hlsl', 'proto', 'sql',
]);

/** A test file by its name: `x.test.ts`, `x_test.go`, `test_x.py`, `x.spec.js`, `XTest.java`. */
const TEST_NAME = /(?:[._-](?:test|spec)s?\.[^.]+$)|(?:^test_[^/]*\.py$)|(?:Tests?\.(?:java|kt|cs|swift)$)/;

/** Whether a directory is kept collapsed: vendored, generated, fixtures, snapshots, CI templates, caches. */
export function isPushedDown(name: string): boolean {
  return PUSHED_DOWN.has(name.toLowerCase());
}

/** Whether a directory holds examples, tests, assets or documentation rather than the code itself. */
export function isDemoted(name: string): boolean {
  return DEMOTED.has(name.toLowerCase());
}

/** Whether a file is source code (by extension) and not a test. */
export function isSourceFile(name: string): boolean {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return false;
  // `.d.ts` declarations describe code; they are counted like it.
  return SOURCE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase()) && !TEST_NAME.test(name);
}

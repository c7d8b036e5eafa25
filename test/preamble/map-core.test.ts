import { promises as fs } from 'node:fs';
import path from 'node:path';
import { rgPath } from '@vscode/ripgrep';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildListing } from '../../src/preamble/listing.js';
import { isDemoted, isSourceFile } from '../../src/preamble/kinds.js';
import { makeRepo, useRepo } from '../support/temp-repo.js';

const pad = (n: number) => String(n).padStart(2, '0');
const MODULES = ['client', 'node', 'shared'];

/**
 * vite's shape: the core package's source lies below the depth limit (packages/core/src/node/*.ts at depth 5), beside
 * a playground of 60 fixture projects, docs and assets that hold most of the files.
 */
const vite = useRepo(
  Object.fromEntries([
    ['package.json', JSON.stringify({ private: true, workspaces: ['packages/*', 'playground/*'] })],
    ['packages/core/package.json', '{"name":"core"}'],
    ['packages/core/rollup.config.ts', ''],
    ...MODULES.flatMap((m) => Array.from({ length: 8 }, (_, i): [string, string] => [`packages/core/src/${m}/${m}-part${pad(i)}.ts`, ''])),
    ...Array.from({ length: 6 }, (_, i): [string, string] => [`packages/core/src/node/server/mw${pad(i)}.ts`, '']),
    ...Array.from({ length: 5 }, (_, i): [string, string] => [`packages/core/src/__tests__/t${pad(i)}.spec.ts`, '']),
    ...Array.from({ length: 60 }, (_, i): Array<[string, string]> => [
      [`playground/fixture-${pad(i)}-${'long'.repeat(i % 4)}/package.json`, `{"name":"@t/fixture-${pad(i)}"}`],
      ...Array.from({ length: 6 }, (_, k): [string, string] => [`playground/fixture-${pad(i)}-${'long'.repeat(i % 4)}/src/case${k}/index.ts`, '']),
    ]).flat(),
    ...Array.from({ length: 80 }, (_, i): [string, string] => [`docs/guide/page-${pad(i)}.md`, '']),
    ...Array.from({ length: 80 }, (_, i): [string, string] => [`assets/img/pic-${pad(i)}.png`, '']),
  ]),
);

describe('a map that opens the core source', () => {
  it('opens the core package\'s src/ below the depth limit, its modules and their files named', async () => {
    const listing = await buildListing(vite.root, { depth: 3, rgPath });
    const text = listing.text;
    expect(text).toMatch(/\n {4}src\/\n {6}__tests__\/ \(5 files\)\n {6}client\/\n {8}client-part00\.ts\n/);
    expect(text).toMatch(/\n {6}node\/\n {8}server\/ \(6 files\)\n {8}node-part00\.ts\n/);
    expect(text.split('\n')[0]).toContain('; the main source directories are opened 2 levels further:');
    expect(text.length).toBeLessThanOrEqual(2_000 * 4);
  });

  it('names every core source file before the playground, docs and assets get more than a few', async () => {
    const text = (await buildListing(vite.root, { depth: 3, rgPath, mapTokens: 700 })).text;
    for (const m of MODULES) for (let i = 0; i < 8; i++) expect(text).toContain(`\n        ${m}-part${pad(i)}.ts\n`);
    expect(text).toMatch(/\n {4}… \(\d+ more, all pic-\*\.png\)\n/);
    expect(text.length).toBeLessThanOrEqual(700 * 4);
    // The playground's members are counted in the member block, not named there and again in the tree.
    expect(text).toContain('\nplayground/ 60 members, not named here (examples, tests or docs)\n');
  });

  it.each([150, 200, 260, 330, 420, 560, 800])('stays within a budget of %i tokens, the header\'s note on opening included', async (mapTokens) => {
    const listing = await buildListing(vite.root, { depth: 3, rgPath, mapTokens });
    expect(listing.text.length).toBeLessThanOrEqual(mapTokens * 4);
  });

  it('is byte-identical across builds', async () => {
    const [a, b] = await Promise.all([buildListing(vite.root, { depth: 3, rgPath }), buildListing(vite.root, { depth: 3, rgPath })]);
    expect(b.text).toBe(a.text);
  });

  it('opens the core source before the docs and assets when the budget is tight', async () => {
    const listing = await buildListing(vite.root, { depth: 3, rgPath, mapTokens: 300 });
    expect(listing.text).toContain('\n        client-part00.ts\n');
    expect(listing.text).toContain('\nassets/\n  img/ (80 files)\n');
    expect(listing.text.length).toBeLessThanOrEqual(300 * 4);
    expect(listing.map!.depth1).toEqual({ named: 4, total: 4 });
  });
});

describe('ranking by source code', () => {
  // textures/ has 10× the files of engine/, but none of them is code.
  const repo = useRepo(
    Object.fromEntries([
      ...Array.from({ length: 20 }, (_, i): Array<[string, string]> => Array.from({ length: 10 }, (_, k): [string, string] => [`textures/set-${pad(i)}/t${k}.png`, ''])).flat(),
      ...['render', 'ecs', 'math'].flatMap((m) => Array.from({ length: 6 }, (_, k): [string, string] => [`engine/${m}/f${k}.rs`, ''])),
    ]),
  );

  it('expands the directory of source before the larger one of assets when only one fits', async () => {
    const text = (await buildListing(repo.root, { depth: 3, rgPath, mapTokens: 130 })).text;
    expect(text).toContain('\nengine/\n  ecs/\n    f0.rs\n');
    expect(text).toContain('\ntextures/ (200 files)');
  });
});

describe('opening below the depth limit, on a hostile tree', () => {
  let root = '';
  beforeAll(async () => {
    const outside = await makeRepo({ 'secret/leak.ts': '' });
    const made = await makeRepo({
      '.gitignore': 'build/\n',
      'pkg/core/src/main.ts': '',
      'pkg/core/src/mod/a.ts': '',
      'pkg/core/src/build/generated.ts': '',
      'pkg/core/src/node_modules/dep/index.js': '',
    });
    root = made.root;
    await fs.symlink(path.join(outside.root, 'secret'), path.join(root, 'pkg/core/src/mod/linked'));
    await fs.mkdir(path.join(root, 'pkg/core/src/mod/deep/deeper/deepest'), { recursive: true });
  });

  it('never follows a symlink, never shows an ignored directory, keeps vendored trees collapsed', async () => {
    const text = (await buildListing(root, { depth: 3, rgPath })).text;
    expect(text).toContain('\n    src/\n      mod/\n');
    expect(text).not.toMatch(/linked|leak|build|generated/);
    expect(text).toContain('      node_modules/ (1 file, collapsed)');
  });
});

describe('kinds of names', () => {
  it.each([
    ['index.ts', true], ['lib.rs', true], ['App.java', true], ['shader.wgsl', true], ['types.d.ts', true],
    ['index.test.ts', false], ['util_test.go', false], ['test_api.py', false], ['AppTest.java', false], ['x.spec.js', false],
    ['logo.png', false], ['README.md', false], ['package.json', false], ['Makefile', false], ['.eslintrc', false],
  ])('isSourceFile(%j) = %s', (name, expected) => {
    expect(isSourceFile(name)).toBe(expected);
  });

  it.each([
    ['playground', true], ['examples', true], ['__tests__', true], ['Docs', true], ['assets', true], ['.github', true],
    ['example', false], ['src', false], ['packages', false], ['testing', false],
  ])('isDemoted(%j) = %s', (name, expected) => {
    expect(isDemoted(name)).toBe(expected);
  });
});

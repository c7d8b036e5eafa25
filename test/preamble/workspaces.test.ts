import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { TreeCollector, type DirNode } from '../../src/preamble/tree.js';
import { findWorkspaces } from '../../src/preamble/workspaces.js';
import { buildListing } from '../../src/preamble/listing.js';
import { rgPath } from '@vscode/ripgrep';

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

async function makeRepo(files: Record<string, string>): Promise<string> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-ws-')));
  temps.push(root);
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), content);
  }
  return root;
}

/** The walked tree of a repository, built the way the listing builds it (every file, no depth limit). */
async function treeOf(root: string): Promise<DirNode> {
  const collector = new TreeCollector(10, () => false);
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await fs.readdir(path.join(root, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) collector.add(child);
    }
  };
  await walk('');
  return collector.tree;
}

async function workspacesOf(files: Record<string, string>) {
  const root = await makeRepo(files);
  return findWorkspaces(root, await treeOf(root));
}

const npmMembers = {
  'packages/a/package.json': '{"name":"@x/a"}',
  'packages/b/package.json': '{"name":"@x/b"}',
  'packages/no-manifest/readme.md': '',
  'apps/web/package.json': '{"name":"web"}',
};

describe('findWorkspaces', () => {
  it.each([
    ['package.json workspaces (array)', { 'package.json': '{"workspaces":["packages/*","apps/web"]}' }, 'package.json workspaces'],
    ['package.json workspaces.packages (yarn)', { 'package.json': '{"workspaces":{"packages":["packages/*","apps/*"]}}' }, 'package.json workspaces'],
    ['pnpm-workspace.yaml', { 'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n  - apps/**\n  - '!**/test/**'\n" }, 'pnpm-workspace.yaml'],
    ['lerna.json', { 'lerna.json': '{"packages":["packages/*","apps/web"]}' }, 'lerna.json'],
  ])('reads %s and skips a matched directory without a manifest', async (_, declaration, source) => {
    const ws = await workspacesOf({ ...npmMembers, ...declaration });
    expect(ws.sources).toEqual([source]);
    expect(ws.members).toEqual([
      { path: 'apps/web', name: 'web' },
      { path: 'packages/a', name: '@x/a' },
      { path: 'packages/b', name: '@x/b' },
    ]);
    expect(ws.problems).toEqual([]);
  });

  it.each([
    ['Cargo.toml [workspace]', { 'Cargo.toml': '[workspace]\nmembers = ["crates/*", "tools/x"]\nexclude = ["crates/old"]\n' }, 'Cargo.toml', (n: string) => `[package]\nname = "${n}"\n`],
    ['pyproject.toml [tool.uv.workspace]', { 'pyproject.toml': '[tool.uv.workspace]\nmembers = ["crates/*", "tools/x"]\nexclude = ["crates/old"]\n' }, 'pyproject.toml', (n: string) => `[project]\nname = "${n}"\n`],
    ['go.work use', { 'go.work': 'go 1.22\n\nuse (\n\t./crates/a\n\t./crates/b // the b module\n)\nuse ./tools/x\n' }, 'go.mod', (n: string) => `module ${n}\n\ngo 1.22\n`],
  ])('reads %s with each member named by its manifest', async (source, declaration, manifest, body) => {
    const ws = await workspacesOf({
      ...declaration,
      [`crates/a/${manifest}`]: body('a'),
      [`crates/b/${manifest}`]: body('b'),
      [`crates/old/${manifest}`]: body('old'),
      [`tools/x/${manifest}`]: body('x'),
    });
    expect(ws.sources).toEqual([source]);
    expect(ws.members).toEqual([
      { path: 'crates/a', name: 'a' },
      { path: 'crates/b', name: 'b' },
      { path: 'tools/x', name: 'x' },
    ]);
  });

  it('finds nothing in a repository without declarations, or with a package.json without workspaces', async () => {
    expect(await workspacesOf({ 'src/a.js': '' })).toEqual({ sources: [], members: [], omitted: 0, problems: [], skipped: [] });
    expect((await workspacesOf({ 'package.json': '{"name":"solo"}', 'Cargo.toml': '[package]\nname = "solo"\n' })).members).toEqual([]);
  });

  it.each([
    ['invalid JSON', { 'package.json': '{"workspaces": [' }, /^package\.json not read for workspaces: /],
    ['invalid TOML', { 'Cargo.toml': '[workspace\nmembers = 3' }, /^Cargo\.toml not read for workspaces: /],
    ['invalid YAML', { 'pnpm-workspace.yaml': 'packages: [\n' }, /^pnpm-workspace\.yaml not read for workspaces: /],
    ['a YAML alias bomb', { 'pnpm-workspace.yaml': `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`).join('\n')}\npackages: *m\n` }, /^pnpm-workspace\.yaml not read for workspaces: /],
    ['a declaration over 1 MiB', { 'package.json': `{"workspaces":["packages/*"],"pad":"${'x'.repeat(1024 * 1024)}"}` }, /^package\.json not read for workspaces: larger than 1024 KiB$/],
  ])('reports %s as a problem instead of throwing', async (_, files, problem) => {
    const ws = await workspacesOf({ ...npmMembers, ...files });
    expect(ws.members).toEqual([]);
    expect(ws.problems).toEqual([expect.stringMatching(problem)]);
  });

  it('never reads a declaration or a manifest through a symlink out of the root', async () => {
    const outside = await makeRepo({ 'package.json': '{"workspaces":["packages/*"]}', 'secret/package.json': '{"name":"leaked-secret"}' });
    const root = await makeRepo({ 'packages/a/package.json': '{"name":"a"}', 'sub/package.json': '{"workspaces":["packages/*"]}' });
    await fs.symlink(path.join(outside, 'package.json'), path.join(root, 'package.json'));
    const refused = await findWorkspaces(root, await treeOf(root));
    expect(refused.members).toEqual([]);
    expect(refused.problems).toEqual([expect.stringContaining('package.json not read for workspaces: package.json is outside the repository root')]);

    await fs.rm(path.join(root, 'package.json'));
    await fs.writeFile(path.join(root, 'package.json'), '{"workspaces":["packages/*"]}');
    await fs.mkdir(path.join(root, 'packages/b'));
    await fs.symlink(path.join(outside, 'secret/package.json'), path.join(root, 'packages/b/package.json'));
    const ws = await findWorkspaces(root, await treeOf(root));
    expect(JSON.stringify(ws)).not.toContain('leaked-secret');
  });

  it.each([
    ['a path above the root', '../outside/*'],
    ['an absolute path', '/etc/*'],
    ['a path through ..', 'packages/../../x'],
  ])('ignores a member pattern that leaves the root: %s', async (_, pattern) => {
    const ws = await workspacesOf({ 'package.json': JSON.stringify({ workspaces: [pattern] }), 'packages/a/package.json': '{}' });
    expect(ws.members).toEqual([]);
  });

  it('does not open a FIFO named like a declaration (no hang)', async () => {
    const root = await makeRepo({ 'packages/a/package.json': '{"name":"a"}' });
    execFileSync('mkfifo', [path.join(root, 'package.json')]);
    const ws = await findWorkspaces(root, await treeOf(root));
    expect(ws.problems).toEqual(['package.json not read for workspaces: not a regular file']);
  });

  it('matches pathological patterns without backtracking blow-up', async () => {
    const name = 'a'.repeat(60);
    const pattern = `${'*a'.repeat(15)}b`;
    const ws = await workspacesOf({
      'package.json': JSON.stringify({ workspaces: [`x/${pattern}`, '**/**/**/**/**/**/**/deep', `!${'**/'.repeat(10)}nope`] }),
      [`x/${name}/package.json`]: '{}',
      'a/b/c/d/deep/package.json': '{"name":"deep"}',
    });
    expect(ws.members).toEqual([{ path: 'a/b/c/d/deep', name: 'deep' }]);
  });

  /** About 1 MB (under the 1 MiB read cap) of `[[[…]]]`: 4.6 s of YAML parsing before the budget. */
  const nestedFlow = `packages:\n  - ${'[[[[[[[[[[a]]]]]]]]]],'.repeat(45_000)}\n`;
  const catalog = Array.from({ length: 8_000 }, (_, i) => `  dep-${i}: ^1.0.${i}`).join('\n');
  const examples = Array.from({ length: 4_000 }, (_, i) => `[[example]]\nname = "example_${i}"\npath = "examples/e${i}.rs"\n`).join('\n');

  it.each([
    ['1 MB of nested flow sequences in pnpm-workspace.yaml', { 'pnpm-workspace.yaml': nestedFlow }, /^pnpm-workspace\.yaml \(over the parse budget \(more than 16 KiB to parse\)\)$/],
    ['a short packages list nested 5 levels', { 'pnpm-workspace.yaml': `packages: [${'['.repeat(4)}'packages/*'${']'.repeat(4)}]\n` }, /^pnpm-workspace\.yaml \(over the parse budget \(brackets nested more than 4 levels\)\)$/],
    ['a 2 KB packages list of 300 flow items', { 'pnpm-workspace.yaml': `packages: [${'[a], '.repeat(150)}]\n` }, /^pnpm-workspace\.yaml \(over the parse budget \(more than 256 items\)\)$/],
    ['a 400 KB Cargo.toml [workspace] table', { 'Cargo.toml': `[workspace]\nmembers = ["crates/*"]\n${'# pad\n'.repeat(70_000)}` }, /^Cargo\.toml \(over the parse budget \(more than 64 KiB to parse\)\)$/],
    ['package.json nested 65 levels', { 'package.json': `{"workspaces":["packages/*"],"x":${'['.repeat(65)}${']'.repeat(65)}}` }, /^package\.json \(over the parse budget \(brackets nested more than 64 levels\)\)$/],
  ])('skips %s past the parse budget, and says so in the skipped list', async (_, files, skipped) => {
    const ws = await workspacesOf({ ...npmMembers, ...files });
    expect(ws.members).toEqual([]);
    expect(ws.skipped).toEqual([expect.stringMatching(skipped)]);
    expect(ws.problems).toEqual([expect.stringMatching(/ not read for workspaces: over the parse budget/)]);
  });

  it('parses only the members part of a large legitimate declaration (a catalog, 4,000 examples)', async () => {
    const pnpm = await workspacesOf({ ...npmMembers, 'pnpm-workspace.yaml': `catalog:\n${catalog}\npackages:\n  - packages/*\n# the end\nonlyBuiltDependencies:\n  - esbuild\n` });
    expect(pnpm.skipped).toEqual([]);
    expect(pnpm.members.map((m) => m.path)).toEqual(['packages/a', 'packages/b']);
    const cargo = await workspacesOf({
      'Cargo.toml': `[package]\nname = "root"\n\n${examples}\n[workspace]\nmembers = [\n  "crates/*",\n]\n\n[workspace.dependencies]\nserde = "1"\n`,
      'crates/a/Cargo.toml': `[lib]\npath = "lib.rs"\n${examples}\n[package]\nname = "a"\n`,
    });
    expect(cargo.skipped).toEqual([]);
    expect(cargo.members).toEqual([{ path: 'crates/a', name: 'a' }]);
  });

  it('puts the skipped declaration on the map', async () => {
    const root = await makeRepo({ ...npmMembers, 'pnpm-workspace.yaml': nestedFlow });
    const listing = await buildListing(root, { depth: 3, rgPath });
    expect(listing.text).toContain('\nWorkspace declarations skipped: pnpm-workspace.yaml (over the parse budget (more than 16 KiB to parse))\nDirectories:\n');
  });
});


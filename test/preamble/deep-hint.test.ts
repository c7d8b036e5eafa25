import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rgPath } from '@vscode/ripgrep';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deepHint, type DeepHint } from '../../src/preamble/deep-hint.js';
import { buildListing } from '../../src/preamble/listing.js';
import { useRepo } from '../support/temp-repo.js';

// The map's deeper walk may start beside the first from last run's choice (a hint in the user's cache); the map itself
// must never depend on the hint, and a stored hint is untrusted input.
const pad = (n: number) => String(n).padStart(2, '0');
const repo = useRepo(
  Object.fromEntries([
    ['package.json', JSON.stringify({ private: true, workspaces: ['packages/*'] })],
    ['packages/core/package.json', '{"name":"core"}'],
    ...['client', 'node', 'shared'].flatMap((m) => Array.from({ length: 6 }, (_, i): [string, string] => [`packages/core/src/${m}/${m}-part${pad(i)}.ts`, ''])),
    ...Array.from({ length: 4 }, (_, i): [string, string] => [`packages/core/src/node/server/mw${pad(i)}.ts`, '']),
    ['packages/util/package.json', '{"name":"util"}'],
    ...Array.from({ length: 5 }, (_, i): [string, string] => [`packages/util/lib/one/u${pad(i)}.js`, '']),
    ...Array.from({ length: 20 }, (_, i): [string, string] => [`docs/page-${pad(i)}.md`, '']),
  ]),
);

let cache: string;
beforeEach(async () => {
  cache = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-hint-')));
});
afterEach(async () => {
  await fs.rm(cache, { recursive: true, force: true });
});

const env = () => ({ XDG_CACHE_HOME: cache });
const hintFiles = async () => (await fs.readdir(path.join(cache, 'spelunk', 'map-deep')).catch(() => [])).filter((f) => f.endsWith('.json'));

/** A hint that reports the plan's choice and offers `guess` (what a stored file would have said). */
function recording(guess: readonly string[] | null): DeepHint & { seen: Array<readonly string[]> } {
  const seen: Array<readonly string[]> = [];
  return { guess, seen, chosen: (rels) => void seen.push(rels) };
}

describe('the deeper walk started from a hint', () => {
  it.each([
    ['no hint', null],
    ['the right guess', 'chosen'],
    ['a wrong guess', ['packages/util/lib']],
    ['a guess of more directories than chosen', 'chosen+util'],
    ['an empty guess', []],
  ] as const)('%s: the same map, byte for byte, and the plan\'s choice reported', async (_name, kind) => {
    const plain = await buildListing(repo.root, { depth: 3, rgPath });
    expect(plain.text.split('\n')[0]).toContain('opened 2 levels further');
    const first = recording(null);
    await buildListing(repo.root, { depth: 3, rgPath, deep: first });
    const chosen = first.seen[0]!;
    expect(chosen.length).toBeGreaterThan(0);
    const guess = kind === 'chosen' ? chosen : kind === 'chosen+util' ? [...chosen, 'packages/util/lib'] : kind;
    const hint = recording(guess);
    const listing = await buildListing(repo.root, { depth: 3, rgPath, deep: hint });
    expect(listing.text).toBe(plain.text);
    expect(hint.seen).toEqual([chosen]);
  });

  it('is stored in the user\'s cache, read back by the next run, and rewritten only when the choice changes', async () => {
    await buildListing(repo.root, { depth: 3, rgPath, deep: deepHint(repo.root, env()) });
    const [file] = await hintFiles();
    expect(file).toMatch(/^[0-9a-f]{32}\.json$/);
    const abs = path.join(cache, 'spelunk', 'map-deep', file!);
    expect((await fs.stat(abs)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await fs.readFile(abs, 'utf8')) as { deep: string[] };
    const next = deepHint(repo.root, env());
    expect(next.guess).toEqual(stored.deep);
    const before = (await fs.stat(abs)).mtimeMs;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await buildListing(repo.root, { depth: 3, rgPath, deep: next });
    expect((await fs.stat(abs)).mtimeMs).toBe(before);
  });

  it.each([
    ['a path out of the root', (deep: string[]) => ({ v: 1, root: repo.root, deep: [...deep, '../outside'] })],
    ['an absolute path', (deep: string[]) => ({ v: 1, root: repo.root, deep: [...deep, '/etc'] })],
    ['a symlink to a directory outside', (deep: string[]) => ({ v: 1, root: repo.root, deep: [...deep, 'packages/link'] })],
    ['a file, not a directory', (deep: string[]) => ({ v: 1, root: repo.root, deep: [...deep, 'package.json'] })],
    ['a dot segment', (deep: string[]) => ({ v: 1, root: repo.root, deep: [`./${deep[0]}`] })],
    ['another root', (deep: string[]) => ({ v: 1, root: `${repo.root}-other`, deep })],
    ['another version', (deep: string[]) => ({ v: 2, root: repo.root, deep })],
    ['too many directories', (deep: string[]) => ({ v: 1, root: repo.root, deep: Array.from({ length: 9 }, () => deep[0]) })],
    ['not a list', () => ({ v: 1, root: repo.root, deep: 'packages/core/src' })],
  ])('a stored hint with %s is dropped whole', async (_name, doctor) => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-outside-'));
    await fs.symlink(outside, path.join(repo.root, 'packages', 'link'));
    try {
      await buildListing(repo.root, { depth: 3, rgPath, deep: deepHint(repo.root, env()) });
      const abs = path.join(cache, 'spelunk', 'map-deep', (await hintFiles())[0]!);
      const stored = JSON.parse(await fs.readFile(abs, 'utf8')) as { deep: string[] };
      expect(deepHint(repo.root, env()).guess).toEqual(stored.deep);
      await fs.writeFile(abs, JSON.stringify(doctor(stored.deep)));
      expect(deepHint(repo.root, env()).guess).toBeNull();
    } finally {
      await fs.rm(path.join(repo.root, 'packages', 'link'));
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it.each([
    ['garbage', 'not json {'],
    ['an oversized file', JSON.stringify({ v: 1, root: '/x', deep: [], pad: 'x'.repeat(20_000) })],
  ])('a stored hint that is %s is ignored', async (_name, content) => {
    await buildListing(repo.root, { depth: 3, rgPath, deep: deepHint(repo.root, env()) });
    const abs = path.join(cache, 'spelunk', 'map-deep', (await hintFiles())[0]!);
    await fs.writeFile(abs, content);
    expect(deepHint(repo.root, env()).guess).toBeNull();
  });

  it('is never written inside the repository searched, nor without an absolute cache directory', async () => {
    const inside = deepHint(repo.root, { XDG_CACHE_HOME: path.join(repo.root, '.cache') });
    await buildListing(repo.root, { depth: 3, rgPath, deep: inside });
    expect(inside.guess).toBeNull();
    await expect(fs.stat(path.join(repo.root, '.cache'))).rejects.toThrow();
    const relative = deepHint(repo.root, { XDG_CACHE_HOME: 'relative' });
    await buildListing(repo.root, { depth: 3, rgPath, deep: relative });
    await expect(fs.stat(path.resolve('relative'))).rejects.toThrow();
  });
});

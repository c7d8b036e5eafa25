import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rgPath } from '@vscode/ripgrep';
import { afterAll, describe, expect, it } from 'vitest';
import { buildListing, MAX_LISTING_CHARS } from '../../src/preamble/listing.js';
import { compareUtf8 } from '../../src/preamble/tree.js';

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

/** A fresh, realpath'd temp directory holding `files` (path → content). */
async function makeRepo(files: Record<string, string>, opts: { git?: boolean } = {}): Promise<string> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-listing-')));
  temps.push(root);
  if (opts.git) execFileSync('git', ['init', '-q', root]);
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), content);
  }
  return root;
}

function list(root: string, depth = 3, maxEntries = 200, signal?: AbortSignal) {
  return buildListing(root, { depth, maxEntries, rgPath, signal });
}

/** The tree part of a listing (the header line and the "Key files" line dropped). */
function body(text: string): string[] {
  return text.split('\n').slice(1).filter((line) => !line.startsWith('Key files: '));
}

describe('buildListing', () => {
  it('renders an indented tree, directories first with a trailing slash', async () => {
    const root = await makeRepo({ 'b.txt': '', 'src/z.js': '', 'src/lib/a.js': '', 'a.txt': '' });
    const listing = await list(root);
    expect(body(listing.text)).toEqual(['src/', '  lib/', '    a.js', '  z.js', 'a.txt', 'b.txt']);
    expect(listing).toMatchObject({ shown: 6, omitted: 0, truncatedDirs: 0 });
    expect(listing.text.split('\n')[0]).toContain('6 of 6 entries named');
  });

  it('stops at the depth limit where no source lies below; directories at the limit are shown but not expanded', async () => {
    const root = await makeRepo({ 'a/b/c/d/e.txt': '', 'top.txt': '' });
    // b/ was walked further to see whether it holds source: its count says what was found.
    expect(body((await list(root, 2)).text)).toEqual(['a/', '  b/ (1 file)', 'top.txt']);
    expect(body((await list(root, 1)).text)).toEqual(['a/', 'top.txt']);
    expect(body((await list(root, 5)).text)).toEqual(['a/', '  b/', '    c/', '      d/', '        e.txt', 'top.txt']);
  });

  it('shows a directory whose files all lie deeper than the depth (src/main/java), and opens the source below it', async () => {
    const root = await makeRepo({ 'src/main/java/com/example/App.java': '', 'pom.xml': '' });
    const text = (await list(root, 3)).text;
    expect(body(text)).toEqual(['src/', '  main/', '    java/', '      com/', '        example/ (1 file)']);
    expect(text.split('\n')[0]).toMatch(/^Map of the repository to depth 3; the main source directories are opened 2 levels further: /);
    expect(body((await list(root, 5)).text)).toEqual(['src/', '  main/', '    java/', '      com/', '        example/', '          App.java']);
    expect(text.split('\n')[1]).toBe('Key files: pom.xml');
  });

  it.each([
    ['a non-git directory', false],
    ['a git repository', true],
  ])('honours .gitignore and .ignore in %s, including ignored directories without files in reach', async (_, git) => {
    const root = await makeRepo(
      {
        '.gitignore': 'build/\n*.log\n',
        '.ignore': 'secret.txt\n',
        'build/deep/er/bundle.js': '',
        'build/top.js': '',
        'tools/lib/x/y/z.js': '',
        // Below the depth limit, where the map opens the source: ignored there too.
        'tools/lib/x/build/out.js': '',
        'tools/lib/x/build/deeper/more.js': '',
        'debug.log': '',
        'secret.txt': '',
        'src/index.js': '',
        'src/trace.log': '',
      },
      { git },
    );
    const listing = await list(root, 2);
    expect(body(listing.text)).toEqual(['src/', '  index.js', 'tools/', '  lib/', '    x/', '      y/ (1 file)', '.gitignore', '.ignore']);
    expect(listing.text).not.toMatch(/build|\.log|secret/);
  });

  it('honours .git/info/exclude in a git repository and never lists .git', async () => {
    const root = await makeRepo({ 'kept.txt': '', 'local-notes.md': '' }, { git: true });
    await fs.writeFile(path.join(root, '.git/info/exclude'), 'local-notes.md\n');
    const listing = await list(root, 4);
    expect(body(listing.text)).toEqual(['kept.txt']);
    expect(listing.text).not.toMatch(/\.git\/|HEAD|config/);
  });

  it('never lists a .git directory even without git, nor a nested .git file', async () => {
    const root = await makeRepo({ '.git/HEAD': 'ref: x\n', 'sub/.git': 'gitdir: ../x\n', 'sub/a.txt': '' });
    expect(body((await list(root)).text)).toEqual(['sub/', '  a.txt']);
  });

  it('orders names bytewise on their UTF-8 encoding, whatever order they were created in', async () => {
    const names = ['😀.txt', 'a.txt', 'B.txt', '\uE000.txt', 'é.txt', '_.txt', 'Z.txt', 'a b.txt', '10.txt', '9.txt'];
    const expected = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    const first = await makeRepo(Object.fromEntries(names.map((n) => [n, ''])));
    const second = await makeRepo(Object.fromEntries([...names].reverse().map((n) => [n, ''])));
    const a = await list(first);
    const b = await list(second);
    expect(body(a.text)).toEqual(expected);
    expect(b.text).toBe(a.text);
  });

  it('keeps the bytewise-smallest names of a capped directory, in either creation order', async () => {
    // ASCII names compared with the fast UTF-16 order, the others with the UTF-8 rank (tree.ts insertSmallest).
    const names = ['😀.txt', 'z.txt', '\uE000.txt', 'é.txt', 'a.txt', '\uFFFF.txt', 'y😀.txt', 'y\uE000.txt', 'b.txt', '~.txt', 'ÿ.txt', 'c.txt'];
    const smallest = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))).slice(0, 4);
    for (const order of [names, [...names].reverse()]) {
      const listing = await list(await makeRepo({ 'top.txt': '', ...Object.fromEntries(order.map((n) => [`many/${n}`, ''])) }), 3, 6);
      expect(body(listing.text).slice(1, 5)).toEqual(smallest.map((n) => `  ${n}`));
    }
  });

  it('compareUtf8 agrees with Buffer.compare on UTF-8', () => {
    const samples = ['', 'a', 'ab', 'B', 'é', '\uFFFF', '\uE000', '😀', '😀a', '\uD7FF', 'z\u00e9', 'z😀', 'z\uE000'];
    for (const x of samples) {
      for (const y of samples) {
        expect(Math.sign(compareUtf8(x, y))).toBe(Math.sign(Buffer.compare(Buffer.from(x), Buffer.from(y))));
      }
    }
  });

  it('caps the top level at maxEntries with a "… (N more)" line', async () => {
    const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, '']));
    const listing = await list(await makeRepo(files), 3, 10);
    expect(body(listing.text)).toEqual([...Array.from({ length: 10 }, (_, i) => `f0${i}.txt`), '… (20 more, all *.txt)']);
    expect(listing).toMatchObject({ shown: 10, omitted: 20, truncatedDirs: 1 });
  });

  it('marks directories whose entries were left out, with exact counts', async () => {
    const files: Record<string, string> = { 'top.txt': '' };
    for (let i = 0; i < 12; i++) files[`many/f${String(i).padStart(2, '0')}.txt`] = '';
    const listing = await list(await makeRepo(files), 3, 6);
    expect(body(listing.text)).toEqual([
      'many/',
      '  f00.txt',
      '  f01.txt',
      '  f02.txt',
      '  f03.txt',
      '  … (8 more, all *.txt)',
      'top.txt',
    ]);
    expect(listing).toMatchObject({ shown: 6, omitted: 8, truncatedDirs: 1 });
  });

  describe('a flat directory of 5,000 files beside small siblings', () => {
    const files: Record<string, string> = { 'README.md': '', 'src/app/main.js': '', 'src/lib/util.js': '', 'docs/guide.md': '' };
    for (let i = 0; i < 5_000; i++) files[`data/record-${String(i).padStart(5, '0')}.json`] = '';
    let root = '';
    it.each([20, 50, 200, 100_000])('with maxEntries %i every sibling appears and the caps hold', async (maxEntries) => {
      root ||= await makeRepo(files);
      const listing = await list(root, 3, maxEntries);
      const lines = body(listing.text);
      for (const expected of ['data/', 'docs/', 'src/', '  app/', '  lib/', '    main.js', '    util.js', '  guide.md']) {
        expect(lines).toContain(expected);
      }
      expect(listing.text).toContain('\nKey files: README.md\n');
      expect(listing.shown).toBeLessThanOrEqual(maxEntries);
      expect(listing.text.length).toBeLessThanOrEqual(MAX_LISTING_CHARS);
      expect(listing.shown + listing.omitted).toBe(5_000 + 9);
      const dataMore = lines.find((line) => line.startsWith('  … ('));
      expect(dataMore).toBe(`  … (${5_000 - lines.filter((l) => l.startsWith('  record-')).length} more, all record-*.json)`);
    });
  });

  it('keeps long names within the character budget and each directory a sorted prefix', async () => {
    const files = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${String(i).padStart(3, '0')}-${'x'.repeat(200)}.txt`, '']));
    const listing = await list(await makeRepo(files), 3, 1_000);
    expect(listing.text.length).toBeLessThanOrEqual(MAX_LISTING_CHARS);
    const lines = body(listing.text);
    const shown = lines.filter((l) => l.endsWith('.txt'));
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.map((l) => l.slice(0, 3))).toEqual(shown.map((_, i) => String(i).padStart(3, '0')));
    expect(lines.at(-1)).toBe(`… (${100 - shown.length} more, all *.txt)`);
  });

  it('does not follow symlinks, inside or out of the root', async () => {
    const outside = await makeRepo({ 'secret-outside.txt': 'secret', 'dir/nested-secret.txt': '' });
    const root = await makeRepo({ 'real/file.txt': '' });
    await fs.symlink(outside, path.join(root, 'out'));
    await fs.symlink(path.join(outside, 'secret-outside.txt'), path.join(root, 'link.txt'));
    await fs.symlink(path.join(root, 'real'), path.join(root, 'loop'));
    const listing = await list(root, 4);
    expect(body(listing.text)).toEqual(['real/', '  file.txt']);
  });

  it('lists unicode and space names, and neutralises control characters', async () => {
    const root = await makeRepo({ 'dir with space/inner.ts': '', 'café.txt': '', '日本.md': '', 'new\nline.txt': '' });
    const lines = body((await list(root)).text);
    expect(lines).toEqual(['dir with space/', '  inner.ts', 'café.txt', 'new\\nline.txt', '日本.md']);
  });

  it('says so for an empty repository and for one where everything is ignored', async () => {
    const empty = await list(await makeRepo({}));
    expect(empty).toEqual({ text: expect.stringContaining('(no files'), shown: 0, omitted: 0, truncatedDirs: 0 });
    const ignored = await list(await makeRepo({ '.ignore': '*\n', 'a.txt': '' }));
    expect(ignored.text).toContain('(no files');
  });

  it('returns "(listing unavailable: …)" instead of throwing', async () => {
    const root = await makeRepo({ 'a.txt': '' });
    const noRg = await buildListing(root, { depth: 3, maxEntries: 10, rgPath: path.join(root, 'no-such-rg') });
    expect(noRg.text).toMatch(/^\(listing unavailable: ripgrep could not be started \(.*no-such-rg: not an executable file\)\)$/);
    expect((await list(path.join(root, 'missing'))).text).toMatch(/^\(listing unavailable: the root cannot be read/);
    expect((await list(path.join(root, 'a.txt'))).text).toBe('(listing unavailable: the root is not a directory)');
    const aborted = await list(root, 3, 10, AbortSignal.abort());
    expect(aborted.text).toBe('(listing unavailable: cancelled)');
  });

  it('lists the sample fixture without its ignored build/ directory', async () => {
    const listing = await list(fileURLToPath(new URL('../../fixtures/sample-repo', import.meta.url)));
    expect(listing.text).toContain('  routes/\n    body.js');
    expect(listing.text).not.toContain('build');
    expect(listing.omitted).toBe(0);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rgPath } from '@vscode/ripgrep';
import { buildListing } from '../../src/preamble/listing.js';
import { checkRepositoryFiles } from '../../src/sandbox/special-files.js';

// F4 and F8 of the third red team: one lstat walk before rg, git, locate or the map run. Every row plants its file
// in a fresh tree; the walk never opens a FIFO (a hang would show as this file's timeout, not as a wrong answer).
let parent: string;
let root: string;

beforeEach(() => {
  parent = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-special-')));
  root = path.join(parent, 'repo');
  mkdirSync(path.join(root, 'src'), { recursive: true });
  writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 1;\n');
});
afterEach(() => rmSync(parent, { recursive: true, force: true }));

function plant(rel: string, make: (abs: string) => void): void {
  const abs = path.join(root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  make(abs);
}

const fifo = (abs: string): void => void execFileSync('/usr/bin/mkfifo', [abs]);
const file = (text: string) => (abs: string): void => writeFileSync(abs, text);

const NAMES = ['.gitignore', '.ignore', '.rgignore', '.gitattributes', '.git'];
const DEPTHS: Array<[string, string]> = [['depth 0', ''], ['depth 1', 'a/'], ['depth 3', 'a/b/c/']];
const FIFO_ROWS = NAMES.flatMap((name) => DEPTHS.map(([depth, dir]) => [name, depth, `${dir}${name}`] as const));

describe('special files ripgrep and git open by name', () => {
  it.each(FIFO_ROWS)('a FIFO named %s at %s is refused, naming its path', async (_name, _depth, rel) => {
    plant(rel, fifo);
    const found = await checkRepositoryFiles(root);
    expect(found.problem).toContain(`${rel} is a FIFO`);
    expect(found.problem).toContain('remove it');
    expect(found.problem).not.toContain('\n');
  });

  it.each([
    ['.git/info/exclude', 'exclude in a git directory (rg reads it)'],
    ['.git/info/attributes', 'attributes in a git directory'],
    ['modules/x/commondir', 'a commondir anywhere'],
  ])('a FIFO at %s (%s) is refused', async (rel) => {
    plant(rel, fifo);
    expect((await checkRepositoryFiles(root)).problem).toContain(`${rel} is a FIFO`);
  });

  it.each([
    ['.gitignore', 'is a socket'],
    ['sub/.gitattributes', 'is a socket'],
    ['run/app.sock', null],
  ])('a socket at %s: %s', async (rel, refused) => {
    // A socket path is limited to ~100 bytes; the temp root is short enough.
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(abs, resolve));
    try {
      const { problem } = await checkRepositoryFiles(root);
      if (refused === null) expect(problem).toBeNull();
      else expect(problem).toContain(`${rel} ${refused}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a device node named .ignore is refused (skips where mknod needs privileges)', async (ctx) => {
    try {
      execFileSync('/usr/bin/mknod', [path.join(root, '.ignore'), 'c', '1', '3'], { stdio: 'ignore' });
    } catch {
      ctx.skip('mknod is not permitted here (no CAP_MKNOD)');
    }
    expect((await checkRepositoryFiles(root)).problem).toContain('.ignore is a device');
  });

  it.each([
    ['a symlink to a FIFO inside the root', 'sub/.gitignore', '../pipe', 'is a symlink to a FIFO (pipe)'],
    ['a symlink to a FIFO through a chain', '.rgignore', 'l1', 'is a symlink to a FIFO (pipe)'],
    ['a symlink out of the root', 'sub/.ignore', '/etc/hostname', 'is a symlink out of the repository root'],
    ['a relative symlink out of the root', '.gitattributes', '../outside.txt', 'is a symlink out of the repository root'],
    ['a symlink to a device', '.gitignore', '/dev/zero', 'is a symlink out of the repository root'],
    ['a symlink into /proc', 'x/.gitignore', '/proc/self/fd/0', 'is a symlink out of the repository root'],
    ['a .git symlink out of the root', 'sub/.git', '../..', 'is a symlink out of the repository root'],
  ])('%s is refused', async (_what, rel, target, message) => {
    fifo(path.join(root, 'pipe'));
    symlinkSync('pipe', path.join(root, 'l1'));
    writeFileSync(path.join(parent, 'outside.txt'), 'secret*\n');
    plant(rel, (abs) => symlinkSync(target, abs));
    expect((await checkRepositoryFiles(root)).problem).toContain(`${rel} ${message}`);
  });

  it.each([
    ['regular ignore files at every depth', () => NAMES.filter((n) => n !== '.git').forEach((n) => plant(`a/b/${n}`, file('x\n')))],
    ['a directory named .gitignore', () => mkdirSync(path.join(root, 'd/.gitignore'), { recursive: true })],
    ['a symlinked .gitignore that stays inside', () => plant('sub/.gitignore', (abs) => symlinkSync('../src/a.ts', abs))],
    ['a dangling symlink (nothing is read)', () => plant('.ignore', (abs) => symlinkSync('missing', abs))],
    ['a symlink loop (opening it fails)', () => plant('.ignore', (abs) => symlinkSync('.ignore', abs))],
    ['a FIFO with another name', () => plant('pipe.fifo', fifo)],
    // Only git reads these, only at the top; the git tool's check leaves git unused there (git-includes.test.ts).
    ['a FIFO named .mailmap at the top', () => plant('.mailmap', fifo)],
    ['a FIFO named .gitmodules one level down', () => plant('sub/.gitmodules', fifo)],
    ['a FIFO named AGENTS.md (the preamble opens it without blocking and refuses it)', () => plant('AGENTS.md', fifo)],
    ['a FIFO named CLAUDE.md one level down', () => plant('pkg/CLAUDE.md', fifo)],
    ['a symlinked directory out of the root (not followed)', () => plant('vendor', (abs) => symlinkSync(parent, abs))],
  ])('%s is accepted', async (_what, make) => {
    make();
    const found = await checkRepositoryFiles(root);
    expect(found).toEqual({ problem: null, warning: null, entries: expect.any(Number) });
  });

  it('a FIFO below a directory link out of the root is not looked at (rg does not follow directory links)', async () => {
    mkdirSync(path.join(parent, 'elsewhere'));
    fifo(path.join(parent, 'elsewhere/.gitignore'));
    symlinkSync(path.join(parent, 'elsewhere'), path.join(root, 'linked'));
    expect((await checkRepositoryFiles(root)).problem).toBeNull();
  });

  it('stops after its entry budget with a warning, not a refusal', async () => {
    for (let i = 0; i < 20; i++) mkdirSync(path.join(root, `d${i}`));
    plant('d19/x/.gitignore', fifo);
    const found = await checkRepositoryFiles(root, 5);
    expect(found.problem).toBeNull();
    expect(found.warning).toContain('more than 5 entries');
  });
});

/** Builds a small git repository at `dir` (no user config, fixed identity). */
function git(dir: string, ...args: string[]): string {
  return execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', '-c', 'protocol.file.allow=always', ...args], {
    cwd: dir,
    env: { PATH: '/usr/bin:/bin', HOME: parent, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('.git files whose git directory leaves the root (F8)', () => {
  it.each([
    ['an absolute gitdir outside', 'sub/.git', () => 'gitdir: OUT/fake\n'],
    ['a relative gitdir that climbs out', 'sub/.git', () => 'gitdir: ../../fake\n'],
    ['an absolute gitdir outside that does not exist', 'a/b/.git', () => 'gitdir: OUT/missing\n'],
    ['the root .git pointing at a directory that is not a linked worktree of it', '.git', () => 'gitdir: OUT/fake\n'],
  ])('%s is refused, whether or not the target exists', async (_what, rel, text) => {
    mkdirSync(path.join(parent, 'fake'));
    writeFileSync(path.join(parent, 'fake/commondir'), `${parent}/common\n`);
    mkdirSync(path.join(parent, 'common/info'), { recursive: true });
    writeFileSync(path.join(parent, 'common/info/exclude'), 'secret*\n');
    plant(rel, file(text().replace('OUT', parent)));
    expect((await checkRepositoryFiles(root)).problem).toContain(`${rel} is a .git file whose gitdir points outside the repository root`);
  });

  it('the red team reproduction: sub/.git → <out>/fake, whose commondir has info/exclude = secret*', async () => {
    mkdirSync(path.join(parent, 'fake'));
    writeFileSync(path.join(parent, 'fake/commondir'), `${parent}/common\n`);
    mkdirSync(path.join(parent, 'common/info'), { recursive: true });
    writeFileSync(path.join(parent, 'common/info/exclude'), 'secret*\n');
    plant('sub/secret1', file('s\n'));
    plant('sub/other', file('o\n'));
    plant('sub/.git', file(`gitdir: ${parent}/fake\n`));
    const before = (await checkRepositoryFiles(root)).problem;
    rmSync(path.join(parent, 'common'), { recursive: true });
    rmSync(path.join(parent, 'fake'), { recursive: true });
    // The verdict does not depend on what is outside.
    expect((await checkRepositoryFiles(root)).problem).toBe(before);
    expect(before).toContain('sub/.git');
  });

  it('a gitdir inside the root whose commondir points outside is refused', async () => {
    plant('.hidden-git/commondir', file(`${parent}/common\n`));
    plant('sub/.git', file('gitdir: ../.hidden-git\n'));
    expect((await checkRepositoryFiles(root)).problem).toContain("sub/.git is a .git file whose gitdir's commondir (.hidden-git/commondir) points outside");
  });

  it('a gitdir inside the root whose info directory is a link out is refused', async () => {
    plant('.g/commondir', file('.\n'));
    plant('.g/info', (abs) => symlinkSync(parent, abs));
    plant('sub/.git', file('gitdir: ../.g\n'));
    expect((await checkRepositoryFiles(root)).problem).toContain('.g/info/exclude leads out of the repository root');
  });

  it('a .git directory whose info is a link out is refused', async () => {
    plant('sub/.git/HEAD', file('ref: refs/heads/main\n'));
    plant('sub/.git/info', (abs) => symlinkSync(parent, abs));
    expect((await checkRepositoryFiles(root)).problem).toContain('sub/.git/info/exclude leads out of the repository root');
  });

  it('rg reads a relative gitdir from the root: one that lands on an outside commondir is refused', async () => {
    // git reads `gitdir: ../x` from sub/ (inside); rg reads it from the root: <parent>/x, outside, with a commondir.
    plant('x/keep', file('k\n'));
    mkdirSync(path.join(parent, 'x'));
    writeFileSync(path.join(parent, 'x/commondir'), `${parent}/common\n`);
    plant('sub/.git', file('gitdir: ../x\n'));
    expect((await checkRepositoryFiles(root)).problem).toContain('sub/.git is a .git file whose gitdir, read from the root as ripgrep reads it, points outside');
  });

  it('a real submodule (gitdir ../.git/modules/sub, no commondir) is accepted', async () => {
    const upstream = path.join(parent, 'upstream');
    mkdirSync(upstream);
    git(upstream, 'init', '-q');
    writeFileSync(path.join(upstream, 'u.txt'), 'u\n');
    git(upstream, 'add', '-A');
    git(upstream, 'commit', '-qm', 'u');
    git(root, 'init', '-q');
    git(root, 'submodule', '-q', 'add', upstream, 'vendor/sub');
    git(root, 'commit', '-qm', 'with a submodule');
    expect(path.join(root, 'vendor/sub/.git')).toSatisfy((p: string) => execFileSync('/usr/bin/head', ['-c', '7', p], { encoding: 'utf8' }) === 'gitdir:');
    expect((await checkRepositoryFiles(root)).problem).toBeNull();
  });

  it('a linked worktree placed inside the root is accepted', async () => {
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'c');
    git(root, 'worktree', 'add', '-q', 'wt');
    expect((await checkRepositoryFiles(root)).problem).toBeNull();
  });

  it('a root that is a linked worktree of a repository outside it is accepted (the git tool reads that repository too)', async () => {
    const main = path.join(parent, 'main');
    mkdirSync(main);
    git(main, 'init', '-q');
    writeFileSync(path.join(main, 'm.txt'), 'm\n');
    git(main, 'add', '-A');
    git(main, 'commit', '-qm', 'm');
    git(main, 'worktree', 'add', '-q', path.join(parent, 'linked'));
    expect((await checkRepositoryFiles(path.join(parent, 'linked'))).problem).toBeNull();
  });
});

describe('listings and the map do not depend on outside content (F8, the tables: rg sees outside files)', () => {
  /** The preamble's map of `root` as the model would get it (rg walk, no sandbox: every outside file visible). */
  async function map(): Promise<string> {
    return (await buildListing(root, { depth: 3, maxEntries: null, rgPath })).text;
  }

  /** `rg --files` as the model runs it through the bash tool (rg's defaults: it reads a `.git` file's excludes). */
  function files(): string {
    return execFileSync(rgPath, ['--files', '--no-config', '--sort', 'path'], { cwd: root, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  }

  function plantOutsideExclude(gitDir: string, withCommondir: boolean): void {
    mkdirSync(path.join(parent, 'common/info'), { recursive: true });
    writeFileSync(path.join(parent, 'common/info/exclude'), 'secret*\n');
    mkdirSync(gitDir, { recursive: true });
    if (withCommondir) writeFileSync(path.join(gitDir, 'commondir'), `${parent}/common\n`);
  }

  it('control: rg does read the outside exclude of a planted .git file, and the walk refuses that tree', async () => {
    plant('sub/secret1', file('s\n'));
    plant('sub/other', file('o\n'));
    plant('sub/.git', file(`gitdir: ${parent}/fake\n`));
    plantOutsideExclude(path.join(parent, 'fake'), true);
    // What the walk prevents: the listing changes with an outside file.
    expect(files()).not.toContain('secret1');
    rmSync(path.join(parent, 'common'), { recursive: true });
    expect(files()).toContain('secret1');
    expect((await checkRepositoryFiles(root)).problem).toContain('sub/.git');
  });

  it('an accepted submodule-shaped .git file (rg reads ../x from the root, no commondir there): the map is the same with and without outside excludes', async () => {
    plant('sub/secret1', file('s\n'));
    plant('sub/other', file('o\n'));
    plant('.git/modules/sub/HEAD', file('ref: refs/heads/main\n'));
    plant('sub/.git', file('gitdir: ../.git/modules/sub\n'));
    expect((await checkRepositoryFiles(root)).problem).toBeNull();
    const without = [await map(), files()];
    // The directory rg reads the gitdir as (from the root): <parent>/.git/modules/sub, with an exclude but no commondir.
    plantOutsideExclude(path.join(parent, '.git/modules/sub'), false);
    mkdirSync(path.join(parent, '.git/modules/sub/info'), { recursive: true });
    writeFileSync(path.join(parent, '.git/modules/sub/info/exclude'), 'secret*\n');
    expect((await checkRepositoryFiles(root)).problem).toBeNull();
    expect([await map(), files()]).toEqual(without);
    expect(without[0]).toContain('secret1');
    expect(without[1]).toContain('sub/secret1');
    // With a commondir there, rg would read on: then the walk refuses instead.
    writeFileSync(path.join(parent, '.git/modules/sub/commondir'), `${parent}/common\n`);
    expect((await checkRepositoryFiles(root)).problem).toContain('read from the root as ripgrep reads it');
  });
});
